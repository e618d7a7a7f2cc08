// The Board's shared state and the helpers every part reads it through. The parts load in
// order (see index.html), each adding its functions to window.BoardApp.
(function () {
  "use strict";

  const B = (window.BoardApp = {});

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
    draggingColumn: null,
    // A render asked for during a drag, done when it ends.
    renderDeferred: false,
  };
  // Local changes still on their way to the server, laid over every fresh read so a read
  // that raced a write does not make a card jump back. id -> card, or null once deleted.
  const overlays = new Map();
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

  // Line icons drawn inline: no icon font or emoji font is needed (or allowed to load).
  const ICONS = {
    edit: ["M4 20h4L18.5 9.5a2.1 2.1 0 0 0-4-4L4 16z", "M13.5 6.5l4 4"],
    check: ["M4 12l5 5L20 6"],
    comment: ["M4 5h16v11H9l-5 4z"],
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

  // The viewer's username ("" before the context is in).
  const me = () => (kanban.getContext().user || {}).username || "";

  function members() {
    return kanban.getContext().members || [];
  }

  function memberNamed(username) {
    return members().find((m) => m.username === username) || null;
  }

  function personLabel(assignee) {
    const member = memberNamed(assignee);
    return member ? member.displayName : assignee;
  }

  // --- card operations ---------------------------------------------------------------------------

  function findCard(id) {
    return state.cards.find((c) => c.id === id) || null;
  }

  function columnCards(columnId) {
    return Core.cardsInColumn(state.cards, state.columns, columnId);
  }

  function visibleCards(columnId) {
    const day = today();
    return columnCards(columnId).filter((c) => Core.matchesFilter(c, state.view.filter, day, me()));
  }

  Object.assign(B, { kanban, Core, KEYS, inventory, INVENTORY_DOWN, READ_BATCH, state, overlays, $, boardEl, ICONS, newId, today, resolveReady, icon, hue, initials, me, members, memberNamed, personLabel, findCard, columnCards, visibleCards });
})();
