// The built classic scripts, loaded as a browser would (no module system), talking to
// each other through fake windows and ports and to an in-memory server over a fake socket.

import { test } from "node:test";
import assert from "node:assert/strict";
import vm from "node:vm";
import { readFileSync } from "node:fs";
import { fakeClock, fakePage, fakeSockets, hostEnv, memoryServer, flush } from "./fakes.mjs";

const dist = (name) => readFileSync(new URL("../dist/" + name, import.meta.url), "utf8");

function load(win, file) {
  win.window = win;
  const before = new Set(Object.keys(win));
  vm.createContext(win);
  new vm.Script(dist(file), { filename: file }).runInContext(win);
  return Object.keys(win).filter((k) => !before.has(k));
}

async function page() {
  const clock = fakeClock();
  const p = fakePage(clock);
  const sockets = fakeSockets();
  const server = memoryServer();
  hostEnv(clock, p, sockets);
  const hostGlobals = load(p.host, "host.js");
  const relay = p.host.KanbanHost.connect({
    iframe: p.iframe,
    projectId: "p1",
    configuration: { id: "c1", name: "Mine", values: { wip: 2 } },
  });
  server.attach(sockets.last());
  sockets.last().accept();
  const pluginGlobals = load(p.frame, "kanban.js");
  const sdk = p.frame.steamHarnessKanban;
  await sdk.ready;
  return { clock, ...p, sockets, server, relay, sdk, hostGlobals, pluginGlobals };
}

test("each bundle defines exactly one global", async () => {
  const p = await page();
  assert.deepEqual(p.hostGlobals, ["KanbanHost"]);
  assert.deepEqual(p.pluginGlobals, ["steamHarnessKanban"]);
});

test("the bundles are classic scripts, not modules", () => {
  for (const file of ["kanban.js", "host.js"]) {
    const text = dist(file);
    assert.doesNotMatch(text, /^\s*(import|export)\b/m, file);
    assert.match(text, /^"use strict";\(\(\)=>\{/m);
  }
});

test("the plugin gets its configuration through the host", async () => {
  const p = await page();
  assert.deepEqual({ ...p.sdk.getConfiguration() }, { id: "c1", name: "Mine", values: { wip: 2 } });
  const seen = [];
  p.sdk.onConfigurationChange((c) => seen.push(c.id));
  p.relay.setConfiguration({ id: "", name: "Default", values: {} });
  await flush();
  assert.deepEqual(seen, [""]);
  assert.equal(p.sdk.getConfiguration().id, "");
});

test("values round-trip through SDK, host and server", async () => {
  const p = await page();
  assert.equal(await p.sdk.kv.getValue("board"), undefined);
  await p.sdk.kv.setValue("board", { cards: ["a", "b"] });
  assert.deepEqual(await p.sdk.kv.getValue("board"), { cards: ["a", "b"] });
  await p.sdk.kv.setValue("nothing", null);
  assert.equal(await p.sdk.kv.getValue("nothing"), null);
  const inventory = p.sdk.relatedProjects.get("inventory");
  await inventory.kv.setValue("stock:item-1", { count: 8 });
  assert.equal(p.server.data.get("inventory\u0000stock:item-1").value.count, 8);
  assert.equal(await p.sdk.kv.getValue("stock:item-1"), undefined, "aliases are separate");
});

test("updateValue survives a concurrent writer", async () => {
  const p = await page();
  await p.sdk.kv.setValue("count", 1);
  let first = true;
  const result = await p.sdk.kv.updateValue("count", (n) => {
    if (first) {
      first = false;
      p.server.bumpOutside(null, "count", 10);
    }
    return n + 1;
  });
  assert.equal(result, 11);
  assert.equal(await p.sdk.kv.getValue("count"), 11);
});

test("a bad call fails in the plugin and never reaches the server", async () => {
  const p = await page();
  const sent = p.sockets.last().sent.length;
  // The bundle runs in its own realm: match TypeError by name.
  const typeError = { name: "TypeError", code: "invalid_argument" };
  await assert.rejects(p.sdk.kv.setValue("k", undefined), typeError);
  await assert.rejects(p.sdk.kv.setValue("", 1), typeError);
  assert.throws(() => p.sdk.relatedProjects.get("Not An Alias"), typeError);
  assert.equal(p.sockets.last().sent.length, sent);
});

test("a call past the limits is refused by the host with the same code, and never reaches the server", async () => {
  const p = await page();
  const sent = p.sockets.last().sent.length;
  const refused = (code) => (err) => {
    assert.ok(err instanceof p.sdk.BridgeError, err.name);
    assert.equal(err.code, code);
    return true;
  };
  await assert.rejects(p.sdk.kv.setValue("k", "x".repeat(1048576)), refused("too_large"));
  await assert.rejects(p.sdk.kv.setValue("k", "\u00e9".repeat(524288)), refused("too_large"));
  await assert.rejects(p.sdk.kv.getValue("k".repeat(1025)), refused("invalid_argument"));
  await assert.rejects(p.sdk.kv.setValue("a\u0000b", 1), refused("invalid_argument"));
  await assert.rejects(p.sdk.relatedProjects.get("inventory").kv.getValue("a\uD800"), refused("invalid_argument"));
  await assert.rejects(p.sdk.kv.setValue("k", ["ok", { b: "\uDC00" }]), refused("invalid_argument"));
  assert.equal(p.sockets.last().sent.length, sent);
  const warnings = p.frame.console.lines.warn;
  assert.equal(warnings.length, 6);
  // Each line ends with the code's hint, which the host adds to every refusal it relays.
  assert.match(warnings[0], /^steamHarnessKanban: too_large: value is more than 1048576 bytes of JSON \(values are limited to 1 MiB\)$/);
  assert.match(warnings[2], /^steamHarnessKanban: invalid_argument: key is longer than 1024 characters \(check the arguments\)$/);
  await p.sdk.kv.setValue("k", "x".repeat(1048574));
  assert.equal(p.server.data.get("\u0000k").value.length, 1048574, "exactly 1 MiB of JSON passes");
});

test("subscriptions get revisions, and a resync after the socket comes back", async () => {
  const p = await page();
  const events = [];
  const off = p.sdk.relatedProjects.get("inventory").kv.subscribe((e) => events.push({ ...e }));
  await flush();
  const revision = p.server.bumpOutside("inventory", "stock", 3);
  await flush();
  assert.deepEqual(events, [{ alias: "inventory", revision }]);
  p.sockets.last().drop();
  await p.clock.advance(250);
  p.server.attach(p.sockets.last());
  p.sockets.last().accept();
  await flush();
  assert.deepEqual(events[1], { alias: "inventory", revision: "resync-1" });
  assert.equal(p.sdk.status, "open");
  off();
  await flush();
  assert.deepEqual([...p.sockets.last().subs], []);
});

test("a refused subscription reaches onInvalidated", async () => {
  const p = await page();
  const invalid = [];
  p.sdk.onInvalidated((e) => invalid.push({ ...e }));
  p.sdk.relatedProjects.get("stranger").kv.subscribe(() => {});
  await flush();
  await flush();
  assert.deepEqual(invalid, [{ alias: "stranger", code: "unknown_alias" }]);
  assert.match(p.frame.console.lines.warn[0], /unknown_alias/);
});

test("loading the SDK twice keeps the first instance", async () => {
  const p = await page();
  const first = p.frame.steamHarnessKanban;
  new vm.Script(dist("kanban.js")).runInContext(p.frame);
  assert.equal(p.frame.steamHarnessKanban, first);
});
