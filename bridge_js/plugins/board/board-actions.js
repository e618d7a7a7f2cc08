// Writing: moves, edits, archiving and undo, each shown at once and settled by its write
// (board-state.js's `write`, which knows what the user may do).
import { announce, reportError, toast } from "../../static/bridge/plugin-kit.js";
import { cardsInColumn, columnOf, keyboardTarget, KEYS, normalizeCard, rankForPlacement } from "./board-core.js";
import { addToIndex, Conflict, createOnly, mergeCard, moveColumnTo, patchCard, removeFromIndex, storedChanges, useOne as oneFewer } from "./board-changes.js";
import {
  boardEl,
  columnCards,
  findCard,
  focusCard,
  inventory,
  INVENTORY_DOWN,
  kanban,
  me,
  memberNamed,
  newId,
  overlays,
  render,
  state,
  visibleCards,
  write,
} from "./board-state.js";
import { caughtUp, refreshStock, seen, setView, stockSeen, withOverlays, wrote, wroteStock } from "./board-sync.js";
import { confirmDialog, conflictDialog } from "./board-prompts.js";

const undoable = [];
const MAX_UNDO = 50;

function remember(message, undo) {
  const entry = { undo };
  undoable.push(entry);
  if (undoable.length > MAX_UNDO) undoable.shift();
  toast(message, null, { label: "Undo", run: () => undoEntry(entry) });
}

function undoEntry(entry) {
  const at = undoable.indexOf(entry);
  if (at < 0 || state.readOnly) return;
  undoable.splice(at, 1);
  entry.undo();
}

export function undoLatest() {
  if (undoable.length) undoEntry(undoable[undoable.length - 1]);
  else announce("Nothing to undo.");
}

export async function useOne(card) {
  const key = "stock:" + card.item;
  state.pending++;
  const since = stockSeen(card.item);
  try {
    const stored = await inventory.kv.updateValue(key, oneFewer);
    wroteStock(card.item, stored, since);
    announce("Used one " + (stored.name || card.item) + ". " + stored.count + " left.");
    render();
  } catch (err) {
    if (err && INVENTORY_DOWN.has(err.code) && err.code !== "forbidden") state.inventoryProblem = err.code;
    reportError(err, "Inventory");
    state.stock.delete(card.item);
    refreshStock();
  } finally {
    state.pending--;
  }
}

// One key's write, whose stored value the page then holds (wrote) until the server's
// event for it comes: no read follows a write.
export async function update(key, updater) {
  const since = seen(key);
  const value = await kanban.kv.updateValue(key, updater);
  wrote(key, value, since);
  return value;
}

async function put(key, value) {
  const since = seen(key);
  await kanban.kv.setValue(key, value);
  wrote(key, value, since);
}

// Shows a change at once; `settle` keeps it over what the page holds until its write is
// done.
export function applyLocal(id, card) {
  // This person's change: the card no longer shows an agent's (the store clears it when
  // the write is in).
  const mark = card === null ? { deleted: id } : withoutAgent(card);
  overlays.set(id, mark);
  state.cards = withOverlays(state.cards);
  return mark;
}

function withoutAgent(card) {
  if (!card.agent) return card;
  const { agent: _agent, ...own } = card;
  return own;
}

// An event that came while the write was out may still be reading what it named: the
// change stays on top until that read is in, so the card never shows its old place.
export async function settle(id, mark, fn) {
  try {
    return await fn();
  } finally {
    await caughtUp();
    if (overlays.get(id) === mark) overlays.delete(id);
  }
}

export function moveCard(id, columnId, beforeId) {
  const card = findCard(id);
  if (!card || state.readOnly) return;
  const list = columnCards(columnId).filter((c) => c.id !== id);
  const rank = rankForPlacement(list, beforeId);
  if (columnId === columnOf(card, state.columns) && rank === card.rank) return;
  const mark = applyLocal(id, { ...card, column: columnId, rank });
  render();
  focusCard(id);
  const column = state.columns.find((c) => c.id === columnId);
  const position = cardsInColumn(state.cards, state.columns, columnId).findIndex((c) => c.id === id) + 1;
  announce("Moved " + card.title + " to " + (column ? column.title : columnId) + ", position " + position + ".");
  // Only this card's key: concurrent moves of other cards cannot conflict with it.
  write("Moving the card", () => settle(id, mark, () => update(KEYS.card(id), patchCard({ column: columnId, rank }))));
  const from = { column: card.column, rank: card.rank };
  remember("Moved " + card.title + ".", () => patchCardNow(id, from, "Moving the card back"));
}

// Applies `patch` to the card at once and writes it over the card as stored now.
function patchCardNow(id, patch, label) {
  const card = findCard(id);
  if (!card) return toast("This card was deleted meanwhile.");
  const mark = applyLocal(id, { ...card, ...patch });
  render();
  write(label, () => settle(id, mark, () => update(KEYS.card(id), patchCard(patch))));
}

export function moveByKeyboard(card, direction) {
  if (state.readOnly) {
    announce("This board is read-only.");
    return;
  }
  const target = keyboardTarget(card, direction, state.columns, visibleCards);
  if (!target) return;
  if (state.view.collapsed.includes(target.column)) {
    setView({ collapsed: state.view.collapsed.filter((c) => c !== target.column) });
  }
  moveCard(card.id, target.column, target.beforeId);
}

// `focus: false` leaves the focus where it is (the quick add's field, ready for the next).
export async function createCard(fields, { focus = true } = {}) {
  const id = newId();
  const list = columnCards(fields.column);
  const rank = rankForPlacement(list, null);
  const card = { id, ...storedChanges(fields), rank };
  const mark = applyLocal(id, normalizeCard(id, card));
  render();
  if (focus) focusCard(id);
  announce("Added " + card.title + ".");
  // The card first, then the index: a reader never finds an id without its card.
  await write("Adding the card", () =>
    settle(id, mark, async () => {
      const stored = await update(KEYS.card(id), createOnly(card));
      await update(KEYS.cards, addToIndex(id));
      notifyAssigned(id, [], stored);
    }),
  );
}

// Into the inboxes of members of this board (never the sender's: the server skips it).
export function notify(users, text, card) {
  const others = users.filter((u) => u !== me() && memberNamed(u));
  if (!others.length) return Promise.resolve();
  return kanban.notify({ users: others, text: text.slice(0, 500), card }).catch((err) => reportError(err, "Notifying " + others.join(", ")));
}

// The people a saved card names that it did not before hear of it.
function notifyAssigned(id, before, stored) {
  const card = stored && normalizeCard(id, stored);
  if (!card) return;
  const added = card.assignees.filter((name) => !before.includes(name));
  if (added.length) notify(added, "assigned you “" + card.title + "”", id);
}

// `changes` are what this user changed against `base`, the card as their dialog showed it.
export function editCard(id, base, changes) {
  const card = findCard(id);
  if (!card) return;
  const mark = applyLocal(id, { ...card, ...changes });
  render();
  write("Saving the card", () =>
    settle(id, mark, async () => {
      const stored = await saveChanges(id, base, changes);
      if ("assignees" in changes) notifyAssigned(id, base.assignees, stored);
    }),
  );
  const before = Object.fromEntries(Object.keys(changes).map((field) => [field, base[field]]));
  const after = { ...base, ...changes };
  remember("Saved " + after.title + ".", () => editCard(id, after, before));
}

// Writes `changes` over the card as stored now. When someone else changed one of the same
// fields meanwhile, this user decides: keep theirs for those fields, or put theirs back.
async function saveChanges(id, base, changes) {
  for (;;) {
    try {
      return await update(KEYS.card(id), mergeCard(base, changes));
    } catch (err) {
      if (!(err instanceof Conflict)) throw err;
      const keepMine = await conflictDialog(err, changes);
      base = err.current;
      if (!keepMine) {
        changes = { ...changes };
        for (const field of err.fields) delete changes[field];
        if (!("column" in changes)) delete changes.rank;
      }
      if (!Object.keys(changes).length) return;
    }
  }
}

// Deleting archives: the card leaves its column and the Archive lists it, to restore or
// delete for good.
export function archiveCard(id) {
  const card = findCard(id);
  if (!card || state.readOnly) return;
  const neighbour = neighbourOf(id);
  patchCardNow(id, { archived: true }, "Archiving the card");
  if (neighbour) focusCard(neighbour);
  announce("Archived " + card.title + ".");
  remember("Archived " + card.title + ".", () => restoreCard(id));
}

export function restoreCard(id) {
  const card = findCard(id);
  if (!card) return toast("This card was deleted meanwhile.");
  patchCardNow(id, { archived: false }, "Restoring the card");
  announce("Restored " + card.title + ".");
}

export async function deleteForever(id) {
  const card = findCard(id);
  if (!card || state.readOnly) return;
  if (!(await confirmDialog('Delete "' + card.title + '" for good? This cannot be undone.'))) return;
  const mark = applyLocal(id, null);
  render();
  // The KV has no delete: the index drops the id (that is what removes the card), and
  // the card's key keeps a small tombstone instead of its content.
  write("Deleting the card", () =>
    settle(id, mark, async () => {
      await update(KEYS.cards, removeFromIndex(id));
      await put(KEYS.card(id), { id, deleted: true });
    }),
  );
}

function neighbourOf(id) {
  const card = findCard(id);
  if (!card) return null;
  const shown = visibleCards(columnOf(card, state.columns));
  const at = shown.findIndex((c) => c.id === id);
  const other = shown[at + 1] || shown[at - 1];
  return other ? other.id : null;
}

// --- columns ------------------------------------------------------------------------------------

export function saveColumns(label, updater) {
  state.columns = updater(state.columns);
  render();
  return write(label, () => update(KEYS.columns, updater));
}

export function moveColumn(id, target) {
  saveColumns("Moving the column", moveColumnTo(id, target)).then(() => {
    const grip = boardEl.querySelector(/** @type {"button"} */ ('[data-focus-key="grip-' + CSS.escape(id) + '"]'));
    if (grip) grip.focus();
  });
  const column = state.columns.find((c) => c.id === id);
  announce("Moved column " + (column ? column.title : id) + " to position " + (state.columns.findIndex((c) => c.id === id) + 1) + ".");
}
