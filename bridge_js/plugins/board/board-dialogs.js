// The dialogs: a card's, a column's, the archive, and the two-answer prompts.
// The versions the card dialog's Activity shows (the server keeps up to 50 a key).
import { el, toast } from "../../static/bridge/plugin-kit.js";
import { archivedCards, columnOf, KEYS, parseLabels, rankForPlacement } from "./board-core.js";
import { addColumn, cardActivity, changedFields, patchColumn, removeColumn } from "./board-changes.js";
import {
  $,
  columnCards,
  findCard,
  INVENTORY_DOWN,
  kanban,
  memberNamed,
  members,
  newId,
  personLabel,
  state,
} from "./board-state.js";
import { readInventoryItems } from "./board-sync.js";
import { confirmDialog } from "./board-prompts.js";
import {
  archiveCard,
  createCard,
  deleteForever,
  editCard,
  restoreCard,
  saveColumns,
} from "./board-actions.js";
import { addChecklistItem, closeDiscussion, openDiscussion } from "./board-discussion.js";
import { showDetails } from "./board-details.js";
import { openAttachments } from "./board-attachments.js";

const ACTIVITY_LIMIT = 20;

export function renderArchive() {
  const archived = archivedCards(state.cards);
  $("archive-open").textContent = archived.length ? "Archive (" + archived.length + ")" : "Archive";
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

// {id, base} of the card in the dialog (base: the card as the dialog opened it), or
// {column} for a new one.
let editing = null;
let returnFocus = null;

// A guest opens a card to read it: its fields, checklist and comments, nothing to change.
export async function openCardDialog(target) {
  const card = target.id ? findCard(target.id) : null;
  if (state.readOnly && !card) return;
  editing = card ? { ...target, base: card } : target;
  returnFocus = document.activeElement;
  $("card-dialog-title").textContent = state.readOnly ? "Card" : card ? "Edit card" : "New card";
  for (const field of $("card-dialog").querySelectorAll(".card-fields input, .card-fields textarea, .card-fields select")) {
    field.disabled = state.readOnly;
  }
  $("card-title-input").value = card ? card.title : "";
  $("card-description-input").value = card ? card.description : "";
  fillAssignees(card ? card.assignees : []);
  $("card-due-input").value = card && card.due ? card.due : "";
  $("card-labels-input").value = card ? card.labels.join(", ") : "";
  $("card-dialog-error").hidden = true;
  $("card-delete").hidden = !card || state.readOnly;
  $("card-save").hidden = state.readOnly;
  $("card-cancel").textContent = state.readOnly ? "Close" : "Cancel";
  $("card-copy-link").hidden = !card || !pageLink();
  $("card-link").hidden = true;
  const column = card ? columnOf(card, state.columns) : target.column;
  $("card-column-input").replaceChildren(...state.columns.map((c) => el("option", { value: c.id, text: c.title })));
  $("card-column-input").value = column;
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
  (state.readOnly ? $("card-cancel") : $("card-title-input")).focus();
}

// Members to tick, and anyone the card names who is not one (kept unless unticked).
function fillAssignees(assigned) {
  const names = [...new Set([...members().map((m) => m.username), ...assigned])];
  $("card-assignees-list").replaceChildren(
    ...names.map((name) =>
      el(
        "label",
        { class: "assignee-option" },
        el("input", { type: "checkbox", value: name, checked: assigned.includes(name), disabled: state.readOnly, "data-testid": "assign-" + name }),
        el("span", { text: personLabel(name) + (memberNamed(name) ? "" : " (not a member)") }),
      ),
    ),
  );
  $("card-assignees-list").dataset.order = JSON.stringify(assigned);
}

// The ticked names, those already on the card first in their order.
function chosenAssignees() {
  const ticked = [...$("card-assignees-list").querySelectorAll("input:checked")].map((input) => input.value);
  const before = JSON.parse($("card-assignees-list").dataset.order || "[]");
  return [...before.filter((n) => ticked.includes(n)), ...ticked.filter((n) => !before.includes(n))];
}

// --- a link to the card -----------------------------------------------------------------------
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
  // A board with no inventory at all (no such relationship) offers no picker.
  $("card-item-field").hidden = items === null && state.inventoryProblem === "unknown_alias" && !selected;
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
  select.disabled = state.readOnly;
}

// The card's activity, read from its kept versions when the section is opened (never
// with the board): who changed what, through what, and when; an agent is marked.
async function showActivity() {
  const target = editing;
  if (!target || !target.id || !$("card-activity-box").open) return;
  $("card-activity-status").textContent = "Loading…";
  $("card-activity").replaceChildren();
  let page;
  try {
    page = await kanban.kv.getHistory(KEYS.card(target.id), { limit: ACTIVITY_LIMIT });
  } catch (err) {
    if (editing === target) $("card-activity-status").textContent = "Activity unavailable (" + (err.code || err) + ").";
    return;
  }
  if (editing !== target) return;
  const activity = cardActivity(target.id, page.entries, page.cursor === null);
  $("card-activity-status").textContent = activity.length ? "" : "Nothing kept yet.";
  $("card-activity").replaceChildren(
    ...activity.map((a) =>
      el(
        "li",
        { "data-testid": "activity-" + a.revision, class: a.agent ? "activity-agent" : null },
        el("strong", { text: a.who }),
        a.agent ? el("span", { class: "badge", text: "agent" }) : null,
        " " + a.what + (a.restoredFrom ? " (restored an earlier version)" : "") + " via " + a.via + ", ",
        el("time", { datetime: a.at, text: a.at ? new Date(a.at).toLocaleString() : "" }),
        !a.latest && a.card && !state.readOnly
          ? el("button", { type: "button", class: "button ghost", text: "Restore", "data-testid": "restore-" + a.revision, onclick: () => restoreVersion(target.id, a.card) })
          : null,
      ),
    ),
  );
}

// Brings an earlier version's fields back over the card as stored now, by the dialog's
// rule: a newer change someone else made to one of them is asked about, never overwritten.
function restoreVersion(id, version) {
  closeCardDialog();
  const card = findCard(id);
  if (!card) return toast("This card was deleted meanwhile.");
  const shown = { ...card, column: columnOf(card, state.columns) };
  const changes = changedFields(shown, version);
  if ("column" in changes) {
    if (state.columns.some((c) => c.id === changes.column)) changes.rank = rankForPlacement(columnCards(changes.column), null);
    else delete changes.column; // that column is gone: the card stays where it is
  }
  if (!Object.keys(changes).length) return toast("The card already holds that version.");
  editCard(id, card, changes);
}

function closeCardDialog() {
  editing = null;
  closeDiscussion();
  if ($("card-dialog").open) $("card-dialog").close();
  if (returnFocus && document.contains(returnFocus)) returnFocus.focus();
}

function saveCardDialog() {
  if (state.readOnly || !editing) return closeCardDialog();
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
    assignees: chosenAssignees(),
    labels: parseLabels($("card-labels-input").value),
    due: $("card-due-input").value || null,
  };
  const itemSelect = $("card-item-input");
  if (!itemSelect.disabled) fields.item = itemSelect.value || null;
  const column = $("card-column-input").value;
  const target = editing;
  closeCardDialog();
  if (target.id) {
    if (!findCard(target.id)) return toast("This card was deleted meanwhile.");
    const shown = { ...target.base, column: columnOf(target.base, state.columns) };
    const changes = changedFields(shown, column ? { ...fields, column } : fields);
    if ("column" in changes) changes.rank = rankForPlacement(columnCards(column), null);
    if (Object.keys(changes).length) editCard(target.id, target.base, changes);
  } else {
    if (!("item" in fields)) fields.item = null;
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
  $("archive-open").addEventListener("click", () => {
    $("archive-dialog").showModal();
    renderArchive();
  });
  $("archive-close").addEventListener("click", () => $("archive-dialog").close());
  $("card-save").addEventListener("click", saveCardDialog);
  $("card-cancel").addEventListener("click", closeCardDialog);
  $("card-delete").addEventListener("click", () => {
    const target = editing;
    closeCardDialog();
    if (target && target.id) archiveCard(target.id);
  });
  $("card-dialog").addEventListener("cancel", () => {
    editing = null;
    closeDiscussion();
  });
  $("card-copy-link").addEventListener("click", copyLink);
  $("card-activity-box").addEventListener("toggle", showActivity);
  // Sandboxed pages may not submit forms, so Enter in a one-line field saves by hand.
  $("card-dialog").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && event.target.tagName === "INPUT") {
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

