// Loads a plugin's core module the way the page does: a classic script whose top-level
// `this` is the global object, with no module system around it. It runs in this realm so
// its arrays and objects compare with assert.deepEqual like any other.
import { readFileSync } from "node:fs";

// The plugin's copy of plugin-kit.js runs first, as on the page.
export function loadCore(relativePath, globalName) {
  const fakeWindow = {};
  const kit = relativePath.replace(/[^/]+$/, "plugin-kit.js");
  for (const path of [kit, relativePath]) {
    const source = readFileSync(new URL("../../plugins/" + path, import.meta.url), "utf8");
    // `module` is shadowed as undefined, as in a browser, so the script takes its global path.
    new Function("module", source + "\n//# sourceURL=" + path).call(fakeWindow, undefined);
  }
  if (!fakeWindow[globalName]) throw new Error(relativePath + " did not define " + globalName);
  return fakeWindow[globalName];
}
