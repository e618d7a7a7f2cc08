// Writing: moves, edits, archiving and undo, each shown at once and settled by its write;
// and what the user may do (the context).
(function (B) {
  "use strict";

  const { announce, toast, reportError } = window.PluginKit;
  const { kanban, Core, KEYS, inventory, INVENTORY_DOWN, state, overlays, boardEl, newId, $ } = B;

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

  function undoLatest() {
    if (undoable.length) undoEntry(undoable[undoable.length - 1]);
    else announce("Nothing to undo.");
  }

  // A guest's board starts read-only (getContext) and unlocks live when they are made a
  // developer; members' names show on cards, so any change of the context draws it again.
  const mode = window.PluginKit.createWriteMode({
    state,
    render: () => B.render(),
    refresh: () => B.redraw(),
    onEnter: () => {
      for (const dialog of document.querySelectorAll("dialog[open]")) dialog.close();
    },
  });
  const { apply: applyContext, enter: enterReadOnly, write } = mode;

  async function useOne(card) {
    const key = "stock:" + card.item;
    state.pending++;
    const since = B.stockSeen(card.item);
    try {
      const stored = await inventory.kv.updateValue(key, Core.useOne);
      B.wroteStock(card.item, stored, since);
      announce("Used one " + (stored.name || card.item) + ". " + stored.count + " left.");
      B.render();
    } catch (err) {
      if (err && INVENTORY_DOWN.has(err.code) && err.code !== "forbidden") state.inventoryProblem = err.code;
      reportError(err, "Inventory");
      state.stock.delete(card.item);
      B.refreshStock();
    } finally {
      state.pending--;
    }
  }

  // One key's write, whose stored value the page then holds (B.wrote) until the server's
  // event for it comes: no read follows a write.
  async function update(key, updater) {
    const since = B.seen(key);
    const value = await kanban.kv.updateValue(key, updater);
    B.wrote(key, value, since);
    return value;
  }

  async function put(key, value) {
    const since = B.seen(key);
    await kanban.kv.setValue(key, value);
    B.wrote(key, value, since);
  }

  // Shows a change at once; `settle` keeps it over what the page holds until its write is
  // done.
  function applyLocal(id, card) {
    const mark = card === null ? { deleted: id } : card;
    overlays.set(id, mark);
    state.cards = B.withOverlays(state.cards);
    return mark;
  }

  // An event that came while the write was out may still be reading what it named: the
  // change stays on top until that read is in, so the card never shows its old place.
  async function settle(id, mark, fn) {
    try {
      return await fn();
    } finally {
      await B.caughtUp();
      if (overlays.get(id) === mark) overlays.delete(id);
    }
  }

  function moveCard(id, columnId, beforeId) {
    const card = B.findCard(id);
    if (!card || state.readOnly) return;
    const list = B.columnCards(columnId).filter((c) => c.id !== id);
    const rank = Core.rankForPlacement(list, beforeId);
    if (columnId === Core.columnOf(card, state.columns) && rank === card.rank) return;
    const mark = applyLocal(id, { ...card, column: columnId, rank });
    B.render();
    B.focusCard(id);
    const column = state.columns.find((c) => c.id === columnId);
    const position = Core.cardsInColumn(state.cards, state.columns, columnId).findIndex((c) => c.id === id) + 1;
    announce("Moved " + card.title + " to " + (column ? column.title : columnId) + ", position " + position + ".");
    // Only this card's key: concurrent moves of other cards cannot conflict with it.
    write("Moving the card", () =>
      settle(id, mark, () => update(KEYS.card(id), Core.patchCard({ column: columnId, rank }))),
    );
    const from = { column: card.column, rank: card.rank };
    remember("Moved " + card.title + ".", () => patchCardNow(id, from, "Moving the card back"));
  }

  // Applies `patch` to the card at once and writes it over the card as stored now.
  function patchCardNow(id, patch, label) {
    const card = B.findCard(id);
    if (!card) return toast("This card was deleted meanwhile.");
    const mark = applyLocal(id, { ...card, ...patch });
    B.render();
    write(label, () => settle(id, mark, () => update(KEYS.card(id), Core.patchCard(patch))));
  }

  function moveByKeyboard(card, direction) {
    if (state.readOnly) {
      announce("This board is read-only.");
      return;
    }
    const target = Core.keyboardTarget(card, direction, state.columns, B.visibleCards);
    if (!target) return;
    if (state.view.collapsed.includes(target.column)) {
      B.setView({ collapsed: state.view.collapsed.filter((c) => c !== target.column) });
    }
    moveCard(card.id, target.column, target.beforeId);
  }

  async function createCard(fields) {
    const id = newId();
    const list = B.columnCards(fields.column);
    const rank = Core.rankForPlacement(list, null);
    const card = { id, ...Core.storedChanges(fields), rank };
    const mark = applyLocal(id, Core.normalizeCard(id, card));
    B.render();
    B.focusCard(id);
    announce("Added " + card.title + ".");
    // The card first, then the index: a reader never finds an id without its card.
    await write("Adding the card", () =>
      settle(id, mark, async () => {
        const stored = await update(KEYS.card(id), Core.createOnly(card));
        await update(KEYS.cards, Core.addToIndex(id));
        notifyAssigned(id, [], stored);
      }),
    );
  }

  // Into the inboxes of members of this board (never the sender's: the server skips it).
  function notify(users, text, card) {
    const others = users.filter((u) => u !== B.me() && B.memberNamed(u));
    if (!others.length) return Promise.resolve();
    return kanban.notify({ users: others, text: text.slice(0, 500), card }).catch((err) => reportError(err, "Notifying " + others.join(", ")));
  }

  // The people a saved card names that it did not before hear of it.
  function notifyAssigned(id, before, stored) {
    const card = stored && Core.normalizeCard(id, stored);
    if (!card) return;
    const added = card.assignees.filter((name) => !before.includes(name));
    if (added.length) notify(added, "assigned you “" + card.title + "”", id);
  }

  // `changes` are what this user changed against `base`, the card as their dialog showed it.
  function editCard(id, base, changes) {
    const card = B.findCard(id);
    if (!card) return;
    const mark = applyLocal(id, { ...card, ...changes });
    B.render();
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
        return await update(KEYS.card(id), Core.mergeCard(base, changes));
      } catch (err) {
        if (!(err instanceof Core.Conflict)) throw err;
        const keepMine = await B.conflictDialog(err, changes);
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
  function archiveCard(id) {
    const card = B.findCard(id);
    if (!card || state.readOnly) return;
    const neighbour = neighbourOf(id);
    patchCardNow(id, { archived: true }, "Archiving the card");
    if (neighbour) B.focusCard(neighbour);
    announce("Archived " + card.title + ".");
    remember("Archived " + card.title + ".", () => restoreCard(id));
  }

  function restoreCard(id) {
    const card = B.findCard(id);
    if (!card) return toast("This card was deleted meanwhile.");
    patchCardNow(id, { archived: false }, "Restoring the card");
    announce("Restored " + card.title + ".");
  }

  async function deleteForever(id) {
    const card = B.findCard(id);
    if (!card || state.readOnly) return;
    if (!(await B.confirmDialog('Delete "' + card.title + '" for good? This cannot be undone.'))) return;
    const mark = applyLocal(id, null);
    B.render();
    // The KV has no delete: the index drops the id (that is what removes the card), and
    // the card's key keeps a small tombstone instead of its content.
    write("Deleting the card", () =>
      settle(id, mark, async () => {
        await update(KEYS.cards, Core.removeFromIndex(id));
        await put(KEYS.card(id), { id, deleted: true });
      }),
    );
  }

  function neighbourOf(id) {
    const card = B.findCard(id);
    if (!card) return null;
    const shown = B.visibleCards(Core.columnOf(card, state.columns));
    const at = shown.findIndex((c) => c.id === id);
    const other = shown[at + 1] || shown[at - 1];
    return other ? other.id : null;
  }

  // --- columns ------------------------------------------------------------------------------------

  function saveColumns(label, updater) {
    state.columns = updater(state.columns);
    B.render();
    return write(label, () => update(KEYS.columns, updater));
  }

  // --- dialogs -----------------------------------------------------------------------------------

  function moveColumn(id, target) {
    saveColumns("Moving the column", Core.moveColumnTo(id, target)).then(() => {
      const grip = boardEl.querySelector('[data-focus-key="grip-' + CSS.escape(id) + '"]');
      if (grip) grip.focus();
    });
    const column = state.columns.find((c) => c.id === id);
    announce("Moved column " + (column ? column.title : id) + " to position " + (state.columns.findIndex((c) => c.id === id) + 1) + ".");
  }

  Object.assign(B, { update, notify, remember, undoEntry, undoLatest, applyContext, enterReadOnly, write, useOne, applyLocal, settle, moveCard, patchCardNow, moveByKeyboard, createCard, editCard, saveChanges, archiveCard, restoreCard, deleteForever, neighbourOf, saveColumns, moveColumn });
})(window.BoardApp);
