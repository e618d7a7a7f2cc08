// The Board's shared state and the helpers every part reads it through: the module every
// other part imports, and which imports none of them. Drawing and re-deriving the board are
// the last parts' (board-render.js, board-sync.js), which import this one: app.js hands
// them in (drawWith), so a part that changes the state asks for a drawing here instead of
// importing the drawing, which imports it back.
import { createWriteMode } from "../../static/bridge/plugin-kit.js";
import { defaultView, localDate, matchesFilter, newId as idFrom } from "./board-core.js";
import { createGrouping } from "./board-view.js";

// The SDK is the classic script index.html runs before the page's modules.
export const kanban = window.steamHarnessKanban;
export const inventory = kanban.relatedProjects.get("inventory");

export const INVENTORY_DOWN = new Set(["unknown_alias", "relationship_pending", "forbidden", "not_found"]);
// Keys per kv.getValues request: the bridge's maximum, so a 1,000-card board is 4 reads.
export const READ_BATCH = 256;

export const state = {
  loaded: false,
  /** @type {{id: string, title: string, wip: number}[]} */
  columns: [],
  /** @type {any[]} the cards as board-core.js normalises them */
  cards: [],
  // The board's label set (board:labels): folded name -> colour.
  labels: new Map(),
  view: defaultView(),
  readOnly: false,
  /** @type {string | null} */
  inventoryProblem: null,
  stock: new Map(), // item id -> {status: "ok", name, count} | {status: "missing"} | {status: "unavailable", code}
  pending: 0,
  renders: 0,
  /** @type {any} */
  dragging: null,
  /** @type {string | null} */
  draggingColumn: null,
  // A render asked for during a drag, done when it ends.
  renderDeferred: false,
};
// Local changes still on their way to the server, laid over every fresh read so a read
// that raced a write does not make a card jump back. id -> card, or null once deleted.
export const overlays = new Map();
// An element of the page's markup (index.html has every id asked for); `any`, for the
// many kinds of element the Board reads (an input's value, a dialog's open).
/** @param {string} id @returns {any} */
export const $ = (id) => document.getElementById(id);
export const boardEl = $("board");

let markReady;
const ready = new Promise((resolve) => (markReady = resolve));
export const resolveReady = () => markReady();
const freeze = (x) => {
  if (x && typeof x === "object") {
    Object.freeze(x);
    for (const k of Object.keys(x)) freeze(x[k]);
  }
  return x;
};
// The test hook (README, "Test hooks"): a frozen copy of the state, and the first load's
// promise. Nothing else of the Board is on window; tests that act import its modules.
/** @type {any} */ (window).boardDebug = Object.freeze({
  ready,
  get state() {
    return freeze(
      JSON.parse(
        JSON.stringify({
          loaded: state.loaded,
          columns: state.columns,
          cards: state.cards,
          labels: Object.fromEntries(state.labels),
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

// Line icons drawn inline: no icon font or emoji font is needed (or allowed to load).
const ICONS = {
  edit: ["M4 20h4L18.5 9.5a2.1 2.1 0 0 0-4-4L4 16z", "M13.5 6.5l4 4"],
  check: ["M4 12l5 5L20 6"],
  text: ["M4 6h16", "M4 12h16", "M4 18h10"],
  comment: ["M4 5h16v11H9l-5 4z"],
  clip: ["M20 11.5l-8.3 8.3a5 5 0 0 1-7.1-7.1l8.3-8.3a3.3 3.3 0 0 1 4.7 4.7l-8.3 8.3a1.7 1.7 0 0 1-2.4-2.4l7.6-7.6"],
  trash: ["M4 7h16", "M10 11v6", "M14 11v6", "M5 7l1 12a2 2 0 0 0 2 2h8a2 2 0 0 0 2-2l1-12", "M9 7V4h6v3"],
};

export function icon(name) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  for (const [k, v] of Object.entries({
    viewBox: "0 0 24 24",
    width: "16",
    height: "16",
    fill: "none",
    stroke: "currentColor",
    "stroke-width": "2",
    "stroke-linecap": "round",
    "stroke-linejoin": "round",
    "aria-hidden": "true",
    focusable: "false",
  })) {
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
export const newId = () => idFrom(randomBytes);
export const today = () => localDate(new Date());

export function hue(text) {
  let h = 0;
  for (const ch of String(text).toLowerCase()) h = (h * 31 + /** @type {number} */ (ch.codePointAt(0))) % 360;
  return h;
}

export function initials(name) {
  const parts = name.split(/\s+/).filter(Boolean);
  return ((parts[0] || "?")[0] + (parts.length > 1 ? parts[parts.length - 1][0] : "")).toUpperCase();
}

// The viewer's username ("" before the context is in).
export const me = () => (kanban.getContext().user || {}).username || "";

export function members() {
  return kanban.getContext().members || [];
}

export function memberNamed(username) {
  return members().find((m) => m.username === username) || null;
}

export function personLabel(assignee) {
  const member = memberNamed(assignee);
  return member ? member.displayName : assignee;
}

// --- card operations ---------------------------------------------------------------------------

export function findCard(id) {
  return state.cards.find((c) => c.id === id) || null;
}

// The open cards of every column in board order, grouped again only for new cards or columns.
const grouping = createGrouping();
export const groupedCards = () => grouping(state.cards, state.columns);

export function columnCards(columnId) {
  return (groupedCards().get(columnId) || []).slice();
}

export function visibleCards(columnId) {
  const day = today();
  return columnCards(columnId).filter((c) => matchesFilter(c, state.view.filter, day, me()));
}

// At once, so keys pressed faster than frames (a held arrow key) each move one card on
// from where the last one left the focus; again at the next frame, for a card being drawn.
export function focusCard(id) {
  const focus = () => {
    drawing.reveal(id);
    const node = /** @type {HTMLElement | null} */ (boardEl.querySelector('[data-card-id="' + CSS.escape(id) + '"]'));
    if (node && document.activeElement !== node) node.focus();
    return Boolean(node);
  };
  if (!focus()) requestAnimationFrame(focus);
}

// --- drawing, and what the user may do -------------------------------------------------------

// Until drawWith: app.js hands over board-render.js's functions.
/** @type {{render: () => void, redraw: () => void, reveal: (id: string) => void}} */
const drawing = { render() {}, redraw() {}, reveal() {} };
// The whole page from the state (board-render.js).
export const render = () => drawing.render();
// The columns and cards again from what the page holds, then drawn (board-sync.js).
export const redraw = () => drawing.redraw();
// Draws a card a long column's window left out, so it can be focused (board-render.js).
export function drawWith({ render, redraw, reveal }) {
  Object.assign(drawing, { render, redraw, reveal });
}

// A guest's board starts read-only (getContext) and unlocks live when they are made a
// developer; members' names show on cards, so any change of the context draws it again.
export const {
  apply: applyContext,
  enter: enterReadOnly,
  write,
} = createWriteMode({
  state,
  render,
  refresh: redraw,
  onEnter: () => {
    for (const dialog of document.querySelectorAll("dialog[open]")) /** @type {HTMLDialogElement} */ (dialog).close();
  },
});
