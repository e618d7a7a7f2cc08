// The SDK and its declarations cannot drift: tests/types/sdk-declarations.ts (which
// `npm run typecheck` compiles) fails when one of them lacks a method of the other. Proved
// here on a copy of the sources with a method taken out of each side in turn. Needs
// typescript (`npm ci` in bridge_js); without it the tests skip with that reason.

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const TSC = join(ROOT, "node_modules", "typescript", "bin", "tsc");
const skip = existsSync(TSC) ? false : "typescript is not installed: run `npm ci` in bridge_js";

// What the check compiles, copied: the SDK's sources, the spec they import, the
// declarations and the check itself, with the one tsconfig they extend.
function copy() {
  const dir = mkdtempSync(join(tmpdir(), "bridge-types-"));
  for (const path of ["src", "static/bridge/kanban.d.ts", "protocol.json", "tsconfig.json", "tests/types"]) {
    cpSync(join(ROOT, path), join(dir, path), { recursive: true });
  }
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  return dir;
}

function tsc(dir) {
  const run = spawnSync(process.execPath, [TSC, "-p", join(dir, "tests", "types")], { cwd: dir, encoding: "utf8" });
  return { ok: run.status === 0, output: run.stdout + run.stderr };
}

// Replaces `from` in one copied file, once; the test fails if the text is not there.
function edit(dir, path, from, to) {
  const file = join(dir, path);
  const text = readFileSync(file, "utf8");
  assert.ok(text.includes(from), path + " no longer contains " + JSON.stringify(from));
  writeFileSync(file, text.replace(from, to));
}

test("the SDK and kanban.d.ts agree, and the check fails when a method is missing from either", { skip }, async (t) => {
  const dir = copy();
  try {
    await t.test("as they are, they agree", () => {
      const { ok, output } = tsc(dir);
      assert.ok(ok, output);
    });
    await t.test("the SDK without kv.getHistory is refused", () => {
      edit(dir, "src/sdk.js", "getHistory: (key, options = {}) =>", "_gone: (key, options = {}) =>");
      const { ok, output } = tsc(dir);
      assert.ok(!ok, "tsc passed an SDK without kv.getHistory");
      assert.match(output, /getHistory/);
      edit(dir, "src/sdk.js", "_gone: (key, options = {}) =>", "getHistory: (key, options = {}) =>");
    });
    await t.test("declarations without notify, which the SDK has, are refused", () => {
      edit(dir, "static/bridge/kanban.d.ts", "  notify(notice:", "  _gone(notice:");
      const { ok, output } = tsc(dir);
      assert.ok(!ok, "tsc passed declarations without notify");
      assert.match(output, /notify/);
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
