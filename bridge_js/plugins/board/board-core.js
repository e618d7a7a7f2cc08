// The Board plugin's pure logic: no DOM, no bridge, no clock: ranks, filters, dates and
// the shapes every stored value is read into. The page and the node tests import it as it
// is; board-changes.js holds what changes those values.
import { customFieldsOf, startOf } from "./board-labels.js";

export const KEYS = Object.freeze({
  columns: "board:columns",
  cards: "board:cards",
  labels: "board:labels",
  card: (id) => "card:" + id,
});

export const DEFAULT_COLUMNS = Object.freeze([
  Object.freeze({ id: "todo", title: "To do", wip: 0 }),
  Object.freeze({ id: "doing", title: "Doing", wip: 0 }),
  Object.freeze({ id: "done", title: "Done", wip: 0 }),
]);

export const DENSITIES = Object.freeze(["comfortable", "compact"]);
export const MAX_TEXT = 200;
const MAX_DESCRIPTION = 4000;
const MAX_LABELS = 12;
const MAX_ASSIGNEES = 10;
// The server reads this number from this file and refuses a longer checklist
// (kanban/data/board/layout.py page_constant): keep it an `export const NAME = <digits>;` line.
export const MAX_CHECKLIST = 50;
// The assignee filter's choice for "the cards assigned to the viewer": a colon is in no
// username, so no member's name can mean it.
export const ME = ":me";

// --- ranks ------------------------------------------------------------------------------
// A rank is a base-36 fraction written without "0." and without trailing zeros, compared
// as a plain string. Between any two distinct ranks there is always another one, so a
// moved card takes a rank between its new neighbours and no other card is rewritten.

const DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz";
const RANK_RE = /^[0-9a-z]*[1-9a-z]$/;

export function isRank(value) {
  return typeof value === "string" && value.length <= 256 && RANK_RE.test(value);
}

// `low` may be "" (zero); `high` may be null (one).
function midpoint(low, high) {
  if (high !== null) {
    let same = 0;
    while (same < high.length && (low[same] || "0") === high[same]) same++;
    if (same > 0) return high.slice(0, same) + midpoint(low.slice(same), high.slice(same));
  }
  const a = low ? DIGITS.indexOf(low[0]) : 0;
  const b = high !== null ? DIGITS.indexOf(high[0]) : DIGITS.length;
  if (b - a > 1) return DIGITS[Math.round((a + b) / 2)];
  if (high !== null && high.length > 1) return high.slice(0, 1);
  return DIGITS[a] + midpoint(low.slice(1), null);
}

// A rank strictly between `before` and `after` (either may be null for an open end).
export function rankBetween(before, after) {
  if (before !== null && !isRank(before)) throw new TypeError("bad rank " + before);
  if (after !== null && !isRank(after)) throw new TypeError("bad rank " + after);
  if (before !== null && after !== null && before >= after) {
    throw new RangeError("ranks out of order: " + before + " >= " + after);
  }
  return midpoint(before || "", after);
}

// Card and column ids: 12 base-36 characters from the given random bytes.
export function newId(randomBytes) {
  const bytes = randomBytes(12);
  let out = "";
  for (let i = 0; i < 12; i++) out += DIGITS[bytes[i] % 36];
  return out;
}

export function compareCards(a, b) {
  if (a.rank !== b.rank) return a.rank < b.rank ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

// Cards of one column in board order. A card whose column no longer exists shows in the
// first column rather than vanishing.
export function cardsInColumn(cards, columns, columnId) {
  const known = new Set(columns.map((c) => c.id));
  const fallback = columns.length ? columns[0].id : null;
  return cards.filter((card) => !card.archived && (known.has(card.column) ? card.column : fallback) === columnId).sort(compareCards);
}

// An archived card is out of every column until it is restored; the archive lists by title.
export function archivedCards(cards) {
  return cards.filter((card) => card.archived).sort((a, b) => (a.title < b.title ? -1 : a.title > b.title ? 1 : 0));
}

export function columnOf(card, columns) {
  return columns.some((c) => c.id === card.column) ? card.column : columns.length ? columns[0].id : null;
}

// The rank for a card placed just before `beforeId` in `list` (null: at the end). `list`
// is the target column in board order without the moving card. Equal ranks (two users
// inserting at one spot at once) leave no room between them, so the card goes after
// the whole tie.
export function rankForPlacement(list, beforeId) {
  let index = beforeId == null ? list.length : list.findIndex((c) => c.id === beforeId);
  if (index < 0) index = list.length;
  const before = index > 0 ? list[index - 1].rank : null;
  let after = null;
  for (let i = index; i < list.length; i++) {
    if (before === null || list[i].rank > before) {
      after = list[i].rank;
      break;
    }
  }
  return rankBetween(before, after);
}

// Where a keyboard move sends a card, as {column, beforeId}, or null when it cannot go
// further. `visible` maps a column id to the cards shown there (filters apply), so a
// move steps over exactly one card the user can see.
export function keyboardTarget(card, direction, columns, visible) {
  const columnId = columnOf(card, columns);
  const shown = visible(columnId);
  const at = shown.findIndex((c) => c.id === card.id);
  if (direction === "up" || direction === "down") {
    if (at < 0) return null;
    if (direction === "up") {
      if (at === 0) return null;
      return { column: columnId, beforeId: shown[at - 1].id };
    }
    if (at === shown.length - 1) return null;
    const next = shown[at + 2];
    return { column: columnId, beforeId: next ? next.id : null };
  }
  const ci = columns.findIndex((c) => c.id === columnId);
  const ti = direction === "left" ? ci - 1 : direction === "right" ? ci + 1 : -1;
  if (ci < 0 || ti < 0 || ti >= columns.length) return null;
  const target = columns[ti].id;
  const others = visible(target).filter((c) => c.id !== card.id);
  const slot = others[Math.max(0, at)];
  return { column: target, beforeId: slot ? slot.id : null };
}

// --- filters, WIP, dates ------------------------------------------------------------------

const fold = (s) => String(s || "").toLocaleLowerCase();

// "Due soon": from today to this many days on.
const SOON_DAYS = 7;
const DUE_FILTERS = Object.freeze(["", "soon", "overdue"]);

// `today` ("YYYY-MM-DD", the viewer's) is needed only by a due filter, `me` (the viewer's
// username) only by "assigned to me".
export function matchesFilter(card, filter, today, me) {
  const f = filter || {};
  if (f.due === "overdue" && dueState(card.due, today) !== "overdue") return false;
  if (f.due === "soon" && !(isDate(card.due) && card.due >= today && card.due <= addDays(today, SOON_DAYS))) return false;
  const text = fold(f.text).trim();
  if (text) {
    const haystack = [card.title, card.description, ...card.assignees, ...card.labels].map(fold).join("\n");
    if (!text.split(/\s+/).every((word) => haystack.includes(word))) return false;
  }
  if (f.label && !card.labels.some((l) => fold(l) === fold(f.label))) return false;
  if (f.assignee === ME) return card.assignees.includes(me);
  if (f.assignee && !card.assignees.some((a) => fold(a) === fold(f.assignee))) return false;
  return true;
}

export function isFiltering(filter) {
  return Boolean(filter && (String(filter.text || "").trim() || filter.label || filter.assignee || filter.due));
}

// Counts every card in the column, filtered or not: the limit is about the work.
export function wipState(column, count) {
  const limit = column && Number.isInteger(column.wip) && column.wip > 0 ? column.wip : 0;
  return { count, limit, over: limit > 0 && count > limit, full: limit > 0 && count === limit };
}

// `today` is the viewer's local date as "YYYY-MM-DD"; ISO dates compare as strings.
export function dueState(due, today) {
  if (!isDate(due)) return "none";
  if (due < today) return "overdue";
  if (due === today) return "today";
  return "later";
}

function isDate(value) {
  return typeof value === "string" && /^\d{4}-\d{2}-\d{2}$/.test(value);
}

function addDays(day, days) {
  const [year, month, date] = day.split("-").map(Number);
  return localDate(new Date(year, month - 1, date + days));
}

export function localDate(date) {
  const pad = (n) => String(n).padStart(2, "0");
  return date.getFullYear() + "-" + pad(date.getMonth() + 1) + "-" + pad(date.getDate());
}

export function parseLabels(text) {
  const seen = new Set();
  const out = [];
  for (const raw of String(text || "").split(",")) {
    const label = raw.trim().slice(0, 40);
    if (label && !seen.has(fold(label)) && out.length < MAX_LABELS) {
      seen.add(fold(label));
      out.push(label);
    }
  }
  return out;
}

/** @param {string[]} values */
export function distinct(values) {
  const seen = new Map();
  for (const v of values) if (v && !seen.has(fold(v))) seen.set(fold(v), v);
  return [...seen.values()].sort((a, b) => fold(a).localeCompare(fold(b)));
}

// --- stored values --------------------------------------------------------------------------
// Anyone with write access can store anything under these keys, so every read is
// normalised into the shapes the page renders.

const str = (v, max) => (typeof v === "string" ? v.slice(0, max) : "");
const isId = (v) => typeof v === "string" && /^[A-Za-z0-9_-]{1,64}$/.test(v);

export function normalizeColumns(value) {
  if (!Array.isArray(value)) return null;
  const seen = new Set();
  const out = [];
  for (const c of value) {
    if (!c || typeof c !== "object" || !isId(c.id) || seen.has(c.id)) continue;
    seen.add(c.id);
    const wip = Number.isInteger(c.wip) && c.wip > 0 ? Math.min(c.wip, 999) : 0;
    out.push({ id: c.id, title: str(c.title, MAX_TEXT) || c.id, wip });
  }
  return out;
}

export function normalizeIndex(value) {
  if (!Array.isArray(value)) return [];
  return [...new Set(value.filter(isId))];
}

// Several assignees; a card from before them names one as `assignee`.
function normalizeAssignees(value) {
  const names = Array.isArray(value.assignees) ? value.assignees : [value.assignee];
  const out = [];
  for (const name of names) {
    const clean = str(name, MAX_TEXT).trim();
    if (clean && !out.includes(clean) && out.length < MAX_ASSIGNEES) out.push(clean);
  }
  return out;
}

export function normalizeChecklist(value) {
  if (!Array.isArray(value)) return [];
  const seen = new Set();
  const out = [];
  for (const item of value) {
    if (!item || typeof item !== "object" || !isId(item.id) || seen.has(item.id) || out.length >= MAX_CHECKLIST) continue;
    const text = str(item.text, MAX_TEXT).trim();
    if (!text) continue;
    seen.add(item.id);
    out.push({ id: item.id, text, done: item.done === true });
  }
  return out;
}

export function normalizeCard(id, value) {
  if (!value || typeof value !== "object" || Array.isArray(value) || value.deleted) return null;
  return {
    id,
    title: str(value.title, MAX_TEXT) || "Untitled",
    description: str(value.description, MAX_DESCRIPTION),
    assignees: normalizeAssignees(value),
    labels: Array.isArray(value.labels) ? parseLabels(value.labels.filter((l) => typeof l === "string").join(",")) : [],
    due: isDate(value.due) ? value.due : null,
    column: typeof value.column === "string" ? value.column : "",
    rank: isRank(value.rank) ? value.rank : "i",
    item: typeof value.item === "string" && value.item ? value.item.slice(0, 200) : null,
    archived: value.archived === true,
    checklist: normalizeChecklist(value.checklist),
    // How many comments the card's comments key holds, kept on the card for its face.
    commentCount: Number.isInteger(value.commentCount) && value.commentCount > 0 ? value.commentCount : 0,
    // Kept from a Trello import, shown read-only (board-labels.js).
    start: startOf(value),
    customFields: customFieldsOf(value),
  };
}

export function checklistProgress(card) {
  return { done: card.checklist.filter((item) => item.done).length, total: card.checklist.length };
}

export function defaultView() {
  return { filter: { text: "", label: "", assignee: "", due: "" }, collapsed: /** @type {string[]} */ ([]), density: "comfortable" };
}

export function normalizeView(value) {
  const view = defaultView();
  if (!value || typeof value !== "object") return view;
  const f = value.filter && typeof value.filter === "object" ? value.filter : {};
  view.filter = {
    text: str(f.text, MAX_TEXT),
    label: str(f.label, MAX_TEXT),
    assignee: str(f.assignee, MAX_TEXT),
    due: DUE_FILTERS.includes(f.due) ? f.due : "",
  };
  view.collapsed = Array.isArray(value.collapsed) ? [...new Set(value.collapsed.filter(isId))] : [];
  view.density = DENSITIES.includes(value.density) ? value.density : "comfortable";
  return view;
}
