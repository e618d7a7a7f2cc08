// What each error code asks of a plugin developer, one line each. The host adds it to every
// refusal it relays (`error.hint`), so the SDK's console line carries it without the SDK
// shipping this table. bridge_js/README.md's Errors table is this one (a test compares).

export const HINTS = Object.freeze({
  invalid_argument: "check the arguments",
  unauthenticated: "sign in again",
  forbidden: "your role or the grant does not allow it",
  not_found: "no such project or document",
  unknown_alias: "declare it in package.json relatedProjects",
  not_supported: "never possible here (running an entrypoint: run it locally)",
  relationship_pending: "the other project must declare this one",
  conflict: "re-read or use updateValue",
  too_large: "values are limited to 1 MiB",
  quota_exceeded: "the project's storage is full: delete values or purge kept versions",
  limit_reached: "a person's count limit (boards they own): delete or hand one over first",
  rate_limited: "retry later",
  unavailable: "retry once reconnected",
});

// A refusal as the plugin receives it: the wire's error, normalised, with its hint.
/** @param {import("./wire.js").WireError} error */
export const withHint = (error) => ({ ...error, hint: HINTS[error.code] });
