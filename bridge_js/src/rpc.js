// Request ids, the pending map and timeouts. A call resolves with its reply frame, never
// rejects: a timeout or a dropped link becomes an `unavailable` reply like any other.

import { V, TIMEOUT } from "./protocol.js";
import { replyError } from "./errors.js";

/** @typedef {import("./wire.js").Reply} Reply */
/** @typedef {{frame: import("./wire.js").Request, resolve: (reply: Reply) => void, timer: unknown, sent: boolean}} Pending */

// `timers` provides setTimeout/clearTimeout (a window, or a fake clock in tests).
/** @param {import("./wire.js").Timers} timers */
export function createRpc(timers, timeout = TIMEOUT) {
  /** @type {Map<number, Pending>} */
  const pending = new Map();
  let lastId = 0;
  /** @type {((frame: import("./wire.js").Request) => void) | null} */
  let send = null;

  /** @param {number} id @param {Reply} reply */
  const settle = (id, reply) => {
    const p = pending.get(id);
    if (!p) return false;
    pending.delete(id);
    timers.clearTimeout(p.timer);
    p.resolve(reply);
    return true;
  };
  /** @param {Pending} p */
  const transmit = (p) => {
    p.sent = true;
    // Only ever called with a link attached.
    /** @type {NonNullable<typeof send>} */ (send)(p.frame);
  };

  return {
    // `frame` is a request without id; requests wait in order while no link is attached.
    // `wait`: this call's own timeout (an upload's), else the link's.
    /** @param {import("./wire.js").Call} frame @returns {Promise<Reply>} */
    call(frame, wait = timeout) {
      const id = ++lastId;
      return new Promise((resolve) => {
        const timer = timers.setTimeout(() => settle(id, replyError(id, "unavailable", "no reply within " + wait / 1000 + " s")), wait);
        const p = { frame: { v: V, id, ...frame }, resolve, timer, sent: false };
        pending.set(id, p);
        if (send) transmit(p);
      });
    },
    /** @param {Reply} reply */
    handle(reply) {
      return settle(reply.id, reply);
    },
    /** @param {(frame: import("./wire.js").Request) => void} fn */
    attach(fn) {
      send = fn;
      for (const p of pending.values()) if (!p.sent) transmit(p);
    },
    // The link dropped: what was sent may be lost, so it fails; what waits keeps waiting,
    // unless `all` (the end: everything fails).
    /** @param {string} message @param {boolean} [all] */
    detach(message, all) {
      send = null;
      for (const [id, p] of pending) if (all || p.sent) settle(id, replyError(id, "unavailable", message));
    },
  };
}
