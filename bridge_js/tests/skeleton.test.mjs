// startplugin writes app.js, or with --typescript app.ts: one counter plugin in two
// languages, each type-checked its own way (JSDoc under checkJs, TypeScript). app.js cannot
// be generated from app.ts, as stripping the types would drop the JSDoc its own check needs;
// so the two are held together here: esbuild strips the types, comments and layout of both,
// and what is left must be the same program.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

const esbuild = await import("esbuild").catch(() => null);
const skip = esbuild ? false : "esbuild is not installed (npm ci in bridge_js)";
const SKELETON = new URL("../../kanban/projects/plugin_skeleton/", import.meta.url);

/**
 * @param {string} path
 * @param {"js" | "ts"} loader
 */
const program = (path, loader) => esbuild?.transformSync(readFileSync(new URL(path, SKELETON), "utf8"), { loader, minifyWhitespace: true }).code;

test("the JavaScript and TypeScript skeletons are one program", { skip }, () => {
  assert.equal(program("app.js", "js"), program("typescript/app.ts", "ts"));
});
