// Wire protocol of the bridge: one version, one set of ops and fields, shared by the
// plugin SDK, the host relay and (by value) the server consumer.

import spec from "../protocol.json" with { type: "json" };

// The spec is bridge_js/protocol.json, which the server reads too; the build inlines it.
export const V = spec.version;
export const HELLO = spec.handshake.hello;
export const CONNECT = spec.handshake.connect;
export const READY = spec.handshake.ready;

// SDK method name -> {op, key: "required" | "optional", value: [fields of its object]}.
/** @type {Record<keyof typeof spec.knowledge, {op: string, key?: string, value: string[]}>} */
export const KNOWLEDGE = spec.knowledge;
export const ENTRYPOINTS = spec.entrypoints;
// SDK method name -> rule, as KNOWLEDGE; `blobs` are value fields holding a Blob (never
// JSON), and a `via: "host"` op is the board host's to serve over HTTP, never the socket's.
/** @type {Record<string, import("./wire.js").Rule>} */
export const ATTACHMENTS = spec.attachments;
// SDK method name -> rule: the Board's card transfers (copy or move to another Board).
/** @type {Record<string, import("./wire.js").Rule>} */
export const CARDS = spec.cards;

// op -> {key: "required" | "optional", value: "required" | [fields of its object], ...}
export const OP_RULES = /* @__PURE__ */ (() => {
  /** @type {Record<string, import("./wire.js").Rule>} */
  const rules = { ...spec.ops };
  for (const rule of Object.values(spec.knowledge)) rules[rule.op] = rule;
  for (const rule of Object.values(spec.attachments)) rules[rule.op] = rule;
  for (const rule of Object.values(spec.cards)) rules[rule.op] = rule;
  return rules;
})();

// The only fields a request may carry: the target is always derived by the server from
// the page and the alias, never named by the plugin.
/** @type {string[]} */
export const FIELDS = spec.fields;

export const ALIAS = /* @__PURE__ */ new RegExp(spec.alias);
export const MAX_DEPTH = spec.limits.depth;
/** @type {import("./wire.js").Limits} */
export const LIMITS = spec.limits;
/** @type {import("./wire.js").ErrorCode[]} */
export const CODES = /** @type {any} */ (spec.errors);
export const TIMEOUT = 15000;
// An upload may take minutes on a slow link: its reply comes once the file is stored.
export const UPLOAD_TIMEOUT = 600000;
export const HELLO_EVERY = 200;
export const HELLO_FOR = 5000;
export const MAX_EARLY = 256;
export const BACKOFF_MIN = 250;
export const BACKOFF_MAX = 5000;
export const STATUSES = ["connecting", "open", "reconnecting", "closed"];
// Close codes after which reconnecting cannot help: signed out, or no longer a member.
export const FINAL_CLOSE = [spec.close.unauthenticated, spec.close.forbidden];
