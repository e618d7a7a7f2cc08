// A board host for testing plugins without a server: the real SDK (src/sdk.js) against an
// in-memory world (world.mjs) that answers as the server does: revisions and
// compare-and-set, watch events with pushed values, subscribe events, grants per alias,
// roles, and refusals with the real error codes.
//
// In node, the SDK runs in a small window shim, over a real MessageChannel:
//
//   import { createTestHost } from "<server>/bridge_js/testing/host.mjs";
//   const host = await createTestHost({ role: "developer", kv: { counter: 1 } });
//   host.window.steamHarnessKanban        // what the plugin sees
//   host.write("counter", 5)              // someone else's write: events reach the plugin
//   host.value("counter")                 // what is stored
//
// Options: `user` ({id, username, displayName}), `role` ("guest" | "developer" | "owner"),
// `kv` (the project's values), `related` ({alias: {kv, read, write, pending}} where a rule
// is "all", "none" or a list of key prefixes), `configuration` ({id, name, values}),
// `pushLimit` (bytes of JSON up to which watch events carry values; the server's default),
// `members` (the board's other members, [{id, username, displayName, role}]: whom `notify`
// may reach; `host.notifications` records what it sent), `attachmentBytes` (the largest
// file `kanban.attachments.upload` takes; the server's default). Attachments are kept as a
// board keeps them (the card's `attachments:<card>` value, refusals in the server's words),
// an image's cover being the image itself; `url` is served by nobody. Knowledge and
// entrypoints answer `not_supported` here. No timers are left behind: `close()` ends it.
//
// In a browser, the plugin's own page runs in a sandboxed iframe, with the SDK it loads
// itself, and the test page is its host, through the real host handshake:
//
//   const world = createTestWorld({ projects: { board: {} } });
//   const page = await connectFrame(world, iframe, { project: "board", role: "guest" });
//
// Several frames on one world are several people (or one person's tabs) on the same data.

import { createKanban } from "../src/sdk.js";
import { CONNECT, HELLO, V } from "../src/protocol.js";
import { hostHandshake } from "../src/handshake.js";
import { createTestWorld } from "./world.mjs";

export { createTestWorld };

const OWN = "plugin";

/**
 * @typedef {object} TestHostOptions
 * @property {import("./world.mjs").User} [user]
 * @property {"guest" | "developer" | "owner"} [role]
 * @property {Record<string, unknown>} [kv]
 * @property {Record<string, {kv?: Record<string, unknown>, read?: import("./world.mjs").Rule, write?: import("./world.mjs").Rule, pending?: boolean}>} [related]
 * @property {import("./world.mjs").Configuration} [configuration]
 * @property {number} [pushLimit]
 * @property {import("./world.mjs").Member[]} [members]
 * @property {number} [attachmentBytes]
 */

/** @param {TestHostOptions} [options] */
export async function createTestHost(options = {}) {
  const related = Object.entries(options.related || {});
  const world = createTestWorld({
    projects: Object.fromEntries([[OWN, { kv: options.kv }], ...related]),
    relationships: related.map(([alias, spec]) => ({ from: OWN, alias, to: alias, read: spec.read, write: spec.write, pending: spec.pending })),
    pushLimit: options.pushLimit,
    members: options.members,
    attachmentBytes: options.attachmentBytes,
  });
  const page = world.connect({ project: OWN, user: options.user, role: options.role, configuration: options.configuration });
  const traffic = { frames: 0 };
  const shim = shimWindow(page, traffic);
  const win = Object.assign(shim, { steamHarnessKanban: createKanban(shim) });
  const kanban = win.steamHarnessKanban;
  await kanban.ready;
  const projectOf = (/** @type {string | null} */ alias) => (alias === null ? OWN : alias);
  return {
    window: win,
    kanban,
    world,
    errors: page.errors,
    notifications: world.notifications,
    write: (/** @type {string} */ key, /** @type {unknown} */ value, /** @type {{alias?: string | null, by?: string}} */ { alias = null, by } = {}) =>
      world.write(projectOf(alias), key, value, { by }),
    value: (/** @type {string} */ key, /** @type {{alias?: string | null}} */ { alias = null } = {}) => world.value(projectOf(alias), key),
    switchConfiguration: page.switchConfiguration,
    /** Wait for every message in flight on the port to be handled. */
    settle: () => settled(traffic),
    close() {
      win.close();
      world.close();
    },
  };
}

// Quiet is three turns of the event loop, at least 5 ms in all, with no frame crossing the
// port. A fixed wait was not enough: on a busy machine the timer came due before the replies
// did (a MessagePort delivers in a later phase of the loop than timers), and a test read the
// page too early.
/** @param {{frames: number}} traffic */
async function settled(traffic) {
  const started = Date.now();
  let seen = -1;
  let quietTurns = 0;
  while (quietTurns < 3 || Date.now() - started < 5) {
    await new Promise((resolve) => setTimeout(resolve, 1));
    quietTurns = traffic.frames === seen ? quietTurns + 1 : 0;
    seen = traffic.frames;
  }
}

// The plugin's window in node: its parent answers the SDK's hello with a port, as a board
// page does. `traffic` counts the frames crossing the port, both ways.
/**
 * @param {{attach: (send: (frame: any) => void) => (frame: any) => void}} page
 * @param {{frames: number}} traffic
 */
function shimWindow(page, traffic) {
  /** @type {Map<string, Set<(event: any) => void>>} */
  const listeners = new Map();
  /** @type {Set<ReturnType<typeof setTimeout>>} */
  const timers = new Set();
  const channel = new MessageChannel();
  const port = channel.port1;
  const dispatch = (/** @type {string} */ type, /** @type {object} */ event) => {
    for (const fn of [...(listeners.get(type) || [])]) fn(event);
  };
  const parent = {
    /** @param {any} data */
    postMessage(data) {
      if (data?.type !== HELLO) return;
      queueMicrotask(() => {
        const receive = page.attach((frame) => {
          traffic.frames += 1;
          port.postMessage(frame);
        });
        port.onmessage = (e) => {
          traffic.frames += 1;
          receive(e.data);
        };
        dispatch("message", { source: parent, data: { type: CONNECT, v: V, nonce: "test" }, ports: [channel.port2] });
      });
    },
  };
  return {
    parent,
    console,
    /** @param {string} type @param {(event: any) => void} fn */
    addEventListener: (type, fn) => {
      if (!listeners.has(type)) listeners.set(type, new Set());
      listeners.get(type)?.add(fn);
    },
    /** @param {string} type @param {(event: any) => void} fn */
    removeEventListener: (type, fn) => listeners.get(type)?.delete(fn),
    /** @param {() => void} fn @param {number} ms */
    setTimeout: (fn, ms) => {
      const id = setTimeout(() => (timers.delete(id), fn()), ms);
      timers.add(id);
      return id;
    },
    /** @param {ReturnType<typeof setTimeout>} id */
    clearTimeout: (id) => (timers.delete(id), clearTimeout(id)),
    close() {
      for (const id of timers) clearTimeout(id);
      port.close();
      channel.port2.close();
    },
  };
}

/** Host a plugin page in `iframe` (sandboxed, on this page) for `world`: resolves with the
 * world's page once the plugin's SDK has connected. A reload connects again, as on a board. */
/**
 * @param {ReturnType<typeof createTestWorld>} world
 * @param {HTMLIFrameElement} iframe
 * @param {import("./world.mjs").PageOptions} [options]
 */
export function connectFrame(world, iframe, options = {}) {
  const page = world.connect(options);
  return new Promise((resolve) => {
    const handshake = hostHandshake(window, iframe, (port) => {
      const receive = page.attach((frame) => port.postMessage(frame));
      port.onmessage = (e) => receive(e.data);
      resolve(page);
    });
    const close = page.close;
    page.close = () => (handshake.close(), close());
  });
}
