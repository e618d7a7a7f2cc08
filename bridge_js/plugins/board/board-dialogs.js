// The dialogs: a card's (two panes: the card on the left, what to do with it on the right,
// each button opening a popover: board-pickers.js, board-transfers.js, board-activity.js),
// a column's and the archive.
import { el, toast } from "../../static/bridge/plugin-kit.js";
import { archivedCards, columnOf, rankForPlacement } from "./board-core.js";
import { addColumn, changedFields, patchColumn, removeColumn } from "./board-changes.js";
import { $, columnCards, findCard, inventory, INVENTORY_DOWN, kanban, newId, state } from "./board-state.js";
import { readInventoryItems } from "./board-sync.js";
import { confirmDialog } from "./board-prompts.js";
import { archiveCard, createCard, deleteForever, editCard, restoreCard, saveColumns } from "./board-actions.js";
import { addChecklistItem, closeDiscussion, openDiscussion } from "./board-discussion.js";
import { showDetails } from "./board-details.js";
import { openAttachments } from "./board-attachments.js";
import { markdownNode } from "./board-markdown.js";
import { closePopover, popoverOpen, wirePopover } from "./board-popover.js";
import { openDates, openLabels, openMembers, renderBadges } from "./board-pickers.js";
import { showActivity } from "./board-activity.js";
import { openCopy, openMove, targets as copyTargets } from "./board-transfers.js";

// The archived cards of the newest set of cards: every drawing asks, few changes differ.
let archivedOf = null;
let archived = [];
export function renderArchive() {
  if (archivedOf !== state.cards) {
    archivedOf = state.cards;
    archived = archivedCards(state.cards);
  }
  const label = archived.length ? "Archive (" + archived.length + ")" : "Archive";
  if ($("archive-open").textContent !== label) $("archive-open").textContent = label;
  if (!$("archive-dialog").open) return;
  $("archive-empty").hidden = archived.length > 0;
  $("archive-list").replaceChildren(
    ...archived.map((card) =>
      el(
        "li",
        { "data-testid": "archived-" + card.id },
        el("span", { class: "archive-title", text: card.title }),
        el("button", { type: "button", class: "button ghost editing-only", text: "Restore", onclick: () => restoreCard(card.id) }),
        el("button", { type: "button", class: "button danger editing-only", text: "Delete for good", onclick: () => deleteForever(card.id) }),
      ),
    ),
  );
}

// {id, base, draft} of the card in the dialog (base: the card as the dialog opened it;
// draft: what its pickers changed, {assignees, labels, start, due, column}), or {column,
// draft} for a new one.
let editing = null;
let returnFocus = null;

// A guest opens a card to read it: its fields, checklist and comments, nothing to change.
export async function openCardDialog(target) {
  const card = target.id ? findCard(target.id) : null;
  if (state.readOnly && !card) return;
  const column = card ? columnOf(card, state.columns) : target.column;
  const draft = {
    assignees: card ? [...card.assignees] : [],
    labels: card ? [...card.labels] : [],
    start: card ? card.start : null,
    due: card ? card.due : null,
    column,
  };
  editing = card ? { ...target, base: card, draft } : { ...target, draft };
  returnFocus = document.activeElement;
  const readOnly = state.readOnly;
  $("card-dialog").classList.toggle("read-only", readOnly);
  $("card-dialog-title").textContent = readOnly ? "Card" : card ? "Edit card" : "New card";
  $("card-title-input").value = card ? card.title : "";
  $("card-title-input").disabled = readOnly;
  $("card-description-input").value = card ? card.description : "";
  // A card's description shows rendered (a click edits it); a new card's is a field at once.
  $("card-description-input").hidden = Boolean(card) || readOnly;
  showDescription();
  drawDraft();
  $("card-dialog-error").hidden = true;
  $("card-archive").hidden = !card || readOnly;
  $("card-move-button").hidden = readOnly;
  // A copy is written by the server onto a board the person can write, from one they read.
  $("card-copy-button").hidden = !card || !kanban.cards || readOnly;
  // A guest may copy a card to a board of their own: offered when they write one.
  if (card && readOnly && kanban.cards) {
    const opened = editing;
    copyTargets().then((boards) => {
      if (editing === opened) $("card-copy-button").hidden = !boards.some((b) => !b.current);
    });
  }
  $("card-side-add").hidden = readOnly;
  $("card-attach-button").hidden = !card;
  $("card-save").hidden = readOnly;
  $("card-cancel").textContent = readOnly ? "Close" : "Cancel";
  $("card-copy-link").hidden = !card || !pageLink();
  $("card-link").hidden = true;
  fillItemPicker(card ? card.item : null);
  $("card-activity-box").hidden = !card;
  $("card-activity-box").open = false;
  $("card-activity").replaceChildren();
  $("card-checklist").hidden = !card;
  $("card-comments").hidden = !card;
  showDetails(card);
  openAttachments(card ? card.id : null);
  if (card) openDiscussion(card.id);
  $("card-dialog").showModal();
  $("card-dialog").querySelector(".card-panes").scrollTop = 0;
  (readOnly ? $("card-cancel") : $("card-title-input")).focus();
}

// The draft's members, labels, dates and column, as the dialog shows them.
function drawDraft() {
  if (!editing) return;
  const { draft } = editing;
  renderBadges(draft, { readOnly: state.readOnly, open: openPicker });
  const column = state.columns.find((c) => c.id === draft.column);
  const moved = editing.base && draft.column !== columnOf(editing.base, state.columns);
  $("card-where").replaceChildren(
    "in list ",
    el("strong", { text: column ? column.title : "?" }),
    moved ? el("span", { class: "hint", text: " (moves when you save)" }) : "",
  );
}

function openPicker(kind, anchor) {
  if (!editing) return;
  // A guest may copy a card to a board they write; nothing else here is theirs to change.
  if (state.readOnly && kind !== "copy") return;
  const { draft } = editing;
  if (kind === "members") openMembers(anchor, draft, drawDraft);
  else if (kind === "labels") openLabels(anchor, draft, drawDraft);
  else if (kind === "dates") openDates(anchor, draft, drawDraft);
  else if (kind === "move") openMove(anchor, { card: editing.base || null, draft, changed: drawDraft, done: closeCardDialog, unsaved: hasUnsaved });
  else if (kind === "copy" && editing.base) openCopy(anchor, { card: editing.base, done: closeCardDialog, unsaved: hasUnsaved });
}

// The description as rendered markdown; a writer's click (or Edit) turns it into its text.
function showDescription() {
  const input = $("card-description-input");
  const view = $("card-description-view");
  const text = input.value.trim();
  const editable = !state.readOnly;
  view.hidden = !input.hidden;
  $("card-description-edit").hidden = !editable || !input.hidden;
  view.classList.toggle("description-empty", !text);
  view.classList.toggle("editable", editable);
  if (text) view.replaceChildren(markdownNode(text));
  else view.replaceChildren(editable ? "Add a more detailed description…" : "No description.");
}

function editDescription() {
  if (state.readOnly || !editing) return;
  $("card-description-input").hidden = false;
  showDescription();
  $("card-description-input").focus();
}

// What Save would write: the changes against the card as the dialog opened it.
function dialogFields() {
  const { draft } = editing;
  const fields = {
    title: $("card-title-input").value.trim(),
    description: $("card-description-input").value.trim(),
    assignees: draft.assignees,
    labels: draft.labels,
    start: draft.start || null,
    due: draft.due || null,
  };
  const itemSelect = $("card-item-input");
  if (!$("card-item-field").hidden && !itemSelect.disabled) fields.item = itemSelect.value || null;
  return fields;
}

function hasUnsaved() {
  if (!editing || !editing.base) return false;
  const shown = { ...editing.base, column: columnOf(editing.base, state.columns) };
  return Object.keys(changedFields(shown, { ...dialogFields(), column: editing.draft.column })).length > 0;
}

// The host tells the page its board's address (context.page); a link to a card is that
// address with #card=<id>, which the host hands back as context.page.fragment.
function pageLink() {
  const page = kanban.getContext().page;
  return page && typeof page.url === "string" ? page.url : null;
}

async function copyLink() {
  const target = editing;
  if (!target || !target.id || !pageLink()) return;
  const link = pageLink() + "#card=" + encodeURIComponent(target.id);
  const field = $("card-link");
  field.value = link;
  try {
    await navigator.clipboard.writeText(link);
    toast("Link copied.");
  } catch {
    // The frame may not write the clipboard: the link is shown, selected, to copy by hand.
    field.hidden = false;
    field.focus();
    field.select();
    toast("Press Ctrl+C (or ⌘C) to copy the link.");
  }
}

export function openLinkedCard(fragment) {
  const match = /^card=([A-Za-z0-9_-]{1,64})$/.exec(fragment || "");
  if (!match) return false;
  if (!findCard(match[1])) {
    toast("That card is not on this board (any more).");
    return true;
  }
  if ($("card-dialog").open) closeCardDialog();
  openCardDialog({ id: match[1] });
  return true;
}

// The inventory item, only on a board whose inventory relationship this person may use (or
// for a card that names an item already): a new board has no such field at all.
function inventoryUsable() {
  const related = /** @type {Partial<import("../../static/bridge/kanban.js").RelatedContext>} */ (inventory.getContext() || {});
  return related.status === "confirmed" && !(related.can && related.can.read === false) && state.inventoryProblem === null;
}

async function fillItemPicker(selected) {
  const field = $("card-item-field");
  const select = $("card-item-input");
  // A card that names an item keeps it shown where the board has an inventory that is down
  // for now; on a board with none (a new one, or a card moved in) there is no such field.
  const declared = ["confirmed", "pending"].includes((inventory.getContext() || {}).status);
  field.hidden = !inventoryUsable() && !(selected && declared);
  if (field.hidden) return;
  select.disabled = true;
  select.replaceChildren(el("option", { value: selected || "", text: selected ? selected : "(loading…)" }));
  const opened = editing;
  let items = null;
  if (inventoryUsable()) {
    try {
      items = await readInventoryItems();
    } catch (err) {
      if (err && INVENTORY_DOWN.has(err.code)) state.inventoryProblem = state.inventoryProblem || err.code;
    }
  }
  if (editing !== opened) return;
  if (items === null) {
    // The card keeps the item it names; nothing to choose it from now.
    select.replaceChildren(el("option", { value: selected || "", text: selected + " (inventory unavailable)" }));
    select.value = selected || "";
    return;
  }
  const options = [el("option", { value: "", text: "(none)" })];
  for (const item of items) options.push(el("option", { value: item.id, text: item.name }));
  if (selected && !items.some((i) => i.id === selected)) options.push(el("option", { value: selected, text: selected + " (missing)" }));
  select.replaceChildren(...options);
  select.value = selected || "";
  select.disabled = state.readOnly;
}

function closeCardDialog() {
  editing = null;
  closePopover({ restore: false });
  closeDiscussion();
  if ($("card-dialog").open) $("card-dialog").close();
  if (returnFocus && document.contains(returnFocus)) returnFocus.focus();
}

function saveCardDialog() {
  if (state.readOnly || !editing) return closeCardDialog();
  const fields = dialogFields();
  if (!fields.title) {
    $("card-dialog-error").textContent = "A card needs a title.";
    $("card-dialog-error").hidden = false;
    $("card-title-input").focus();
    return;
  }
  const column = editing.draft.column;
  const target = editing;
  closeCardDialog();
  if (target.id) {
    if (!findCard(target.id)) return toast("This card was deleted meanwhile.");
    const shown = { ...target.base, column: columnOf(target.base, state.columns) };
    const changes = /** @type {Record<string, unknown>} */ (changedFields(shown, column ? { ...fields, column } : fields));
    if ("column" in changes) changes.rank = rankForPlacement(columnCards(column), null);
    if (Object.keys(changes).length) editCard(target.id, target.base, changes);
  } else {
    if (!("item" in fields)) fields.item = null;
    if (!fields.start) delete fields.start;
    createCard({ ...fields, column: column || target.column });
  }
}

let editingColumn = null;
export function openColumnDialog(columnId) {
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
  if (id) saveColumns("Saving the column", patchColumn(id, { title, wip }));
  else saveColumns("Adding the column", addColumn({ id: newId(), title, wip }));
}

async function deleteColumn() {
  const id = editingColumn;
  const column = state.columns.find((c) => c.id === id);
  closeColumnDialog();
  if (!column || columnCards(id).length) return;
  if (!(await confirmDialog('Delete the column "' + column.title + '"?'))) return;
  saveColumns("Deleting the column", removeColumn(id));
}

// --- wiring ----------------------------------------------------------------------------------

export function wireDialogs() {
  wirePopover();
  $("archive-open").addEventListener("click", () => {
    $("archive-dialog").showModal();
    renderArchive();
  });
  $("archive-close").addEventListener("click", () => $("archive-dialog").close());
  $("card-save").addEventListener("click", saveCardDialog);
  $("card-cancel").addEventListener("click", closeCardDialog);
  $("card-archive").addEventListener("click", () => {
    const target = editing;
    closeCardDialog();
    if (target && target.id) archiveCard(target.id);
  });
  for (const button of $("card-dialog").querySelectorAll(".card-side [data-popover]")) {
    button.setAttribute("aria-expanded", "false");
    button.addEventListener("click", () => {
      if (popoverOpen() && button.getAttribute("aria-expanded") === "true") return closePopover();
      openPicker(button.dataset.popover, button);
    });
  }
  $("card-attach-button").addEventListener("click", () => {
    $("card-attachments").scrollIntoView({ block: "nearest" });
    $("attachment-pick").click();
  });
  $("card-description-edit").addEventListener("click", editDescription);
  $("card-description-view").addEventListener("click", (event) => {
    if (event.target.closest("a")) return; // a link in the text opens, it does not edit
    editDescription();
  });
  $("card-dialog").addEventListener("cancel", (event) => {
    if (event.defaultPrevented) return; // the popover's Escape
    editing = null;
    closeDiscussion();
  });
  $("card-copy-link").addEventListener("click", copyLink);
  $("card-activity-box").addEventListener("toggle", () => {
    const target = editing;
    if (!target || !target.id || !$("card-activity-box").open) return;
    showActivity(target.id, { isCurrent: () => editing === target, restored: closeCardDialog });
  });
  // Sandboxed pages may not submit forms, so Enter in a one-line field saves by hand.
  $("card-dialog").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && event.target.tagName === "INPUT" && !$("card-popover").contains(event.target)) {
      event.preventDefault();
      if (event.target.id === "checklist-new") addChecklistItem();
      else if (event.target.id !== "card-link") saveCardDialog();
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
