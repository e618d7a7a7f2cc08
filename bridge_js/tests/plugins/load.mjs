// Loads a plugin's core module the way the page does: a classic script whose top-level
// `this` is the global object, with no module system around it. It runs in this realm so
// its arrays and objects compare with assert.deepEqual like any other.
import { readFileSync } from "node:fs";

export function loadCore(relativePath, globalName) {
  const source = readFileSync(new URL("../../plugins/" + relativePath, import.meta.url), "utf8");
  const fakeWindow = {};
  // `module` is shadowed as undefined, as in a browser, so the script takes its global path.
  new Function("module", source + "\n//# sourceURL=" + relativePath).call(fakeWindow, undefined);
  if (!fakeWindow[globalName]) throw new Error(relativePath + " did not define " + globalName);
  return fakeWindow[globalName];
}
