// build.mjs: esbuild bundles, terser minifies. These tests need both installed (`npm ci`
// in bridge_js); without them they skip with that reason.

import { test } from "node:test";
import assert from "node:assert/strict";
import vm from "node:vm";
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, writeFileSync, rmSync, readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build, buildVendor, checkOutputs } from "../build.mjs";

const BUILD = fileURLToPath(new URL("../build.mjs", import.meta.url));
// bench B8: 3 KB min+gzip until kv.getHistory and pushed values (3,085 B); 3 KB + 64 B
// then, 32 B more for the hint on every logged refusal (3,162 B), and 32 B for
// kanban.notify (3,177 B); 3.5 KB + 100 B with kanban.attachments (3,535 B: three calls,
// covers as blob: URLs of the page, a file beside the checked value).
const SDK_BUDGET = 3600;

const built = await build().catch((err) => {
  if (err.code === "BUILD_TOOLS_MISSING") return err;
  throw err;
});
const skip = built instanceof Error ? built.message : false;
const check = (name, fn) => test(name, { skip }, fn);

const names = (text) => new Set(text.match(/[\w$]+/g));
// The bundles with the names as written, built once for the tests that read them.
let unminified;
const plain = () => (unminified ??= build({ minify: false }));

check("the build is deterministic and does not depend on the working directory", async () => {
  assert.deepEqual(await build(), built);
  const out = mkdtempSync(join(tmpdir(), "bridge-dist-"));
  try {
    for (const [f, text] of Object.entries(built)) writeFileSync(join(out, f), text);
    const other = spawnSync("node", [BUILD, "--check", "--out", out], { cwd: tmpdir(), encoding: "utf8" });
    assert.equal(other.status, 0, other.stderr);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

check("each bundle carries only what its entry uses", async () => {
  const { "kanban.js": sdk, "host.js": host } = await plain();
  const inSdk = names(sdk);
  const inHost = names(host);
  for (const name of [
    "createHost",
    "hostHandshake",
    "checkRequest",
    "checkValue",
    "checkKey",
    "checkFields",
    "OP_RULES",
    "BACKOFF_MAX",
    "STATUSES",
    "MAX_EARLY",
    "utf8Length",
    "wireError",
  ]) {
    assert.ok(!inSdk.has(name), "the SDK carries " + name);
  }
  for (const name of ["createKanban", "pluginHandshake", "deepFreeze", "NO_CONFIGURATION", "checkArguments", "HELLO_EVERY", "MAX_UPDATE_ATTEMPTS"]) {
    assert.ok(!inHost.has(name), "the host carries " + name);
  }
  // The host normalises every error before posting it to the plugin (wireError), so the
  // SDK does not again.
  for (const name of ["createKanban", "pluginHandshake", "createRpc", "checkJson"]) {
    assert.ok(inSdk.has(name), "the SDK lacks " + name);
  }
  for (const name of ["createHost", "hostHandshake", "createRpc", "checkRequest", "wireError"]) {
    assert.ok(inHost.has(name), "the host lacks " + name);
  }
  // The same holds for the minified bundles, seen through strings only one side uses.
  for (const text of ["unexpected field", "/ws/boards/", "expectedRevision must be", "relationship_pending"]) {
    assert.ok(!built["kanban.js"].includes(text), "the SDK carries " + JSON.stringify(text));
  }
  for (const text of ["no board host answered", "the updater returned undefined", "listener must be a function"]) {
    assert.ok(!built["host.js"].includes(text), "the host carries " + JSON.stringify(text));
  }
});

// Runs a bundle as a classic script in a fresh context whose window is `win`.
function run(file, win = {}) {
  Object.assign(win, {
    window: win,
    console: { warn() {}, error() {} },
    setTimeout() {},
    clearTimeout() {},
    addEventListener() {},
  });
  vm.createContext(win);
  new vm.Script(built[file], { filename: file }).runInContext(win);
  return win;
}

check("each bundle is one strict IIFE whose footer sets its global", async () => {
  for (const file of ["kanban.js", "host.js"]) {
    assert.match(built[file], /^\/\* built from bridge_js\/src; do not edit \*\/\n"use strict";\(\(\)=>\{/, file);
    assert.match(built[file], /\}\)\(\);\n$/, file);
  }
  const { "kanban.js": sdk, "host.js": host } = await plain();
  assert.match(sdk, /window\.steamHarnessKanban \|\| \(window\.steamHarnessKanban = createKanban\(window\)\);/);
  assert.match(host, /window\.KanbanHost = createHost\(window\);/);

  const plugin = run("kanban.js");
  assert.equal(typeof plugin.steamHarnessKanban.kv.getValue, "function");
  assert.equal(plugin.steamHarnessKanban.BridgeError.name, "BridgeError");
  const earlier = {};
  assert.equal(run("kanban.js", { steamHarnessKanban: earlier }).steamHarnessKanban, earlier, "||= keeps the first");
  const page = run("host.js", { KanbanHost: "earlier" });
  assert.deepEqual(Object.keys(page.KanbanHost), ["connect"]);
});

check("the plugin test host is minified with its names kept and its sources in an inline map", () => {
  const text = built["testing.mjs"];
  const [, base64] = text.match(/\n\/\/# sourceMappingURL=data:application\/json;charset=utf-8;base64,(\S+)\n$/);
  const map = JSON.parse(Buffer.from(base64, "base64").toString("utf8"));
  for (const from of ["../testing/host.mjs", "../testing/world.mjs", "../src/sdk.js"]) {
    const at = map.sources.indexOf(from);
    assert.ok(at >= 0, from);
    assert.equal(map.sourcesContent[at], readFileSync(new URL(from, new URL("../dist/", import.meta.url)), "utf8"));
  }
  // What a stack frame or err.name shows is the name as written.
  for (const name of ["createTestHost", "createTestWorld", "connectFrame", "createKanban", "BridgeError"]) {
    assert.ok(names(text).has(name), name);
  }
});

check("the TypeScript declarations are served as written, not copied into dist", () => {
  const types = readFileSync(new URL("../static/bridge/kanban.d.ts", import.meta.url), "utf8");
  assert.match(types, /steamHarnessKanban: SteamHarnessKanban/);
  assert.equal(built["kanban.d.ts"], undefined);
});

check("--check passes on a fresh build and fails when a file is stale, missing or extra", async () => {
  const out = mkdtempSync(join(tmpdir(), "bridge-dist-"));
  const vendorOut = mkdtempSync(join(tmpdir(), "bridge-vendor-"));
  try {
    const printed = execFileSync("node", [BUILD, "--out", out, "--vendor", vendorOut], { encoding: "utf8" });
    assert.match(printed, /^kanban\.js +\d+ B +\d+ B gzip$/m);
    assert.equal(readFileSync(join(out, "kanban.js"), "utf8"), built["kanban.js"]);
    // Each case on this one build: a build per case was most of this file's time.
    const folders = { files: built, vendor: await buildVendor(), dist: out, vendorDir: vendorOut };
    assert.equal(checkOutputs(folders), null);
    writeFileSync(join(out, "host.js"), "stale");
    assert.match(checkOutputs(folders), /stale: host\.js/);
    // The command says so and exits 1.
    const stale = spawnSync("node", [BUILD, "--check", "--out", out, "--vendor", vendorOut], { encoding: "utf8" });
    assert.equal(stale.status, 1);
    assert.match(stale.stderr, /stale: host\.js/);
    rmSync(join(out, "host.js"));
    assert.match(checkOutputs(folders), /stale: host\.js/);
    writeFileSync(join(out, "host.js"), built["host.js"]);
    assert.equal(checkOutputs(folders), null);
    // A file the build does not write would be served under /static/bridge/ too, and
    // before what static/bridge holds: a leftover dist/kanban.d.ts would shadow the types.
    writeFileSync(join(out, "kanban.d.ts"), "old");
    assert.match(checkOutputs(folders), /not built: kanban\.d\.ts/);
    rmSync(join(out, "kanban.d.ts"));
    writeFileSync(join(vendorOut, "extra.js"), "old");
    assert.match(checkOutputs(folders), /does not write \(extra\.js\)/);
  } finally {
    rmSync(out, { recursive: true, force: true });
    rmSync(vendorOut, { recursive: true, force: true });
  }
});

check("without esbuild and terser the build says to run npm ci", () => {
  const alone = mkdtempSync(join(tmpdir(), "bridge-no-tools-"));
  try {
    copyFileSync(BUILD, join(alone, "build.mjs"));
    const result = spawnSync("node", [join(alone, "build.mjs"), "--check"], { encoding: "utf8" });
    assert.equal(result.status, 2, result.stderr);
    assert.match(result.stderr, /esbuild and terser are not installed: run `npm ci` in bridge_js/);
  } finally {
    rmSync(alone, { recursive: true, force: true });
  }
});

check("the SDK stays under 3,600 bytes min+gzip", () => {
  const size = gzipSync(built["kanban.js"], { level: 9 }).length;
  assert.ok(size < SDK_BUDGET, "dist/kanban.js is " + size + " bytes gzip -9, the budget " + SDK_BUDGET);
});
