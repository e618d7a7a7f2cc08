// What each error code asks of a plugin developer, one line each. The host adds it to every
// refusal it relays (`error.hint`), so the SDK's console line carries it without the SDK
// shipping this table. bridge_js/README.md's Errors table is this one (a test compares).
// A size in a hint is the limit the server enforces (the spec's, or the deployment's own
// that the board page tells its host), never a number written here.

import { LIMITS } from "./protocol.js";

const KiB = 1024;
const MiB = 1024 * KiB;

/** A byte count as people read it: `1 MiB`, `16 KiB`, `1000 bytes`.
 * @param {number} bytes */
export const sizeText = (bytes) => (bytes % MiB === 0 ? `${bytes / MiB} MiB` : bytes % KiB === 0 ? `${bytes / KiB} KiB` : `${bytes} bytes`);

/** The hints under these limits.
 * @param {import("./wire.js").Limits} [limits] */
export const hintsFor = (limits = LIMITS) =>
  Object.freeze({
    invalid_argument: "check the arguments",
    unauthenticated: "sign in again",
    forbidden: "your role or the grant does not allow it",
    not_found: "no such project or document",
    unknown_alias: "declare it in package.json relatedProjects",
    not_supported: "never possible here (running an entrypoint: run it locally)",
    relationship_pending: "the other project must declare this one",
    conflict: "re-read or use updateValue",
    too_large: `values are limited to ${sizeText(limits.valueBytes ?? LIMITS.valueBytes)}`,
    quota_exceeded: "the project's storage is full: delete values or purge kept versions",
    limit_reached: "a person's count limit (boards they own): delete or hand one over first",
    built_in: "the default configuration is built in: it cannot be renamed or deleted",
    rate_limited: "retry later",
    unavailable: "retry once reconnected",
  });

/** The hints under the spec's limits. */
export const HINTS = hintsFor();

// A refusal as the plugin receives it: the wire's error, normalised, with its hint.
/**
 * @param {import("./wire.js").WireError} error
 * @param {Readonly<Record<string, string>>} [hints] the hints under the server's limits
 */
export const withHint = (error, hints = HINTS) => ({ ...error, hint: hints[error.code] });
