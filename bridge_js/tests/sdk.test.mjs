import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { createKanban } from "../src/sdk.js";
import { BridgeError } from "../src/errors.js";
import { fakeClock, fakePage, FakeMessageChannel, flush } from "./fakes.mjs";

// Marks a promise as handled now; assertions on it come after the reply is delivered.
const later = (promise) => (promise.catch(() => {}), promise);

const CONFIG = { id: "", name: "Default", values: { columns: ["todo", "done"] } };

// Plays the host by hand: hands the SDK a port and records what the plugin sends on it.
async function plugin({ connect = true, configuration = CONFIG } = {}) {
  const clock = fakeClock();
  const { host, frame } = fakePage(clock);
  const sdk = createKanban(frame);
  const channel = new FakeMessageChannel();
  const hostPort = channel.port1;
  const requests = [];
  const handshake = [];
  const arrived = [];
  hostPort.onmessage = (e) => {
    arrived.push(e.data);
    (e.data.type === "ready" ? handshake : requests).push(e.data);
  };
  const env = {
    clock,
    host,
    frame,
    sdk,
    hostPort,
    requests,
    handshake,
    arrived,
    log: frame.console.lines,
    connect(nonce = "n0nce") {
      frame.receive({ type: "steamHarnessKanban:connect", v: 1, nonce }, host, [channel.port2]);
      return flush();
    },
    send(frame) {
      hostPort.postMessage(frame);
      return flush();
    },
    reply(request, result) {
      return env.send({ v: 1, id: request.id, ok: true, result });
    },
    fail(request, code, message = code, extra = {}) {
      return env.send({ v: 1, id: request.id, ok: false, error: { code, message, ...extra } });
    },
    async next() {
      await flush();
      return requests.shift();
    },
  };
  if (connect) {
    await env.connect();
    if (configuration) await env.send({ v: 1, event: "configuration", configuration });
  }
  return env;
}

describe("context", () => {
  const OWN = { user: { id: 3, username: "carol", displayName: "Carol" }, role: "guest", can: { read: true, write: false } };

  test("before the host speaks the context says nobody may do anything", async () => {
    const p = await plugin({ connect: false });
    assert.deepEqual(p.sdk.getContext(), { user: null, role: null, status: "unknown", can: {} });
    assert.equal(p.sdk.relatedProjects.get("inventory").getContext().status, "unknown");
  });

  test("each part is its own: this project's and each alias', frozen, with its own listeners", async () => {
    const p = await plugin();
    const mine = [];
    const theirs = [];
    p.sdk.onContextChange((c) => mine.push(c));
    const inventory = p.sdk.relatedProjects.get("inventory");
    const stop = inventory.onContextChange((c) => theirs.push(c));
    await p.send({ v: 1, event: "context", context: OWN });
    await p.send({ v: 1, event: "context", alias: "inventory", context: { status: "confirmed", can: { read: true } } });
    assert.deepEqual(p.sdk.getContext(), OWN);
    assert.ok(Object.isFrozen(p.sdk.getContext().can));
    assert.equal(inventory.getContext().status, "confirmed");
    assert.deepEqual(mine, [OWN]);
    assert.deepEqual(
      theirs.map((c) => c.status),
      ["confirmed"],
    );
    stop();
    await p.send({ v: 1, event: "context", alias: "inventory", context: { status: "pending", can: {} } });
    assert.equal(theirs.length, 1);
    assert.equal(p.sdk.relatedProjects.get("billing").getContext().status, "unknown");
  });
});

describe("uncaught errors", () => {
  test("the page's uncaught errors reach the host, those from before the connect too", async () => {
    const p = await plugin({ connect: false });
    p.frame.uncaught("Uncaught SyntaxError: Unexpected token '}'", "https://plugins.example/app.js", 12);
    await p.connect();
    p.frame.uncaught("Uncaught TypeError: x is undefined", "https://plugins.example/app.js", 40);
    await flush();
    assert.deepEqual(
      p.arrived.filter((f) => f.event === "error"),
      [
        { v: 1, event: "error", message: "Uncaught SyntaxError: Unexpected token '}'", at: "https://plugins.example/app.js:12" },
        { v: 1, event: "error", message: "Uncaught TypeError: x is undefined", at: "https://plugins.example/app.js:40" },
      ],
    );
  });
});

describe("handshake", () => {
  test("says hello to the parent every 200 ms until connected", async () => {
    const p = await plugin({ connect: false });
    await flush();
    assert.equal(p.host.received.length, 1);
    assert.deepEqual(p.host.received[0].data, { type: "steamHarnessKanban:hello", v: 1 });
    assert.equal(p.host.received[0].source, p.frame);
    await p.clock.advance(1000);
    assert.equal(p.host.received.length, 6);
    await p.connect();
    await p.clock.advance(1000);
    assert.equal(p.host.received.length, 6);
  });

  test("gives up after about 5 s and says why in the console", async () => {
    const p = await plugin({ connect: false });
    await p.clock.advance(10000);
    assert.equal(p.host.received.length, 25);
    assert.match(p.log.warn[0], /no board host answered/);
  });

  test("accepts the first connect from the parent and answers ready with its nonce", async () => {
    const p = await plugin({ connect: false });
    await p.connect("abc123");
    assert.deepEqual(p.handshake, [{ v: 1, type: "ready", nonce: "abc123" }]);
    const other = new FakeMessageChannel();
    other.port1.onmessage = () => assert.fail("a second connect must be ignored");
    p.frame.receive({ type: "steamHarnessKanban:connect", v: 1, nonce: "x" }, p.host, [other.port2]);
    await flush();
  });

  test("ignores connects from other windows, without exactly one port, or malformed", async () => {
    const p = await plugin({ connect: false });
    const stranger = {};
    const bogus = new FakeMessageChannel();
    bogus.port1.onmessage = () => assert.fail("must not answer a bogus connect");
    const connect = { type: "steamHarnessKanban:connect", v: 1, nonce: "n" };
    p.frame.receive(connect, stranger, [bogus.port2]);
    p.frame.receive(connect, p.host, []);
    p.frame.receive(connect, p.host, [bogus.port2, new FakeMessageChannel().port2]);
    p.frame.receive({ ...connect, v: 2 }, p.host, [bogus.port2]);
    p.frame.receive({ ...connect, nonce: 5 }, p.host, [bogus.port2]);
    p.frame.receive({ type: "steamHarnessKanban:hello", v: 1 }, p.host, [bogus.port2]);
    await flush();
    await p.connect("real");
    assert.deepEqual(p.handshake, [{ v: 1, type: "ready", nonce: "real" }]);
  });

  test("requests made before the connection wait and are sent once connected, after ready", async () => {
    const p = await plugin({ connect: false });
    const value = p.sdk.kv.getValue("early");
    p.sdk.kv.subscribe(() => {});
    await p.clock.advance(400);
    assert.equal(p.requests.length, 0);
    await p.connect();
    assert.deepEqual(
      p.arrived.map((f) => f.type ?? f.op),
      ["ready", "get", "subscribe"],
      "ready is the port's first message",
    );
    const request = await p.next();
    assert.deepEqual(request, { v: 1, id: 1, op: "get", key: "early" });
    await p.reply(request, { found: true, value: 1, revision: "3" });
    assert.equal(await value, 1);
  });
});

describe("watch", () => {
  test("watches with the listener's prefix and hands each listener its own keys", async () => {
    const p = await plugin();
    const cards = [];
    const all = [];
    const stopCards = p.sdk.kv.watch((e) => cards.push(e), { prefix: "card:" });
    assert.deepEqual(await p.next(), { v: 1, id: 1, op: "watch", value: { prefix: "card:" } });
    const stopAll = p.sdk.kv.watch((e) => all.push(e));
    assert.deepEqual(await p.next(), { v: 1, id: 2, op: "watch", value: { prefix: "" } }, "widened once");
    const changes = [
      { key: "card:1", revision: "7" },
      { key: "columns", revision: "8" },
    ];
    await p.send({ v: 1, event: "changes", alias: null, changes });
    await p.send({ v: 1, event: "changes", alias: null, changes: [{ key: "columns", revision: "9" }] });
    await p.send({ v: 1, event: "changes", alias: null, changes: [], resync: true });
    assert.deepEqual(cards, [
      { alias: null, changes: [{ key: "card:1", revision: "7" }] },
      { alias: null, changes: [], resync: true },
    ]);
    assert.equal(all.length, 3);
    stopCards();
    assert.equal(await p.next(), undefined, "another listener still watches");
    stopAll();
    assert.deepEqual(await p.next(), { v: 1, id: 3, op: "unwatch" });
  });

  test("hands on pushed values and deletions, frozen, so no listener changes another's", async () => {
    const p = await plugin();
    const seen = [];
    p.sdk.kv.watch((e) => seen.push(e));
    p.sdk.kv.watch((e) => seen.push(e));
    await p.next();
    const changes = [
      { key: "card:1", revision: "7", value: { title: "Bolts", labels: ["a"] } },
      { key: "card:2", revision: "8", deleted: true },
    ];
    await p.send({ v: 1, event: "changes", alias: null, changes });
    assert.equal(seen.length, 2);
    assert.deepEqual(seen[0].changes, changes);
    assert.ok(Object.isFrozen(seen[0].changes[0].value.labels));
    assert.throws(() => seen[0].changes[0].value.labels.push("b"), TypeError);
    assert.deepEqual(seen[1].changes[0].value.labels, ["a"]);
  });
});

describe("getValues", () => {
  test("sends the keys in one request and resolves with the results in order", async () => {
    const p = await plugin();
    const results = p.sdk.relatedProjects.get("inventory").kv.getValues(["a", "b"]);
    const request = await p.next();
    assert.deepEqual(request, { v: 1, id: 1, op: "getMany", alias: "inventory", value: ["a", "b"] });
    const answer = [
      { found: true, value: 1, revision: "3" },
      { found: false, error: { code: "forbidden", message: "no" } },
    ];
    await p.reply(request, answer);
    assert.deepEqual(await results, answer);
  });
});

describe("getHistory", () => {
  test("asks for one key's versions with its limit and cursor, here or through an alias", async () => {
    const p = await plugin();
    const here = p.sdk.kv.getHistory("card:1");
    const request = await p.next();
    assert.deepEqual(request, { v: 1, id: 1, op: "history", key: "card:1", value: {} });
    const answer = { entries: [{ revision: "9", value: { title: "A" }, source: null, writtenAt: "t" }], cursor: null };
    await p.reply(request, answer);
    assert.deepEqual(await here, answer);
    p.sdk.relatedProjects.get("inventory").kv.getHistory("stock:1", { limit: 5, before: "9" });
    assert.deepEqual(await p.next(), { v: 1, id: 2, op: "history", alias: "inventory", key: "stock:1", value: { limit: 5, before: "9" } });
    await assert.rejects(p.sdk.kv.getHistory(""), TypeError);
  });
});

describe("configuration", () => {
  test("ready resolves with the first configuration", async () => {
    const p = await plugin({ configuration: null });
    let ready = false;
    p.sdk.ready.then(() => (ready = true));
    await flush();
    assert.equal(ready, false);
    assert.deepEqual(p.sdk.getConfiguration(), { id: "", name: "", values: {} });
    await p.send({ v: 1, event: "configuration", configuration: CONFIG });
    assert.equal(ready, true);
    assert.deepEqual(p.sdk.getConfiguration(), CONFIG);
  });

  test("getConfiguration is synchronous and deeply frozen", async () => {
    const p = await plugin();
    const c = p.sdk.getConfiguration();
    assert.ok(Object.isFrozen(c) && Object.isFrozen(c.values) && Object.isFrozen(c.values.columns));
    assert.throws(() => {
      c.values.columns.push("x");
    }, TypeError);
  });

  test("setConfigurationValues writes the values of the configuration the plugin shows", async () => {
    const p = await plugin({ configuration: { id: "c2", name: "Sprint", values: {} } });
    const saved = p.sdk.setConfigurationValues({ view: { density: "compact" } });
    const request = await p.next();
    assert.deepEqual(
      { op: request.op, key: request.key, value: request.value },
      { op: "configuration.set", key: "c2", value: { view: { density: "compact" } } },
    );
    await p.reply(request, {});
    assert.equal(await saved, undefined);

    await p.send({ v: 1, event: "configuration", configuration: CONFIG });
    p.sdk.setConfigurationValues({});
    assert.equal((await p.next()).key, "default", "the Default is named default");
  });

  test("onConfigurationChange fires on each switch after the first, until unsubscribed", async () => {
    const p = await plugin({ configuration: null });
    const seen = [];
    const off = p.sdk.onConfigurationChange((c) => seen.push(c.id));
    await p.send({ v: 1, event: "configuration", configuration: CONFIG });
    await p.send({ v: 1, event: "configuration", configuration: { id: "c2", name: "Sprint", values: {} } });
    assert.deepEqual(seen, ["c2"]);
    assert.equal(p.sdk.getConfiguration().name, "Sprint");
    off();
    await p.send({ v: 1, event: "configuration", configuration: { id: "c3", name: "x", values: {} } });
    assert.deepEqual(seen, ["c2"]);
  });

  test("a throwing listener does not stop the others", async () => {
    const p = await plugin();
    const seen = [];
    p.sdk.onConfigurationChange(() => {
      throw new Error("plugin bug");
    });
    p.sdk.onConfigurationChange((c) => seen.push(c.id));
    await p.send({ v: 1, event: "configuration", configuration: { id: "c2", name: "n", values: {} } });
    assert.deepEqual(seen, ["c2"]);
    assert.match(p.log.error[0], /plugin bug/);
  });

  test("status follows the host's status events", async () => {
    const p = await plugin();
    assert.equal(p.sdk.status, "connecting");
    await p.send({ v: 1, event: "status", status: "open" });
    assert.equal(p.sdk.status, "open");
  });
});

describe("kv.getValue and kv.setValue", () => {
  test("getValue resolves undefined for an absent key and null for a stored null", async () => {
    const p = await plugin();
    const absent = p.sdk.kv.getValue("a");
    await p.reply(await p.next(), { found: false });
    assert.equal(await absent, undefined);
    const stored = p.sdk.kv.getValue("b");
    await p.reply(await p.next(), { found: true, value: null, revision: "9" });
    assert.equal(await stored, null);
  });

  test("the current project's frames carry no alias; a related project's carry its alias", async () => {
    const p = await plugin();
    p.sdk.kv.setValue("cards", [1]);
    assert.deepEqual(await p.next(), { v: 1, id: 1, op: "set", key: "cards", value: [1] });
    p.sdk.relatedProjects.get("inventory").kv.getValue("stock:item-1");
    assert.deepEqual(await p.next(), { v: 1, id: 2, op: "get", alias: "inventory", key: "stock:item-1" });
  });

  test("setValue resolves with nothing once the server stored the value", async () => {
    const p = await plugin();
    const done = p.sdk.kv.setValue("k", { n: 1 });
    await p.reply(await p.next(), { revision: "12" });
    assert.equal(await done, undefined);
  });

  for (const [name, value] of [
    ["undefined", undefined],
    ["NaN", NaN],
    ["a function", () => 1],
    ["a Date", new Date()],
    [
      "a cycle",
      (() => {
        const a = [];
        a.push(a);
        return a;
      })(),
    ],
    ["a value nested deeper than 64", JSON.parse("[".repeat(65) + "]".repeat(65))],
  ]) {
    test("setValue rejects " + name + " with a TypeError and sends nothing", async () => {
      const p = await plugin();
      await assert.rejects(p.sdk.kv.setValue("k", value), (err) => {
        assert.ok(err instanceof TypeError);
        assert.equal(err.code, "invalid_argument");
        return true;
      });
      await flush();
      assert.deepEqual(p.requests, []);
    });
  }

  test("keys of the wrong type are TypeErrors too, and nothing is sent", async () => {
    const p = await plugin();
    for (const key of ["", 5, undefined, null, ["k"]]) {
      await assert.rejects(p.sdk.kv.getValue(key), TypeError);
      await assert.rejects(p.sdk.kv.setValue(key, 1), TypeError);
    }
    await flush();
    assert.deepEqual(p.requests, []);
  });

  // The limits are the host's (dist.test.mjs runs them through the real host): the SDK
  // sends such a call, and the host's refusal rejects it with the same code as ever.
  test("a key or value past the limits goes to the host, whose refusal is an invalid_argument BridgeError", async () => {
    const p = await plugin();
    const calls = [
      () => p.sdk.kv.getValue("k".repeat(1025)),
      () => p.sdk.kv.getValue("a\u0000b"),
      () => p.sdk.kv.getValue("a\uD800b"),
      () => p.sdk.kv.setValue("k", { a: "\uDC00" }),
      () => p.sdk.kv.setValue("k", { "\uD83D": 1 }),
    ];
    for (const call of calls) {
      const done = later(call());
      const request = await p.next();
      assert.ok(request, "sent to the host");
      await p.fail(request, "invalid_argument", "refused by the host");
      await assert.rejects(done, (err) => err instanceof BridgeError && err.code === "invalid_argument");
    }
    assert.equal(p.log.warn.length, 5, "logged like any refusal");
  });

  test("a value over 1 MiB goes to the host, whose refusal is a too_large BridgeError", async () => {
    const p = await plugin();
    const write = later(p.sdk.kv.setValue("k", "x".repeat(1048576)));
    const request = await p.next();
    await p.fail(request, "too_large", "value is more than 1048576 bytes of JSON");
    await assert.rejects(write, (err) => {
      assert.ok(err instanceof BridgeError);
      assert.equal(err.code, "too_large");
      return true;
    });
    assert.match(p.log.warn[0], /^steamHarnessKanban: too_large: value is more than 1048576 bytes/);
  });

  test("a server error rejects with a BridgeError and logs its code, message and hint once", async () => {
    const p = await plugin();
    const inventory = p.sdk.relatedProjects.get("inventory");
    const read = later(inventory.kv.getValue("stock"));
    await p.fail(await p.next(), "relationship_pending", "inventory has not declared this project", {
      hint: "the other project must declare this one",
    });
    await assert.rejects(read, (err) => {
      assert.ok(err instanceof p.sdk.BridgeError);
      assert.equal(err.code, "relationship_pending");
      assert.equal(err.message, "inventory has not declared this project");
      assert.equal(err.hint, "the other project must declare this one");
      return true;
    });
    assert.deepEqual(p.log.warn, [
      "steamHarnessKanban: relationship_pending: inventory has not declared this project " + "(the other project must declare this one)",
    ]);
  });

  test("no reply within 15 s rejects with unavailable", async () => {
    const p = await plugin();
    const read = later(p.sdk.kv.getValue("k"));
    await p.clock.advance(15000);
    await assert.rejects(read, { name: "BridgeError", code: "unavailable" });
  });
});

describe("kv.updateValue", () => {
  test("reads, applies the updater and writes with the read revision", async () => {
    const p = await plugin();
    const done = p.sdk.kv.updateValue("count", (n) => n + 1);
    const get = await p.next();
    assert.deepEqual(get, { v: 1, id: 1, op: "get", key: "count" });
    await p.reply(get, { found: true, value: 41, revision: "7" });
    const set = await p.next();
    assert.deepEqual(set, { v: 1, id: 2, op: "set", key: "count", value: 42, expectedRevision: "7" });
    await p.reply(set, { revision: "8" });
    assert.equal(await done, 42);
  });

  test("one page's updates of one key run one after another; other keys do not wait", async () => {
    const p = await plugin();
    const first = p.sdk.kv.updateValue("count", (n) => n + 1);
    const second = p.sdk.kv.updateValue("count", (n) => n + 10);
    const other = p.sdk.kv.updateValue("other", () => "x");
    const get1 = await p.next();
    const getOther = await p.next();
    assert.deepEqual([get1.key, getOther.key], ["count", "other"]);
    assert.equal(await p.next(), undefined, "the second update of count waits");
    await p.reply(get1, { found: true, value: 1, revision: "1" });
    const set1 = await p.next();
    assert.equal(set1.value, 2);
    await p.reply(set1, { revision: "2" });
    assert.equal(await first, 2);
    const get2 = await p.next();
    assert.deepEqual([get2.op, get2.key], ["get", "count"]);
    await p.reply(get2, { found: true, value: 2, revision: "2" });
    const set2 = await p.next();
    assert.deepEqual([set2.value, set2.expectedRevision], [12, "2"]);
    await p.reply(set2, { revision: "3" });
    assert.equal(await second, 12);
    await p.reply(getOther, { found: false });
    await p.reply(await p.next(), { revision: "4" });
    assert.equal(await other, "x");
  });

  test("a failed update does not stop the next one of the same key", async () => {
    const p = await plugin();
    const first = p.sdk.kv.updateValue("count", () => 1);
    first.catch(() => {});
    const second = p.sdk.kv.updateValue("count", () => 2);
    await p.fail(await p.next(), "forbidden", "no");
    await assert.rejects(first, { code: "forbidden" });
    await p.reply(await p.next(), { found: false });
    await p.reply(await p.next(), { revision: "1" });
    assert.equal(await second, 2);
  });

  test("an absent key gives the updater undefined and expects absence", async () => {
    const p = await plugin();
    const seen = [];
    const done = p.sdk.kv.updateValue("count", (n) => (seen.push(n), 1));
    await p.reply(await p.next(), { found: false });
    const set = await p.next();
    assert.equal(set.expectedRevision, null);
    await p.reply(set, { revision: "1" });
    assert.equal(await done, 1);
    assert.deepEqual(seen, [undefined]);
  });

  test("on conflict it retries from the current value the error carries", async () => {
    const p = await plugin();
    const seen = [];
    const done = p.sdk.relatedProjects.get("stats").kv.updateValue("count", (n) => (seen.push(n), n + 1));
    await p.reply(await p.next(), { found: true, value: 1, revision: "1" });
    await p.fail(await p.next(), "conflict", "changed", {
      current: { found: true, value: 5, revision: "4" },
    });
    const retry = await p.next();
    assert.deepEqual(retry, { v: 1, id: 3, op: "set", alias: "stats", key: "count", value: 6, expectedRevision: "4" });
    await p.reply(retry, { revision: "5" });
    assert.equal(await done, 6);
    assert.deepEqual(seen, [1, 5]);
    assert.deepEqual(p.log.warn, [], "conflicts that were retried are not logged");
  });

  test("on a conflict without the current value it reads again", async () => {
    const p = await plugin();
    const done = p.sdk.kv.updateValue("count", (n) => n + 1);
    await p.reply(await p.next(), { found: true, value: 1, revision: "1" });
    await p.fail(await p.next(), "conflict", "changed");
    const reread = await p.next();
    assert.equal(reread.op, "get");
    await p.reply(reread, { found: true, value: 10, revision: "3" });
    const set = await p.next();
    assert.equal(set.value, 11);
    await p.reply(set, { revision: "4" });
    assert.equal(await done, 11);
  });

  test("gives up with conflict after 64 attempts", async () => {
    const p = await plugin();
    let calls = 0;
    const done = later(p.sdk.kv.updateValue("count", () => ++calls));
    await p.reply(await p.next(), { found: false });
    for (let i = 0; i < 64; i++) {
      const set = await p.next();
      assert.equal(set.op, "set");
      await p.fail(set, "conflict", "busy", { current: { found: true, value: 0, revision: String(i) } });
    }
    await assert.rejects(done, { code: "conflict" });
    assert.equal(calls, 64);
    await flush();
    assert.deepEqual(p.requests, []);
    assert.equal(p.log.warn.length, 1);
  });

  test("an updater returning undefined or a non-JSON value is a TypeError, nothing written", async () => {
    const p = await plugin();
    for (const updater of [() => undefined, () => NaN, () => new Map()]) {
      const done = later(p.sdk.kv.updateValue("k", updater));
      await p.reply(await p.next(), { found: true, value: 1, revision: "1" });
      await assert.rejects(done, TypeError);
    }
    await assert.rejects(p.sdk.kv.updateValue("k", "not a function"), TypeError);
    await flush();
    assert.deepEqual(p.requests, []);
  });

  test("other errors end the loop at once", async () => {
    const p = await plugin();
    const done = later(p.sdk.kv.updateValue("k", () => 1));
    await p.reply(await p.next(), { found: false });
    await p.fail(await p.next(), "forbidden", "no write grant");
    await assert.rejects(done, { code: "forbidden" });
  });
});

describe("subscribe", () => {
  test("several listeners share one server subscription per alias", async () => {
    const p = await plugin();
    const inventory = p.sdk.relatedProjects.get("inventory");
    const offA = inventory.kv.subscribe(() => {});
    const offB = inventory.kv.subscribe(() => {});
    const offOwn = p.sdk.kv.subscribe(() => {});
    const first = await p.next();
    const own = await p.next();
    assert.deepEqual(first, { v: 1, id: 1, op: "subscribe", alias: "inventory" });
    assert.deepEqual(own, { v: 1, id: 2, op: "subscribe" });
    assert.equal(await p.next(), undefined);
    offA();
    offA();
    assert.equal(await p.next(), undefined, "another listener is still there");
    offB();
    assert.deepEqual(await p.next(), { v: 1, id: 3, op: "unsubscribe", alias: "inventory" });
    offOwn();
    assert.deepEqual(await p.next(), { v: 1, id: 4, op: "unsubscribe" });
    inventory.kv.subscribe(() => {});
    assert.deepEqual(await p.next(), { v: 1, id: 5, op: "subscribe", alias: "inventory" });
  });

  test("listeners receive exactly {alias, revision}, a fresh frozen object each", async () => {
    const p = await plugin();
    const events = [];
    p.sdk.relatedProjects.get("inventory").kv.subscribe((e) => events.push(e));
    p.sdk.relatedProjects.get("inventory").kv.subscribe((e) => events.push(e));
    const own = [];
    p.sdk.kv.subscribe((e) => own.push(e));
    await p.send({ v: 1, event: "revision", alias: "inventory", revision: "17", projectId: "secret" });
    await p.send({ v: 1, event: "revision", alias: null, revision: "18" });
    assert.deepEqual(events, [
      { alias: "inventory", revision: "17" },
      { alias: "inventory", revision: "17" },
    ]);
    assert.notEqual(events[0], events[1]);
    assert.ok(Object.isFrozen(events[0]));
    assert.deepEqual(Object.keys(events[0]), ["alias", "revision"]);
    assert.deepEqual(own, [{ alias: null, revision: "18" }]);
  });

  test("the same function subscribed twice is called twice and unsubscribed separately", async () => {
    const p = await plugin();
    let calls = 0;
    const listener = () => calls++;
    const off = p.sdk.kv.subscribe(listener);
    p.sdk.kv.subscribe(listener);
    off();
    await p.send({ v: 1, event: "revision", alias: null, revision: "1" });
    assert.equal(calls, 1);
  });

  test("invalidated drops the alias's listeners and tells onInvalidated", async () => {
    const p = await plugin();
    const events = [];
    const invalidations = [];
    p.sdk.onInvalidated((e) => invalidations.push(e));
    const off = p.sdk.relatedProjects.get("inventory").kv.subscribe((e) => events.push(e));
    await p.next();
    await p.send({ v: 1, event: "invalidated", alias: "inventory", code: "forbidden" });
    assert.deepEqual(invalidations, [{ alias: "inventory", code: "forbidden" }]);
    assert.ok(Object.isFrozen(invalidations[0]));
    await p.send({ v: 1, event: "revision", alias: "inventory", revision: "2" });
    assert.deepEqual(events, []);
    off();
    assert.equal(await p.next(), undefined, "the server already dropped it: no unsubscribe");
    p.sdk.relatedProjects.get("inventory").kv.subscribe(() => {});
    assert.equal((await p.next()).op, "subscribe");
  });

  test("a refused subscribe invalidates the alias and is logged", async () => {
    const p = await plugin();
    const invalidations = [];
    p.sdk.onInvalidated((e) => invalidations.push(e));
    p.sdk.relatedProjects.get("nobody").kv.subscribe(() => {});
    await p.fail(await p.next(), "unknown_alias", "no relationship named nobody");
    await flush();
    assert.deepEqual(invalidations, [{ alias: "nobody", code: "unknown_alias" }]);
    assert.match(p.log.warn[0], /unknown_alias: no relationship named nobody/);
  });

  test("a subscribe that timed out keeps its listeners for the host's resync", async () => {
    const p = await plugin();
    const events = [];
    p.sdk.kv.subscribe((e) => events.push(e));
    await p.clock.advance(15000);
    await p.send({ v: 1, event: "revision", alias: null, revision: "resync-1" });
    assert.deepEqual(events, [{ alias: null, revision: "resync-1" }]);
  });

  test("onInvalidated returns its unsubscribe", async () => {
    const p = await plugin();
    const seen = [];
    p.sdk.onInvalidated((e) => seen.push(e))();
    await p.send({ v: 1, event: "invalidated", alias: null, code: "forbidden" });
    assert.deepEqual(seen, []);
  });

  test("listeners must be functions", async () => {
    const p = await plugin();
    assert.throws(() => p.sdk.kv.subscribe("x"), TypeError);
    assert.throws(() => p.sdk.onConfigurationChange(null), TypeError);
  });
});

describe("relatedProjects and knowledge", () => {
  test("get validates the alias synchronously", async () => {
    const p = await plugin();
    for (const alias of ["Inventory", "", "1a", null, undefined, "a".repeat(65)]) {
      assert.throws(() => p.sdk.relatedProjects.get(alias), TypeError);
    }
    const a = p.sdk.relatedProjects.get("inventory");
    assert.equal(p.sdk.relatedProjects.get("inventory"), a);
    assert.deepEqual(Object.keys(a.kv), ["getValue", "getValues", "setValue", "updateValue", "getHistory", "subscribe", "watch"]);
    assert.deepEqual(Object.keys(a.knowledge), [
      "listDocuments",
      "getDocument",
      "createDocument",
      "editDocument",
      "deleteDocument",
      "searchDocuments",
      "readDocumentLines",
    ]);
  });

  test("the knowledge methods send their op, the document id as key and their fields as value", async () => {
    const p = await plugin();
    const k = p.sdk.knowledge;
    const db = p.sdk.relatedProjects.get("database").knowledge;
    const calls = [
      [k.listDocuments(), { op: "knowledge.list", value: {} }],
      [k.listDocuments({ cursor: "c1" }), { op: "knowledge.list", value: { cursor: "c1" } }],
      [k.getDocument("d1"), { op: "knowledge.get", key: "d1" }],
      [db.getDocument({ id: "d2" }), { op: "knowledge.get", alias: "database", key: "d2" }],
      [k.createDocument({ title: "Runbook", markdown: "# Runbook" }), { op: "knowledge.create", value: { title: "Runbook", markdown: "# Runbook" } }],
      // A stable id of the plugin's choosing: one document per conversation, say.
      [k.createDocument({ id: "conv-7", title: "Chat", markdown: "hi" }), { op: "knowledge.create", key: "conv-7", value: { title: "Chat", markdown: "hi" } }],
      [k.editDocument({ id: "d1", title: "T", markdown: undefined, extra: 1 }), { op: "knowledge.edit", key: "d1", value: { title: "T" } }],
      [k.deleteDocument("d1"), { op: "knowledge.delete", key: "d1" }],
      [
        db.searchDocuments({ query: "Persistent", documentId: "d1", beforeLines: 1, afterLines: 1 }),
        { op: "knowledge.search", alias: "database", value: { query: "Persistent", documentId: "d1", beforeLines: 1, afterLines: 1 } },
      ],
      [k.readDocumentLines({ id: "d1", start: 1, end: 3 }), { op: "knowledge.readLines", key: "d1", value: { start: 1, end: 3 } }],
    ];
    for (const [i, [promise, expected]] of calls.entries()) {
      const request = await p.next();
      const { v, id, ...rest } = request;
      assert.deepEqual(rest, expected);
      await p.reply(request, { n: i });
      assert.deepEqual(await promise, { n: i });
    }
  });

  test("entrypoints: the list and a run go to the server, a run with its argument list", async () => {
    const p = await plugin();
    const child = p.sdk.relatedProjects.get("database");
    const calls = [
      [child.listEntrypoints(), { op: "entrypoints.list", alias: "database" }],
      [child.runEntrypoint("kb_note", ["--content", "hi"]), { op: "entrypoints.run", alias: "database", key: "kb_note", value: { args: ["--content", "hi"] } }],
      [p.sdk.runEntrypoint("main"), { op: "entrypoints.run", key: "main", value: { args: [] } }],
    ];
    for (const [promise, expected] of calls) {
      const request = await p.next();
      const { v, id, ...rest } = request;
      assert.deepEqual(rest, expected);
      await p.reply(request, []);
      assert.deepEqual(await promise, []);
    }
  });

  test("a knowledge call without a document id is a TypeError", async () => {
    const p = await plugin();
    await assert.rejects(p.sdk.knowledge.getDocument(), TypeError);
    await assert.rejects(p.sdk.knowledge.readDocumentLines({ start: 1, end: 2 }), TypeError);
  });
});

test("frames from the host that are not replies or events are ignored", async () => {
  const p = await plugin();
  const read = p.sdk.kv.getValue("k");
  const request = await p.next();
  await p.send({ v: 2, id: request.id, ok: true, result: { found: true, value: "wrong" } });
  await p.send({ id: request.id, ok: true, result: { found: true, value: "wrong" } });
  await p.send("nonsense");
  await p.reply(request, { found: true, value: "right", revision: "1" });
  assert.equal(await read, "right");
});
