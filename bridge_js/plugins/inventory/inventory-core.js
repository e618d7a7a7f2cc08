// The Inventory plugin's pure logic: no DOM, no bridge. The page and the node tests import
// it as it is.
import { Refused } from "../../static/bridge/plugin-kit.js";

/** @typedef {{id: string, name: string, count: number, broken: boolean}} Item an item as the page shows it */
/** @typedef {{name: string, count: number}} Stock what `stock:<id>` holds */

export const KEYS = Object.freeze({
  items: "items",
  stock: (/** @type {string} */ id) => "stock:" + id,
});

export const MAX_COUNT = 1000000000;
const MAX_NAME = 120;
const ID_RE = /^[a-z0-9][a-z0-9-]{0,63}$/;

/** @param {unknown} value @returns {value is string} */
export function isItemId(value) {
  return typeof value === "string" && ID_RE.test(value);
}

// Readable ids: "Blue pens" -> "blue-pens-x3k9"; the suffix keeps two "Blue pens" apart.
/** @param {string} name @param {(n: number) => Uint8Array} randomBytes */
export function newItemId(name, randomBytes) {
  const slug = String(name || "")
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40)
    .replace(/-+$/, "");
  const bytes = randomBytes(4);
  let suffix = "";
  for (let i = 0; i < 4; i++) suffix += "0123456789abcdefghijklmnopqrstuvwxyz"[bytes[i] % 36];
  return (slug || "item") + "-" + suffix;
}

/** @param {unknown} name @returns {{ok: true, value: string} | {ok: false, message: string}} */
export function checkName(name) {
  const text = String(name || "").trim();
  if (!text) return { ok: false, message: "An item needs a name." };
  if (text.length > MAX_NAME) return { ok: false, message: "Names are at most " + MAX_NAME + " characters." };
  return { ok: true, value: text };
}

/** @param {unknown} raw @returns {{ok: true, value: number} | {ok: false, message: string}} */
export function checkCount(raw) {
  const text = String(raw === undefined || raw === null ? "" : raw).trim();
  const count = text === "" ? 0 : Number(text);
  if (!Number.isInteger(count) || count < 0 || count > MAX_COUNT) {
    return { ok: false, message: "The count is a whole number from 0 to " + MAX_COUNT + "." };
  }
  return { ok: true, value: count };
}

/** @param {unknown} value @returns {string[]} */
export function normalizeIndex(value) {
  if (!Array.isArray(value)) return [];
  return [...new Set(value.filter(isItemId))];
}

/** @param {string} id @param {any} value a stored `stock:<id>`, whatever it holds @returns {Item | null} */
export function normalizeItem(id, value) {
  if (!value || typeof value !== "object" || Array.isArray(value)) return null;
  if (!Number.isInteger(value.count) || value.count < 0) return { id, name: nameOf(id, value), count: 0, broken: true };
  return { id, name: nameOf(id, value), count: value.count, broken: false };
}

const nameOf = (/** @type {string} */ id, /** @type {any} */ value) =>
  typeof value.name === "string" && value.name.trim() ? value.name.slice(0, MAX_NAME) : id;

/** @param {Item[]} items */
export function sortItems(items) {
  return [...items].sort((a, b) => a.name.localeCompare(b.name, undefined, { sensitivity: "base" }) || (a.id < b.id ? -1 : 1));
}

// Pure updaters: updateValue may call them more than once.
export const adjust = (/** @type {number} */ delta) => (/** @type {any} */ stock) => {
  if (!stock || typeof stock !== "object" || !Number.isInteger(stock.count)) {
    throw new Refused("missing", "This item is no longer in the inventory.");
  }
  const count = stock.count + delta;
  if (count < 0) throw new Refused("negative", "Stock cannot go below zero.");
  if (count > MAX_COUNT) throw new Refused("too_many", "That is more than the inventory can count.");
  return /** @type {Stock} */ ({ ...stock, count });
};

/** @template T @param {T} value @returns {(current: unknown) => T} */
export const createOnly = (value) => (current) => {
  if (current !== undefined) throw new Refused("exists", "An item with this id exists already.");
  return value;
};

export const addToIndex = (/** @type {string} */ id) => (/** @type {unknown} */ ids) => {
  const list = normalizeIndex(ids);
  return list.includes(id) ? list : [...list, id];
};
