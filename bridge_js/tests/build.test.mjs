import { test } from "node:test";
import assert from "node:assert/strict";
import vm from "node:vm";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync, rmSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build, squeeze, treeShake } from "../build.mjs";
import { compact, rename, tokenize } from "../minify.mjs";

const BUILD = fileURLToPath(new URL("../build.mjs", import.meta.url));

test("the build is deterministic", () => {
  assert.deepEqual(build(), build());
});

test("each bundle carries only what its entry uses", () => {
  const { "kanban.js": sdk, "host.js": host } = build({ rename: false });
  for (const name of ["hostHandshake", "createHost", "BACKOFF_MAX", "STATUSES", "checkRequest", "checkValue"]) {
    assert.doesNotMatch(sdk, new RegExp("\\b" + name + "\\b"), name);
  }
  for (const name of ["createKanban", "pluginHandshake", "deepFreeze", "HELLO_EVERY"]) {
    assert.doesNotMatch(host, new RegExp("\\b" + name + "\\b"), name);
  }
  assert.match(sdk, /window\.steamHarnessKanban\|\|=createKanban\(window\)/);
  assert.match(host, /window\.KanbanHost=createHost\(window\)/);
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

test("a property or an object key spelled like a declaration does not keep it", () => {
  const text = ["function nonce() {}", "function ready(d) {", "return { nonce: d.nonce, ready: 1 };", "}"].join("\n");
  assert.equal(treeShake(text, "use(ready);"), ["function ready(d) {", "return { nonce: d.nonce, ready: 1 };", "}"].join("\n"));
  assert.match(treeShake(text, "use({ nonce });"), /^function nonce/);
});

// Runs a classic script in a fresh context and returns what it left in `out`.
const run = (code) => {
  const context = vm.createContext({});
  new vm.Script(code).runInContext(context);
  return context.out;
};

const SAMPLE = [
  "(function(){",
  '"use strict";',
  "const LIMIT = 3;",
  "function outer(value, { alias, key: renamed = 2, ...rest } = {}, [first, , third] = [], ...others) {",
  "return { value, alias, renamed, rest, first, third, others, LIMIT };",
  "}",
  "class Thing extends Error {",
  "constructor(message, value) { super(message); this.value = value; }",
  "get twice() { return this.value * 2; }",
  "static make(value) { return new Thing('m', value); }",
  "}",
  // a parameter used before a later top-level function it must not shadow
  "function callsLater(callback) { const local = callback(1); return helper(local); }",
  "function helper(input) { return input + 1; }",
  "const shadow = (value) => { const inner = (value) => value * 10; return inner(value) + value; };",
  "const obj = { value: 1, get status() { return 's'; }, set status(v) {}, method(arg) { return arg; }, LIMIT, shadow, };",
  "let counter = 0;",
  "for (const item of [1, 2]) counter += item;",
  "try { throw new Error('four'); } catch (err) { counter += err.message.length; }",
  "const list = [1, , 3,];",
  "const pick = ({ a = 1, b: { c } }) => a + c;",
  "const total = [1, 2].map((n) => n * LIMIT).reduce((sum, n) => sum + n, 0);",
  "let answer = helper(1)",
  "answer = answer + 1",
  "const later = async (value) => value + 1;",
  "const kind = typeof later === 'function' ? 'fn' : 'other';",
  "const first2 = 1; const second2 = first2 + 1; let third2 = second2 + 1;",
  "const multi = 1",
  "const line = 2;",
  "const made = new Map(); const chained = new Map().set(1, 2); const big = 15000;",
  "function no() { return false; }",
  "const arrow = () => {}",
  "arrow()",
  "const fe = function () { return 1; }",
  "const fv = fe();",
  "if (fv) { counter += 1; }",
  "counter += 1;",
  "globalThis.out = JSON.stringify([outer(1, { alias: 'a', key: 5, extra: 1 }, [1, 2, 3], 4, 5),",
  "Thing.make(2).twice, Thing.name, callsLater((x) => x + 1), shadow(2), obj.status, obj.method(3),",
  "obj.LIMIT, Object.keys(obj), counter, 'a ab'.replace(/a{1,2}b/g, 'X'), list.length, 1 in list,",
  "pick({ b: { c: 2 } }), total, answer, typeof obj.shadow, kind, later.constructor.name, third2, multi + line,",
  "made.size, chained.get(1), big, no(), fv]);",
  "})();",
].join("\n");

test("renaming shortens names and keeps behaviour, properties, keys and class names", () => {
  const squeezed = SAMPLE.split("\n").map(squeeze).join("\n");
  const short = compact(rename(squeezed));
  assert.equal(run(short), run(SAMPLE));
  assert.ok(short.length < compact(squeezed).length - 100, short);
  for (const name of ["outer", "callsLater", "helper", "counter", "item", "inner", "total"]) {
    assert.doesNotMatch(short, new RegExp("\\b" + name + "\\b"), name);
  }
  assert.match(short, /class Thing extends Error/);
  assert.match(short, /\{alias:\w+,key:\w+=2,\.\.\.\w+\}/, "shorthand becomes key: name");
  assert.match(short, /get status\(\)/);
  assert.match(short, /LIMIT:\w+,shadow:\w+\}/, "no trailing comma, keys kept");
  assert.match(short, /\[1,,3\]/, "a hole stays a hole");
  assert.match(short, /answer=\w+\(1\)\n|\w+=\w+\(1\)\n/, "a line break that ends a statement stays");
  assert.match(short, /\w+=async \w+=>/, "async keeps its space");
  assert.match(short, /typeof \w+=='function'/);
  assert.match(short, /:'other',\w+=1,\w+=\w+\+1;let /, "consecutive consts join, a let does not join them");
  assert.match(short, /const \w+=1\nconst \w+=2;/, "a statement a line break ends is not joined");
  assert.match(short, /=new Map,\w+=new Map\(\)\.set\(1,2\),\w+=15e3;/);
  assert.match(short, /return!1\}const /, "no line break after a declaration's body");
  assert.match(short, /=\(\)=>\{\}\n/, "an arrow's body keeps its line break");
  assert.match(short, /=function\(\)\{return 1\}\n/, "a function expression's too");
  assert.match(short, /\+=1\}\w+\+=1/, "an if block's does not");
  assert.equal(rename(squeezed), rename(squeezed), "deterministic");
});

test("a new name never equals a name the code leaves alone", () => {
  const code = "(function(){const longName = 1; const other = 2; out = [a, b, c, longName, other];})();";
  const short = rename(code, ["out", "a", "b", "c"]);
  assert.match(short, /out = \[a, b, c, (\w+), (\w+)\]/);
  const [, x, y] = /out = \[a, b, c, (\w+), (\w+)\]/.exec(short);
  assert.ok(![x, y].some((n) => ["a", "b", "c", "out"].includes(n)), short);
});

test("names whose scopes never meet share a short name; nested ones never do", () => {
  const code = "function f(alpha) { return alpha; }\nfunction g(beta) { return (gamma) => beta + gamma; }";
  const short = rename(code, []);
  const [, a] = /function \w+\((\w+)\)/.exec(short);
  const [, b, c] = /function \w+\((\w+)\) \{ return \((\w+)\)/.exec(short);
  assert.equal(a, b, short);
  assert.notEqual(b, c, short);
});

test("what the renamer cannot read safely is refused", () => {
  for (const [code, message] of [
    ["const a = `x`;", /template literals/],
    ["x: for (;;) break x;", /labels/],
    ["switch (a) { case 1: }", /not supported/],
    ["var a = 1;", /var is not supported/],
    ["eval('1');", /not supported/],
    ["const a = 1; // trailing", /own lines/],
    ["const Map = 1;", /global name Map/],
    ["const o = { a b };", /cannot classify/],
  ]) {
    assert.throws(() => rename(code), message, code);
  }
});

test("the tokenizer tells regexes from divisions and keeps strings whole", () => {
  const kinds = (code) => tokenize(code).filter((t) => t.t !== "ws").map((t) => t.t + ":" + t.v);
  assert.deepEqual(kinds("a = b / c / d;"), ["id:a", "p:=", "id:b", "p:/", "id:c", "p:/", "id:d", "p:;"]);
  assert.deepEqual(kinds("return /[/]x/g.test('a\\'b')"), ["id:return", "re:/[/]x/g", "p:.", "id:test", "p:(", "str:'a\\'b'", "p:)"]);
  assert.deepEqual(kinds("x?.y ?.5:1"), ["id:x", "p:?.", "id:y", "p:?", "num:.5", "p::", "num:1"]);
});
