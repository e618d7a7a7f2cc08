// Drawing the board from the state: columns, cards, stock lines and the toolbar's lists.
import { button, el, redraw } from "../../static/bridge/plugin-kit.js";
import {
  checklistProgress,
  distinct,
  dueState,
  isFiltering,
  matchesFilter,
  ME,
  wipState,
} from "./board-core.js";
import {
  $,
  boardEl,
  columnCards,
  hue,
  icon,
  initials,
  me,
  personLabel,
  state,
  today,
} from "./board-state.js";
import { labelColour } from "./board-labels.js";
import { attachmentCount, coverOf, uploadsOut, wireFileDrop } from "./board-attachments.js";
import { setView } from "./board-sync.js";
import { archiveCard, moveColumn, useOne } from "./board-actions.js";
import { openCardDialog, openColumnDialog, renderArchive } from "./board-dialogs.js";
import { renderChecklist } from "./board-discussion.js";
import { columnGrip, onCardKey, wireDrag, wireDropTarget } from "./board-input.js";

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

export function renderBoard() {
  if (!state.loaded) return;
  renderArchive();
  renderChecklist();
  if (state.dragging) {
    state.renderDeferred = true;
    return;
  }
  state.renders++;
  const scrollLeft = boardEl.scrollLeft;
  const listScroll = new Map([...boardEl.querySelectorAll("[data-list-for]")].map((n) => [n.dataset.listFor, n.scrollTop]));

  document.body.classList.toggle("read-only", state.readOnly);
  fillSelect($("filter-label"), "All labels", distinct(state.cards.flatMap((c) => c.labels)), state.view.filter.label);
  const people = distinct(state.cards.flatMap((c) => c.assignees));
  const label = (v) => (v === ME ? "Assigned to me" : personLabel(v));
  fillSelect($("filter-assignee"), "Everyone", [ME, ...people], state.view.filter.assignee, label);
  $("filter-clear").hidden = !isFiltering(state.view.filter);
  $("toolbar-toggle").textContent = isFiltering(state.view.filter) ? "Filters (on)" : "Filters";

  redraw(boardEl, () => {
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
  });
}

function renderColumn(column) {
  const all = columnCards(column.id);
  const day = today();
  const shown = all.filter((c) => matchesFilter(c, state.view.filter, day, me()));
  const wip = wipState(column, all.length);
  const collapsed = state.view.collapsed.includes(column.id);
  const filtering = isFiltering(state.view.filter);
  const countText = (filtering ? shown.length + " of " : "") + all.length + (wip.limit ? " / " + wip.limit : "");

  const header = el(
    "header",
    { class: "column-header" },
    button("collapse-" + column.id, {
      class: "icon-button collapse",
      "aria-expanded": String(!collapsed),
      "aria-label": (collapsed ? "Expand " : "Collapse ") + column.title,
      text: collapsed ? "▸" : "▾",
      onclick: () =>
        setView(
          { collapsed: collapsed ? state.view.collapsed.filter((c) => c !== column.id) : [...state.view.collapsed, column.id] },
          { immediate: true },
        ),
    }),
    state.readOnly ? null : columnGrip(column),
    el("h2", { class: "column-title", id: "title-" + column.id, text: column.title }),
    el("span", {
      class: "count" + (wip.over ? " count-over" : wip.full ? " count-full" : ""),
      "aria-label": all.length + " cards" + (wip.limit ? ", limit " + wip.limit : ""),
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
      button("add-" + column.id, {
        class: "add-card editing-only",
        "data-testid": "add-card-" + column.id,
        text: "+ Add card",
        onclick: () => openCardDialog({ column: column.id }),
      }),
    );
  }
  return section;
}

function renderCard(card) {
  const due = dueState(card.due, today());
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
  const cover = coverOf(card.id);
  if (cover) node.append(el("img", { class: "card-cover", "data-testid": "cover-" + card.id, src: cover.url, alt: "", title: cover.name }));
  node.append(el("h3", { class: "card-title", "data-testid": "card-title", text: card.title }));
  if (card.description) node.append(el("p", { class: "card-description", text: card.description }));
  if (card.labels.length) {
    const chips = el("ul", { class: "labels", "aria-label": "Labels" });
    for (const label of card.labels) {
      chips.append(labelChip(label));
    }
    node.append(chips);
  }
  const meta = el("div", { class: "card-meta" });
  if (card.assignees.length) meta.append(renderAssignees(card));
  if (card.start) {
    meta.append(el("span", { class: "start", "data-testid": "start-" + card.id, title: "Start date", text: "Starts " + card.start }));
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
  const { done, total } = checklistProgress(card);
  if (total) {
    meta.append(
      el("span", {
        class: "progress" + (done === total ? " progress-done" : ""),
        "data-testid": "checklist-" + card.id,
        title: "Checklist",
        "aria-label": "Checklist " + done + " of " + total + " done",
      }, icon("check"), done + "/" + total),
    );
  }
  if (card.commentCount) {
    meta.append(
      el("span", {
        class: "comment-count",
        "data-testid": "comments-" + card.id,
        title: "Comments",
        "aria-label": card.commentCount + (card.commentCount === 1 ? " comment" : " comments"),
      }, icon("comment"), String(card.commentCount)),
    );
  }
  const files = attachmentCount(card.id);
  if (files || uploadsOut(card.id)) {
    meta.append(
      el("span", {
        class: "attachment-count" + (uploadsOut(card.id) ? " uploading" : ""),
        "data-testid": "attachments-" + card.id,
        title: uploadsOut(card.id) ? "Uploading…" : "Attachments",
        "aria-label": files + (files === 1 ? " attachment" : " attachments"),
      }, icon("clip"), String(files)),
    );
  }
  if (meta.childNodes.length) node.append(meta);
  if (card.item) node.append(renderStock(card));
  if (!state.readOnly) {
    node.append(
      el(
        "div",
        { class: "card-actions editing-only" },
        button("edit-" + card.id, {
          class: "icon-button",
          "aria-label": "Edit " + card.title,
          onclick: () => openCardDialog({ id: card.id }),
        }, icon("edit")),
        button("archive-" + card.id, {
          class: "icon-button",
          "aria-label": "Archive " + card.title,
          onclick: () => archiveCard(card.id),
        }, icon("trash")),
      ),
    );
  }
  node.addEventListener("keydown", (event) => onCardKey(event, card));
  node.addEventListener("dblclick", () => openCardDialog({ id: card.id }));
  wireDrag(node, card);
  wireFileDrop(node, card.id);
  return node;
}

// In the board's colour for it (board:labels), else in the one its name hashes to.
export function labelChip(label) {
  const colour = labelColour(state.labels, label);
  const chip = el("li", { class: "label" + (colour ? " label-" + colour : ""), "data-color": colour || "", text: label });
  if (!colour) chip.style.setProperty("--hue", String(hue(label)));
  return chip;
}

// One avatar a person; the name beside it when there is only one.
function renderAssignees(card) {
  const names = card.assignees.map(personLabel);
  const box = el("span", { class: "assignee", title: "Assigned to " + names.join(", "), "data-testid": "assignee-" + card.id });
  card.assignees.forEach((username, i) => {
    const avatar = el("span", { class: "avatar", "aria-hidden": "true", "data-testid": "avatar-" + username, text: initials(names[i]) });
    avatar.style.setProperty("--hue", String(hue(username)));
    box.append(avatar);
  });
  box.append(el("span", { class: names.length > 1 ? "sr-only" : null, text: names.join(", ") }));
  return box;
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
      button("use-" + card.id, {
        class: "button small",
        "data-testid": "use-one-" + card.id,
        "aria-label": "Use one " + stock.name,
        disabled: stock.count <= 0,
        text: "Use one",
        onclick: () => useOne(card),
      }),
    );
  }
  return box;
}

