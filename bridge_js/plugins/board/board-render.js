// Drawing the board from the state, by patching what is on the page: a column's node and a
// card's node are made once and kept while what they show is unchanged (a card is the same
// object until its stored value changes: board-changes.js createStore), so one change
// elsewhere rebuilds one card, rewrites one count and moves nodes, never the board. A long
// column draws only the cards near its visible part (board-view.js windowOf).
import { button, el } from "../../static/bridge/plugin-kit.js";
import { distinct, isFiltering, ME, wipState } from "./board-core.js";
import { $, boardEl, groupedCards, kanban, me, personLabel, state, today } from "./board-state.js";
import { createFilterCache, ESTIMATED_HEIGHT, offsetOf, WINDOW_FROM, windowOf } from "./board-view.js";
import { cardExtras, renderCard } from "./board-card.js";
import { attachmentsKnown, wantAttachments } from "./board-attachments.js";
import { setView } from "./board-sync.js";
import { moveColumn } from "./board-actions.js";
import { openColumnDialog, renderArchive } from "./board-dialogs.js";
import { renderChecklist } from "./board-discussion.js";
import { columnGrip, wireDropTarget } from "./board-input.js";
import { quickAdd } from "./board-quick-add.js";

const filters = createFilterCache();
// column id -> its nodes and what they show; card id -> its slot and what it was drawn from.
const columnViews = new Map();
const cardViews = new Map();
// card id -> its slot's height as last laid out, for the spacers of a windowed column.
const heights = new Map();
// Bumped when a drawn card's height changed, so a column works its heights out again.
let heightsVersion = 0;
const resizes = new ResizeObserver((entries) => {
  for (const entry of entries) {
    const id = /** @type {HTMLElement} */ (entry.target).dataset.slotFor;
    const box = entry.borderBoxSize && entry.borderBoxSize[0];
    if (!id || !box || box.blockSize <= 0 || heights.get(id) === box.blockSize) continue;
    heights.set(id, box.blockSize);
    heightsVersion++;
  }
});

// DOM writes only where something changed: an unchanged value written again still costs
// the page a style invalidation, and every observer of the board a mutation record.
function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}
function setClass(node, name) {
  if (node.className !== name) node.className = name;
}
function setHeight(node, px) {
  const value = px + "px";
  if (node.style.height !== value) node.style.height = value;
}
let gapPx = null;
// Cards whose attachment summaries a windowed column reads at once, around what it draws.
const AHEAD = 128;

// `label(value)` is what an option shows (a member's name for their username).
function fillSelect(select, first, values, selected, label = (v) => v) {
  const signature = JSON.stringify([values, selected || "", values.map(label)]);
  if (select.dataset.signature === signature) return;
  select.dataset.signature = signature;
  const options = [el("option", { value: "", text: first })];
  for (const v of values) options.push(el("option", { value: v, text: label(v) }));
  if (selected && !values.includes(selected)) options.push(el("option", { value: selected, text: label(selected) }));
  select.replaceChildren(...options);
  select.value = selected || "";
}

// The filters' choices come from every card: worked out again only for a new set of cards.
let choicesOf = null;
/** @type {{labels: string[], people: string[]}} */
let choices = { labels: [], people: [] };
// Whether the cards' labels and assignees are those of the last set: an edit of a title or
// a tick leaves the filters' choices as they were.
function sameChoices(was, now) {
  if (!was || was.length !== now.length) return false;
  const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
  return now.every((card, i) => card === was[i] || (same(card.labels, was[i].labels) && same(card.assignees, was[i].assignees)));
}

function renderFilters() {
  if (choicesOf !== state.cards && sameChoices(choicesOf, state.cards)) choicesOf = state.cards;
  if (choicesOf !== state.cards) {
    choicesOf = state.cards;
    choices = {
      labels: distinct(state.cards.flatMap((c) => c.labels)),
      people: distinct(state.cards.flatMap((c) => c.assignees)),
    };
  }
  fillSelect($("filter-label"), "All labels", choices.labels, state.view.filter.label);
  const label = (v) => (v === ME ? "Assigned to me" : personLabel(v));
  fillSelect($("filter-assignee"), "Everyone", [ME, ...choices.people], state.view.filter.assignee, label);
  const filtering = isFiltering(state.view.filter);
  $("filter-clear").hidden = !filtering;
  $("toolbar-toggle").textContent = filtering ? "Filters (on)" : "Filters";
}

// What every card face depends on besides its card: one string, so a change of any of it
// (a member renamed, a label recoloured, midnight) draws the faces again and nothing else does.
// Worked out again only when one of its parts is a new object or value.
let facesOf = [];
let faces = "";
function drawingContext() {
  const members = kanban.getContext().members;
  const day = today();
  const parts = [state.readOnly, day, state.labels, members, state.inventoryProblem];
  if (parts.some((part, i) => part !== facesOf[i])) {
    const people = (members || []).map((m) => [m.username, m.displayName]);
    const next = JSON.stringify([state.readOnly, day, [...state.labels], people, state.inventoryProblem]);
    facesOf = parts;
    faces = next;
  }
  return { day, me: me(), faces };
}

export function renderBoard() {
  if (!state.loaded) return;
  renderArchive();
  renderChecklist();
  if (state.dragging) {
    state.renderDeferred = true;
    return;
  }
  state.renders++;
  document.body.classList.toggle("read-only", state.readOnly);
  renderFilters();
  const focused = focusedKey();
  if (!state.columns.length) {
    columnViews.clear();
    const empty = el("p", { class: "empty", text: state.readOnly ? "This board has no columns yet." : "No columns yet." });
    boardEl.replaceChildren(...(state.readOnly ? [empty] : [empty, addColumnButton()]));
  } else {
    const groups = groupedCards();
    const context = drawingContext();
    // Every windowed column's scroll position is read before anything changes, so the page
    // is laid out once for the whole drawing, not once a column.
    const geometry = new Map();
    for (const [id, view] of columnViews) {
      if (view.windowed) geometry.set(id, { top: view.list.scrollTop, height: view.list.clientHeight });
    }
    const live = new Set(state.columns.map((c) => c.id));
    for (const id of columnViews.keys()) if (!live.has(id)) columnViews.delete(id);
    const sections = state.columns.map((column) => {
      const view = columnViews.get(column.id) || newColumnView(column.id);
      drawColumn(view, column, groups.get(column.id) || [], context, geometry.get(column.id));
      return view.section;
    });
    placeChildren(boardEl, state.readOnly ? sections : [...sections, addColumnButton()]);
    forgetGoneCards();
  }
  if (boardEl.getAttribute("aria-busy") !== "false") performance.mark("board:drawn");
  boardEl.setAttribute("aria-busy", "false");
  refocus(focused);
}

// --- columns ----------------------------------------------------------------------------------

function newColumnView(id) {
  const list = el("ol", { class: "cards", "data-list-for": id });
  const view = {
    id,
    section: el("section", { "data-testid": "column-" + id, "data-column-id": id, "aria-labelledby": "title-" + id }),
    header: null,
    headerSignature: "",
    warning: el("p", { class: "wip-warning", role: "alert", "data-testid": "wip-warning-" + id }),
    list,
    top: el("li", { class: "card-spacer", "aria-hidden": "true" }),
    bottom: el("li", { class: "card-spacer", "aria-hidden": "true" }),
    empty: el("li", { class: "empty-column" }),
    footer: null,
    footerReadOnly: null,
    shown: [],
    heights: [],
    heightsOf: null,
    drawnAt: null,
    heightsVersion: -1,
    range: { start: 0, end: 0, before: 0, after: 0 },
    windowed: false,
    scrollQueued: false,
  };
  list.addEventListener("scroll", () => scheduleWindow(view), { passive: true });
  wireDropTarget(list, id);
  columnViews.set(id, view);
  return view;
}

function drawColumn(view, column, all, context, geometry) {
  const shown = filters.shown(all, state.view.filter, context.day, context.me);
  const wip = wipState(column, all.length);
  const collapsed = state.view.collapsed.includes(column.id);
  const filtering = isFiltering(state.view.filter);
  view.shown = shown;
  setClass(view.section, "column" + (collapsed ? " collapsed" : "") + (wip.over ? " over-limit" : ""));
  const countText = (filtering ? shown.length + " of " : "") + all.length + (wip.limit ? " / " + wip.limit : "");
  const signature = JSON.stringify([column.title, collapsed, state.readOnly, countText, wip.over, wip.full]);
  if (signature !== view.headerSignature) {
    view.headerSignature = signature;
    view.header = columnHeader(column, { all: all.length, wip, collapsed, countText });
  }
  if (view.list.getAttribute("aria-label") !== column.title + " cards") view.list.setAttribute("aria-label", column.title + " cards");
  setText(view.warning, "WIP limit " + wip.limit + " exceeded: " + all.length + " cards");
  setText(view.empty, filtering && all.length ? "No cards match the filter." : "No cards.");
  if (view.footerReadOnly !== state.readOnly) {
    view.footerReadOnly = state.readOnly;
    view.footer = state.readOnly ? null : quickAdd(column.id, () => columnTitle(column.id));
  }
  const parts = [view.header];
  if (wip.over) parts.push(view.warning);
  if (!collapsed) {
    drawCards(view, context, geometry);
    parts.push(view.list);
    if (view.footer) parts.push(view.footer);
  }
  placeChildren(view.section, parts);
}

// "+ Add another column" where the next column would go, as Trello and Planka have it.
let addColumn = null;
function addColumnButton() {
  addColumn ||= button("add-column", {
    id: "add-column",
    class: "add-column editing-only",
    "data-testid": "add-column",
    text: "+ Add another column",
    onclick: () => openColumnDialog(null),
  });
  return addColumn;
}

const columnTitle = (id) => (state.columns.find((c) => c.id === id) || { title: id }).title;

function columnHeader(column, { all, wip, collapsed, countText }) {
  const header = el(
    "header",
    { class: "column-header" },
    button("collapse-" + column.id, {
      class: "icon-button collapse",
      "aria-expanded": String(!collapsed),
      "aria-label": (collapsed ? "Expand " : "Collapse ") + column.title,
      text: collapsed ? "▸" : "▾",
      onclick: () =>
        setView({ collapsed: collapsed ? state.view.collapsed.filter((c) => c !== column.id) : [...state.view.collapsed, column.id] }, { immediate: true }),
    }),
    state.readOnly ? null : columnGrip(column),
    el("h2", { class: "column-title", id: "title-" + column.id, text: column.title }),
    el("span", {
      class: "count" + (wip.over ? " count-over" : wip.full ? " count-full" : ""),
      "aria-label": all + " cards" + (wip.limit ? ", limit " + wip.limit : ""),
      text: countText,
    }),
    state.readOnly
      ? null
      : button("settings-" + column.id, {
          class: "icon-button editing-only",
          "aria-label": "Settings for " + column.title,
          text: "⋯",
          onclick: () => openColumnDialog(column.id),
        }),
  );
  header.addEventListener("dragover", (event) => {
    if (state.draggingColumn && state.draggingColumn !== column.id) event.preventDefault();
  });
  header.addEventListener("drop", (event) => {
    const dragged = state.draggingColumn;
    if (!dragged || dragged === column.id) return;
    event.preventDefault();
    state.draggingColumn = null;
    moveColumn(dragged, column.id);
  });
  return header;
}

// --- cards --------------------------------------------------------------------------------------

function gap(list) {
  if (gapPx === null && list.isConnected) gapPx = parseFloat(getComputedStyle(list).rowGap) || 0;
  return gapPx || 0;
}

// The column's cards near what it shows; `geometry` is its scroll position read before the
// drawing began (none for a column drawn for the first time, or when it scrolled).
function drawCards(view, context, geometry) {
  const { shown, list } = view;
  view.windowed = shown.length >= WINDOW_FROM;
  if (list.classList.contains("windowed") !== view.windowed) list.classList.toggle("windowed", view.windowed);
  let range = { start: 0, end: shown.length, before: 0, after: 0 };
  const space = gap(list);
  if (view.windowed) {
    if (view.heightsOf !== shown || view.heightsVersion !== heightsVersion) {
      view.heights = shown.map((card) => heights.get(card.id) || ESTIMATED_HEIGHT);
      view.heightsOf = shown;
      view.heightsVersion = heightsVersion;
    }
    const at = geometry || { top: list.scrollTop, height: list.clientHeight };
    view.drawnAt = geometry;
    range = windowOf({ heights: view.heights, gap: space, top: at.top, height: at.height });
    if (shown.slice(range.start, range.end).some((card) => !attachmentsKnown(card.id))) {
      const from = Math.max(0, range.start - AHEAD / 2);
      wantAttachments(shown.slice(from, range.end + AHEAD / 2).map((c) => c.id));
    }
    // First drawn before the page laid it out: drawn again once it knows its height.
    if (!geometry) scheduleWindow(view);
  }
  view.range = range;
  const nodes = [];
  if (range.before > 0) nodes.push(view.top);
  setHeight(view.top, Math.max(0, range.before - space));
  for (let i = range.start; i < range.end; i++) nodes.push(slotOf(shown[i], context));
  // A card being dragged keeps its node, drawn or not: the drag ends on it.
  const dragged = state.dragging && cardViews.get(state.dragging);
  if (dragged && !nodes.includes(dragged.slot) && shown.some((c) => c.id === state.dragging)) {
    dragged.slot.hidden = true;
    nodes.push(dragged.slot);
  }
  if (!shown.length) nodes.push(view.empty);
  if (range.after > 0) nodes.push(view.bottom);
  setHeight(view.bottom, Math.max(0, range.after - space));
  placeChildren(list, nodes);
}

function stockOf(card) {
  if (!card.item) return "";
  return JSON.stringify(state.stock.get(card.item) || null);
}

function slotOf(card, context) {
  const extras = cardExtras(card.id) + "|" + stockOf(card);
  let view = cardViews.get(card.id);
  if (view && view.card === card && view.extras === extras && view.faces === context.faces) {
    if (view.slot.hidden) view.slot.hidden = false;
    return view.slot;
  }
  const node = renderCard(card);
  if (view) {
    view.slot.replaceChildren(node);
  } else {
    view = { slot: el("li", { class: "card-slot", "data-slot-for": card.id }) };
    view.slot.append(node);
    resizes.observe(view.slot);
    cardViews.set(card.id, view);
  }
  Object.assign(view, { card, extras, faces: context.faces });
  if (view.slot.hidden) view.slot.hidden = false;
  return view.slot;
}

// Cards that left the board (deleted, or no longer in the index) give their nodes up.
function forgetGoneCards() {
  if (cardViews.size <= state.cards.length) return;
  const live = new Set(state.cards.map((c) => c.id));
  for (const [id, view] of cardViews) {
    if (live.has(id)) continue;
    resizes.unobserve(view.slot);
    view.slot.remove();
    cardViews.delete(id);
    heights.delete(id);
  }
}

// A scrolled column draws its new window at the next frame, alone.
function scheduleWindow(view) {
  if (view.scrollQueued) return;
  view.scrollQueued = true;
  requestAnimationFrame(() => {
    view.scrollQueued = false;
    if (!view.windowed || !view.section.isConnected || !state.loaded) return;
    const at = { top: view.list.scrollTop, height: view.list.clientHeight };
    // Drawn for this very place and these heights already: nothing to do.
    if (view.drawnAt && view.drawnAt.top === at.top && view.drawnAt.height === at.height && view.heightsVersion === heightsVersion) return;
    const focused = focusedKey();
    drawCards(view, drawingContext(), at);
    refocus(focused);
  });
}

// A card's node on the page, drawn first if its column's window had left it out: keyboard
// moves and links to a card reach cards the window does not hold.
export function revealCard(id) {
  for (const view of columnViews.values()) {
    if (!view.windowed) continue;
    const index = view.shown.findIndex((c) => c.id === id);
    if (index < 0) continue;
    if (index >= view.range.start + 2 && index < view.range.end - 2) return;
    const offset = offsetOf(view.heights, gap(view.list), index);
    view.list.scrollTop = Math.max(0, offset - view.list.clientHeight / 3);
    drawCards(view, drawingContext(), { top: view.list.scrollTop, height: view.list.clientHeight });
    return;
  }
}

// --- nodes ---------------------------------------------------------------------------------------

// Makes `parent`'s children exactly `nodes`, moving as few as it can: a node that only
// moved further down is passed over and placed when its turn comes, so a card moved from
// the top of a column to its bottom is one move, not one for every card it passed.
function placeChildren(parent, nodes) {
  const wanted = new Set(nodes);
  let at = parent.firstChild;
  for (const node of nodes) {
    while (at && !wanted.has(at)) {
      const next = at.nextSibling;
      at.remove();
      at = next;
    }
    if (at === node) {
      at = at.nextSibling;
    } else if (at && at.nextSibling === node) {
      at = node.nextSibling;
    } else {
      parent.insertBefore(node, at);
    }
  }
  while (at) {
    const next = at.nextSibling;
    at.remove();
    at = next;
  }
}

// Moving a focused node blurs it: the focus goes back to what had it (by data-focus-key).
function focusedKey() {
  const focused = document.activeElement;
  return focused && boardEl.contains(focused) ? focused.getAttribute("data-focus-key") : null;
}

function refocus(key) {
  if (!key) return;
  const focused = document.activeElement;
  if (focused && focused.getAttribute("data-focus-key") === key) return;
  const again = /** @type {HTMLElement | null} */ (boardEl.querySelector('[data-focus-key="' + CSS.escape(key) + '"]'));
  if (again) again.focus({ preventScroll: true });
}
