import { test, describe } from "node:test";
import assert from "node:assert/strict";
import vm from "node:vm";
import { checkRequest, checkValue, checkKey, checkAlias, isFrame, isPlain } from "../src/guards.js";
import { BridgeError } from "../src/errors.js";

const get = (extra = {}) => ({ v: 1, id: 1, op: "get", key: "cards", ...extra });
const set = (extra = {}) => ({ v: 1, id: 2, op: "set", key: "cards", value: [1, 2], ...extra });

function rejects(frame, code = "invalid_argument", message) {
  assert.throws(
    () => checkRequest(frame),
    (err) => {
      assert.ok(err instanceof (code === "too_large" ? BridgeError : TypeError), err.name);
      assert.equal(err.code, code);
      if (message) assert.match(err.message, message);
      return true;
    },
  );
}

const nested = (depth) => {
  let v = 0;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
};

describe("valid frames pass and come back as a fresh copy", () => {
  const valid = [
    get(),
    get({ alias: null }),
    get({ alias: "inventory" }),
    set({ value: null }),
    set({ value: { a: [true, false, null, 1.5, -0, "x"], b: {} } }),
    set({ expectedRevision: null }),
    set({ expectedRevision: "42" }),
    set({ expectedRevision: "r".repeat(20) }),
    set({ value: nested(64) }),
    set({ key: "k".repeat(1024) }),
    set({ key: "😀".repeat(1024) }),
    { v: 1, id: 3, op: "subscribe" },
    { v: 1, id: 3, op: "subscribe", alias: "inventory" },
    { v: 1, id: 4, op: "unsubscribe", alias: null },
    { v: 1, id: Number.MAX_SAFE_INTEGER, op: "knowledge.list", value: { cursor: null } },
    { v: 1, id: 5, op: "knowledge.get", key: "doc-1" },
    { v: 1, id: 6, op: "knowledge.create", alias: "database", value: { title: "T", markdown: "# T" } },
    { v: 1, id: 7, op: "knowledge.edit", key: "doc-1", value: { title: "T" } },
    { v: 1, id: 8, op: "knowledge.delete", key: "doc-1" },
    { v: 1, id: 9, op: "knowledge.search", value: { query: "x", beforeLines: 1 } },
    { v: 1, id: 10, op: "knowledge.readLines", key: "doc-1", value: { start: 1, end: 5 } },
    JSON.parse('{"v":1,"id":11,"op":"get","key":"k"}'),
    Object.assign(Object.create(null), get()),
  ];
  for (const frame of valid) {
    test(JSON.stringify(frame).slice(0, 90), () => {
      const out = checkRequest(frame);
      assert.notEqual(out, frame);
      assert.deepEqual({ ...out }, { ...frame });
    });
  }
});

describe("extra fields are rejected", () => {
  for (const field of ["projectId", "scope", "target", "path", "constructor", "toString", "ok", "event"]) {
    test(field, () => rejects(get({ [field]: "x" }), "invalid_argument", new RegExp(field)));
  }
  test("an own __proto__ property, as JSON.parse produces it", () => {
    const frame = JSON.parse('{"v":1,"id":1,"op":"get","key":"k","__proto__":{"projectId":"x"}}');
    assert.ok(Object.hasOwn(frame, "__proto__"));
    rejects(frame, "invalid_argument", /__proto__/);
  });
  test("a symbol key", () => rejects(get({ [Symbol("projectId")]: 1 })));
  test("an own property set to undefined still counts", () => rejects(get({ scope: undefined })));
});

describe("frames must be plain objects", () => {
  for (const [name, frame] of [
    ["null", null],
    ["a string", '{"v":1}'],
    ["an array", [1]],
    ["a Map", new Map(Object.entries(get()))],
    [
      "a class instance",
      new (class Frame {
        constructor() {
          Object.assign(this, get());
        }
      })(),
    ],
    ["a Date", new Date()],
  ]) {
    test(name, () => rejects(frame, "invalid_argument", /plain object/));
  }
});

describe("the envelope", () => {
  test("v must be 1", () => {
    rejects(get({ v: 2 }), "invalid_argument", /version/);
    rejects(get({ v: "1" }), "invalid_argument", /version/);
    const { v, ...noV } = get();
    rejects(noV, "invalid_argument", /version/);
  });
  test("id is required and must be a safe positive integer", () => {
    const { id, ...noId } = get();
    rejects(noId, "invalid_argument", /id/);
    for (const bad of [0, -1, 1.5, "1", null, NaN, Infinity, 2 ** 53, true]) {
      rejects(get({ id: bad }), "invalid_argument", /id/);
    }
  });
  test("unknown ops are rejected", () => {
    for (const op of ["delete", "list", "GET", "knowledge", "knowledge.drop", "", null, undefined]) {
      rejects(get({ op }), "invalid_argument", /unknown op/);
    }
  });
});

describe("alias", () => {
  test("absent or null means the current project", () => {
    assert.ok(!("alias" in checkRequest(get())));
    assert.equal(checkRequest(get({ alias: null })).alias, null);
  });
  for (const alias of ["", "Inventory", "1x", "-x", "a".repeat(65), "a/b", " a", 7, {}, undefined]) {
    test("rejects " + JSON.stringify(alias), () => rejects(get({ alias }), "invalid_argument", /alias/));
  }
});

describe("op", () => {
  // Found by R4: an op spelled as an array (["get"]) passed a property lookup and was relayed.
  test("must be one of the spec's op strings, spelled exactly", () => {
    for (const op of [["get"], "valueOf", "__proto__", "GET", 1, null]) {
      rejects({ v: 1, id: 1, op, key: "k" }, "invalid_argument", /unknown op/);
    }
  });
});

describe("getMany", () => {
  const many = (value) => ({ v: 1, id: 1, op: "getMany", value });
  test("takes 1 to 256 valid keys in value, and nothing in key", () => {
    checkRequest(many(["a", "b"]));
    checkRequest(many(Array.from({ length: 256 }, (_, n) => "k" + n)));
    for (const bad of [[], "a", [1], [""], ["a\u0000"], Array.from({ length: 257 }, (_, n) => "k" + n)]) {
      rejects(many(bad), "invalid_argument", /key/);
    }
    rejects({ v: 1, id: 1, op: "getMany" }, "invalid_argument", /needs a value/);
    rejects({ ...many(["a"]), key: "a" }, "invalid_argument", /takes no key/);
  });
});

describe("key", () => {
  test("is required for get and set", () => {
    const { key: _g, ...getNoKey } = get();
    const { key: _s, ...setNoKey } = set();
    rejects(getNoKey, "invalid_argument", /needs a key/);
    rejects(setNoKey, "invalid_argument", /needs a key/);
  });
  test("is forbidden for subscribe and unsubscribe", () => {
    rejects({ v: 1, id: 1, op: "subscribe", key: "k" }, "invalid_argument", /takes no key/);
    rejects({ v: 1, id: 1, op: "unsubscribe", key: "k" }, "invalid_argument", /takes no key/);
  });
  test("empty, 1025 characters, NUL, lone surrogate and non-strings are rejected", () => {
    rejects(get({ key: "" }), "invalid_argument", /key/);
    rejects(get({ key: "k".repeat(1025) }), "invalid_argument", /longer than 1024/);
    rejects(get({ key: "😀".repeat(1025) }), "invalid_argument", /longer than 1024/);
    rejects(get({ key: "a\u0000b" }), "invalid_argument", /NUL/);
    rejects(get({ key: "a\uD800b" }), "invalid_argument", /surrogate/);
    for (const key of [1, null, undefined, ["k"], { k: 1 }]) rejects(get({ key }), "invalid_argument", /key/);
  });
  test("checkKey is the same rule on its own", () => {
    checkKey("k");
    assert.throws(() => checkKey(""), { code: "invalid_argument" });
  });
});

describe("value", () => {
  test("is required for set and forbidden for get, subscribe and unsubscribe", () => {
    const { value, ...noValue } = set();
    rejects(noValue, "invalid_argument", /needs a value/);
    rejects(get({ value: 1 }), "invalid_argument", /takes no value/);
    rejects({ v: 1, id: 1, op: "subscribe", value: 1 }, "invalid_argument", /takes no value/);
  });
  const notJson = [
    ["undefined", undefined, /undefined is not JSON/],
    ["NaN", NaN, /NaN/],
    ["Infinity", -Infinity, /NaN and Infinity/],
    ["a function", () => 1, /function is not JSON/],
    ["a bigint", 1n, /bigint is not JSON/],
    ["a symbol", Symbol("s"), /symbol is not JSON/],
    ["a nested undefined", { a: [1, undefined] }, /undefined/],
    ["a nested NaN", { a: { b: NaN } }, /NaN/],
    ["a nested function", [{ toJSON: () => 1 }], /function/],
    ["a Date", new Date(0), /plain objects/],
    ["a Map", new Map(), /plain objects/],
    ["a class instance", new (class Card {})(), /plain objects/],
    ["a typed array", new Uint8Array(2), /plain objects/],
    // biome-ignore lint/suspicious/noSparseArray: the hole is what is refused
    ["a sparse array", [1, , 3], /holes/],
    ["a lone surrogate", "\uDC00", /surrogate/],
    ["a lone surrogate key", { "\uD83D": 1 }, /surrogate/],
    ["a symbol-keyed object", { [Symbol("x")]: 1 }, /plain objects/],
  ];
  for (const [name, value, message] of notJson) {
    test("rejects " + name, () => rejects(set({ value }), "invalid_argument", message));
  }
  test("rejects cycles", () => {
    const a = { b: {} };
    a.b.a = a;
    rejects(set({ value: a }), "invalid_argument", /cycle/);
    const list = [];
    list.push(list);
    rejects(set({ value: list }), "invalid_argument", /cycle/);
  });
  test("accepts the same object twice when it is not a cycle", () => {
    const shared = { x: 1 };
    checkRequest(set({ value: [shared, shared, { shared }] }));
  });
  test("depth counts containers: 64 pass, 65 fail", () => {
    checkValue(nested(64));
    rejects(set({ value: nested(65) }), "invalid_argument", /deeper than 64/);
    let obj = {};
    const root = obj;
    for (let i = 1; i < 65; i++) obj = obj.next = {};
    rejects(set({ value: root }), "invalid_argument", /deeper than 64/);
  });
  test("a value whose JSON is more than 1 MiB of UTF-8 is too_large", () => {
    checkValue("x".repeat(1048576 - 2));
    rejects(set({ value: "x".repeat(1048576 - 1) }), "too_large", /1048576 bytes/);
    checkValue("é".repeat((1048576 - 2) / 2));
    rejects(set({ value: "é".repeat((1048576 - 2) / 2 + 1) }), "too_large");
    rejects(set({ value: "😀".repeat(262144) }), "too_large");
    checkValue("😀".repeat(262143));
  });
  test("knowledge ops may omit value but must send JSON when they do", () => {
    checkRequest({ v: 1, id: 1, op: "knowledge.list" });
    rejects({ v: 1, id: 1, op: "knowledge.search", value: { query: NaN } }, "invalid_argument", /NaN/);
  });
});

// Found by R4 (tests/reliability/test_r4_fuzz.py): the host relayed Knowledge frames whose
// arguments the server refuses, a project id hidden in `value` among them.
describe("knowledge arguments are checked at the host as the server checks them", () => {
  const refused = [
    [{ op: "knowledge.create", value: { title: "T", markdown: "m", projectId: "x" } }, /takes no projectId/],
    [{ op: "knowledge.list", value: { cursor: null, scope: "conversation" } }, /takes no scope/],
    [{ op: "knowledge.list", value: JSON.parse('{"__proto__": {"cursor": 1}}') }, /takes no __proto__/],
    [{ op: "knowledge.get", key: "doc", value: { title: "T" } }, /takes no title/],
    [{ op: "knowledge.delete", key: "doc", value: [] }, /object as value/],
    [{ op: "knowledge.search", value: "query" }, /object as value/],
    [{ op: "knowledge.readLines", key: "doc", value: 1 }, /object as value/],
    [{ op: "knowledge.list", key: "doc" }, /takes no key/],
    [{ op: "knowledge.search", key: "doc", value: { query: "q" } }, /takes no key/],
    [{ op: "knowledge.get" }, /needs the document id/],
    [{ op: "knowledge.edit", value: { title: "T" } }, /needs the document id/],
  ];
  for (const [frame, message] of refused) {
    test("refuses " + JSON.stringify(frame), () => rejects({ v: 1, id: 1, ...frame }, "invalid_argument", message));
  }
  test("accepts what the SDK builds, an explicit null value, and create with an id", () => {
    checkRequest({ v: 1, id: 1, op: "knowledge.get", key: "doc", value: null });
    checkRequest({ v: 1, id: 1, op: "knowledge.get", key: "doc", value: {} });
    checkRequest({ v: 1, id: 1, op: "knowledge.create", key: "doc", value: { title: "T", markdown: "" } });
    checkRequest({ v: 1, id: 1, op: "knowledge.search", value: { query: "q", documentId: null } });
  });
});

describe("expectedRevision", () => {
  test("is only allowed on set", () => {
    rejects(get({ expectedRevision: "1" }), "invalid_argument", /only set/);
    rejects(get({ expectedRevision: null }), "invalid_argument", /only set/);
  });
  for (const bad of ["", "r".repeat(21), 42, false, {}, undefined]) {
    test("rejects " + JSON.stringify(bad), () => rejects(set({ expectedRevision: bad }), "invalid_argument", /expectedRevision/));
  }
});

test("objects from another realm are plain too", () => {
  const foreign = vm.runInNewContext('({v: 1, id: 1, op: "set", key: "k", value: {a: [1]}})');
  assert.notEqual(Object.getPrototypeOf(foreign), Object.prototype);
  assert.ok(isPlain(foreign));
  checkRequest(foreign);
  assert.ok(!isPlain(vm.runInNewContext("new Map()")));
});

test("checkAlias accepts the grammar and throws invalid_argument otherwise", () => {
  checkAlias("inventory");
  assert.throws(() => checkAlias("Inventory"), { code: "invalid_argument" });
});

test("isFrame accepts replies and events with v 1 and nothing else", () => {
  assert.ok(isFrame({ v: 1, id: 3, ok: true, result: {} }));
  assert.ok(isFrame({ v: 1, id: 3, ok: false, error: { code: "forbidden", message: "no" } }));
  assert.ok(isFrame({ v: 1, event: "revision", alias: null, revision: "7" }));
  for (const bad of [null, [], "x", { v: 2, event: "revision" }, { v: 1 }, { v: 1, id: "3", ok: true }, { v: 1, id: 3 }]) {
    assert.ok(!isFrame(bad), JSON.stringify(bad));
  }
});
