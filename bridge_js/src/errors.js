// The error vocabulary: the same strings as storage/errors.py ErrorCode.

// The hint the SDK logs after a failed call's message; the TypeScript declarations say more.
export const HINTS = {
  invalid_argument: "check the key, value and alias",
  unauthenticated: "sign in again and reload",
  forbidden: "your role or the project's grant does not allow this",
  not_found: "no such project or document",
  unknown_alias: "declare the alias in package.json relatedProjects",
  relationship_pending: "the other project must declare this one back",
  conflict: "re-read it or use updateValue",
  too_large: "values are limited to 1 MiB of JSON",
  rate_limited: "retry later",
  unavailable: "retry once the board reconnects",
};

export const CODES = Object.keys(HINTS);

export class BridgeError extends Error {
  constructor(code, message, current) {
    super(message);
    this.name = "BridgeError";
    this.code = code;
    if (current !== undefined) this.current = current;
  }
}

// A programming mistake in the plugin (bad key, non-JSON value) is a TypeError, and still
// carries the code so one `switch (err.code)` handles everything.
export function typeError(message) {
  const err = new TypeError(message);
  err.code = "invalid_argument";
  return err;
}

// Normalises an error from the wire; an unknown code means a newer or broken peer.
export function wireError(e) {
  const ok = e && CODES.includes(e.code);
  const message = e && typeof e.message === "string" ? e.message : "bridge error";
  const current = e && e.current !== null && typeof e.current === "object" ? e.current : undefined;
  return { code: ok ? e.code : "unavailable", message, ...(current ? { current } : {}) };
}

export function replyError(id, code, message) {
  return { v: 1, id, ok: false, error: { code, message } };
}
