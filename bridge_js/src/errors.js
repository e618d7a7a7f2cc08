// The error vocabulary: the same strings as storage/errors.py ErrorCode.

import { CODES } from "./protocol.js";

export { CODES };

export class BridgeError extends Error {
  /**
   * @param {import("./wire.js").ErrorCode} code
   * @param {string} message
   * @param {any} [current]
   * @param {string} [hint]
   */
  constructor(code, message, current, hint) {
    super(message);
    /** @type {"BridgeError"} */
    this.name = "BridgeError";
    this.code = code;
    if (current !== undefined) this.current = current;
    if (hint) this.hint = hint;
  }
}

// A programming mistake in the plugin (bad key, non-JSON value) is a TypeError, and still
// carries the code so one `switch (err.code)` handles everything.
/** @param {string} message */
export function typeError(message) {
  const err = /** @type {import("./wire.js").CodedTypeError} */ (new TypeError(message));
  err.code = "invalid_argument";
  return err;
}

// Normalises an error from the wire; an unknown code means a newer or broken peer.
/** @param {any} e @returns {import("./wire.js").WireError} */
export function wireError(e) {
  const { code, message, current } = e || {};
  return {
    code: CODES.includes(code) ? code : "unavailable",
    message: typeof message === "string" ? message : "bridge error",
    ...(current !== null && typeof current === "object" ? { current } : {}),
  };
}

/**
 * @param {number} id
 * @param {import("./wire.js").ErrorCode} code
 * @param {string} message
 * @returns {import("./wire.js").Reply}
 */
export function replyError(id, code, message) {
  return { v: 1, id, ok: false, error: { code, message } };
}
