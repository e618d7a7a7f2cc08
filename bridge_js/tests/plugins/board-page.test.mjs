import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";

const folder = new URL("../../plugins/board/", import.meta.url);

test("index.html preloads every module of the Board, and only those", () => {
  const html = readFileSync(new URL("index.html", folder), "utf8");
  const preloaded = [...html.matchAll(/<link rel="modulepreload" href="([^"]+)">/g)].map((m) => m[1]).sort();
  const modules = readdirSync(folder).filter((name) => name.endsWith(".js"));
  const expected = ["/static/bridge/plugin-kit.js", "vendor/markdown.js", ...modules].sort();
  assert.deepEqual(preloaded, expected, "a module added or removed: list it in index.html's head");
});
