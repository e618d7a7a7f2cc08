// Reading: the board, the stock and the user's view, kept current from change events.
//
// The page reads the whole board once (and again only on a resync). From then on every
// change arrives as a watch event, usually carrying the new value: the page applies it to
// what it holds (createStore, board-changes.js) and reads only what came without a value, or what an
// index change names that it neither holds nor was sent. One change elsewhere is at most
// one request here, and none when its values were pushed.
import { el, Refused, reportError, toast } from "../../static/bridge/plugin-kit.js";
import { KEYS, normalizeColumns, normalizeIndex, normalizeView } from "./board-core.js";
import { createStore, defaultColumnsIfAbsent, readEntries } from "./board-changes.js";
import { agentNotices, agentOf, cardNotice } from "./board-history.js";
import { dayText } from "./board-dates.js";
import { boardEl, enterReadOnly, inventory, kanban, overlays, personLabel, READ_BATCH, render, resolveReady, state } from "./board-state.js";

const store = createStore();

// Many keys of one project's kv (readEntries, READ_BATCH per request): each value, or
// undefined when absent or refused.
export async function readAll(kv, keys) {
  return (await readEntries(kv, keys, READ_BATCH)).map((entry) => entry.value);
}

// Into the store with their writers: a card an agent changed last is marked however long
// ago that was (the read carries the agent's write source), and one a person did is not.
async function readInto(keys) {
  const entries = await readEntries(kanban.kv, keys, READ_BATCH);
  keys.forEach((key, i) => {
    store.read(key, entries[i]);
  });
}

// --- loading --------------------------------------------------------------------------------

async function ensureDefaultColumns() {
  try {
    return await kanban.kv.updateValue(KEYS.columns, defaultColumnsIfAbsent);
  } catch (err) {
    if (err instanceof Refused) return kanban.kv.getValue(KEYS.columns);
    if (err && err.code === "forbidden") {
      enterReadOnly();
      return [];
    }
    throw err;
  }
}

// Everything, read afresh into the store: the first load and a resync.
// Marks in the page's performance timeline (board:read, board:cards), so a profile or the
// bench can tell the reads from the drawing.
async function readBoard() {
  performance.mark("board:read");
  const [columns, index, labels] = await readAll(kanban.kv, [KEYS.columns, KEYS.cards, KEYS.labels]);
  store.clear();
  store.set(KEYS.columns, normalizeColumns(columns) === null ? await ensureDefaultColumns() : columns);
  store.set(KEYS.cards, index);
  store.set(KEYS.labels, labels);
  performance.mark("board:index");
  await readInto(store.missing());
  performance.mark("board:cards");
}

export function configuredView() {
  return normalizeView(kanban.getConfiguration().values.view);
}

export function withOverlays(cards) {
  if (!overlays.size) return cards;
  const byId = new Map(cards.map((c) => [c.id, c]));
  for (const [id, card] of overlays) {
    if (card.deleted) byId.delete(id);
    else byId.set(id, card);
  }
  return [...byId.values()];
}

// The page's columns and cards from what it holds, with its own writes still out on top.
export function redrawBoard() {
  const board = store.board();
  state.columns = board.columns;
  state.cards = withOverlays(board.cards);
  state.labels = board.labels;
  render();
  refreshStock();
}

// Watch events wait here while the board is read; applied after it, in order (the last
// change of a key is its newest value), so nothing that changed meanwhile is lost.
let waiting = null;
let loadAgain = false;
export async function load() {
  if (waiting) {
    loadAgain = true; // a read is out, which may have missed what the resync says
    return;
  }
  waiting = [];
  try {
    await applying; // an event's read still out lands before the store is read afresh
    await readBoard();
    state.loaded = true;
    const changes = waiting.flat();
    waiting = null;
    await applyChanges(changes);
  } catch (err) {
    waiting = null;
    reportError(err, "Loading the board failed");
    if (!state.loaded) {
      boardEl.replaceChildren(el("p", { class: "empty", text: "The board could not be loaded (" + (err.code || "error") + ")." }));
    }
  } finally {
    resolveReady();
  }
  if (loadAgain) {
    loadAgain = false;
    load();
  }
}

async function applyChanges(changes) {
  // An agent's change of a card is told in a toast: what it did, seen from the card as
  // the page held it before and holds it after (read, when the event named it only).
  const byAgent = state.loaded ? changes.filter((c) => c.key.startsWith("card:") && agentOf(c.source)) : [];
  const before = byAgent.map((c) => store.card(c.key));
  const unread = store.apply(changes);
  const wanted = [...new Set([...unread, ...store.missing()])];
  if (wanted.length) await readInto(wanted);
  redrawBoard();
  const context = { columns: state.columns, person: personLabel, day: (d) => dayText(d) };
  const told = byAgent.map((c, i) => ({ agent: agentOf(c.source), what: cardNotice(before[i], store.card(c.key), context) })).filter((notice) => notice.what);
  if (told.length) toast(agentNotices(told, personLabel), null);
}

// A queue, so one event's read never lets a later event be applied before it. Changes of
// other keys (comments) pass through the store untouched.
let applying = Promise.resolve();
export function onBoardChanges({ changes, resync }) {
  if (resync) return load();
  if (waiting) return void waiting.push(changes);
  applying = applying.then(() => applyChanges(changes)).catch((err) => reportError(err, "Updating the board"));
}

// What this page wrote, held as the newest value, so the change does not flicker back
// between the write's answer and its event; unless an event for the key came while the
// write was out (`since`: store.seen(key) when it started), which is then as new or newer.
export function wrote(key, value, since) {
  if (store.seen(key) === since) store.set(key, value, null); // this person's change
}

export const seen = (key) => store.seen(key);
// Resolves once every event that came so far is applied, its reads included.
export const caughtUp = () => applying;

// --- inventory ---------------------------------------------------------------------------------
// Stock lines for the items the cards name: read once per item, then kept current from the
// inventory's watch events (their values pushed); an item the page has not seen is read.

const stockOf = (value, item) => {
  if (!value || typeof value !== "object" || !Number.isInteger(value.count)) return { status: "missing" };
  return { status: "ok", name: String(value.name || item), count: value.count };
};

// item -> how many events changed its stock (as store.seen does for the board's keys).
const stockEvents = new Map();
export const stockSeen = (item) => stockEvents.get(item) || 0;
export function wroteStock(item, value, since) {
  if (stockSeen(item) === since) state.stock.set(item, stockOf(value, item));
}

export async function refreshStock() {
  const items = [...new Set(state.cards.map((c) => c.item).filter(Boolean))];
  const unseen = items.filter((item) => !state.stock.has(item));
  if (!unseen.length) return;
  const since = unseen.map(stockSeen);
  let results;
  if (state.inventoryProblem) {
    results = unseen.map(() => ({ status: "unavailable", code: state.inventoryProblem }));
  } else {
    try {
      const values = await readAll(
        inventory.kv,
        unseen.map((item) => "stock:" + item),
      );
      results = values.map((value, i) => stockOf(value, unseen[i]));
    } catch (err) {
      results = unseen.map(() => ({ status: "unavailable", code: err.code || "error" }));
    }
  }
  // An event that came while the read was out is as new or newer: it stays.
  unseen.forEach((item, i) => {
    if (stockSeen(item) === since[i]) state.stock.set(item, results[i]);
  });
  render();
}

/** @param {import("../../static/bridge/kanban.js").ChangesEvent} event */
export function onStockChanges({ changes, resync }) {
  if (resync) {
    state.stock.clear();
    return refreshStock();
  }
  const named = [];
  for (const change of changes) {
    const item = change.key.slice("stock:".length);
    stockEvents.set(item, stockSeen(item) + 1);
    if ("deleted" in change) state.stock.set(item, { status: "missing" });
    else if ("value" in change) state.stock.set(item, stockOf(change.value, item));
    else named.push(item);
  }
  for (const item of named) state.stock.delete(item);
  render();
  if (named.length) refreshStock();
}

// The stock for a new inventory context: every item again.
export function resetStock() {
  state.stock.clear();
  return refreshStock();
}

// Items for the card dialog's picker: the index plus each item's name.
export async function readInventoryItems() {
  const ids = normalizeIndex(await inventory.kv.getValue("items"));
  const values = await readAll(
    inventory.kv,
    ids.map((id) => "stock:" + id),
  ).catch(() => ids.map(() => undefined));
  return ids.map((id, i) => ({ id, name: values[i] && values[i].name ? String(values[i].name) : id }));
}

// --- view settings -----------------------------------------------------------------------------

// Saved a moment after the last change (typing in the filter is many changes), into the
// configuration on screen when the change was made: a switch drops what has not gone.
// One still waiting goes at once when the page is hidden or left (a filter cleared just
// before closing the page is kept cleared).
let viewTimer = null;
let pendingSave = null;
export function dropPendingView() {
  clearTimeout(viewTimer);
  pendingSave = null;
}

export function flushView() {
  const save = pendingSave;
  dropPendingView();
  if (save) save();
}

export function setView(patch, { immediate = false } = {}) {
  state.view = { ...state.view, ...patch };
  const values = { ...kanban.getConfiguration().values, view: state.view };
  render();
  dropPendingView();
  pendingSave = () => kanban.setConfigurationValues(values).catch((err) => reportError(err, "Saving your view"));
  if (immediate) flushView();
  else viewTimer = setTimeout(flushView, 400);
}
