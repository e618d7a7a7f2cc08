// One card's face: a node built from the card and what the page holds about it (cover,
// attachment count, stock line). board-render.js keeps the node while none of that
// changed, so building it can stay plain.
import { button, el } from "../../static/bridge/plugin-kit.js";
import { checklistProgress, dueState } from "./board-core.js";
import { hue, icon, initials, personLabel, state, today } from "./board-state.js";
import { labelColour } from "./board-labels.js";
import { plainExcerpt } from "./board-markdown.js";
import { agentText } from "./board-history.js";
import { dayText, fullText } from "./board-dates.js";
import { attachmentCount, coverOf, uploadsOut, wireFileDrop } from "./board-attachments.js";
import { archiveCard, useOne } from "./board-actions.js";
import { openCardDialog } from "./board-dialogs.js";
import { onCardKey, wireDrag } from "./board-input.js";

// What the face shows besides the card itself; a node is drawn again when this changes.
export function cardExtras(id) {
  const cover = coverOf(id);
  return (cover ? cover.url : "") + "|" + attachmentCount(id) + "|" + uploadsOut(id);
}

export function renderCard(card) {
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
  if (card.description) {
    // A short plain excerpt, never the whole text: cards stay even and a long description
    // costs the face nothing. The dialog shows it whole, rendered.
    node.append(
      el(
        "p",
        { class: "card-description", "data-testid": "description-" + card.id, title: "This card has a description" },
        icon("text"),
        plainExcerpt(card.description),
      ),
    );
  }
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
    meta.append(
      el("span", { class: "start", "data-testid": "start-" + card.id, title: "Starts " + fullText(card.start), text: "Starts " + dayText(card.start) }),
    );
  }
  if (card.due) {
    meta.append(
      el("span", {
        class: "due due-" + due,
        "data-testid": "due-" + card.id,
        title: (due === "overdue" ? "Overdue: was due " : "Due ") + fullText(card.due),
        text: (due === "overdue" ? "Overdue · " : "Due ") + dayText(card.due),
      }),
    );
  }
  const { done, total } = checklistProgress(card);
  if (total) {
    meta.append(
      el(
        "span",
        {
          class: "progress" + (done === total ? " progress-done" : ""),
          "data-testid": "checklist-" + card.id,
          title: "Checklist",
          "aria-label": "Checklist " + done + " of " + total + " done",
        },
        icon("check"),
        done + "/" + total,
      ),
    );
  }
  if (card.commentCount) {
    meta.append(
      el(
        "span",
        {
          class: "comment-count",
          "data-testid": "comments-" + card.id,
          title: "Comments",
          "aria-label": card.commentCount + (card.commentCount === 1 ? " comment" : " comments"),
        },
        icon("comment"),
        String(card.commentCount),
      ),
    );
  }
  if (card.agent) {
    // An agent made or last changed this card: said in words for a screen reader and on
    // hover, a person's next change takes it away.
    const who = "Changed by " + agentText(card.agent, personLabel);
    meta.append(el("span", { class: "agent-mark", role: "img", "data-testid": "agent-" + card.id, title: who, "aria-label": who, text: "bot" }));
  }
  const files = attachmentCount(card.id);
  if (files || uploadsOut(card.id)) {
    meta.append(
      el(
        "span",
        {
          class: "attachment-count" + (uploadsOut(card.id) ? " uploading" : ""),
          "data-testid": "attachments-" + card.id,
          title: uploadsOut(card.id) ? "Uploading…" : "Attachments",
          "aria-label": files + (files === 1 ? " attachment" : " attachments"),
        },
        icon("clip"),
        String(files),
      ),
    );
  }
  if (meta.childNodes.length) node.append(meta);
  // A card moved in with an item from a board that had an inventory: no stock line where
  // this board has none (no relationship at all), rather than "unavailable" on every card.
  if (card.item && state.inventoryProblem !== "unknown_alias") node.append(renderStock(card));
  if (!state.readOnly) {
    node.append(
      el(
        "div",
        { class: "card-actions editing-only" },
        button(
          "edit-" + card.id,
          {
            class: "icon-button",
            "aria-label": "Edit " + card.title,
            onclick: () => openCardDialog({ id: card.id }),
          },
          icon("edit"),
        ),
        button(
          "archive-" + card.id,
          {
            class: "icon-button",
            "aria-label": "Archive " + card.title,
            onclick: () => archiveCard(card.id),
          },
          icon("trash"),
        ),
      ),
    );
  }
  node.addEventListener("keydown", (event) => onCardKey(event, card));
  // One click or tap opens the card, as on every board people know; the face's own
  // buttons and links keep theirs. A drag never ends in a click.
  node.addEventListener("click", (event) => {
    if (/** @type {Element} */ (event.target).closest("button, a, input, select, textarea")) return;
    openCardDialog({ id: card.id });
  });
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
