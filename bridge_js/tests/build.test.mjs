import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync, rmSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build, squeeze, treeShake } from "../build.mjs";

const BUILD = fileURLToPath(new URL("../build.mjs", import.meta.url));

test("the build is deterministic", () => {
  assert.deepEqual(build(), build());
});

test("each bundle carries only what its entry uses", () => {
  const { "kanban.js": sdk, "host.js": host } = build();
  for (const name of ["hostHandshake", "createHost", "BACKOFF_MAX", "STATUSES"]) {
    assert.doesNotMatch(sdk, new RegExp("\\b" + name + "\\b"), name);
  }
  for (const name of ["createKanban", "pluginHandshake", "typeError", "HELLO_EVERY"]) {
    assert.doesNotMatch(host, new RegExp("\\b" + name + "\\b"), name);
  }
  assert.match(sdk, /window\.steamHarnessKanban = createKanban\(window\)/);
  assert.match(host, /window\.KanbanHost = createHost\(window\)/);
});

test("the TypeScript declarations are shipped next to the SDK", () => {
  const types = readFileSync(new URL("../types/kanban.d.ts", import.meta.url), "utf8");
  assert.equal(build()["kanban.d.ts"], types);
  assert.match(types, /steamHarnessKanban: SteamHarnessKanban/);
});

test("--check passes on a fresh build and fails when a file is stale or missing", () => {
  const out = mkdtempSync(join(tmpdir(), "bridge-dist-"));
  try {
    execFileSync("node", [BUILD, "--out", out], { stdio: "pipe" });
    assert.equal(spawnSync("node", [BUILD, "--check", "--out", out]).status, 0);
    writeFileSync(join(out, "host.js"), "stale");
    const stale = spawnSync("node", [BUILD, "--check", "--out", out], { encoding: "utf8" });
    assert.equal(stale.status, 1);
    assert.match(stale.stderr, /stale: host\.js/);
    rmSync(join(out, "host.js"));
    assert.equal(spawnSync("node", [BUILD, "--check", "--out", out]).status, 1);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test("squeeze removes only spaces no token needs", () => {
  assert.equal(squeeze('const a = b + "x  y" + c;'), 'const a=b+"x  y"+c;');
  assert.equal(squeeze("return a - -b + +c;"), "return a- -b+ +c;");
  assert.equal(squeeze("x = /[ /]a b/g.test(s) ? n / 2 : 0;"), "x=/[ /]a b/g.test(s)?n/2:0;");
  assert.equal(squeeze("if (typeof x === 'string') return 'it\\'s  ok';"), "if(typeof x==='string')return'it\\'s  ok';");
  assert.throws(() => squeeze("const t = `a`;"), /template literals/);
});

test("tree shaking drops unreferenced top-level declarations, transitively", () => {
  const text = ["const A = 1;", "function b() {", "return A;", "}", "const C = b;", "function d() {}"].join("\n");
  assert.equal(treeShake(text, "use(C);"), ["const A = 1;", "function b() {", "return A;", "}", "const C = b;"].join("\n"));
  assert.equal(treeShake(text, "use(d);"), "function d() {}");
  assert.throws(() => treeShake("const A = 1;\nconst A = 2;", "A"), /two modules declare A/);
});
