// THE frame validation of the JS side. The host runs checkRequest on every plugin frame
// before relaying it; the server checks again on its own. The SDK runs only the part that
// needs no measuring, checkArguments (a key is a non-empty string, a value is JSON no
// deeper than 64), so a programming mistake fails in the plugin as a TypeError; the limits
// (key length and characters, value and document bytes) are checkRequest's alone, and the
// host's reply carries the same code the SDK used to raise itself.

import { V, OP_RULES, FIELDS, ALIAS, LIMITS, MAX_DEPTH } from "./protocol.js";
import { BridgeError, typeError } from "./errors.js";

// A rule broken is a typeError (a TypeError whose code is invalid_argument): what a plugin
// calling the SDK wrongly gets, and what the host turns into its reply's error.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

// Plain in any realm: structured clones and vm contexts have their own Object.prototype.
/** @param {unknown} x @returns {x is Record<string, any>} */
export function isPlain(x) {
  if (x === null || typeof x !== "object" || Array.isArray(x)) return false;
  const proto = Object.getPrototypeOf(x);
  return proto === null || Object.getPrototypeOf(proto) === null;
}

/** @param {string} s @param {string} what */
function checkString(s, what) {
  if (LONE_SURROGATE.test(s)) throw typeError(what + " contains an unpaired surrogate");
}

// JSON values only: depth ≤ 64, no cycles or holes; any size. `strings`, when given (the
// host passes checkString), also sees every string and object key. Recursion is bounded
// by MAX_DEPTH, so hostile nesting cannot exhaust the stack.
/**
 * @param {any} x
 * @param {(s: string, what: string) => void} [strings]
 * @param {unknown[]} [ancestors]
 */
export function checkJson(x, strings, depth = 0, ancestors = []) {
  const type = typeof x;
  if (type === "string") {
    strings?.(x, "a string");
  } else if (type === "number") {
    if (!Number.isFinite(x)) throw typeError("NaN and Infinity are not JSON");
  } else if (type === "object" && x) {
    if (ancestors.includes(x)) throw typeError("value contains a cycle");
    if (depth >= MAX_DEPTH) throw typeError("value is nested deeper than " + MAX_DEPTH);
    const array = Array.isArray(x);
    if (!array && (!isPlain(x) || Object.getOwnPropertySymbols(x).length)) {
      throw typeError("only plain objects and arrays are JSON");
    }
    ancestors.push(x);
    if (array) {
      for (let i = 0; i < x.length; i++) {
        if (!(i in x)) throw typeError("arrays must not have holes");
        checkJson(x[i], strings, depth + 1, ancestors);
      }
    } else {
      for (const k of Object.keys(x)) {
        strings?.(k, "an object key");
        checkJson(x[k], strings, depth + 1, ancestors);
      }
    }
    ancestors.pop();
  } else if (x !== null && type !== "boolean") {
    throw typeError(type + " is not JSON");
  }
}

/** @param {string} s */
function utf8Length(s) {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 0x7f) n += c > 0x7ff && (c < 0xd800 || c > 0xdfff) ? 2 : 1;
  }
  return n;
}

/** @param {unknown} key @returns {asserts key is string} */
function checkKeyType(key) {
  if (typeof key !== "string" || !key) throw typeError("key must be a non-empty string");
}

// What the SDK checks before sending: the rules that need no measuring.
/** @param {import("./wire.js").Call} f */
export function checkArguments(f) {
  if ("key" in f) checkKeyType(f.key);
  if ("value" in f) checkJson(f.value);
}

// `limits` are the server's valueBytes and documentBytes (the spec's by default).
/** @param {unknown} value */
export function checkValue(value, limits = LIMITS) {
  checkJson(value, checkString);
  const text = JSON.stringify(value);
  const max = limits.valueBytes;
  if (text.length * 3 > max && utf8Length(text) > max) {
    throw new BridgeError("too_large", "value is more than " + max + " bytes of JSON");
  }
}

/** @param {unknown} key @returns {asserts key is string} */
export function checkKey(key) {
  checkKeyType(key);
  const max = LIMITS.keyChars;
  if (key.length > max && [...key].length > max) {
    throw typeError("key is longer than " + max + " characters");
  }
  if (key.includes("\u0000")) throw typeError("key must not contain NUL");
  checkString(key, "key");
}

// A batched read's keys: 1 to batchKeys of them, each a valid key.
/** @param {unknown} keys */
function checkKeys(keys) {
  if (!Array.isArray(keys) || !keys.length || keys.length > LIMITS.batchKeys) {
    throw typeError("keys must be a list of 1 to " + LIMITS.batchKeys + " keys");
  }
  keys.forEach(checkKey);
}

/** @param {unknown} alias @returns {asserts alias is string} */
export function checkAlias(alias) {
  if (typeof alias !== "string" || !ALIAS.test(alias)) {
    throw typeError("alias must match " + ALIAS.source);
  }
}

// An object `value` (a Knowledge op's arguments, which the bridge's op table,
// kanban/bridge/ops.py, hands to the Knowledge service as they are): only the op's own
// fields, and markdown within the document limit. The `blobs` fields hold a Blob (an
// attachment's bytes, which the host uploads over HTTP), at most attachmentBytes: a larger
// file is refused before a byte of it is sent.
/**
 * @param {string} op
 * @param {unknown} value
 * @param {(string | symbol)[]} fields
 * @param {import("./wire.js").Limits} limits
 * @param {string[]} [blobs]
 */
function checkFields(op, value, fields, limits, blobs = []) {
  if (value === null && !blobs.length) return;
  if (!isPlain(value)) throw typeError(op + " takes an object as value");
  for (const k of Reflect.ownKeys(value)) {
    if (!fields.includes(k)) throw typeError(op + " takes no " + String(k));
  }
  const json = { ...value };
  for (const k of blobs) {
    const blob = value[k];
    if (!isBlob(blob)) throw typeError(op + " needs a Blob or File as " + k);
    const max = limits.attachmentBytes;
    if (blob.size > max) {
      throw new BridgeError("too_large", "a file may have at most " + max + " bytes (KANBAN_ATTACHMENT_BYTES)");
    }
    delete json[k];
  }
  checkJson(json, checkString);
  const max = limits.documentBytes;
  const markdown = value.markdown;
  if (typeof markdown === "string" && markdown.length > max / 3 && utf8Length(markdown) > max) {
    throw new BridgeError("too_large", "markdown is more than " + max + " bytes");
  }
}

// Returns a fresh frame holding only the validated fields, or throws an error with a
// code: invalid_argument (a TypeError) or too_large (a BridgeError). Each op's arguments
// are the spec's (protocol.json).
/** @param {unknown} f @returns {import("./wire.js").Request} */
export function checkRequest(f, limits = LIMITS) {
  if (!isPlain(f)) throw typeError("a frame must be a plain object");
  for (const k of Reflect.ownKeys(f)) {
    if (!FIELDS.includes(/** @type {string} */ (k))) throw typeError("unexpected field " + String(k));
  }
  if (f.v !== V) throw typeError("unsupported protocol version");
  if (!Number.isSafeInteger(f.id) || f.id < 1) throw typeError("id must be a safe positive integer");
  const op = f.op;
  const rule = typeof op === "string" && Object.hasOwn(OP_RULES, op) && OP_RULES[op];
  if (!rule) throw typeError("unknown op");
  /** @param {string} k */
  const has = (k) => Object.hasOwn(f, k);
  /** @type {import("./wire.js").Request} */
  const out = { v: V, id: f.id, op };
  if (has("alias")) {
    if (f.alias !== null) checkAlias(f.alias);
    out.alias = f.alias;
  }
  if (has("key")) {
    if (!rule.key) throw typeError(op + " takes no key");
    checkKey(f.key);
    out.key = f.key;
  } else if (rule.key === "required") {
    throw typeError(op + (rule.op ? " needs the document id in key" : " needs a key"));
  }
  if (has("value")) {
    if (!rule.value) throw typeError(op + " takes no value");
    if (Array.isArray(rule.value)) checkFields(op, f.value, rule.value, limits, rule.blobs);
    else if (rule.value === "keys") checkKeys(f.value);
    else checkValue(f.value, limits);
    out.value = f.value;
  } else if (rule.value === "required" || rule.value === "keys" || rule.blobs) {
    throw typeError(op + " needs a value");
  }
  if (has("expectedRevision")) {
    const r = f.expectedRevision;
    if (!rule.expectedRevision) throw typeError("only set takes expectedRevision");
    if (r !== null && (typeof r !== "string" || !r || r.length > LIMITS.revisionChars)) {
      throw typeError("expectedRevision must be null or a revision string");
    }
    out.expectedRevision = r;
  }
  return out;
}

// A Blob from any realm (a structured clone is the receiving realm's; a File is a Blob).
/** @param {unknown} x @returns {x is Blob} */
export function isBlob(x) {
  return Object.prototype.toString.call(x) === "[object Blob]" || Object.prototype.toString.call(x) === "[object File]";
}

// Light check of what comes back from the server or the host: a reply or an event.
/** @param {any} f */
export function isFrame(f) {
  const reply = Number.isSafeInteger(f?.id) && typeof f.ok === "boolean";
  return isPlain(f) && f.v === V && (typeof f.event === "string" || reply);
}
