// The card dialog's Activity: read from the card's kept versions when the section opens
// (never with the board), one entry per field a version changed, an agent's marked. Restore
// on an entry previews what bringing that version back would change, field by field with
// that entry's field ticked (all of them for a creation), and restores the ticked ones through the dialog's
// compare-and-set (editCard: a field someone changed meanwhile is asked about, never
// overwritten).
import { el, toast } from "../../static/bridge/plugin-kit.js";
import { columnOf, KEYS, rankForPlacement } from "./board-core.js";
import { cardHistory, restoreChoices } from "./board-history.js";
import { dayText, fullText, momentText } from "./board-dates.js";
import { $, columnCards, findCard, kanban, personLabel, state } from "./board-state.js";
import { editCard } from "./board-actions.js";
import { closePopover, openPopover } from "./board-popover.js";
import { avatar } from "./board-pickers.js";

const ACTIVITY_LIMIT = 20;

const context = () => ({ columns: state.columns, person: personLabel, day: (d) => dayText(d) });

const spaced = (...nodes) => nodes.filter(Boolean).flatMap((node, i) => (i ? [" ", node] : [node]));

// `isCurrent()` says whether the dialog still shows this card; `restored()` closes it.
// A page of versions at a time, newest first; "Show older" reads the next page and draws
// the whole list again (the oldest entry of a page needs the version before it).
export async function showActivity(id, { isCurrent, restored }) {
  $("card-activity-status").textContent = "Loading…";
  $("card-activity").replaceChildren();
  const entries = [];
  let cursor = null;
  const more = async (button) => {
    if (button) button.disabled = true;
    let page;
    try {
      page = await kanban.kv.getHistory(KEYS.card(id), { limit: ACTIVITY_LIMIT, ...(cursor && { before: cursor }) });
    } catch (err) {
      if (isCurrent()) $("card-activity-status").textContent = "Activity unavailable (" + (err.code || err) + ").";
      if (button) button.disabled = false;
      return;
    }
    if (!isCurrent()) return;
    entries.push(...page.entries);
    cursor = page.cursor;
    draw(id, entries, cursor, { restored, more });
  };
  await more(null);
}

function draw(id, entries, cursor, { restored, more }) {
  const history = cardHistory(id, entries, cursor === null, context());
  $("card-activity-status").textContent = history.length ? "" : "Nothing kept yet.";
  const rows = [];
  for (const version of history) {
    version.changes.forEach((change, index) => {
      const restorable = !version.latest && version.card && !state.readOnly && change.field !== "comments";
      rows.push(
        el(
          "li",
          {
            class: "activity-entry" + (version.agent ? " activity-agent" : ""),
            "data-testid": "activity-" + version.revision + (index ? "-" + index : ""),
            "data-field": change.field,
          },
          avatar(version.who),
          // Spaces between the parts: the row reads as a sentence to a screen reader too.
          ...spaced(
            // "triage-bot (Alice Martin's agent)" for an agent's, the person otherwise.
            el("strong", { text: version.by }),
            version.agent ? el("span", { class: "badge", "aria-hidden": "true", text: "bot" }) : null,
            el("span", { class: "what" }, ...change.parts.map((p) => (typeof p === "string" ? p : el("em", { text: p.em })))),
            version.restoredFrom ? el("span", { class: "via", text: "(restored an earlier version)" }) : null,
            el("span", { class: "via", text: "via " + version.via + "," }),
            el("time", { datetime: version.at, title: fullText(version.at), text: momentText(version.at) }),
          ),
          restorable
            ? el("button", {
                type: "button",
                class: "button ghost",
                text: "Restore",
                "aria-haspopup": "dialog",
                "data-testid": "restore-" + version.revision + (index ? "-" + index : ""),
                onclick: (event) => previewRestore(event.currentTarget, id, version, change.field, restored),
              })
            : null,
        ),
      );
    });
  }
  if (cursor !== null) {
    const button = el("button", { type: "button", class: "button ghost", text: "Show older", "data-testid": "activity-older" });
    button.addEventListener("click", () => more(button));
    rows.push(el("li", { class: "activity-more" }, button));
  }
  $("card-activity").replaceChildren(...rows);
}

// The fields this version would bring back over the card as it is now; the entry's own is
// ticked, the others offered. Nothing is written until Restore is pressed.
function previewRestore(anchor, id, version, field, restored) {
  const card = findCard(id);
  if (!card) return toast("This card was deleted meanwhile.");
  const now = { ...card, column: columnOf(card, state.columns) };
  const choices = restoreChoices(now, version.card, context());
  // An entry of one field ticks that field; a version's creation (or one this page cannot
  // tell the changes of) ticks them all.
  const whole = ["created", "unknown", "none"].includes(field);
  const ticked = (name) => whole || name === field || (field === "rank" && name === "column");
  openPopover(anchor, "Restore this version?", (body) => {
    if (!choices.length) {
      body.append(el("p", { class: "popover-note", text: "The card already holds what this version had." }));
      return;
    }
    body.append(el("p", { class: "popover-note", text: "Tick the fields to bring back as " + version.by + " left them " + momentText(version.at) + "." }));
    const list = el("ul", { class: "restore-choices", "data-testid": "restore-choices" });
    for (const choice of choices) {
      list.append(
        el(
          "li",
          {},
          el(
            "label",
            {},
            el("input", { type: "checkbox", value: choice.field, checked: ticked(choice.field), "data-testid": "restore-field-" + choice.field }),
            el("span", { class: "restore-field", text: choice.name }),
            el("span", { class: "restore-values" }, el("del", { text: choice.now }), " → ", el("ins", { text: choice.then })),
          ),
        ),
      );
    }
    const apply = () => {
      const picked = [.../** @type {NodeListOf<HTMLInputElement>} */ (list.querySelectorAll("input:checked"))].map((input) => input.value);
      if (!picked.length) return toast("Tick a field to restore, or close.");
      const changes = Object.fromEntries(choices.filter((c) => picked.includes(c.field)).map((c) => [c.field, c.value]));
      closePopover({ restore: false });
      restoreFields(id, changes);
      restored();
    };
    body.append(
      list,
      el(
        "div",
        { class: "popover-actions" },
        el("button", {
          type: "button",
          class: "button primary",
          text: "Restore " + (choices.length > 1 ? "ticked fields" : "it"),
          "data-testid": "restore-apply",
          onclick: apply,
        }),
        el("button", { type: "button", class: "button ghost", text: "Cancel", onclick: () => closePopover() }),
      ),
    );
  });
}

// Written over the card as stored now by the dialog's rule (a conflict is asked about).
function restoreFields(id, changes) {
  const card = findCard(id);
  if (!card) return toast("This card was deleted meanwhile.");
  if ("column" in changes) changes.rank = rankForPlacement(columnCards(changes.column), null);
  editCard(id, card, changes);
}
