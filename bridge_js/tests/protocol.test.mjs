import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as protocol from "../src/protocol.js";
import { CODES, BridgeError, wireError, typeError } from "../src/errors.js";
import { HINTS } from "../src/hints.js";

test("the protocol is version 1 with the handshake message types", () => {
  assert.equal(protocol.V, 1);
  assert.equal(protocol.HELLO, "steamHarnessKanban:hello");
  assert.equal(protocol.CONNECT, "steamHarnessKanban:connect");
});

test("requests may carry only the seven fields of the frame", () => {
  assert.deepEqual(protocol.FIELDS, ["v", "id", "op", "alias", "key", "value", "expectedRevision"]);
});

const spec = JSON.parse(readFileSync(new URL("../protocol.json", import.meta.url), "utf8"));

test("everything comes from protocol.json, which the server reads too", () => {
  assert.equal(protocol.V, spec.version);
  assert.deepEqual(protocol.LIMITS, spec.limits);
  assert.deepEqual(protocol.KNOWLEDGE, spec.knowledge);
  assert.deepEqual(protocol.ATTACHMENTS, spec.attachments);
  assert.deepEqual(protocol.CARDS, spec.cards);
  assert.deepEqual(protocol.CODES, spec.errors);
});

test("the ops are the eight KV ops, the configuration's, notify, the seven knowledge ops, the three attachment ops and the Board's three card ops", () => {
  assert.deepEqual(
    Object.keys(protocol.OP_RULES).sort(),
    [
      "cards.targets",
      "cards.copy",
      "cards.move",
      "attachments.upload",
      "attachments.list",
      "attachments.delete",
      "configuration.set",
      "notify",
      "get",
      "getMany",
      "history",
      "set",
      "subscribe",
      "unsubscribe",
      "watch",
      "unwatch",
      "knowledge.list",
      "knowledge.get",
      "knowledge.create",
      "knowledge.edit",
      "knowledge.delete",
      "knowledge.search",
      "knowledge.readLines",
    ].sort(),
  );
});

test("limits: 1024-char keys, 1 MiB values, 8 MiB documents, depth 64, 15 s timeout", () => {
  assert.equal(protocol.LIMITS.keyChars, 1024);
  assert.equal(protocol.LIMITS.valueBytes, 1048576);
  assert.equal(protocol.LIMITS.documentBytes, 8388608);
  assert.equal(protocol.MAX_DEPTH, 64);
  assert.equal(protocol.LIMITS.revisionChars, 20);
  assert.equal(protocol.TIMEOUT, 15000);
  assert.equal(protocol.HELLO_EVERY, 200);
  assert.equal(protocol.HELLO_FOR, 5000);
  assert.equal(protocol.BACKOFF_MIN, 250);
  assert.equal(protocol.BACKOFF_MAX, 5000);
  assert.deepEqual(protocol.STATUSES, ["connecting", "open", "reconnecting", "closed"]);
});

test("the alias grammar is [a-z][a-z0-9_-]{0,63}", () => {
  for (const ok of ["a", "inventory", "my-board_2", "a" + "b".repeat(63)]) {
    assert.ok(protocol.ALIAS.test(ok), ok);
  }
  for (const bad of ["", "A", "1abc", "-a", "_a", "a" + "b".repeat(64), "a.b", "a b", "ä"]) {
    assert.ok(!protocol.ALIAS.test(bad), bad);
  }
});

test("the error codes are exactly the server's ErrorCode strings", () => {
  assert.deepEqual(CODES, [
    "invalid_argument",
    "unauthenticated",
    "forbidden",
    "not_found",
    "unknown_alias",
    "relationship_pending",
    "conflict",
    "too_large",
    "quota_exceeded",
    "limit_reached",
    "built_in",
    "rate_limited",
    "unavailable",
    "not_supported",
  ]);
});

test("a BridgeError is an Error with a code and, for conflicts, the current value", () => {
  const err = new BridgeError("conflict", "changed", { found: false });
  assert.ok(err instanceof Error);
  assert.equal(err.name, "BridgeError");
  assert.equal(err.code, "conflict");
  assert.equal(err.message, "changed");
  assert.deepEqual(err.current, { found: false });
  assert.ok(!("current" in new BridgeError("forbidden", "no")));
});

test("argument mistakes are TypeErrors that still carry invalid_argument", () => {
  const err = typeError("bad key");
  assert.ok(err instanceof TypeError);
  assert.equal(err.code, "invalid_argument");
});

test("an unknown error code from the wire becomes unavailable", () => {
  assert.deepEqual(wireError({ code: "teapot", message: "short and stout" }), {
    code: "unavailable",
    message: "short and stout",
  });
  assert.deepEqual(wireError(null), { code: "unavailable", message: "bridge error" });
  assert.deepEqual(wireError({ code: "conflict", message: "m", current: { found: false }, x: 1 }), {
    code: "conflict",
    message: "m",
    current: { found: false },
  });
});

test("every code has a hint, and the README's Errors table is the hints table", () => {
  assert.deepEqual(Object.keys(HINTS).sort(), [...CODES].sort());
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const table = readme.slice(readme.indexOf("| code | what to do |"));
  const rows = [...table.matchAll(/^\| `([a-z_]+)` \| (.+) \|$/gm)].map(([, code, hint]) => [code, hint]);
  assert.deepEqual(Object.fromEntries(rows.filter(([code]) => CODES.includes(code))), HINTS);
});
