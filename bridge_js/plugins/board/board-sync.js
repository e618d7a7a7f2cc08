// Reading: the board, the stock and the user's view, kept current from change events.
(function (B) {
  "use strict";

  const { el, reportError } = window.PluginKit;
  const { kanban, Core, KEYS, inventory, READ_BATCH, state, overlays, generations, stockGenerations, boardEl } = B;

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

  // --- loading --------------------------------------------------------------------------------

  async function ensureDefaultColumns() {
    try {
      return await kanban.kv.updateValue(KEYS.columns, Core.defaultColumnsIfAbsent);
    } catch (err) {
      if (err instanceof Core.Refused) return Core.normalizeColumns(await kanban.kv.getValue(KEYS.columns)) || [];
      if (err && err.code === "forbidden") {
        B.enterReadOnly();
        return [];
      }
      throw err;
    }
  }

  async function readBoard() {
    let columns = Core.normalizeColumns(await kanban.kv.getValue(KEYS.columns));
    if (columns === null) columns = Core.normalizeColumns(await ensureDefaultColumns()) || [];
    const ids = Core.normalizeIndex(await kanban.kv.getValue(KEYS.cards));
    const values = await readAll(kanban.kv, ids.map(KEYS.card));
    const cards = ids.map((id, i) => Core.normalizeCard(id, values[i])).filter(Boolean);
    return { columns, cards };
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

  let loading = 0;
  let loadAgain = false;
  async function load() {
    loading++;
    try {
      await loadOnce();
    } finally {
      loading--;
    }
    // A change that came while this load was reading may have been read too early.
    if (!loading && loadAgain) {
      loadAgain = false;
      load();
    }
  }

  async function loadOnce() {
    const generation = generations.next();
    const withView = state.viewStale;
    const view = withView ? configuredView() : null;
    try {
      const board = await readBoard();
      if (!generations.isCurrent(generation)) return; // a newer load owns the page now
      state.columns = board.columns;
      state.cards = withOverlays(board.cards);
      if (withView) {
        state.view = view;
        state.viewStale = false;
        B.syncToolbar();
      }
      state.loaded = true;
      B.render();
      refreshStock();
    } catch (err) {
      if (!generations.isCurrent(generation)) return;
      reportError(err, "Loading the board failed");
      if (!state.loaded) {
        boardEl.replaceChildren(el("p", { class: "empty", text: "The board could not be loaded (" + (err.code || "error") + ")." }));
      }
    } finally {
      if (generations.isCurrent(generation)) B.resolveReady();
    }
  }

  let refreshTimer = null;
  function scheduleRefresh(delay) {
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(load, delay === undefined ? 100 : delay);
  }

  // A watch event names the keys that changed. Cards that changed are read again and
  // patched in; the columns or the card index changing (a card created, deleted or moved
  // between boards' lists), a resync, or a change during a load mean a full load.
  async function onBoardChanges({ changes, resync }) {
    const cardIds = [];
    let full = resync === true;
    for (const { key } of changes) {
      if (key === KEYS.columns || key === KEYS.cards) full = true;
      else if (key.startsWith("card:")) cardIds.push(key.slice("card:".length));
    }
    if (!full && !cardIds.length) return;
    if (loading) {
      loadAgain = true;
      return;
    }
    const known = new Set(state.cards.map((c) => c.id));
    if (full || !state.loaded || cardIds.some((id) => !known.has(id))) return load();
    const generation = generations.current;
    const values = await readAll(kanban.kv, cardIds.map(KEYS.card));
    if (generation !== generations.current || loading) return; // a load owns the page now
    const fresh = new Map(cardIds.map((id, i) => [id, Core.normalizeCard(id, values[i])]));
    state.cards = withOverlays(
      state.cards.map((card) => (fresh.has(card.id) ? fresh.get(card.id) : card)).filter(Boolean),
    );
    B.render();
    refreshStock();
  }

  // --- inventory ---------------------------------------------------------------------------------

  async function refreshStock() {
    const generation = stockGenerations.next();
    const items = [...new Set(state.cards.map((c) => c.item).filter(Boolean))];
    const unavailable = (code) => items.map(() => ({ status: "unavailable", code }));
    let results = unavailable(state.inventoryProblem);
    if (!state.inventoryProblem && items.length) {
      try {
        const values = await readAll(inventory.kv, items.map((item) => "stock:" + item));
        results = values.map((stock, i) => {
          if (!stock || typeof stock !== "object" || !Number.isInteger(stock.count)) return { status: "missing" };
          return { status: "ok", name: String(stock.name || items[i]), count: stock.count };
        });
      } catch (err) {
        results = unavailable(err.code || "error");
      }
    }
    if (!stockGenerations.isCurrent(generation)) return;
    const stock = new Map(items.map((item, i) => [item, results[i]]));
    const same = (a, b) => JSON.stringify([...a]) === JSON.stringify([...b]);
    if (same(stock, state.stock)) return; // nothing to draw again
    state.stock = stock;
    B.render();
  }

  let stockTimer = null;
  function scheduleStock(delay) {
    clearTimeout(stockTimer);
    stockTimer = setTimeout(refreshStock, delay === undefined ? 100 : delay);
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
  let viewTimer = null;
  function dropPendingView() {
    clearTimeout(viewTimer);
  }

  function setView(patch, { immediate = false } = {}) {
    state.view = { ...state.view, ...patch };
    const values = { ...kanban.getConfiguration().values, view: state.view };
    B.render();
    clearTimeout(viewTimer);
    const save = () => kanban.setConfigurationValues(values).catch((err) => reportError(err, "Saving your view"));
    if (immediate) save();
    else viewTimer = setTimeout(save, 400);
  }

  Object.assign(B, { readAll, ensureDefaultColumns, readBoard, configuredView, withOverlays, load, loadOnce, scheduleRefresh, onBoardChanges, refreshStock, scheduleStock, readInventoryItems, dropPendingView, setView });
})(window.BoardApp);
