import { test } from "node:test";
import assert from "node:assert/strict";
import { createRpc } from "../src/rpc.js";
import { fakeClock, flush } from "./fakes.mjs";

function link() {
  const sent = [];
  return { sent, send: (frame) => sent.push(frame) };
}

test("ids start at 1, increase, and are stamped with v 1", () => {
  const clock = fakeClock();
  const rpc = createRpc(clock);
  const { sent, send } = link();
  rpc.attach(send);
  rpc.call({ op: "get", key: "a" });
  rpc.call({ op: "get", key: "b" });
  assert.deepEqual(sent, [
    { v: 1, id: 1, op: "get", key: "a" },
    { v: 1, id: 2, op: "get", key: "b" },
  ]);
});

test("each reply resolves the call with the same id, in any order", async () => {
  const clock = fakeClock();
  const rpc = createRpc(clock);
  rpc.attach(() => {});
  const first = rpc.call({ op: "get", key: "a" });
  const second = rpc.call({ op: "get", key: "b" });
  assert.equal(rpc.handle({ v: 1, id: 2, ok: true, result: "B" }), true);
  assert.equal(rpc.handle({ v: 1, id: 1, ok: false, error: { code: "forbidden", message: "no" } }), true);
  assert.deepEqual(await second, { v: 1, id: 2, ok: true, result: "B" });
  assert.equal((await first).error.code, "forbidden");
  assert.equal(clock.timers.size, 0);
});

test("a reply for an unknown or already answered id is ignored", async () => {
  const clock = fakeClock();
  const rpc = createRpc(clock);
  rpc.attach(() => {});
  const call = rpc.call({ op: "get", key: "a" });
  assert.equal(rpc.handle({ v: 1, id: 99, ok: true, result: 1 }), false);
  rpc.handle({ v: 1, id: 1, ok: true, result: 1 });
  assert.equal(rpc.handle({ v: 1, id: 1, ok: true, result: 2 }), false);
  assert.equal((await call).result, 1);
});

test("a call without a reply within 15 s resolves as unavailable", async () => {
  const clock = fakeClock();
  const rpc = createRpc(clock);
  rpc.attach(() => {});
  let reply = null;
  rpc.call({ op: "get", key: "a" }).then((r) => (reply = r));
  await clock.advance(14999);
  assert.equal(reply, null);
  await clock.advance(1);
  assert.deepEqual(reply, {
    v: 1,
    id: 1,
    ok: false,
    error: { code: "unavailable", message: "no reply within 15 s" },
  });
  assert.equal(clock.timers.size, 0);
  assert.equal(rpc.handle({ v: 1, id: 1, ok: true, result: "late" }), false);
});

test("an answered call clears its timer", async () => {
  const clock = fakeClock();
  const rpc = createRpc(clock);
  rpc.attach(() => {});
  rpc.call({ op: "get", key: "a" });
  assert.equal(clock.timers.size, 1);
  rpc.handle({ v: 1, id: 1, ok: true, result: null });
  assert.equal(clock.timers.size, 0);
});

test("calls made while detached wait and are sent in order on attach", async () => {
  const clock = fakeClock();
  const rpc = createRpc(clock);
  rpc.call({ op: "get", key: "a" });
  rpc.call({ op: "get", key: "b" });
  await clock.advance(10000);
  const { sent, send } = link();
  rpc.attach(send);
  assert.deepEqual(
    sent.map((f) => f.id),
    [1, 2],
  );
  await clock.advance(5000);
  assert.equal(clock.timers.size, 0, "the timeout counts from the call, not from sending");
});

test("detach fails what was sent and keeps what still waits", async () => {
  const clock = fakeClock();
  const rpc = createRpc(clock);
  const { sent, send } = link();
  rpc.attach(send);
  const inFlight = rpc.call({ op: "get", key: "a" });
  rpc.detach("the connection to the server was lost");
  const waiting = rpc.call({ op: "get", key: "b" });
  const reply = await inFlight;
  assert.equal(reply.error.code, "unavailable");
  assert.match(reply.error.message, /connection/);
  rpc.attach(send);
  assert.deepEqual(
    sent.map((f) => f.key),
    ["a", "b"],
  );
  rpc.handle({ v: 1, id: 2, ok: true, result: "B" });
  assert.equal((await waiting).result, "B");
});

test("detach with all fails everything, sent or not", async () => {
  const clock = fakeClock();
  const rpc = createRpc(clock);
  rpc.attach(() => {});
  const a = rpc.call({ op: "get", key: "a" });
  rpc.detach("gone");
  await a;
  const b = rpc.call({ op: "get", key: "b" });
  rpc.detach("closed", true);
  assert.equal((await b).error.code, "unavailable");
  await flush();
  assert.equal(clock.timers.size, 0);
});
