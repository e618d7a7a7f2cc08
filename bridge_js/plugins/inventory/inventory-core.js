// The Inventory plugin's pure logic: no DOM, no bridge. The page and the node tests import
// it as it is.
import { Refused } from "../../static/bridge/plugin-kit.js";

export const KEYS = Object.freeze({
  items: "items",
  stock: (id) => "stock:" + id,
});

export const MAX_COUNT = 1000000000;
const MAX_NAME = 120;
const ID_RE = /^[a-z0-9][a-z0-9-]{0,63}$/;

export function isItemId(value) {
  return typeof value === "string" && ID_RE.test(value);
}

// Readable ids: "Blue pens" -> "blue-pens-x3k9"; the suffix keeps two "Blue pens" apart.
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

export function checkName(name) {
  const text = String(name || "").trim();
  if (!text) return { ok: false, message: "An item needs a name." };
  if (text.length > MAX_NAME) return { ok: false, message: "Names are at most " + MAX_NAME + " characters." };
  return { ok: true, value: text };
}

export function checkCount(raw) {
  const text = String(raw === undefined || raw === null ? "" : raw).trim();
  const count = text === "" ? 0 : Number(text);
  if (!Number.isInteger(count) || count < 0 || count > MAX_COUNT) {
    return { ok: false, message: "The count is a whole number from 0 to " + MAX_COUNT + "." };
  }
  return { ok: true, value: count };
}

export function normalizeIndex(value) {
  if (!Array.isArray(value)) return [];
  return [...new Set(value.filter(isItemId))];
}

export function normalizeItem(id, value) {
  if (!value || typeof value !== "object" || Array.isArray(value)) return null;
  if (!Number.isInteger(value.count) || value.count < 0) return { id, name: nameOf(id, value), count: 0, broken: true };
  return { id, name: nameOf(id, value), count: value.count, broken: false };
}

const nameOf = (id, value) => (typeof value.name === "string" && value.name.trim() ? value.name.slice(0, MAX_NAME) : id);

export function sortItems(items) {
  return [...items].sort((a, b) => a.name.localeCompare(b.name, undefined, { sensitivity: "base" }) || (a.id < b.id ? -1 : 1));
}

// Pure updaters: updateValue may call them more than once.
export const adjust = (delta) => (stock) => {
  if (!stock || typeof stock !== "object" || !Number.isInteger(stock.count)) {
    throw new Refused("missing", "This item is no longer in the inventory.");
  }
  const count = stock.count + delta;
  if (count < 0) throw new Refused("negative", "Stock cannot go below zero.");
  if (count > MAX_COUNT) throw new Refused("too_many", "That is more than the inventory can count.");
  return { ...stock, count };
};

export const createOnly = (value) => (current) => {
  if (current !== undefined) throw new Refused("exists", "An item with this id exists already.");
  return value;
};

export const addToIndex = (id) => (ids) => {
  const list = normalizeIndex(ids);
  return list.includes(id) ? list : [...list, id];
};
