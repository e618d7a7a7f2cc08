// Reading: the board, the stock and the user's view, kept current from change events.
//
// The page reads the whole board once (and again only on a resync). From then on every
// change arrives as a watch event, usually carrying the new value: the page applies it to
// what it holds (Core.createStore) and reads only what came without a value, or what an
// index change names that it neither holds nor was sent. One change elsewhere is at most
// one request here, and none when its values were pushed.
(function (B) {
  "use strict";

  const { el, reportError } = window.PluginKit;
  const { kanban, Core, KEYS, inventory, READ_BATCH, state, overlays, boardEl } = B;

  const store = Core.createStore();

  // Many keys of one project's kv, READ_BATCH per request, the requests in parallel; each
  // value, or undefined when absent or refused. A value too big for a batched read
  // (too_large) is read on its own.
  async function readAll(kv, keys) {
    const batches = [];
    for (let i = 0; i < keys.length; i += READ_BATCH) batches.push(keys.slice(i, i + READ_BATCH));
    const results = (await Promise.all(batches.map((batch) => kv.getValues(batch)))).flat();
    return Promise.all(
      results.map((r, i) => {
        if (r.found) return r.value;
        return r.error && r.error.code === "too_large" ? kv.getValue(keys[i]) : undefined;
      }),
    );
  }

  async function readInto(keys) {
    const values = await readAll(kanban.kv, keys);
    keys.forEach((key, i) => store.set(key, values[i]));
  }

  // --- loading --------------------------------------------------------------------------------

  async function ensureDefaultColumns() {
    try {
      return await kanban.kv.updateValue(KEYS.columns, Core.defaultColumnsIfAbsent);
    } catch (err) {
      if (err instanceof Core.Refused) return kanban.kv.getValue(KEYS.columns);
      if (err && err.code === "forbidden") {
        B.enterReadOnly();
        return [];
      }
      throw err;
    }
  }

  // Everything, read afresh into the store: the first load and a resync.
  async function readBoard() {
    const [columns, index] = await readAll(kanban.kv, [KEYS.columns, KEYS.cards]);
    store.clear();
    store.set(KEYS.columns, Core.normalizeColumns(columns) === null ? await ensureDefaultColumns() : columns);
    store.set(KEYS.cards, index);
    await readInto(store.missing());
  }

  function configuredView() {
    return Core.normalizeView(kanban.getConfiguration().values.view);
  }

  function withOverlays(cards) {
    const byId = new Map(cards.map((c) => [c.id, c]));
    for (const [id, card] of overlays) {
      if (card.deleted) byId.delete(id);
      else byId.set(id, card);
    }
    return [...byId.values()];
  }

  // The page's columns and cards from what it holds, with its own writes still out on top.
  function redraw() {
    const board = store.board();
    state.columns = board.columns;
    state.cards = withOverlays(board.cards);
    B.render();
    refreshStock();
  }

  // Watch events wait here while the board is read; applied after it, in order (the last
  // change of a key is its newest value), so nothing that changed meanwhile is lost.
  let waiting = null;
  let loadAgain = false;
  async function load() {
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
      B.resolveReady();
    }
    if (loadAgain) {
      loadAgain = false;
      load();
    }
  }

  async function applyChanges(changes) {
    const unread = store.apply(changes);
    const wanted = [...new Set([...unread, ...store.missing()])];
    if (wanted.length) await readInto(wanted);
    redraw();
  }

  // A queue, so one event's read never lets a later event be applied before it.
  let applying = Promise.resolve();
  function onBoardChanges({ changes, resync }) {
    if (resync) {
      B.reloadComments();
      return load();
    }
    const comments = changes.filter((change) => window.BoardComments.isCommentKey(change.key));
    if (comments.length) B.onCommentChanges(comments);
    if (waiting) return void waiting.push(changes);
    applying = applying.then(() => applyChanges(changes)).catch((err) => reportError(err, "Updating the board"));
  }

  // After a configuration switch: the new view, over the same board.
  function applyView() {
    state.view = configuredView();
    B.syncToolbar();
    B.render();
  }

  // What this page wrote, held as the newest value, so the change does not flicker back
  // between the write's answer and its event; unless an event for the key came while the
  // write was out (`since`: store.seen(key) when it started), which is then as new or newer.
  function wrote(key, value, since) {
    if (store.seen(key) === since) store.set(key, value);
  }

  const seen = (key) => store.seen(key);
  // Resolves once every event that came so far is applied, its reads included.
  const caughtUp = () => applying;

  // --- inventory ---------------------------------------------------------------------------------
  // Stock lines for the items the cards name: read once per item, then kept current from the
  // inventory's watch events (their values pushed); an item the page has not seen is read.

  const stockOf = (value, item) => {
    if (!value || typeof value !== "object" || !Number.isInteger(value.count)) return { status: "missing" };
    return { status: "ok", name: String(value.name || item), count: value.count };
  };

  // item -> how many events changed its stock (as store.seen does for the board's keys).
  const stockEvents = new Map();
  const stockSeen = (item) => stockEvents.get(item) || 0;
  function wroteStock(item, value, since) {
    if (stockSeen(item) === since) state.stock.set(item, stockOf(value, item));
  }

  async function refreshStock() {
    const items = [...new Set(state.cards.map((c) => c.item).filter(Boolean))];
    const unseen = items.filter((item) => !state.stock.has(item));
    if (!unseen.length) return;
    const since = unseen.map(stockSeen);
    let results;
    if (state.inventoryProblem) {
      results = unseen.map(() => ({ status: "unavailable", code: state.inventoryProblem }));
    } else {
      try {
        const values = await readAll(inventory.kv, unseen.map((item) => "stock:" + item));
        results = values.map((value, i) => stockOf(value, unseen[i]));
      } catch (err) {
        results = unseen.map(() => ({ status: "unavailable", code: err.code || "error" }));
      }
    }
    // An event that came while the read was out is as new or newer: it stays.
    unseen.forEach((item, i) => stockSeen(item) === since[i] && state.stock.set(item, results[i]));
    B.render();
  }

  function onStockChanges({ changes, resync }) {
    if (resync) {
      state.stock.clear();
      return refreshStock();
    }
    const named = [];
    for (const change of changes) {
      const item = change.key.slice("stock:".length);
      stockEvents.set(item, stockSeen(item) + 1);
      if (change.deleted === true) state.stock.set(item, { status: "missing" });
      else if ("value" in change) state.stock.set(item, stockOf(change.value, item));
      else named.push(item);
    }
    for (const item of named) state.stock.delete(item);
    B.render();
    if (named.length) refreshStock();
  }

  // The stock for a new inventory context: every item again.
  function resetStock() {
    state.stock.clear();
    return refreshStock();
  }

  // Items for the card dialog's picker: the index plus each item's name.
  async function readInventoryItems() {
    const ids = Core.normalizeIndex(await inventory.kv.getValue("items"));
    const values = await readAll(inventory.kv, ids.map((id) => "stock:" + id)).catch(() => ids.map(() => undefined));
    return ids.map((id, i) => ({ id, name: values[i] && values[i].name ? String(values[i].name) : id }));
  }

  // --- view settings -----------------------------------------------------------------------------

  // Saved a moment after the last change (typing in the filter is many changes), into the
  // configuration on screen when the change was made: a switch drops what has not gone.
  // One still waiting goes at once when the page is hidden or left (a filter cleared just
  // before closing the page is kept cleared).
  let viewTimer = null;
  let pendingSave = null;
  function dropPendingView() {
    clearTimeout(viewTimer);
    pendingSave = null;
  }

  function flushView() {
    const save = pendingSave;
    dropPendingView();
    if (save) save();
  }

  function setView(patch, { immediate = false } = {}) {
    state.view = { ...state.view, ...patch };
    const values = { ...kanban.getConfiguration().values, view: state.view };
    B.render();
    dropPendingView();
    pendingSave = () => kanban.setConfigurationValues(values).catch((err) => reportError(err, "Saving your view"));
    if (immediate) flushView();
    else viewTimer = setTimeout(flushView, 400);
  }

  Object.assign(B, { readAll, ensureDefaultColumns, readBoard, configuredView, withOverlays, redraw, load, onBoardChanges, applyView, wrote, seen, caughtUp, refreshStock, onStockChanges, stockSeen, wroteStock, resetStock, readInventoryItems, dropPendingView, flushView, setView });
})(window.BoardApp);
