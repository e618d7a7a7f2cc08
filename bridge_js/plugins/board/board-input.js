// Keyboard and drag: cards and columns move by either, and the toolbar's controls.
import { button, el } from "../../static/bridge/plugin-kit.js";
import { columnOf, defaultView } from "./board-core.js";
import { $, boardEl, findCard, focusCard, render, state, visibleCards } from "./board-state.js";
import { setView } from "./board-sync.js";
import { archiveCard, moveByKeyboard, moveCard, moveColumn, undoLatest } from "./board-actions.js";
import { openCardDialog } from "./board-dialogs.js";
import { startAdding } from "./board-quick-add.js";

// A column moves by its grip: Alt+Left/Right, or dragged onto another column's header.
export function columnGrip(column) {
  const grip = button("grip-" + column.id, {
    class: "icon-button column-grip editing-only",
    draggable: "true",
    "aria-label": "Move column " + column.title + " (Alt+Left or Alt+Right)",
    "data-testid": "grip-" + column.id,
    text: "⠿",
  });
  grip.addEventListener("keydown", (event) => {
    if (!event.altKey || (event.key !== "ArrowLeft" && event.key !== "ArrowRight")) return;
    event.preventDefault();
    const at = state.columns.findIndex((c) => c.id === column.id);
    const target = state.columns[at + (event.key === "ArrowLeft" ? -1 : 1)];
    if (target) moveColumn(column.id, target.id);
  });
  grip.addEventListener("dragstart", (event) => {
    const transfer = /** @type {DataTransfer} */ (event.dataTransfer);
    transfer.setData("text/plain", "column:" + column.id);
    transfer.effectAllowed = "move";
    state.draggingColumn = column.id;
  });
  grip.addEventListener("dragend", () => (state.draggingColumn = null));
  return grip;
}

const ARROWS = { ArrowLeft: "left", ArrowRight: "right", ArrowUp: "up", ArrowDown: "down" };

export function onCardKey(event, card) {
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
    openCardDialog({ id: card.id }); // a guest's opens to read
  } else if (event.key === "Delete" || event.key === "Backspace") {
    event.preventDefault();
    archiveCard(card.id);
  }
}

function moveFocus(card, direction) {
  const columnId = columnOf(card, state.columns);
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

export function wireDrag(node, card) {
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
  if (state.renderDeferred) {
    state.renderDeferred = false;
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

export function wireDropTarget(list, columnId) {
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

export function syncToolbar() {
  $("filter-text").value = state.view.filter.text;
  $("filter-due").value = state.view.filter.due;
  const compact = state.view.density === "compact";
  document.body.classList.toggle("density-compact", compact);
  document.body.classList.toggle("density-comfortable", !compact);
  $("density-toggle").setAttribute("aria-pressed", String(compact));
}

export function wireToolbar() {
  $("toolbar-toggle").addEventListener("click", () => {
    const open = $("toolbar").classList.toggle("open");
    $("toolbar-toggle").setAttribute("aria-expanded", String(open));
  });
  $("filter-text").addEventListener("input", (e) => setView({ filter: { ...state.view.filter, text: /** @type {HTMLInputElement} */ (e.target).value } }));
  $("filter-label").addEventListener("change", (e) =>
    setView({ filter: { ...state.view.filter, label: /** @type {HTMLInputElement} */ (e.target).value } }, { immediate: true }),
  );
  $("filter-assignee").addEventListener("change", (e) =>
    setView({ filter: { ...state.view.filter, assignee: /** @type {HTMLInputElement} */ (e.target).value } }, { immediate: true }),
  );
  $("filter-due").addEventListener("change", (e) =>
    setView({ filter: { ...state.view.filter, due: /** @type {HTMLInputElement} */ (e.target).value } }, { immediate: true }),
  );
  $("filter-clear").addEventListener("click", () => {
    setView({ filter: defaultView().filter }, { immediate: true });
    syncToolbar();
    $("filter-text").focus();
  });
  $("density-toggle").addEventListener("click", () => {
    setView({ density: state.view.density === "compact" ? "comfortable" : "compact" }, { immediate: true });
    syncToolbar();
  });
  document.addEventListener("keydown", onShortcut);
}

// The board's keys, as Trello's: `n` a new card, `/` the filter, `?` this list; Ctrl or
// Command+Z undoes. None of them fires while typing or in a dialog.
export const SHORTCUTS = Object.freeze([
  ["n", "Add a card to the first open column"],
  ["/", "Filter the cards"],
  ["?", "Show these shortcuts"],
  ["← ↑ → ↓", "Move between cards"],
  ["Alt + arrows", "Move the focused card"],
  ["Enter", "Open the focused card"],
  ["Delete", "Archive the focused card"],
  ["Ctrl + Z", "Undo"],
]);

function onShortcut(event) {
  const target = event.target;
  if (target.closest && target.closest("input, textarea, select, dialog, [contenteditable]")) return;
  if ((event.ctrlKey || event.metaKey) && !event.shiftKey && event.key.toLowerCase() === "z") {
    event.preventDefault();
    undoLatest();
    return;
  }
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.key === "/") {
    event.preventDefault();
    $("toolbar").classList.add("open");
    $("filter-text").focus();
  } else if (event.key === "?") {
    event.preventDefault();
    showShortcuts();
  } else if (event.key === "n" && !state.readOnly) {
    const column = state.columns.find((c) => !state.view.collapsed.includes(c.id));
    if (column && startAdding(column.id)) event.preventDefault();
  }
}

let shortcutsDialog = null;
function showShortcuts() {
  if (!shortcutsDialog) {
    const rows = SHORTCUTS.map(([keys, what]) => el("div", { class: "shortcut" }, el("dt", {}, el("kbd", { text: keys })), el("dd", { text: what })));
    shortcutsDialog = el(
      "dialog",
      { id: "shortcuts-dialog", class: "dialog dialog-small", "data-testid": "shortcuts-dialog", "aria-labelledby": "shortcuts-title" },
      el("h2", { id: "shortcuts-title", text: "Keyboard shortcuts" }),
      el("dl", { class: "shortcuts" }, ...rows),
      el("div", { class: "dialog-actions" }, button("shortcuts-close", { class: "button", text: "Close", onclick: () => shortcutsDialog.close() })),
    );
    document.body.append(shortcutsDialog);
  }
  shortcutsDialog.showModal();
}
