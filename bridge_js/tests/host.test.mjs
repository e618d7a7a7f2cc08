import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { createHost } from "../src/host.js";
import { HINTS } from "../src/hints.js";
import { fakeClock, fakePage, fakeSockets, hostEnv, flush } from "./fakes.mjs";

const PROJECT = "0b7f3c52-6d0e-4f57-9d0a-2f5a2b1f9c11";
const CONFIG = { id: "", name: "Default", values: {} };

// A board page with the relay connected, and a hand-played plugin in its iframe.
async function board({ open = true, random, wsUrl, context, page: boardPage, onPluginError, onEnded, limits } = {}) {
  const clock = fakeClock();
  const page = fakePage(clock);
  const sockets = fakeSockets();
  const statuses = [];
  const KanbanHost = createHost(hostEnv(clock, page, sockets, random));
  const relay = KanbanHost.connect({
    iframe: page.iframe,
    projectId: PROJECT,
    configuration: CONFIG,
    onStatus: (s) => statuses.push(s),
    wsUrl,
    context,
    page: boardPage,
    onPluginError,
    onEnded,
    limits,
  });
  const b = {
    clock,
    page,
    sockets,
    statuses,
    relay,
    ws: () => sockets.last(),
    // The plugin's side of the latest connect: its port and what it received.
    async hello(source = page.frame) {
      page.host.receive({ type: "steamHarnessKanban:hello", v: 1 }, source);
      await flush();
      const connects = page.frame.received.filter((e) => e.data.type === "steamHarnessKanban:connect");
      return connects[connects.length - 1];
    },
    async plugin() {
      const connect = await b.hello();
      const port = connect.ports[0];
      const inbox = [];
      port.onmessage = (e) => inbox.push(e.data);
      port.postMessage({ v: 1, type: "ready", nonce: connect.data.nonce });
      await flush();
      const p = {
        port,
        inbox,
        async send(frame) {
          port.postMessage(frame);
          await flush();
        },
        replies: () => inbox.filter((f) => "id" in f),
        events: (type) => inbox.filter((f) => f.event === type),
      };
      return p;
    },
  };
  if (open) b.ws().accept();
  return b;
}

describe("handshake", () => {
  test("ignores messages whose source is not the iframe", async () => {
    const b = await board();
    await b.hello({ name: "another window" });
    b.page.host.receive({ type: "steamHarnessKanban:hello", v: 1 }, b.page.host);
    await flush();
    assert.equal(b.page.frame.received.length, 0);
  });

  test("ignores malformed hellos", async () => {
    const b = await board();
    for (const data of [{ type: "steamHarnessKanban:hello", v: 2 }, { type: "hello", v: 1 }, "hello", null]) {
      b.page.host.receive(data, b.page.frame);
    }
    await flush();
    assert.equal(b.page.frame.received.length, 0);
  });

  test("answers a hello with one port and a 128-bit nonce, posted to the iframe", async () => {
    const b = await board();
    const connect = await b.hello();
    assert.equal(connect.source, b.page.host);
    assert.equal(connect.ports.length, 1);
    assert.deepEqual(Object.keys(connect.data), ["type", "v", "nonce"]);
    assert.match(connect.data.nonce, /^[0-9a-f]{32}$/);
    const again = await board();
    assert.notEqual((await again.hello()).data.nonce, connect.data.nonce);
  });

  test("repeated hellos before ready do not open more channels", async () => {
    const b = await board();
    await b.hello();
    await b.hello();
    await b.hello();
    assert.equal(b.page.frame.received.length, 1);
  });

  test("a ready with the wrong nonce, or without one, closes the port", async () => {
    for (const answer of [
      { type: "ready", v: 1, nonce: "0".repeat(32) },
      { type: "ready", v: 1 },
      { type: "ready", v: 2 },
    ]) {
      const b = await board();
      const connect = await b.hello();
      const port = connect.ports[0];
      const inbox = [];
      port.onmessage = (e) => inbox.push(e.data);
      port.postMessage(answer);
      await flush();
      assert.equal(port.other.closed, true, JSON.stringify(answer));
      assert.deepEqual(inbox, []);
    }
  });

  test("requests posted before ready wait for it and are then relayed in order", async () => {
    const b = await board();
    const connect = await b.hello();
    const port = connect.ports[0];
    const inbox = [];
    port.onmessage = (e) => inbox.push(e.data);
    port.postMessage({ v: 1, id: 1, op: "get", key: "a" });
    port.postMessage({ v: 1, id: 2, op: "subscribe" });
    await flush();
    assert.deepEqual(b.ws().sent, [], "nothing is relayed before ready");
    port.postMessage({ v: 1, type: "ready", nonce: connect.data.nonce });
    await flush();
    assert.deepEqual(
      b.ws().sent.map((f) => [f.op, f.key]),
      [
        ["get", "a"],
        ["subscribe", undefined],
      ],
    );
    b.ws().reply(b.ws().sent[0], { found: false });
    await flush();
    assert.deepEqual(
      inbox.filter((f) => "id" in f),
      [{ v: 1, id: 1, ok: true, result: { found: false } }],
    );
  });

  test("a channel that sends too much before ready is closed", async () => {
    const b = await board();
    const connect = await b.hello();
    const port = connect.ports[0];
    for (let id = 1; id <= 257; id++) port.postMessage({ v: 1, id, op: "get", key: "k" });
    await flush();
    assert.equal(port.other.closed, true);
  });

  test("after the matching ready the plugin gets its configuration and the status", async () => {
    const b = await board();
    const p = await b.plugin();
    assert.deepEqual(p.inbox, [
      { v: 1, event: "configuration", configuration: CONFIG },
      { v: 1, event: "status", status: "open" },
    ]);
  });

  test("a hello after the iframe loaded a new document replaces the channel", async () => {
    const b = await board();
    const first = await b.plugin();
    first.send({ v: 1, id: 1, op: "get", key: "k" });
    await flush();
    const stale = b.ws().sent[0];
    await b.hello();
    assert.equal(b.page.frame.received.length, 1, "a hello from the same document is ignored");
    b.page.iframe.fireLoad();
    const second = await b.plugin();
    assert.equal(b.page.frame.received.length, 2);
    assert.equal(first.port.other.closed, true);
    b.ws().reply(stale, { found: true, value: "old", revision: "1" });
    await flush();
    const postedToDeadPort = first.port.other.posted.filter((f) => "id" in f);
    assert.deepEqual(postedToDeadPort, [], "replies for the dead port are dropped");
    assert.deepEqual(second.replies(), []);
    await second.send({ v: 1, id: 1, op: "get", key: "k" });
    assert.deepEqual(
      b.ws().sent.map((f) => f.id),
      [1, 2],
      "the new document's id 1 is a new wire id",
    );
  });

  test("a channel whose ready never comes is replaced after five more hellos", async () => {
    const b = await board();
    for (let i = 0; i < 5; i++) await b.hello();
    assert.equal(b.page.frame.received.length, 1);
    await b.hello();
    assert.equal(b.page.frame.received.length, 2);
    assert.equal(b.page.frame.received[0].ports[0].other.closed, true);
  });
});

describe("watches", () => {
  test("changes are relayed with only their keys, revisions, pushed values or deletions and sources; a reconnect re-watches and resyncs", async () => {
    const b = await board();
    const p = await b.plugin();
    await p.send({ v: 1, id: 1, op: "watch", alias: "inventory", value: { prefix: "stock:" } });
    b.ws().reply(b.ws().sent[0], { watching: true });
    b.ws().receive({
      v: 1,
      event: "changes",
      alias: "inventory",
      changes: [
        { key: "stock:1", revision: "4", extra: "dropped" },
        { key: 5 },
        { key: "stock:2", revision: "5", value: { count: 3 }, extra: 1, source: { user: "alice", via: "mcp", agent: "triage-bot" } },
        { key: "stock:3", revision: "6", value: null, source: "not an object" },
        { key: "stock:4", revision: "7", deleted: true, value: "dropped", source: { user: "bob" } },
        { key: "stock:5", revision: "8", deleted: "yes", source: ["dropped"] },
      ],
    });
    await flush();
    assert.deepEqual(p.events("changes"), [
      {
        v: 1,
        event: "changes",
        alias: "inventory",
        changes: [
          { key: "stock:1", revision: "4" },
          { key: "stock:2", revision: "5", value: { count: 3 }, source: { user: "alice", via: "mcp", agent: "triage-bot" } },
          { key: "stock:3", revision: "6", value: null },
          { key: "stock:4", revision: "7", deleted: true, source: { user: "bob" } },
          { key: "stock:5", revision: "8" },
        ],
      },
    ]);
    b.ws().drop();
    await b.clock.advance(250);
    const ws = b.ws();
    ws.accept();
    assert.deepEqual(ws.sent, [{ v: 1, id: 2, op: "watch", alias: "inventory", value: { prefix: "stock:" } }]);
    ws.reply(ws.sent[0], { watching: true });
    await flush();
    assert.deepEqual(p.events("changes").at(-1), {
      v: 1,
      event: "changes",
      alias: "inventory",
      changes: [],
      resync: true,
    });
  });
});

describe("relaying requests", () => {
  test("valid frames go to the websocket with a host-assigned id", async () => {
    const b = await board();
    const p = await b.plugin();
    await p.send({ v: 1, id: 77, op: "set", alias: "inventory", key: "k", value: { n: 1 }, expectedRevision: null });
    assert.deepEqual(b.ws().sent, [{ v: 1, id: 1, op: "set", alias: "inventory", key: "k", value: { n: 1 }, expectedRevision: null }]);
    b.ws().reply(b.ws().sent[0], { revision: "5" });
    await flush();
    assert.deepEqual(p.replies(), [{ v: 1, id: 77, ok: true, result: { revision: "5" } }]);
  });

  test("errors come back under the plugin's id with code, message, current and hint only", async () => {
    const b = await board();
    const p = await b.plugin();
    await p.send({ v: 1, id: 5, op: "set", key: "k", value: 1, expectedRevision: "3" });
    b.ws().fail(b.ws().sent[0], "conflict", "changed", { current: { found: false }, trace: "x" });
    await flush();
    assert.deepEqual(p.replies(), [
      { v: 1, id: 5, ok: false, error: { code: "conflict", message: "changed", current: { found: false }, hint: HINTS.conflict } },
    ]);
  });

  const invalid = [
    [{ v: 1, id: 1, op: "get", key: "k", projectId: PROJECT }, 1, "invalid_argument"],
    [{ v: 1, id: 2, op: "get", key: "k", scope: "conversation" }, 2, "invalid_argument"],
    [JSON.parse('{"v":1,"id":3,"op":"get","key":"k","__proto__":{"x":1}}'), 3, "invalid_argument"],
    [{ v: 1, id: 4, op: "get", key: "" }, 4, "invalid_argument"],
    [{ v: 1, id: 5, op: "get", key: "k", alias: "Bad" }, 5, "invalid_argument"],
    [{ v: 1, id: 6, op: "set", key: "k", value: "x".repeat(1048576) }, 6, "too_large"],
    [{ v: 2, id: 7, op: "get", key: "k" }, 7, "invalid_argument"],
    [{ v: 1, id: -1, op: "get", key: "k" }, null, "invalid_argument"],
    [{ v: 1, op: "get", key: "k" }, null, "invalid_argument"],
    [{ v: 1, id: 8, op: "drop", key: "k" }, 8, "invalid_argument"],
    [[1, 2], null, "invalid_argument"],
    ["get k", null, "invalid_argument"],
  ];
  test("a refusal's size hint is the deployment's limit, not the spec's", async () => {
    const b = await board({ limits: { valueBytes: 1000 } });
    const p = await b.plugin();
    await p.send({ v: 1, id: 1, op: "set", key: "k", value: "x".repeat(2000) });
    const [reply] = p.replies();
    assert.equal(reply.error.code, "too_large");
    assert.equal(reply.error.hint, "values are limited to 1000 bytes");
  });

  for (const [frame, id, code] of invalid) {
    test("rejects " + JSON.stringify(frame).slice(0, 70) + " without relaying", async () => {
      const b = await board();
      const p = await b.plugin();
      await p.send(frame);
      assert.deepEqual(b.ws().sent, []);
      const [reply] = p.replies();
      assert.equal(reply.id, id);
      assert.equal(reply.ok, false);
      assert.equal(reply.error.code, code);
      assert.equal(typeof reply.error.message, "string");
    });
  }

  test("server frames are checked lightly before anything is relayed", async () => {
    const b = await board();
    const p = await b.plugin();
    await p.send({ v: 1, id: 1, op: "get", key: "k" });
    const request = b.ws().sent[0];
    for (const junk of ["not json", "[1]", "null", { v: 2, id: 1, ok: true, result: "no" }, { v: 1, id: 1, result: "no" }, { v: 1, event: 5 }]) {
      b.ws().receive(junk);
    }
    await flush();
    assert.deepEqual(p.replies(), []);
    b.ws().fail(request, "teapot", "odd");
    await flush();
    assert.deepEqual(p.replies()[0].error, { code: "unavailable", message: "odd", hint: HINTS.unavailable });
  });

  test("requests time out after 15 s with unavailable", async () => {
    const b = await board();
    const p = await b.plugin();
    await p.send({ v: 1, id: 9, op: "get", key: "k" });
    await b.clock.advance(15000);
    assert.deepEqual(p.replies(), [{ v: 1, id: 9, ok: false, error: { code: "unavailable", message: "no reply within 15 s", hint: HINTS.unavailable } }]);
  });
});

const CONTEXT = {
  user: { id: 3, username: "carol", displayName: "Carol" },
  role: "guest",
  can: { read: true, write: false },
  related: { inventory: { status: "pending", can: { read: false, write: false } } },
};

describe("context", () => {
  test("the page's context reaches the plugin in parts, before its configuration", async () => {
    const b = await board({ context: CONTEXT });
    const p = await b.plugin();
    const { related, ...own } = CONTEXT;
    assert.deepEqual(p.inbox.slice(0, 3), [
      { v: 1, event: "context", context: own },
      { v: 1, event: "context", alias: "inventory", context: related.inventory },
      { v: 1, event: "configuration", configuration: CONFIG },
    ]);
  });

  test("the socket's context is relayed only in the parts that changed", async () => {
    const b = await board({ context: CONTEXT });
    const p = await b.plugin();
    p.inbox.length = 0;
    b.ws().receive({ v: 1, event: "context", context: CONTEXT });
    const confirmed = { status: "confirmed", can: { read: true, write: false } };
    b.ws().receive({ v: 1, event: "context", context: { ...CONTEXT, related: { inventory: confirmed } } });
    b.ws().receive({ v: 1, event: "context", context: "junk" });
    await flush();
    assert.deepEqual(p.events("context"), [{ v: 1, event: "context", alias: "inventory", context: confirmed }]);
  });

  test("the board page's address and fragment ride the project's part, kept over the socket's", async () => {
    const url = "https://kanban.example/boards/" + PROJECT + "/";
    const b = await board({ context: CONTEXT, page: { url, fragment: "card=c1" } });
    const p = await b.plugin();
    const { related, ...own } = CONTEXT;
    assert.deepEqual(p.events("context")[0].context, { ...own, page: { url, fragment: "card=c1" } });
    p.inbox.length = 0;
    b.ws().receive({ v: 1, event: "context", context: CONTEXT }); // the server knows no page
    await flush();
    assert.deepEqual(p.events("context"), [], "nothing changed for the plugin");
    b.relay.setPage({ url, fragment: "card=c2" });
    b.relay.setPage({ url, fragment: "card=c2" });
    await flush();
    assert.deepEqual(p.events("context"), [{ v: 1, event: "context", context: { ...own, page: { url, fragment: "card=c2" } } }]);
  });
});

describe("plugin errors", () => {
  test("an uncaught error of the plugin's page reaches onPluginError, and no reply goes back", async () => {
    const errors = [];
    const b = await board({ onPluginError: (e) => errors.push(e) });
    const p = await b.plugin();
    await p.send({ v: 1, event: "error", message: "Uncaught SyntaxError: Unexpected token '}'", at: "app.js:12" });
    await p.send({ v: 1, event: "error", message: { not: "text" } });
    assert.deepEqual(errors, [
      { message: "Uncaught SyntaxError: Unexpected token '}'", at: "app.js:12" },
      { message: "", at: "" },
    ]);
    assert.deepEqual(p.replies(), []);
  });
});

describe("events", () => {
  test("revision and invalidated events reach the plugin, reduced to their fields", async () => {
    const b = await board();
    const p = await b.plugin();
    b.ws().receive({ v: 1, event: "revision", alias: "inventory", revision: "41", projectId: PROJECT });
    b.ws().receive({ v: 1, event: "revision", alias: null, revision: 42 });
    b.ws().receive({ v: 1, event: "invalidated", alias: "inventory", code: "forbidden" });
    b.ws().receive({ v: 1, event: "mystery" });
    await flush();
    assert.deepEqual(p.events("revision"), [
      { v: 1, event: "revision", alias: "inventory", revision: "41" },
      { v: 1, event: "revision", alias: null, revision: "42" },
    ]);
    assert.deepEqual(p.events("invalidated"), [{ v: 1, event: "invalidated", alias: "inventory", code: "forbidden" }]);
    assert.deepEqual(p.events("mystery"), []);
  });

  test("a reload event reloads the iframe's document and never reaches the plugin", async () => {
    const b = await board();
    const p = await b.plugin();
    const assigned = [];
    let src = "/plugins/" + PROJECT + "/index.html";
    Object.defineProperty(b.page.iframe, "src", {
      get: () => src,
      set: (value) => assigned.push((src = value)),
    });
    b.ws().receive({ v: 1, event: "reload" });
    await flush();
    assert.deepEqual(assigned, ["/plugins/" + PROJECT + "/index.html"]);
    assert.deepEqual(p.events("reload"), []);
    assert.deepEqual(
      p.inbox.filter((f) => f.event !== "status" && f.event !== "configuration"),
      [],
    );
  });

  test("setConfiguration sends the new configuration to the plugin", async () => {
    const b = await board();
    const p = await b.plugin();
    b.relay.setConfiguration({ id: "c2", name: "Sprint", values: { wip: 3 } });
    await flush();
    assert.deepEqual(p.events("configuration").at(-1), {
      v: 1,
      event: "configuration",
      configuration: { id: "c2", name: "Sprint", values: { wip: 3 } },
    });
  });
});

describe("configuration values", () => {
  test("a malformed configuration reaches the plugin as the default's fields", async () => {
    const b = await board();
    const p = await b.plugin();
    b.relay.setConfiguration({ id: 7, values: [1], extra: true });
    await flush();
    assert.deepEqual(p.events("configuration").at(-1).configuration, { id: "", name: "", values: {} });
  });

  test("values saved through the bridge are what a new document of the page opens with", async () => {
    const b = await board();
    const p = await b.plugin();
    await p.send({ v: 1, id: 1, op: "configuration.set", key: "default", value: { view: { density: "compact" } } });
    b.ws().reply(b.ws().sent.at(-1), {});
    await flush();
    b.page.iframe.fireLoad();
    const again = await b.plugin();
    assert.deepEqual(again.events("configuration").at(-1).configuration, {
      id: "",
      name: "Default",
      values: { view: { density: "compact" } },
    });
  });
});

describe("the websocket", () => {
  test("defaults to ws(s)://<host>/ws/boards/<projectId>/", async () => {
    const b = await board({ open: false });
    assert.equal(b.ws().url, "ws://127.0.0.1:8000/ws/boards/" + PROJECT + "/");
    const s = await board({ open: false, wsUrl: "wss://example.test/ws/boards/x/" });
    assert.equal(s.ws().url, "wss://example.test/ws/boards/x/");
  });

  test("uses wss on an https page", async () => {
    const clock = fakeClock();
    const page = fakePage(clock);
    const sockets = fakeSockets();
    const env = hostEnv(clock, page, sockets);
    env.location = { protocol: "https:", host: "board.example" };
    createHost(env).connect({ iframe: page.iframe, projectId: "p", configuration: CONFIG });
    assert.equal(sockets.last().url, "wss://board.example/ws/boards/p/");
  });

  test("one websocket per page view, whatever the iframe does", async () => {
    const b = await board();
    await b.plugin();
    b.page.iframe.fireLoad();
    await b.plugin();
    assert.equal(b.sockets.sockets.length, 1);
  });

  test("requests wait while connecting and are sent on open", async () => {
    const b = await board({ open: false });
    const p = await b.plugin();
    await p.send({ v: 1, id: 1, op: "get", key: "k" });
    assert.deepEqual(b.ws().sent, []);
    b.ws().accept();
    assert.deepEqual(
      b.ws().sent.map((f) => f.key),
      ["k"],
    );
    assert.deepEqual(b.statuses, ["connecting", "open"]);
  });

  test("reconnects with exponential backoff and jitter, capped at 5 s", async () => {
    const b = await board({ random: () => 1 });
    const delays = [];
    for (let i = 0; i < 7; i++) {
      const before = b.clock.now();
      b.ws().drop();
      const count = b.sockets.sockets.length;
      while (b.sockets.sockets.length === count) await b.clock.advance(1);
      delays.push(b.clock.now() - before);
    }
    assert.deepEqual(delays, [250, 500, 1000, 2000, 4000, 5000, 5000]);
    b.ws().accept();
    b.ws().drop();
    const start = b.clock.now();
    await b.clock.advance(249);
    assert.equal(b.sockets.sockets.length, 8);
    await b.clock.advance(1);
    assert.equal(b.sockets.sockets.length, 9, "a successful open resets the backoff");
    assert.equal(b.clock.now() - start, 250);
  });

  test("jitter takes between half and all of the backoff", async () => {
    const b = await board({ random: () => 0 });
    b.ws().drop();
    await b.clock.advance(124);
    assert.equal(b.sockets.sockets.length, 1);
    await b.clock.advance(1);
    assert.equal(b.sockets.sockets.length, 2);
  });

  test("in-flight requests fail with unavailable when the socket drops; later ones wait", async () => {
    const b = await board();
    const p = await b.plugin();
    await p.send({ v: 1, id: 1, op: "get", key: "in-flight" });
    b.ws().drop();
    await flush();
    assert.deepEqual(p.replies(), [
      { v: 1, id: 1, ok: false, error: { code: "unavailable", message: "the connection to the server was lost", hint: HINTS.unavailable } },
    ]);
    assert.deepEqual(
      p.events("status").map((e) => e.status),
      ["open", "reconnecting"],
    );
    await p.send({ v: 1, id: 2, op: "get", key: "waiting" });
    await b.clock.advance(500);
    b.ws().accept();
    assert.deepEqual(
      b.ws().sent.map((f) => f.key),
      ["waiting"],
    );
    b.ws().reply(b.ws().sent[0], { found: false });
    await flush();
    assert.deepEqual(p.replies()[1], { v: 1, id: 2, ok: true, result: { found: false } });
    assert.deepEqual(b.statuses, ["connecting", "open", "reconnecting", "open"]);
  });

  test("a request waiting for a reconnect times out after 15 s", async () => {
    const b = await board();
    const p = await b.plugin();
    b.ws().drop();
    await p.send({ v: 1, id: 3, op: "get", key: "k" });
    for (let t = 0; t < 15000; t += 100) {
      await b.clock.advance(100);
      if (b.ws().readyState === 0) b.ws().drop();
    }
    assert.deepEqual(p.replies(), [{ v: 1, id: 3, ok: false, error: { code: "unavailable", message: "no reply within 15 s", hint: HINTS.unavailable } }]);
  });

  test("after a reconnect it resubscribes every alias, then emits one resync revision each", async () => {
    const b = await board();
    const p = await b.plugin();
    await p.send({ v: 1, id: 1, op: "subscribe" });
    await p.send({ v: 1, id: 2, op: "subscribe", alias: "inventory" });
    await p.send({ v: 1, id: 3, op: "subscribe", alias: "gone" });
    await p.send({ v: 1, id: 4, op: "subscribe", alias: "dropped" });
    await p.send({ v: 1, id: 5, op: "unsubscribe", alias: "dropped" });
    for (const f of b.ws().sent) b.ws().reply(f, {});
    b.ws().receive({ v: 1, event: "invalidated", alias: "gone", code: "forbidden" });
    b.ws().drop();
    await b.clock.advance(250);
    const ws = b.ws();
    ws.accept();
    assert.deepEqual(ws.sent, [
      { v: 1, id: 6, op: "subscribe" },
      { v: 1, id: 7, op: "subscribe", alias: "inventory" },
    ]);
    assert.deepEqual(p.events("revision"), [], "not before the server confirmed");
    ws.reply(ws.sent[1], {});
    ws.reply(ws.sent[0], {});
    await flush();
    assert.deepEqual(p.events("revision"), [
      { v: 1, event: "revision", alias: "inventory", revision: "resync-1" },
      { v: 1, event: "revision", alias: null, revision: "resync-1" },
    ]);
    ws.drop();
    await b.clock.advance(250);
    b.ws().accept();
    for (const f of b.ws().sent) b.ws().reply(f, {});
    await flush();
    assert.deepEqual(
      p
        .events("revision")
        .slice(2)
        .map((e) => e.revision),
      ["resync-2", "resync-2"],
    );
  });

  test("a resubscribe the server refuses becomes an invalidated event", async () => {
    const b = await board();
    const p = await b.plugin();
    await p.send({ v: 1, id: 1, op: "subscribe", alias: "inventory" });
    b.ws().reply(b.ws().sent[0], {});
    b.ws().drop();
    await b.clock.advance(250);
    b.ws().accept();
    b.ws().fail(b.ws().sent[0], "relationship_pending", "pending");
    await flush();
    assert.deepEqual(p.events("invalidated"), [{ v: 1, event: "invalidated", alias: "inventory", code: "relationship_pending" }]);
    b.ws().drop();
    await b.clock.advance(250);
    b.ws().accept();
    assert.deepEqual(b.ws().sent, [], "forgotten");
  });

  test("a refused subscribe is not resubscribed", async () => {
    const b = await board();
    const p = await b.plugin();
    await p.send({ v: 1, id: 1, op: "subscribe", alias: "nobody" });
    b.ws().fail(b.ws().sent[0], "unknown_alias", "no such alias");
    await flush();
    b.ws().drop();
    await b.clock.advance(250);
    b.ws().accept();
    assert.deepEqual(b.ws().sent, []);
  });

  test("a new iframe document drops the previous document's subscriptions", async () => {
    const b = await board();
    await (await b.plugin()).send({ v: 1, id: 1, op: "subscribe", alias: "inventory" });
    b.ws().reply(b.ws().sent[0], {});
    b.page.iframe.fireLoad();
    await b.plugin();
    assert.deepEqual(b.ws().sent.slice(1), [{ v: 1, id: 2, op: "unsubscribe", alias: "inventory" }]);
  });

  for (const [code, reason] of [
    [4403, "forbidden"],
    [4401, "unauthenticated"],
  ]) {
    test(`a close with ${code} ends the board for good (${reason}): no reconnect`, async () => {
      const ended = [];
      const b = await board({ onEnded: (r) => ended.push(r) });
      const p = await b.plugin();
      await p.send({ v: 1, id: 1, op: "get", key: "k" });
      b.ws().drop(code);
      await b.clock.advance(10000);
      assert.equal(b.sockets.sockets.length, 1, "a reconnect would be refused");
      assert.deepEqual(ended, [reason]);
      assert.deepEqual(b.statuses, ["connecting", "open", "closed"]);
      assert.equal(p.port.other.closed, true, "the plugin's channel ends with it");
    });
  }

  test("close() ends everything: no reconnect, pending requests fail, status closed", async () => {
    const b = await board();
    const p = await b.plugin();
    await p.send({ v: 1, id: 1, op: "get", key: "k" });
    b.relay.close();
    await b.clock.advance(10000);
    assert.equal(b.sockets.sockets.length, 1);
    assert.equal(b.ws().readyState, 3);
    assert.equal(b.relay.status, "closed");
    assert.deepEqual(b.statuses, ["connecting", "open", "closed"]);
    assert.equal(p.port.other.closed, true);
    await b.hello();
    assert.equal(b.page.frame.received.length, 1, "no new channel after close");
  });
});
