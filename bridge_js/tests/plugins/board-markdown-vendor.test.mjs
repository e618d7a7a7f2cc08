// plugins/board/vendor/: markdown-it and DOMPurify as build.mjs bundles them for the Board.
// Like build.test.mjs, these need the build tools (`npm ci` in bridge_js) and skip without.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildVendor, checkOutputs } from "../../build.mjs";

const VENDOR = new URL("../../plugins/board/vendor/", import.meta.url);
// 53,638 B gzip with markdown-it 15.0.3 and DOMPurify 3.4.18: loaded once, with the board.
const BUDGET = 60_000;

const built = await buildVendor().catch((err) => {
  if (err.code === "BUILD_TOOLS_MISSING") return err;
  throw err;
});
const skip = built instanceof Error ? built.message : false;
const check = (name, fn) => test(name, { skip }, fn);

check("the committed bundle and licences are what the pinned packages build, every time", async () => {
  assert.deepEqual(Object.keys(built).sort(), ["LICENSES.txt", "markdown.js"]);
  for (const [file, text] of Object.entries(built)) {
    assert.equal(readFileSync(new URL(file, VENDOR), "utf8"), text, file + " is stale: run node bridge_js/build.mjs");
  }
  assert.deepEqual(await buildVendor(), built);
});

check("build.mjs --check fails on a stale or a stray vendor file", () => {
  const out = mkdtempSync(join(tmpdir(), "board-vendor-"));
  // What --check runs, on this one build (build.test.mjs runs the command itself); the
  // bundles beside the vendor files are not what this test is about.
  const check = () => checkOutputs({ files: {}, vendor: built, dist: join(out, "no-dist"), vendorDir: out });
  try {
    for (const [file, text] of Object.entries(built)) writeFileSync(join(out, file), text);
    assert.equal(check(), null);
    writeFileSync(join(out, "markdown.js"), built["markdown.js"].replace("markdown-it", "markdown-if"));
    assert.match(check(), /is stale: markdown\.js; run node bridge_js\/build\.mjs/);
    writeFileSync(join(out, "markdown.js"), built["markdown.js"]);
    writeFileSync(join(out, "purify.js"), "old");
    assert.match(check(), /files the build does not write \(purify\.js\)/);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

check("the bundle is one ES module with the parser and the sanitiser, minified, within its budget", async () => {
  const bundle = await import(new URL("markdown.js", VENDOR));
  assert.deepEqual(Object.keys(bundle).sort(), ["DOMPurify", "MarkdownIt"]);
  assert.equal(typeof new bundle.MarkdownIt().render, "function");
  const text = built["markdown.js"];
  assert.ok(text.length / text.split("\n").length > 1000, "minified");
  const gzip = gzipSync(text, { level: 9 }).length;
  assert.ok(gzip <= BUDGET, gzip + " B gzip, over " + BUDGET);
  assert.doesNotMatch(text, /argparse/, "markdown-it's command line is not in it");
});
