// What changes the Board's stored values, pure like board-core.js: the page's store of them
// (applied from watch events), the updaters its writes run (updateValue may call one more
// than once) and the merge of concurrent edits of one card (a card's activity is
// board-history.js's).
import { Refused } from "../../static/bridge/plugin-kit.js";
import { DEFAULT_COLUMNS, KEYS, MAX_CHECKLIST, MAX_TEXT, normalizeCard, normalizeChecklist, normalizeColumns, normalizeIndex } from "./board-core.js";
import { normalizeLabelSet } from "./board-labels.js";
import { agentOf } from "./board-history.js";

const str = (v, max) => (typeof v === "string" ? v.slice(0, max) : "");

// --- what the page holds ---------------------------------------------------------------------
// The board's stored values as the page last read them or was pushed them: key -> value
// (undefined: absent). A watch event changes them in commit order; the page derives its
// columns and cards from them and reads only what it neither holds nor was sent.

export const isBoardKey = (key) => key === KEYS.columns || key === KEYS.cards || key === KEYS.labels || key.startsWith("card:");
// Cards written before their id reached the index (an add writes the card, then the
// index), kept so the index change needs no read; the oldest go past this many.
export const MAX_UNINDEXED = 500;

export function createStore() {
  const values = new Map();
  // key -> how many events changed it: a write can tell whether one came while it was out.
  const events = new Map();
  // The index read into ids once per stored index, not once per change of a card.
  let indexOf;
  let ids = [];
  let inIndex = new Set();
  const indexed = () => {
    const raw = values.get(KEYS.cards);
    if (raw !== indexOf || !values.has(KEYS.cards)) {
      indexOf = raw;
      ids = normalizeIndex(raw);
      inIndex = new Set(ids.map(KEYS.card));
    }
    return ids;
  };
  // key -> {raw, card}: a card is normalized again only when its stored value changed, so
  // an unchanged card is the same object from one board() to the next and the page can
  // keep its drawing (board-render.js compares cards by identity).
  const normalized = new Map();
  // card key -> the agent whose write the page last heard of or read ({name, owner},
  // agentOf); absent when a person's was (a read carries the source of an agent's only).
  const agents = new Map();
  // Card keys set since the last board(), and what that call built from the index.
  const dirty = new Set();
  let built = null;
  /** @type {{ids: unknown, size: number, keys: string[]}} */
  let missingOf = { ids: null, size: -1, keys: [] };
  const cardOf = (id) => {
    const key = KEYS.card(id);
    const raw = values.get(key);
    const agent = agents.get(key);
    const hit = normalized.get(key);
    if (hit && hit.raw === raw && hit.agent === agent) return hit.card;
    const plain = normalizeCard(id, raw);
    // An agent's last change is part of the card as drawn (its face marks it).
    const card = plain && agent ? { ...plain, agent } : plain;
    normalized.set(key, { raw, agent, card });
    return card;
  };
  return {
    has: (key) => values.has(key),
    get: (key) => values.get(key),
    seen: (key) => events.get(key) || 0,
    // `agent`: who wrote this value, when the page knows (agentOf its source; null: a
    // person); left out, what the page knew of its writer stays (a read names none).
    set(key, value, agent) {
      values.delete(key); // re-inserted last: the newest unindexed card is kept longest
      values.set(key, value);
      if (agent) agents.set(key, agent);
      else if (agent === null) agents.delete(key);
      if (key.startsWith("card:")) dirty.add(key);
    },
    // What a read found (readEntries): the value, and its writer, an agent when the read
    // carried the write's source and a person when it carried none.
    read(key, entry) {
      this.set(key, entry.value, agentOf(entry.source));
    },
    // The card under `key` as the page holds it now (null when it holds none).
    card: (key) => (key.startsWith("card:") && values.has(key) ? cardOf(key.slice("card:".length)) : null),
    clear() {
      values.clear();
      agents.clear();
      normalized.clear();
      dirty.clear();
      built = null;
    },
    // A watch event's changes of the board's keys; the keys it named without a value.
    apply(changes) {
      const unread = [];
      for (const change of changes) {
        if (!isBoardKey(change.key)) continue;
        events.set(change.key, (events.get(change.key) || 0) + 1);
        const agent = agentOf(change.source);
        if (change.deleted === true) this.set(change.key, undefined, agent);
        else if ("value" in change) this.set(change.key, change.value, agent);
        else {
          // Read next; whose write it was is known now.
          if (agent) agents.set(change.key, agent);
          else agents.delete(change.key);
          unread.push(change.key);
        }
      }
      return unread;
    },
    // The card keys the index names that the page does not hold: the same while neither
    // the index nor the set of held keys changed (a key is only ever added or dropped).
    missing() {
      const ids = indexed();
      if (ids !== missingOf.ids || values.size !== missingOf.size) {
        const keys = ids.map(KEYS.card).filter((key) => !values.has(key));
        missingOf = { ids, size: values.size, keys };
      }
      return missingOf.keys;
    },
    board() {
      const ids = indexed();
      // Only more keys than the index and the three board keys can hold an unindexed card.
      if (values.size > ids.length + 3) {
        const unindexed = [...values.keys()].filter((key) => key.startsWith("card:") && !inIndex.has(key));
        for (const key of unindexed.slice(0, Math.max(0, unindexed.length - MAX_UNINDEXED))) {
          values.delete(key);
          normalized.delete(key);
          agents.delete(key);
        }
      }
      // The cards in index order, kept from the last call: a new index reads them all
      // again (each still normalized once per stored value), a changed card only itself.
      if (!built || built.ids !== ids) {
        built = { ids, all: ids.map(cardOf), at: new Map(ids.map((id, i) => [KEYS.card(id), i])) };
      } else {
        for (const key of dirty) {
          const i = built.at.get(key);
          if (i !== undefined) built.all[i] = cardOf(ids[i]);
        }
      }
      dirty.clear();
      return {
        columns: normalizeColumns(values.get(KEYS.columns)) || [],
        cards: built.all.filter(Boolean),
        labels: normalizeLabelSet(values.get(KEYS.labels)),
      };
    },
  };
}

// --- reading ------------------------------------------------------------------------------------

// Many keys of one project's kv, `batch` per kv.getValues request, the requests in parallel;
// per key {value, source}: the value (undefined when absent or refused) and, when an agent
// made its last write, that write's source (the server sends none for a person's). A value
// too big for a batched read (too_large) is read on its own.
export async function readEntries(kv, keys, batch) {
  const batches = [];
  for (let i = 0; i < keys.length; i += batch) batches.push(keys.slice(i, i + batch));
  const results = (await Promise.all(batches.map((some) => getValuesPatiently(kv, some)))).flat();
  return Promise.all(results.map((r, i) => (tooLarge(r) ? readAlone(kv, keys[i]) : entryOf(r))));
}

const tooLarge = (result) => !result.found && result.error?.code === "too_large";
const entryOf = (result) => (result.found ? { value: result.value, source: result.source } : { value: undefined });

// One value alone fits any batch, unless the server takes values past a batch's bytes:
// getValue reads those (without the writer).
async function readAlone(kv, key) {
  const [result] = await getValuesPatiently(kv, [key]);
  return tooLarge(result) ? { value: await kv.getValue(key) } : entryOf(result);
}

// A read the server could not serve in time (its database busy, a restart) is asked again
// a few times, a little later each time, as a person pressing reload would, before the
// board says it failed: a thousand Boards opening at once must not leave some empty.
async function getValuesPatiently(kv, keys) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await kv.getValues(keys);
    } catch (err) {
      if (err?.code !== "unavailable" || attempt === 5) throw err;
      await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
    }
  }
}

// --- updaters (pure: updateValue may call them more than once) -------------------------------

export const addToIndex = (id) => (ids) => {
  const list = normalizeIndex(ids);
  return list.includes(id) ? list : [...list, id];
};

export const removeFromIndex = (id) => (ids) => normalizeIndex(ids).filter((x) => x !== id);

// Applies `patch` to the card as stored now, so an edit and a concurrent move both land.
export const patchCard = (patch) => (current) => {
  if (!current || typeof current !== "object" || current.deleted) {
    throw new Refused("gone", "This card was deleted meanwhile.");
  }
  return { ...current, ...patch };
};

// --- edits of one card by several people ----------------------------------------------------
// A dialog saves only the fields its user changed, against the card as the dialog showed
// it (`base`). A field that someone else changed meanwhile, to something other than what
// this user chose, is a conflict: the save stops and names it, so nobody's edit is lost
// without them being told.

const EDITABLE = Object.freeze(["title", "description", "assignees", "labels", "start", "due", "item", "column"]);
// Every field a dialog's save or a restore may write (a conflict names them).
export const FIELD_NAMES = Object.freeze({
  title: "Title",
  description: "Description",
  assignees: "Members",
  labels: "Labels",
  start: "Start date",
  due: "Due date",
  item: "Inventory item",
  column: "Column",
  checklist: "Checklist",
  archived: "Archived",
});

const sameValue = (a, b) => JSON.stringify(a) === JSON.stringify(b);

export function changedFields(base, fields) {
  const changes = {};
  for (const name of EDITABLE) {
    if (name in fields && !sameValue(base[name], fields[name])) changes[name] = fields[name];
  }
  return changes;
}

export class Conflict extends Refused {
  constructor(fields, current) {
    super("conflict", "Someone else changed " + fields.map((f) => FIELD_NAMES[f]).join(", ") + " meanwhile.");
    this.name = "Conflict";
    this.fields = fields;
    this.current = current;
  }
}

// `changes` may carry `rank` beside `column`: a rank is where the column change puts the
// card, so it is written with it and never compared on its own.
export const mergeCard = (base, changes) => (current) => {
  const now = normalizeCard(base.id, current);
  if (!now) throw new Refused("gone", "This card was deleted meanwhile.");
  const conflicts = Object.keys(changes).filter((f) => f !== "rank" && !sameValue(now[f], base[f]) && !sameValue(now[f], changes[f]));
  if (conflicts.length) throw new Conflict(conflicts, now);
  return { ...current, ...storedChanges(changes) };
};

// What a change writes: beside `assignees`, the first of them as `assignee`, which Boards
// from before several assignees show (kanban/data/board/layout.py writes the same).
export function storedChanges(changes) {
  if (!("assignees" in changes)) return changes;
  return { ...changes, assignee: changes.assignees[0] || "" };
}

// One change of a card's checklist, applied to the card as stored now, so two people
// ticking different items both keep theirs. `op`: {add: {id, text}} | {tick: id, done} |
// {remove: id} | {move: id, to: index}.
export const changeChecklist = (op) => (current) => {
  if (!current || typeof current !== "object" || current.deleted) {
    throw new Refused("gone", "This card was deleted meanwhile.");
  }
  const list = normalizeChecklist(current.checklist);
  const target = op.add ? null : list.findIndex((item) => item.id === (op.tick || op.remove || op.move));
  if (target !== null && target < 0) throw new Refused("gone", "This item was removed meanwhile.");
  let next;
  if (op.add) {
    if (list.length >= MAX_CHECKLIST) throw new Refused("full", "A checklist holds at most " + MAX_CHECKLIST + " items.");
    next = [...list, { id: op.add.id, text: str(op.add.text, MAX_TEXT).trim(), done: false }];
  } else if (op.tick) {
    next = list.map((item, i) => (i === target ? { ...item, done: op.done === true } : item));
  } else if (op.remove) {
    next = list.filter((_, i) => i !== target);
  } else {
    next = list.filter((_, i) => i !== target);
    next.splice(Math.max(0, Math.min(op.to, next.length)), 0, list[/** @type {number} */ (target)]);
  }
  return { ...current, checklist: next };
};

// Only if absent: a value already there is never overwritten.
export const createOnly = (value) => (current) => {
  if (current !== undefined) throw new Refused("exists", "Already there.");
  return value;
};

export const defaultColumnsIfAbsent = createOnly(DEFAULT_COLUMNS.map((c) => ({ ...c })));

export const addColumn = (column) => (columns) => {
  const list = normalizeColumns(columns) || [];
  return list.some((c) => c.id === column.id) ? list : [...list, column];
};

export const patchColumn = (id, patch) => (columns) => {
  const list = normalizeColumns(columns) || [];
  if (!list.some((c) => c.id === id)) throw new Refused("gone", "This column was removed meanwhile.");
  return list.map((c) => (c.id === id ? { ...c, ...patch } : c));
};

export const removeColumn = (id) => (columns) => (normalizeColumns(columns) || []).filter((c) => c.id !== id);

// Puts column `id` where column `target` is now (the others keep their order).
export const moveColumnTo = (id, target) => (columns) => {
  const list = normalizeColumns(columns) || [];
  const from = list.findIndex((c) => c.id === id);
  const to = list.findIndex((c) => c.id === target);
  if (from < 0) throw new Refused("gone", "This column was removed meanwhile.");
  if (to < 0 || from === to) return list;
  const moved = list.filter((c) => c.id !== id);
  moved.splice(to, 0, list[from]);
  return moved;
};

// Inventory stock, as the Inventory plugin stores it: {name, count}.
export const useOne = (stock) => {
  if (!stock || typeof stock !== "object" || !Number.isInteger(stock.count)) {
    throw new Refused("missing", "This item is no longer in the inventory.");
  }
  if (stock.count <= 0) throw new Refused("empty", "None left in stock.");
  return { ...stock, count: stock.count - 1 };
};
