// A board host for testing plugins without a server: the real SDK (src/sdk.js) in a small
// window shim, connected over a real MessageChannel to an in-memory project that answers
// as the server does: revisions and compare-and-set, watch events with pushed values,
// subscribe events, grants per alias, roles, and refusals with the real error codes.
//
//   import { createTestHost } from "<server>/bridge_js/testing/host.mjs";
//   const host = await createTestHost({ role: "developer", kv: { counter: 1 } });
//   host.window.steamHarnessKanban        // what the plugin sees
//   host.write("counter", 5)              // someone else's write: events reach the plugin
//   host.value("counter")                 // what is stored
//
// Options: `user` ({id, username, displayName}), `role` ("guest" | "developer" | "owner"),
// `kv` (the project's values), `related` ({alias: {kv, read, write}} where a rule is "all",
// "none" or a list of key prefixes), `configuration` ({id, name, values}), `pushLimit`
// (bytes of JSON up to which watch events carry values; the server's default), `members`
// (the board's other members, [{id, username, displayName, role}]: whom `notify` may reach;
// `host.notifications` records what it sent). Knowledge and entrypoints answer
// `not_supported` here. No timers are left behind: `close()` ends it.

import { createKanban } from "../src/sdk.js";
import { V, HELLO, CONNECT, LIMITS } from "../src/protocol.js";

const WRITERS = new Set(["developer", "owner"]);

function allows(rule, key) {
  if (rule === "all") return true;
  if (Array.isArray(rule)) return rule.some((prefix) => key.startsWith(prefix));
  return false;
}

class Refusal extends Error {
  constructor(code, message, extra) {
    super(message);
    this.code = code;
    this.extra = extra;
  }
}

function project(values) {
  return { values: new Map(Object.entries(values || {})), revisions: new Map(), history: new Map() };
}

export async function createTestHost(options = {}) {
  const user = options.user || { id: 1, username: "alice", displayName: "Alice" };
  const role = options.role || "developer";
  const pushLimit = options.pushLimit ?? LIMITS.pushValueBytes;
  let configuration = options.configuration || { id: "", name: "Default", values: {} };
  let revision = 0;
  const projects = new Map([[null, { ...project(options.kv), read: "all", write: WRITERS.has(role) ? "all" : "none" }]]);
  for (const [alias, spec] of Object.entries(options.related || {})) {
    projects.set(alias, { ...project(spec.kv), read: spec.read ?? "all", write: spec.write ?? "none" });
  }
  for (const target of projects.values()) for (const key of target.values.keys()) target.revisions.set(key, String(++revision));
  const follows = { subscribe: new Set(), watch: new Map() }; // alias; alias -> prefix
  const members = [{ ...user, role }, ...(options.members || [])];
  const notifications = [];

  // --- the plugin's window ------------------------------------------------------------------
  const listeners = new Map();
  const timers = new Set();
  const parent = {
    postMessage(data) {
      if (data && data.type === HELLO) queueMicrotask(connect);
    },
  };
  const win = {
    parent,
    console,
    addEventListener: (type, fn) => (listeners.get(type) || listeners.set(type, new Set()).get(type)).add(fn),
    removeEventListener: (type, fn) => listeners.get(type)?.delete(fn),
    setTimeout: (fn, ms) => {
      const id = setTimeout(() => (timers.delete(id), fn()), ms);
      timers.add(id);
      return id;
    },
    clearTimeout: (id) => (timers.delete(id), clearTimeout(id)),
  };
  const dispatch = (type, event) => [...(listeners.get(type) || [])].forEach((fn) => fn(event));
  const errors = [];

  // --- the host side of the port ------------------------------------------------------------
  const channel = new MessageChannel();
  const port = channel.port1;
  const send = (frame) => port.postMessage(frame);
  function connect() {
    port.onmessage = (e) => receive(e.data);
    dispatch("message", { source: parent, data: { type: CONNECT, v: V, nonce: "test" }, ports: [channel.port2] });
    send({ v: V, event: "context", context: context(null) });
    for (const alias of projects.keys()) if (alias !== null) send({ v: V, event: "context", alias, context: context(alias) });
    send({ v: V, event: "configuration", configuration });
    send({ v: V, event: "status", status: "open" });
  }

  function context(alias) {
    if (alias === null) {
      return { user, role, staff: false, can: { read: true, write: WRITERS.has(role) }, members };
    }
    const target = projects.get(alias);
    return { status: "confirmed", can: { read: target.read !== "none", write: target.write !== "none" && WRITERS.has(role) } };
  }

  function targetOf(alias) {
    const target = projects.get(alias ?? null);
    if (!target) throw new Refusal("unknown_alias", `this project declares no alias ${JSON.stringify(alias)}`);
    return target;
  }

  function read(target, key) {
    if (!allows(target.read, key)) throw new Refusal("forbidden", `reading ${JSON.stringify(key)} is not allowed`);
    return target.values.has(key) ? { found: true, value: structuredClone(target.values.get(key)), revision: target.revisions.get(key) } : { found: false };
  }

  function store(alias, target, key, value, by) {
    const rev = String(++revision);
    target.values.set(key, structuredClone(value));
    target.revisions.set(key, rev);
    const versions = target.history.get(key) || [];
    versions.unshift({ revision: rev, value: structuredClone(value), source: { user: by }, writtenAt: new Date().toISOString() });
    target.history.set(key, versions.slice(0, 50));
    announce(alias, target, key, rev, value);
    return rev;
  }

  function announce(alias, target, key, rev, value) {
    if (!allows(target.read, key)) return;
    const wire = alias ?? null;
    if (follows.subscribe.has(wire)) send({ v: V, event: "revision", alias: wire, revision: rev });
    const prefix = follows.watch.get(wire);
    if (prefix === undefined || !key.startsWith(prefix)) return;
    const small = new TextEncoder().encode(JSON.stringify(value)).length <= pushLimit;
    send({ v: V, event: "changes", alias: wire, changes: [small ? { key, revision: rev, value } : { key, revision: rev }] });
  }

  function call(f) {
    const alias = f.alias ?? null;
    switch (f.op) {
      case "get":
        return read(targetOf(alias), f.key);
      case "getMany": {
        const target = targetOf(alias);
        return f.value.map((key) => {
          try {
            return read(target, key);
          } catch (refusal) {
            return { found: false, error: { code: refusal.code, message: refusal.message } };
          }
        });
      }
      case "set": {
        const target = targetOf(alias);
        if (!WRITERS.has(role) || !allows(target.write, f.key)) throw new Refusal("forbidden", `writing ${JSON.stringify(f.key)} is not allowed`);
        if ("expectedRevision" in f) {
          const now = target.revisions.get(f.key) ?? null;
          if (now !== f.expectedRevision) {
            const current = allows(target.read, f.key) ? read(target, f.key) : undefined;
            throw new Refusal("conflict", `${JSON.stringify(f.key)} changed meanwhile`, current && { current });
          }
        }
        return { revision: store(alias, target, f.key, f.value, user.username) };
      }
      case "history": {
        read(targetOf(alias), f.key);
        const entries = targetOf(alias).history.get(f.key) || [];
        return { entries: entries.slice(0, f.value?.limit || 20), cursor: null };
      }
      case "subscribe":
        targetOf(alias);
        follows.subscribe.add(alias);
        return { subscribed: true };
      case "unsubscribe":
        follows.subscribe.delete(alias);
        return { subscribed: false };
      case "watch":
        targetOf(alias);
        follows.watch.set(alias, f.value?.prefix || "");
        return { watching: true };
      case "unwatch":
        follows.watch.delete(alias);
        return { watching: false };
      case "configuration.set":
        configuration = { ...configuration, values: f.value };
        return {};
      case "notify": {
        if (alias !== null) throw new Refusal("invalid_argument", "a plugin notifies members of its own board");
        if (!WRITERS.has(role)) throw new Refusal("forbidden", "notifying people needs the developer role");
        const { users, text, card } = f.value || {};
        if (!Array.isArray(users) || !users.length) throw new Refusal("invalid_argument", "users is a list of usernames");
        if (typeof text !== "string" || !text.trim() || text.length > 500) throw new Refusal("invalid_argument", "a notification is 1 to 500 characters");
        const stranger = users.find((name) => !members.some((m) => m.username === name));
        if (stranger !== undefined) throw new Refusal("invalid_argument", `${JSON.stringify(stranger)} is not a member of this board`);
        const sent = [...new Set(users)].filter((name) => name !== user.username);
        for (const name of sent) notifications.push({ user: name, text: text.trim(), card: card ?? null });
        return { sent };
      }
      default:
        throw new Refusal("not_supported", `the test host does not serve ${f.op}`);
    }
  }

  function receive(f) {
    if (f?.event === "error") return errors.push(f);
    if (!f || f.v !== V || typeof f.id !== "number") return;
    let reply;
    try {
      reply = { v: V, id: f.id, ok: true, result: call(f) };
    } catch (refusal) {
      if (!(refusal instanceof Refusal)) throw refusal;
      reply = { v: V, id: f.id, ok: false, error: { code: refusal.code, message: refusal.message, ...refusal.extra } };
    }
    send(reply);
  }

  win.steamHarnessKanban = createKanban(win);
  await win.steamHarnessKanban.ready;
  return {
    window: win,
    kanban: win.steamHarnessKanban,
    /** The plugin page's reported errors ({message, at}). */
    errors,
    /** What `kanban.notify` sent: [{user, text, card}]. */
    notifications,
    /** Someone else's write (a person on another board, an agent): events reach the plugin. */
    write(key, value, { alias = null, by = "someone-else" } = {}) {
      return store(alias, targetOf(alias), key, value, by);
    },
    /** What is stored under `key` (undefined: absent). */
    value(key, { alias = null } = {}) {
      return structuredClone(targetOf(alias).values.get(key));
    },
    /** Switch the user's configuration, as the board page's picker does. */
    switchConfiguration(next) {
      configuration = next;
      send({ v: V, event: "configuration", configuration });
    },
    /** Wait for every message in flight on the port to be handled. */
    settle: () => new Promise((resolve) => setTimeout(resolve, 5)),
    close() {
      for (const id of timers) clearTimeout(id);
      port.close();
      channel.port2.close();
    },
  };
}
