// The Board plugin: a kanban board kept in the project's shared KV, written only against
// the public SDK (window.steamHarnessKanban). Layout of the data:
//   board:columns   [{id, title, wip}]                      changed with updateValue
//   board:cards     [cardId, …]                             changed ONLY with updateValue
//   card:<id>       {id, title, description, assignee, labels, due, column, rank, item?}
// The view (filter, collapsed columns, density) is each user's own: it lives in the values
// of their configuration on screen (setConfigurationValues), the Default included.
// Moving a card writes only its own key, so two people moving different cards never
// collide, and index changes merge through updateValue's compare-and-set loop.
(function () {
  "use strict";

  const kanban = window.steamHarnessKanban;
  const Core = window.BoardCore;
  const { KEYS } = Core;
  const inventory = kanban.relatedProjects.get("inventory");

  const INVENTORY_DOWN = new Set(["unknown_alias", "relationship_pending", "forbidden", "not_found"]);
  // Keys per kv.getValues request: the bridge's maximum, so a 1,000-card board is 4 reads.
  const READ_BATCH = 256;

  const state = {
    loaded: false,
    columns: [],
    cards: [],
    view: Core.defaultView(),
    readOnly: false,
    inventoryProblem: null,
    stock: new Map(), // item id -> {status: "ok", name, count} | {status: "missing"} | {status: "unavailable", code}
    pending: 0,
    renders: 0,
    dragging: null,
  };
  // Local changes still on their way to the server, laid over every fresh read so a read
  // that raced a write does not make a card jump back. id -> card, or null once deleted.
  const overlays = new Map();
  const generations = Core.createGenerations();
  const stockGenerations = Core.createGenerations();
  let viewStale = true;
  let renderDeferred = false;

  const $ = (id) => document.getElementById(id);
  const boardEl = $("board");

  let resolveReady;
  const ready = new Promise((resolve) => (resolveReady = resolve));
  const freeze = (x) => {
    if (x && typeof x === "object") {
      Object.freeze(x);
      for (const k of Object.keys(x)) freeze(x[k]);
    }
    return x;
  };
  window.boardDebug = Object.freeze({
    ready,
    get state() {
      return freeze(
        JSON.parse(
          JSON.stringify({
            loaded: state.loaded,
            columns: state.columns,
            cards: state.cards,
            view: state.view,
            readOnly: state.readOnly,
            inventoryProblem: state.inventoryProblem,
            stock: Object.fromEntries(state.stock),
            pending: state.pending,
            renders: state.renders,
            configuration: kanban.getConfiguration().id,
          }),
        ),
      );
    },
  });

  // --- small helpers ------------------------------------------------------------------------

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === "class") node.className = value;
      else if (name === "text") node.textContent = value;
      else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child !== null && child !== undefined && child !== false) {
        node.append(typeof child === "string" ? document.createTextNode(child) : child);
      }
    }
    return node;
  }

  // Line icons drawn inline: no icon font or emoji font is needed (or allowed to load).
  const ICONS = {
    edit: ["M4 20h4L18.5 9.5a2.1 2.1 0 0 0-4-4L4 16z", "M13.5 6.5l4 4"],
    trash: ["M4 7h16", "M10 11v6", "M14 11v6", "M5 7l1 12a2 2 0 0 0 2 2h8a2 2 0 0 0 2-2l1-12", "M9 7V4h6v3"],
  };

  function icon(name) {
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    for (const [k, v] of Object.entries({ viewBox: "0 0 24 24", width: "16", height: "16", fill: "none", stroke: "currentColor",
      "stroke-width": "2", "stroke-linecap": "round", "stroke-linejoin": "round", "aria-hidden": "true", focusable: "false" })) {
      svg.setAttribute(k, v);
    }
    for (const d of ICONS[name]) {
      const path = document.createElementNS(ns, "path");
      path.setAttribute("d", d);
      svg.append(path);
    }
    return svg;
  }

  const randomBytes = (n) => crypto.getRandomValues(new Uint8Array(n));
  const newId = () => Core.newId(randomBytes);
  const today = () => Core.localDate(new Date());

  function hue(text) {
    let h = 0;
    for (const ch of String(text).toLowerCase()) h = (h * 31 + ch.codePointAt(0)) % 360;
    return h;
  }

  function initials(name) {
    const parts = name.split(/\s+/).filter(Boolean);
    return ((parts[0] || "?")[0] + (parts.length > 1 ? parts[parts.length - 1][0] : "")).toUpperCase();
  }

  function announce(text) {
    const live = $("announcer");
    live.textContent = "";
    setTimeout(() => (live.textContent = text), 30);
  }

  function toast(message, code) {
    const box = el(
      "div",
      { class: "toast" + (code ? " toast-error" : ""), role: code ? "alert" : "status", "data-testid": "toast" },
      code ? el("span", { class: "toast-code", text: code }) : null,
      el("span", { class: "toast-text", text: message }),
      el("button", { type: "button", class: "toast-close", "aria-label": "Dismiss", text: "×", onclick: () => box.remove() }),
    );
    $("toasts").append(box);
    setTimeout(() => box.remove(), 6000);
  }

  function reportError(err, context) {
    if (err instanceof Core.Refused) {
      toast(err.message);
    } else if (err && typeof err.code === "string") {
      toast((context ? context + ": " : "") + err.message, err.code);
    } else {
      toast((context ? context + ": " : "") + String(err && err.message ? err.message : err), "error");
      console.error(err);
    }
  }

  // A guest's board starts read-only (getContext) and unlocks live when they are made a
  // developer. The server still decides every write: a `forbidden` answer makes the board
  // read-only too, whatever the context said.
  function applyContext(context) {
    // A host that says nothing (no `can.write`) leaves it to the first refused write.
    if (context.can.write === false) return enterReadOnly();
    if (context.can.write !== true || !state.readOnly) return;
    state.readOnly = false;
    $("readonly-note").hidden = true;
    document.body.classList.remove("read-only");
    render();
  }

  function enterReadOnly() {
    if (state.readOnly) return;
    state.readOnly = true;
    $("readonly-note").hidden = false;
    document.body.classList.add("read-only");
    for (const dialog of document.querySelectorAll("dialog[open]")) dialog.close();
    render();
  }

  // Runs one write. Local changes were already applied; on failure the board re-reads.
  async function write(label, fn) {
    if (state.readOnly) {
      toast("This board is read-only for you.");
      return false;
    }
    state.pending++;
    try {
      await fn();
      return true;
    } catch (err) {
      if (err && err.code === "forbidden") enterReadOnly();
      reportError(err, label);
      return false;
    } finally {
      state.pending--;
      scheduleRefresh(0);
    }
  }

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
        enterReadOnly();
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
    const withView = viewStale;
    const view = withView ? configuredView() : null;
    try {
      const board = await readBoard();
      if (!generations.isCurrent(generation)) return; // a newer load owns the page now
      state.columns = board.columns;
      state.cards = withOverlays(board.cards);
      if (withView) {
        state.view = view;
        viewStale = false;
        syncToolbar();
      }
      state.loaded = true;
      render();
      refreshStock();
    } catch (err) {
      if (!generations.isCurrent(generation)) return;
      reportError(err, "Loading the board failed");
      if (!state.loaded) {
        boardEl.replaceChildren(el("p", { class: "empty", text: "The board could not be loaded (" + (err.code || "error") + ")." }));
      }
    } finally {
      if (generations.isCurrent(generation)) resolveReady();
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
    render();
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
    render();
  }

  let stockTimer = null;
  function scheduleStock(delay) {
    clearTimeout(stockTimer);
    stockTimer = setTimeout(refreshStock, delay === undefined ? 100 : delay);
  }

  async function useOne(card) {
    const key = "stock:" + card.item;
    state.pending++;
    try {
      const stored = await inventory.kv.updateValue(key, Core.useOne);
      state.stock.set(card.item, { status: "ok", name: String(stored.name || card.item), count: stored.count });
      announce("Used one " + (stored.name || card.item) + ". " + stored.count + " left.");
      render();
    } catch (err) {
      if (err && INVENTORY_DOWN.has(err.code) && err.code !== "forbidden") state.inventoryProblem = err.code;
      reportError(err, "Inventory");
      scheduleStock();
    } finally {
      state.pending--;
    }
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
    render();
    clearTimeout(viewTimer);
    const save = () => kanban.setConfigurationValues(values).catch((err) => reportError(err, "Saving your view"));
    if (immediate) save();
    else viewTimer = setTimeout(save, 400);
  }

  function syncToolbar() {
    $("filter-text").value = state.view.filter.text;
    const compact = state.view.density === "compact";
    document.body.classList.toggle("density-compact", compact);
    document.body.classList.toggle("density-comfortable", !compact);
    $("density-toggle").setAttribute("aria-pressed", String(compact));
  }

  function fillSelect(select, first, values, selected) {
    const signature = JSON.stringify([values, selected || ""]);
    if (select.dataset.signature === signature) return;
    select.dataset.signature = signature;
    const options = [el("option", { value: "", text: first })];
    for (const v of values) options.push(el("option", { value: v, text: v }));
    if (selected && !values.includes(selected)) options.push(el("option", { value: selected, text: selected }));
    select.replaceChildren(...options);
    select.value = selected || "";
  }

  // --- card operations ---------------------------------------------------------------------------

  function findCard(id) {
    return state.cards.find((c) => c.id === id) || null;
  }

  function columnCards(columnId) {
    return Core.cardsInColumn(state.cards, state.columns, columnId);
  }

  function visibleCards(columnId) {
    return columnCards(columnId).filter((c) => Core.matchesFilter(c, state.view.filter));
  }

  // Shows a change at once; `settle` keeps it over fresh reads until its write is done.
  function applyLocal(id, card) {
    const mark = card === null ? { deleted: id } : card;
    overlays.set(id, mark);
    state.cards = withOverlays(state.cards);
    return mark;
  }

  async function settle(id, mark, fn) {
    try {
      return await fn();
    } finally {
      if (overlays.get(id) === mark) overlays.delete(id);
    }
  }

  function moveCard(id, columnId, beforeId) {
    const card = findCard(id);
    if (!card || state.readOnly) return;
    const list = columnCards(columnId).filter((c) => c.id !== id);
    const rank = Core.rankForPlacement(list, beforeId);
    if (columnId === Core.columnOf(card, state.columns) && rank === card.rank) return;
    const mark = applyLocal(id, { ...card, column: columnId, rank });
    render();
    focusCard(id);
    const column = state.columns.find((c) => c.id === columnId);
    const position = Core.cardsInColumn(state.cards, state.columns, columnId).findIndex((c) => c.id === id) + 1;
    announce("Moved " + card.title + " to " + (column ? column.title : columnId) + ", position " + position + ".");
    // Only this card's key: concurrent moves of other cards cannot conflict with it.
    write("Moving the card", () =>
      settle(id, mark, () => kanban.kv.updateValue(KEYS.card(id), Core.patchCard({ column: columnId, rank }))),
    );
  }

  function moveByKeyboard(card, direction) {
    if (state.readOnly) {
      announce("This board is read-only.");
      return;
    }
    const target = Core.keyboardTarget(card, direction, state.columns, visibleCards);
    if (!target) return;
    if (state.view.collapsed.includes(target.column)) {
      setView({ collapsed: state.view.collapsed.filter((c) => c !== target.column) });
    }
    moveCard(card.id, target.column, target.beforeId);
  }

  async function createCard(fields) {
    const id = newId();
    const list = columnCards(fields.column);
    const rank = Core.rankForPlacement(list, null);
    const card = { id, ...fields, rank };
    const mark = applyLocal(id, Core.normalizeCard(id, card));
    render();
    focusCard(id);
    announce("Added " + card.title + ".");
    // The card first, then the index: a reader never finds an id without its card.
    await write("Adding the card", () =>
      settle(id, mark, async () => {
        await kanban.kv.updateValue(KEYS.card(id), Core.createOnly(card));
        await kanban.kv.updateValue(KEYS.cards, Core.addToIndex(id));
      }),
    );
  }

  // `changes` are what this user changed against `base`, the card as their dialog showed it.
  function editCard(id, base, changes) {
    const card = findCard(id);
    if (!card) return;
    const mark = applyLocal(id, { ...card, ...changes });
    render();
    write("Saving the card", () => settle(id, mark, () => saveChanges(id, base, changes)));
  }

  // Writes `changes` over the card as stored now. When someone else changed one of the same
  // fields meanwhile, this user decides: keep theirs for those fields, or put theirs back.
  async function saveChanges(id, base, changes) {
    for (;;) {
      try {
        return await kanban.kv.updateValue(KEYS.card(id), Core.mergeCard(base, changes));
      } catch (err) {
        if (!(err instanceof Core.Conflict)) throw err;
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

  async function deleteCard(id) {
    const card = findCard(id);
    if (!card || state.readOnly) return;
    if (!(await confirmDialog('Delete "' + card.title + '"? This cannot be undone.'))) return;
    const neighbour = neighbourOf(id);
    const mark = applyLocal(id, null);
    render();
    if (neighbour) focusCard(neighbour);
    announce("Deleted " + card.title + ".");
    // The KV has no delete: the index drops the id (that is what removes the card), and
    // the card's key keeps a small tombstone instead of its content.
    write("Deleting the card", () =>
      settle(id, mark, async () => {
        await kanban.kv.updateValue(KEYS.cards, Core.removeFromIndex(id));
        await kanban.kv.setValue(KEYS.card(id), { id, deleted: true });
      }),
    );
  }

  function neighbourOf(id) {
    const card = findCard(id);
    if (!card) return null;
    const shown = visibleCards(Core.columnOf(card, state.columns));
    const at = shown.findIndex((c) => c.id === id);
    const other = shown[at + 1] || shown[at - 1];
    return other ? other.id : null;
  }

  // --- columns ------------------------------------------------------------------------------------

  function saveColumns(label, updater) {
    state.columns = updater(state.columns);
    render();
    return write(label, async () => {
      state.columns = Core.normalizeColumns(await kanban.kv.updateValue(KEYS.columns, updater)) || [];
      render();
    });
  }

  // --- dialogs -----------------------------------------------------------------------------------

  // A modal with two answers: true for `yes`, false for `no` or Escape.
  function ask(dialog, yes, no, focus) {
    return new Promise((resolve) => {
      const done = (answer) => {
        yes.removeEventListener("click", onYes);
        no.removeEventListener("click", onNo);
        dialog.removeEventListener("close", onNo);
        if (dialog.open) dialog.close();
        resolve(answer);
      };
      const onYes = () => done(true);
      const onNo = () => done(false);
      yes.addEventListener("click", onYes);
      no.addEventListener("click", onNo);
      dialog.addEventListener("close", onNo);
      dialog.showModal();
      focus.focus();
    });
  }

  function confirmDialog(text) {
    $("confirm-text").textContent = text;
    return ask($("confirm-dialog"), $("confirm-ok"), $("confirm-cancel"), $("confirm-cancel"));
  }

  // Resolves true to keep this user's values of the conflicting fields, false for theirs.
  function conflictDialog(conflict, changes) {
    const shown = (field, value) => {
      if (field === "column") return (state.columns.find((c) => c.id === value) || { title: value }).title;
      if (field === "labels") return value.join(", ");
      return value === null || value === "" ? "(empty)" : String(value);
    };
    $("conflict-text").textContent = conflict.message + " Keep your version of these fields, or take theirs?";
    $("conflict-fields").replaceChildren(
      ...conflict.fields.flatMap((field) => [
        el("dt", { text: Core.FIELD_NAMES[field] }),
        el("dd", { text: "Theirs: " + shown(field, conflict.current[field]) }),
        el("dd", { text: "Yours: " + shown(field, changes[field]) }),
      ]),
    );
    return ask($("conflict-dialog"), $("conflict-mine"), $("conflict-theirs"), $("conflict-mine"));
  }

  // {id, base} of the card in the dialog (base: the card as the dialog opened it), or
  // {column} for a new one.
  let editing = null;
  let returnFocus = null;

  async function openCardDialog(target) {
    if (state.readOnly) return;
    const card = target.id ? findCard(target.id) : null;
    editing = card ? { ...target, base: card } : target;
    returnFocus = document.activeElement;
    $("card-dialog-title").textContent = card ? "Edit card" : "New card";
    $("card-title-input").value = card ? card.title : "";
    $("card-description-input").value = card ? card.description : "";
    $("card-assignee-input").value = card ? card.assignee : "";
    $("card-due-input").value = card && card.due ? card.due : "";
    $("card-labels-input").value = card ? card.labels.join(", ") : "";
    $("card-dialog-error").hidden = true;
    $("card-delete").hidden = !card;
    const column = card ? Core.columnOf(card, state.columns) : target.column;
    $("card-column-input").replaceChildren(...state.columns.map((c) => el("option", { value: c.id, text: c.title })));
    $("card-column-input").value = column;
    $("assignee-list").replaceChildren(...Core.distinct(state.cards.map((c) => c.assignee)).map((a) => el("option", { value: a })));
    fillItemPicker(card ? card.item : null);
    $("card-dialog").showModal();
    $("card-title-input").focus();
  }

  async function fillItemPicker(selected) {
    const select = $("card-item-input");
    select.disabled = true;
    select.replaceChildren(el("option", { value: selected || "", text: selected ? selected : "(loading…)" }));
    const opened = editing;
    let items;
    try {
      items = state.inventoryProblem ? null : await readInventoryItems();
    } catch (err) {
      items = null;
      if (err && INVENTORY_DOWN.has(err.code)) state.inventoryProblem = state.inventoryProblem || err.code;
    }
    if (editing !== opened) return;
    if (items === null) {
      select.replaceChildren(el("option", { value: selected || "", text: selected ? selected + " (inventory unavailable)" : "Inventory unavailable" }));
      select.value = selected || "";
      return;
    }
    const options = [el("option", { value: "", text: "(none)" })];
    for (const item of items) options.push(el("option", { value: item.id, text: item.name }));
    if (selected && !items.some((i) => i.id === selected)) options.push(el("option", { value: selected, text: selected + " (missing)" }));
    select.replaceChildren(...options);
    select.value = selected || "";
    select.disabled = false;
  }

  function closeCardDialog() {
    editing = null;
    if ($("card-dialog").open) $("card-dialog").close();
    if (returnFocus && document.contains(returnFocus)) returnFocus.focus();
  }

  function saveCardDialog() {
    const title = $("card-title-input").value.trim();
    if (!title) {
      $("card-dialog-error").textContent = "A card needs a title.";
      $("card-dialog-error").hidden = false;
      $("card-title-input").focus();
      return;
    }
    const fields = {
      title,
      description: $("card-description-input").value.trim(),
      assignee: $("card-assignee-input").value.trim(),
      labels: Core.parseLabels($("card-labels-input").value),
      due: $("card-due-input").value || null,
    };
    const itemSelect = $("card-item-input");
    if (!itemSelect.disabled) fields.item = itemSelect.value || null;
    const column = $("card-column-input").value;
    const target = editing;
    closeCardDialog();
    if (target.id) {
      if (!findCard(target.id)) return toast("This card was deleted meanwhile.");
      const shown = { ...target.base, column: Core.columnOf(target.base, state.columns) };
      const changes = Core.changedFields(shown, column ? { ...fields, column } : fields);
      if ("column" in changes) changes.rank = Core.rankForPlacement(columnCards(column), null);
      if (Object.keys(changes).length) editCard(target.id, target.base, changes);
    } else {
      if (!("item" in fields)) fields.item = null;
      createCard({ ...fields, column: column || target.column });
    }
  }

  let editingColumn = null;
  function openColumnDialog(columnId) {
    if (state.readOnly) return;
    editingColumn = columnId;
    returnFocus = document.activeElement;
    const column = columnId ? state.columns.find((c) => c.id === columnId) : null;
    $("column-dialog-title").textContent = column ? "Column settings" : "New column";
    $("column-title-input").value = column ? column.title : "";
    $("column-wip-input").value = column ? String(column.wip) : "0";
    $("column-dialog-error").hidden = true;
    const empty = column ? columnCards(column.id).length === 0 : false;
    $("column-delete").hidden = !column;
    $("column-delete").disabled = !empty || state.columns.length <= 1;
    $("column-delete").title = empty ? "" : "Move or delete its cards first";
    $("column-dialog").showModal();
    $("column-title-input").focus();
  }

  function closeColumnDialog() {
    editingColumn = null;
    if ($("column-dialog").open) $("column-dialog").close();
    if (returnFocus && document.contains(returnFocus)) returnFocus.focus();
  }

  function saveColumnDialog() {
    const title = $("column-title-input").value.trim();
    const wip = Number($("column-wip-input").value || 0);
    const problem = !title ? "A column needs a title." : !Number.isInteger(wip) || wip < 0 || wip > 999 ? "The WIP limit is a whole number from 0 to 999." : "";
    if (problem) {
      $("column-dialog-error").textContent = problem;
      $("column-dialog-error").hidden = false;
      return;
    }
    const id = editingColumn;
    closeColumnDialog();
    if (id) saveColumns("Saving the column", Core.patchColumn(id, { title, wip }));
    else saveColumns("Adding the column", Core.addColumn({ id: newId(), title, wip }));
  }

  async function deleteColumn() {
    const id = editingColumn;
    const column = state.columns.find((c) => c.id === id);
    closeColumnDialog();
    if (!column || columnCards(id).length) return;
    if (!(await confirmDialog('Delete the column "' + column.title + '"?'))) return;
    saveColumns("Deleting the column", Core.removeColumn(id));
  }

  // --- rendering ---------------------------------------------------------------------------------

  function focusCard(id) {
    requestAnimationFrame(() => {
      const node = boardEl.querySelector('[data-card-id="' + CSS.escape(id) + '"]');
      if (node) node.focus();
    });
  }

  function render() {
    if (!state.loaded) return;
    if (state.dragging) {
      renderDeferred = true;
      return;
    }
    state.renders++;
    const focused = document.activeElement && boardEl.contains(document.activeElement) ? document.activeElement : null;
    const focusKey = focused ? focused.getAttribute("data-focus-key") : null;
    const scrollLeft = boardEl.scrollLeft;
    const listScroll = new Map([...boardEl.querySelectorAll("[data-list-for]")].map((n) => [n.dataset.listFor, n.scrollTop]));

    document.body.classList.toggle("read-only", state.readOnly);
    fillSelect($("filter-label"), "All labels", Core.distinct(state.cards.flatMap((c) => c.labels)), state.view.filter.label);
    fillSelect($("filter-assignee"), "Everyone", Core.distinct(state.cards.map((c) => c.assignee)), state.view.filter.assignee);
    $("filter-clear").hidden = !Core.isFiltering(state.view.filter);

    if (!state.columns.length) {
      boardEl.replaceChildren(
        el("p", { class: "empty", text: state.readOnly ? "This board has no columns yet." : "No columns yet: add one with “+ Column”." }),
      );
    } else {
      boardEl.replaceChildren(...state.columns.map(renderColumn));
    }
    boardEl.setAttribute("aria-busy", "false");
    boardEl.scrollLeft = scrollLeft;
    for (const [id, top] of listScroll) {
      const list = boardEl.querySelector('[data-list-for="' + CSS.escape(id) + '"]');
      if (list) list.scrollTop = top;
    }
    if (focusKey) {
      const again = boardEl.querySelector('[data-focus-key="' + CSS.escape(focusKey) + '"]');
      if (again) again.focus();
    }
  }

  function renderColumn(column) {
    const all = columnCards(column.id);
    const shown = all.filter((c) => Core.matchesFilter(c, state.view.filter));
    const wip = Core.wipState(column, all.length);
    const collapsed = state.view.collapsed.includes(column.id);
    const filtering = Core.isFiltering(state.view.filter);
    const countText = (filtering ? shown.length + " of " : "") + all.length + (wip.limit ? " / " + wip.limit : "");

    const header = el(
      "header",
      { class: "column-header" },
      el("button", {
        type: "button",
        class: "icon-button collapse",
        "aria-expanded": String(!collapsed),
        "aria-label": (collapsed ? "Expand " : "Collapse ") + column.title,
        "data-focus-key": "collapse-" + column.id,
        text: collapsed ? "▸" : "▾",
        onclick: () =>
          setView(
            { collapsed: collapsed ? state.view.collapsed.filter((c) => c !== column.id) : [...state.view.collapsed, column.id] },
            { immediate: true },
          ),
      }),
      el("h2", { class: "column-title", id: "title-" + column.id, text: column.title }),
      el("span", {
        class: "count" + (wip.over ? " count-over" : wip.full ? " count-full" : ""),
        "aria-label": all.length + " cards" + (wip.limit ? ", limit " + wip.limit : ""),
        text: countText,
      }),
      state.readOnly
        ? null
        : el("button", {
            type: "button",
            class: "icon-button editing-only",
            "aria-label": "Settings for " + column.title,
            "data-focus-key": "settings-" + column.id,
            text: "⋯",
            onclick: () => openColumnDialog(column.id),
          }),
    );

    const section = el("section", {
      class: "column" + (collapsed ? " collapsed" : "") + (wip.over ? " over-limit" : ""),
      "data-testid": "column-" + column.id,
      "data-column-id": column.id,
      "aria-labelledby": "title-" + column.id,
    });
    section.append(header);
    if (wip.over) {
      section.append(
        el("p", {
          class: "wip-warning",
          role: "alert",
          "data-testid": "wip-warning-" + column.id,
          text: "WIP limit " + wip.limit + " exceeded: " + all.length + " cards",
        }),
      );
    }
    if (collapsed) return section;

    const list = el("ol", { class: "cards", "data-list-for": column.id, "aria-label": column.title + " cards" });
    for (const card of shown) list.append(el("li", { class: "card-slot" }, renderCard(card)));
    if (!shown.length) {
      list.append(el("li", { class: "empty-column", text: filtering && all.length ? "No cards match the filter." : "No cards." }));
    }
    wireDropTarget(list, column.id);
    section.append(list);
    if (!state.readOnly) {
      section.append(
        el("button", {
          type: "button",
          class: "add-card editing-only",
          "data-testid": "add-card-" + column.id,
          "data-focus-key": "add-" + column.id,
          text: "+ Add card",
          onclick: () => openCardDialog({ column: column.id }),
        }),
      );
    }
    return section;
  }

  function renderCard(card) {
    const due = Core.dueState(card.due, today());
    const node = el("article", {
      class: "card",
      tabindex: "0",
      draggable: state.readOnly ? "false" : "true",
      "data-testid": "card-" + card.id,
      "data-card-id": card.id,
      "data-focus-key": "card-" + card.id,
      "aria-label": card.title,
      "aria-describedby": "keyboard-help",
    });
    node.append(el("h3", { class: "card-title", "data-testid": "card-title", text: card.title }));
    if (card.description) node.append(el("p", { class: "card-description", text: card.description }));
    if (card.labels.length) {
      const chips = el("ul", { class: "labels", "aria-label": "Labels" });
      for (const label of card.labels) {
        const chip = el("li", { class: "label", text: label });
        chip.style.setProperty("--hue", String(hue(label)));
        chips.append(chip);
      }
      node.append(chips);
    }
    const meta = el("div", { class: "card-meta" });
    if (card.assignee) {
      const avatar = el("span", { class: "avatar", "aria-hidden": "true", text: initials(card.assignee) });
      avatar.style.setProperty("--hue", String(hue(card.assignee)));
      meta.append(el("span", { class: "assignee", title: "Assignee" }, avatar, el("span", { text: card.assignee })));
    }
    if (card.due) {
      meta.append(
        el("span", {
          class: "due due-" + due,
          "data-testid": "due-" + card.id,
          title: due === "overdue" ? "Overdue" : "Due date",
          text: (due === "overdue" ? "Overdue · " : due === "today" ? "Today · " : "Due ") + card.due,
        }),
      );
    }
    if (meta.childNodes.length) node.append(meta);
    if (card.item) node.append(renderStock(card));
    if (!state.readOnly) {
      node.append(
        el(
          "div",
          { class: "card-actions editing-only" },
          el("button", {
            type: "button",
            class: "icon-button",
            "aria-label": "Edit " + card.title,
            "data-focus-key": "edit-" + card.id,
            onclick: () => openCardDialog({ id: card.id }),
          }, icon("edit")),
          el("button", {
            type: "button",
            class: "icon-button",
            "aria-label": "Delete " + card.title,
            "data-focus-key": "delete-" + card.id,
            onclick: () => deleteCard(card.id),
          }, icon("trash")),
        ),
      );
    }
    node.addEventListener("keydown", (event) => onCardKey(event, card));
    node.addEventListener("dblclick", () => openCardDialog({ id: card.id }));
    wireDrag(node, card);
    return node;
  }

  function renderStock(card) {
    const stock = state.inventoryProblem ? { status: "unavailable", code: state.inventoryProblem } : state.stock.get(card.item);
    const box = el("div", { class: "stock" });
    let text;
    let kind = "";
    if (!stock) text = "Stock: …";
    else if (stock.status === "ok") {
      text = stock.name + ": " + stock.count + " in stock";
      kind = stock.count === 0 ? " stock-empty" : "";
    } else if (stock.status === "missing") {
      text = "Item " + card.item + " is not in the inventory";
      kind = " stock-unavailable";
    } else {
      text = "Inventory unavailable";
      kind = " stock-unavailable";
    }
    box.append(
      el("span", {
        class: "stock-badge" + kind,
        "data-testid": "stock-" + card.id,
        title: stock && stock.code ? "inventory: " + stock.code : "",
        text,
      }),
    );
    if (stock && stock.status === "ok" && !state.readOnly) {
      box.append(
        el("button", {
          type: "button",
          class: "button small",
          "data-testid": "use-one-" + card.id,
          "data-focus-key": "use-" + card.id,
          "aria-label": "Use one " + stock.name,
          disabled: stock.count <= 0,
          text: "Use one",
          onclick: () => useOne(card),
        }),
      );
    }
    return box;
  }

  // --- keyboard and drag and drop -------------------------------------------------------------

  const ARROWS = { ArrowLeft: "left", ArrowRight: "right", ArrowUp: "up", ArrowDown: "down" };

  function onCardKey(event, card) {
    if (event.target !== event.currentTarget) return; // keys inside the card's buttons
    const direction = ARROWS[event.key];
    if (direction && event.altKey) {
      event.preventDefault();
      moveByKeyboard(card, direction);
    } else if (direction) {
      event.preventDefault();
      moveFocus(card, direction);
    } else if (event.key === "Enter") {
      event.preventDefault();
      if (state.readOnly) announce("This board is read-only.");
      else openCardDialog({ id: card.id });
    } else if (event.key === "Delete" || event.key === "Backspace") {
      event.preventDefault();
      deleteCard(card.id);
    }
  }

  function moveFocus(card, direction) {
    const columnId = Core.columnOf(card, state.columns);
    const shown = visibleCards(columnId);
    const at = shown.findIndex((c) => c.id === card.id);
    let target = null;
    if (direction === "up") target = shown[at - 1];
    else if (direction === "down") target = shown[at + 1];
    else {
      const step = direction === "left" ? -1 : 1;
      const open = state.columns.filter((c) => !state.view.collapsed.includes(c.id));
      const ci = open.findIndex((c) => c.id === columnId);
      for (let i = ci + step; i >= 0 && i < open.length && !target; i += step) {
        const there = visibleCards(open[i].id);
        target = there[Math.min(Math.max(at, 0), there.length - 1)];
      }
    }
    if (target) focusCard(target.id);
  }

  function wireDrag(node, card) {
    if (state.readOnly) return;
    node.addEventListener("dragstart", (event) => {
      state.dragging = card.id;
      event.dataTransfer.effectAllowed = "move";
      event.dataTransfer.setData("text/plain", card.id);
      requestAnimationFrame(() => node.classList.add("dragging"));
    });
    node.addEventListener("dragend", () => {
      node.classList.remove("dragging");
      endDrag();
    });
  }

  function endDrag() {
    state.dragging = null;
    for (const m of boardEl.querySelectorAll(".drop-marker")) m.remove();
    for (const l of boardEl.querySelectorAll(".drop-target")) l.classList.remove("drop-target");
    if (renderDeferred) {
      renderDeferred = false;
      render();
    }
  }

  // The card the dragged one would land before, from the pointer's height.
  function dropBefore(list, clientY) {
    for (const node of list.querySelectorAll(".card")) {
      if (node.dataset.cardId === state.dragging) continue;
      const box = node.getBoundingClientRect();
      if (clientY < box.top + box.height / 2) return node;
    }
    return null;
  }

  function wireDropTarget(list, columnId) {
    list.addEventListener("dragover", (event) => {
      if (!state.dragging) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = "move";
      list.classList.add("drop-target");
      const before = dropBefore(list, event.clientY);
      let marker = list.querySelector(".drop-marker");
      if (!marker) marker = el("li", { class: "drop-marker", "aria-hidden": "true" });
      const slot = before ? before.closest("li") : null;
      if (slot) {
        if (marker.nextSibling !== slot) list.insertBefore(marker, slot);
      } else if (list.lastElementChild !== marker) {
        list.append(marker);
      }
    });
    list.addEventListener("dragleave", (event) => {
      if (!list.contains(event.relatedTarget)) {
        list.classList.remove("drop-target");
        const marker = list.querySelector(".drop-marker");
        if (marker) marker.remove();
      }
    });
    list.addEventListener("drop", (event) => {
      event.preventDefault();
      const id = state.dragging || event.dataTransfer.getData("text/plain");
      const before = dropBefore(list, event.clientY);
      endDrag();
      if (id && findCard(id)) moveCard(id, columnId, before ? before.dataset.cardId : null);
    });
  }

  // --- wiring ----------------------------------------------------------------------------------

  function wireToolbar() {
    $("filter-text").addEventListener("input", (e) => setView({ filter: { ...state.view.filter, text: e.target.value } }));
    $("filter-label").addEventListener("change", (e) => setView({ filter: { ...state.view.filter, label: e.target.value } }, { immediate: true }));
    $("filter-assignee").addEventListener("change", (e) =>
      setView({ filter: { ...state.view.filter, assignee: e.target.value } }, { immediate: true }),
    );
    $("filter-clear").addEventListener("click", () => {
      setView({ filter: { text: "", label: "", assignee: "" } }, { immediate: true });
      syncToolbar();
      $("filter-text").focus();
    });
    $("density-toggle").addEventListener("click", () => {
      setView({ density: state.view.density === "compact" ? "comfortable" : "compact" }, { immediate: true });
      syncToolbar();
    });
    $("add-column").addEventListener("click", () => openColumnDialog(null));

    $("card-save").addEventListener("click", saveCardDialog);
    $("card-cancel").addEventListener("click", closeCardDialog);
    $("card-delete").addEventListener("click", () => {
      const target = editing;
      closeCardDialog();
      if (target && target.id) deleteCard(target.id);
    });
    $("card-dialog").addEventListener("cancel", () => (editing = null));
    // Sandboxed pages may not submit forms, so Enter in a one-line field saves by hand.
    $("card-dialog").addEventListener("keydown", (event) => {
      if (event.key === "Enter" && event.target.tagName === "INPUT") {
        event.preventDefault();
        saveCardDialog();
      }
    });
    $("column-save").addEventListener("click", saveColumnDialog);
    $("column-cancel").addEventListener("click", closeColumnDialog);
    $("column-delete").addEventListener("click", deleteColumn);
    $("column-dialog").addEventListener("keydown", (event) => {
      if (event.key === "Enter" && event.target.tagName === "INPUT") {
        event.preventDefault();
        saveColumnDialog();
      }
    });
  }

  let unsubscribers = [];
  let unwatchStock = () => {};
  function subscribeAll() {
    for (const off of unsubscribers) off();
    unsubscribers = [kanban.kv.watch(onBoardChanges), () => unwatchStock()];
    watchStock();
  }

  function watchStock() {
    unwatchStock();
    state.inventoryProblem = inventoryProblemOf(inventory.getContext());
    if (!state.inventoryProblem) unwatchStock = inventory.kv.watch(() => scheduleStock(0), { prefix: "stock:" });
  }

  function inventoryProblemOf(context) {
    if (context.status === "pending") return "relationship_pending";
    if (context.status === "unknown") return "unknown_alias";
    return context.can.read ? null : "forbidden";
  }

  // The inventory confirmed this board, or its grant changed, after the page opened:
  // watch and read the stock again, no reload needed.
  inventory.onContextChange((context) => {
    if (inventoryProblemOf(context) === state.inventoryProblem) return;
    watchStock();
    refreshStock();
  });

  kanban.onInvalidated(({ alias, code }) => {
    if (alias === "inventory") {
      state.inventoryProblem = code;
      render();
    } else if (alias === null) {
      toast("Live updates stopped for this board; reload to try again.", code);
    }
  });

  wireToolbar();
  kanban.ready.then(() => {
    applyContext(kanban.getContext());
    kanban.onContextChange(applyContext);
    subscribeAll();
    load();
  });
  kanban.onConfigurationChange(() => {
    // A switch means other view settings: read them, and the board, again.
    dropPendingView();
    viewStale = true;
    subscribeAll();
    load();
  });
  addEventListener("pagehide", () => {
    for (const off of unsubscribers) off();
    unsubscribers = [];
  });
})();
