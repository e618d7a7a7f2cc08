// The card dialog's pickers: members (avatars, ticked), the board's label set (chosen,
// created, renamed, recoloured and deleted) and the dates (start and due), each in the dialog's
// popover, and the badges that show what the card has. They change the dialog's draft
// ({assignees, labels, start, due}), which its Save writes; only the label set itself is
// written at once, for it is the board's, not the card's.
import { el, reportError, toast } from "../../static/bridge/plugin-kit.js";
import { KEYS } from "./board-core.js";
import {
  addLabel,
  editLabel,
  LABEL_COLOURS,
  labelColour,
  labelName,
  LabelProblem,
  labelSet,
  removeLabel,
  renamedLabels,
  withoutLabel,
} from "./board-labels.js";
import { dayText, dueState, fullText } from "./board-dates.js";
import { $, hue, initials, kanban, memberNamed, members, personLabel, state, write } from "./board-state.js";
import { patchCard } from "./board-changes.js";
import { update } from "./board-actions.js";
import { closePopover, openPopover } from "./board-popover.js";

const fold = (s) => String(s).toLocaleLowerCase();

// One face per person, the host pages' rule (kanban/web/avatars.py mirrors hue and initials).
export function avatar(username, size = "") {
  const node = el("span", { class: "avatar" + (size ? " avatar-" + size : ""), "aria-hidden": "true", text: initials(personLabel(username)) });
  node.style.setProperty("--hue", String(hue(username)));
  return node;
}

export function labelChip(name, tag = "li") {
  const colour = labelColour(state.labels, name);
  const chip = el(tag, { class: "label" + (colour ? " label-" + colour : ""), "data-color": colour || "", text: name });
  if (!colour) chip.style.setProperty("--hue", String(hue(name)));
  return chip;
}

// --- badges ---------------------------------------------------------------------------------

// What the draft holds, under Members, Labels and Dates; a writer's "+" opens the picker.
export function renderBadges(draft, { readOnly, open }) {
  const plus = (kind, label) =>
    readOnly
      ? null
      : el("button", { type: "button", class: "badge-add", "aria-label": label, title: label, text: "+", onclick: (e) => open(kind, e.currentTarget) });
  $("card-members").replaceChildren(
    ...draft.assignees.map((name) => {
      const face = avatar(name);
      face.removeAttribute("aria-hidden");
      face.setAttribute("role", "img");
      face.setAttribute("aria-label", personLabel(name));
      face.title = personLabel(name) + (memberNamed(name) ? "" : " (not a member)");
      face.dataset.testid = "member-" + name;
      return face;
    }),
    plus("members", "Add or remove members"),
  );
  $("card-members-box").hidden = readOnly && !draft.assignees.length;
  $("card-labels").replaceChildren(...draft.labels.map((name) => labelChip(name)), plus("labels", "Add or remove labels"));
  $("card-labels-box").hidden = readOnly && !draft.labels.length;
  const dates = [];
  if (draft.start) dates.push(dateBadge("Start", draft.start, ""));
  if (draft.due) dates.push(dateBadge("Due", draft.due, dueState(draft.due)));
  $("card-dates").replaceChildren(...dates, draft.start || draft.due ? null : plus("dates", "Add dates"));
  if ((draft.start || draft.due) && !readOnly) {
    for (const badge of dates) {
      badge.tabIndex = 0;
      badge.setAttribute("role", "button");
      badge.addEventListener("click", (e) => open("dates", e.currentTarget));
      badge.addEventListener("keydown", (e) => {
        if (e.key === "Enter" || e.key === " ") {
          e.preventDefault();
          open("dates", e.currentTarget);
        }
      });
    }
  }
  $("card-dates-box").hidden = !draft.start && !draft.due && readOnly;
}

function dateBadge(kind, day, due) {
  return el(
    "span",
    { class: "date-badge" + (due ? " due-" + due : ""), "data-testid": "date-" + kind.toLowerCase(), title: kind + ": " + fullText(day) },
    el("span", { class: "date-kind", text: kind }),
    el("time", { datetime: day, text: dayText(day) }),
  );
}

// --- members ------------------------------------------------------------------------------

// The board's members and anyone the card names who is not one (kept unless unticked).
export function openMembers(anchor, draft, changed) {
  openPopover(anchor, "Members", (body) => {
    const filter = el("input", { type: "search", placeholder: "Search members", "aria-label": "Search members", autocomplete: "off" });
    const list = el("ul", { class: "pick-list", "data-testid": "members-picker" });
    const names = [...new Set([...members().map((m) => m.username), ...draft.assignees])];
    const rows = names.map((name) => {
      const input = el("input", { type: "checkbox", value: name, checked: draft.assignees.includes(name), "data-testid": "assign-" + name });
      input.addEventListener("change", () => {
        draft.assignees = input.checked ? [...draft.assignees.filter((n) => n !== name), name] : draft.assignees.filter((n) => n !== name);
        changed();
      });
      const label = personLabel(name) + (memberNamed(name) ? "" : " (not a member)");
      return el(
        "li",
        { class: "pick-row", "data-name": fold(label + " " + name) },
        el(
          "label",
          { class: "pick" },
          input,
          avatar(name),
          el("span", { class: "pick-name", text: label }),
          el("span", { class: "pick-check", "aria-hidden": "true", text: "✓" }),
        ),
      );
    });
    filter.addEventListener("input", () => {
      for (const row of rows) row.hidden = !String(row.dataset.name).includes(fold(filter.value.trim()));
    });
    list.append(...rows);
    body.append(names.length > 6 ? filter : "", list);
    if (!names.length) body.append(el("p", { class: "popover-note", text: "This board has no members yet." }));
  });
}

// --- dates --------------------------------------------------------------------------------

export function openDates(anchor, draft, changed) {
  openPopover(anchor, "Dates", (body) => {
    const field = (name, label, value) => {
      const input = el("input", { type: "date", value: value || "", "data-testid": "date-input-" + name });
      input.addEventListener("change", () => {
        draft[name] = input.value || null;
        changed();
      });
      const clear = el("button", {
        type: "button",
        class: "button ghost",
        text: "Remove",
        "aria-label": "Remove the " + label.toLowerCase(),
        onclick: () => {
          input.value = "";
          draft[name] = null;
          changed();
        },
      });
      return el("div", { class: "field" }, el("label", { text: label }, input), el("div", { class: "popover-actions" }, clear));
    };
    body.append(field("start", "Start date", draft.start), field("due", "Due date", draft.due));
    body.append(
      el("div", { class: "popover-actions" }, el("button", { type: "button", class: "button primary", text: "Done", onclick: () => closePopover() })),
    );
  });
}

// --- labels -------------------------------------------------------------------------------

async function readSet() {
  try {
    return await kanban.kv.getValue(KEYS.labels);
  } catch (err) {
    reportError(err, "Reading the labels");
    return undefined;
  }
}

// The set with ticks, an edit button per label a writer may change, and a way to add one.
export async function openLabels(anchor, draft, changed) {
  const stored = await readSet();
  const set = labelSet(stored);
  openPopover(anchor, "Labels", (body) => {
    const list = el("ul", { class: "pick-list", "data-testid": "labels-picker" });
    const known = new Set(set.map((l) => fold(l.name)));
    // Labels the card carries that the set does not name (older boards' free text) stay pickable.
    const entries = [...set, ...draft.labels.filter((l) => !known.has(fold(l))).map((name) => ({ name, color: null }))];
    for (const entry of entries) {
      const checked = draft.labels.some((l) => fold(l) === fold(entry.name));
      const input = el("input", { type: "checkbox", checked, "data-testid": "pick-label-" + entry.name });
      input.addEventListener("change", () => {
        draft.labels = input.checked
          ? [...draft.labels.filter((l) => fold(l) !== fold(entry.name)), entry.name]
          : draft.labels.filter((l) => fold(l) !== fold(entry.name));
        changed();
      });
      const chip = labelChip(entry.name, "span");
      const row = el(
        "li",
        { class: "pick-row" },
        el("label", { class: "pick" }, input, chip, el("span", { class: "pick-check", "aria-hidden": "true", text: "✓" })),
      );
      if (entry.color) {
        row.append(
          el("button", {
            type: "button",
            class: "button ghost icon-button",
            text: "✎",
            title: "Change " + entry.name,
            "aria-label": "Change the label " + entry.name,
            "data-testid": "edit-label-" + entry.name,
            onclick: () => labelForm(anchor, draft, changed, entry),
          }),
        );
      }
      list.append(row);
    }
    if (!entries.length) body.append(el("p", { class: "popover-note", text: "This board has no labels yet." }));
    body.append(
      list,
      el("button", {
        type: "button",
        class: "button ghost",
        text: "Create a new label",
        "data-testid": "label-create-open",
        onclick: () => labelForm(anchor, draft, changed, null),
      }),
    );
  });
}

// Creates a label (`entry` null) or renames and recolours one; the set is written by
// compare-and-set, and a rename carries over to the cards that carry the old name.
function labelForm(anchor, draft, changed, entry) {
  openPopover(anchor, entry ? "Change label" : "Create label", (body) => {
    const name = el("input", { type: "text", maxlength: "40", value: entry ? entry.name : "", "data-testid": "label-name", autocomplete: "off" });
    const chosen = entry ? entry.color : LABEL_COLOURS[0];
    const palette = el("fieldset", { class: "palette" }, el("legend", { text: "Colour" }));
    for (const colour of LABEL_COLOURS) {
      palette.append(
        el(
          "label",
          { class: "swatch label-" + colour, title: colour },
          el("input", {
            type: "radio",
            name: "label-colour",
            value: colour,
            checked: colour === chosen,
            "aria-label": colour,
            "data-testid": "swatch-" + colour,
          }),
        ),
      );
    }
    const error = el("p", { class: "field-error", role: "alert", hidden: true });
    const save = async () => {
      let text;
      try {
        text = labelName(name.value);
      } catch (err) {
        error.textContent = err.message;
        error.hidden = false;
        return name.focus();
      }
      const colour = /** @type {HTMLInputElement} */ (palette.querySelector("input:checked")).value;
      // The set's own refusals (a name taken meanwhile) show here; anything else as a toast.
      /** @type {LabelProblem | null} */
      let problem = null;
      const updater = entry ? editLabel(entry.name, { name: text, color: colour }) : addLabel(text, colour);
      const ok = await write(entry ? "Changing the label" : "Creating the label", async () => {
        try {
          await update(KEYS.labels, updater);
        } catch (err) {
          if (!(err instanceof LabelProblem)) throw err;
          problem = err;
        }
      });
      if (problem || !ok) {
        // Set inside the write's callback, which tsc does not follow.
        const refused = /** @type {LabelProblem | null} */ (problem);
        error.textContent = refused ? refused.message : "The label was not saved.";
        error.hidden = false;
        return;
      }
      state.labels = new Map(state.labels).set(fold(text), colour);
      if (entry && fold(entry.name) !== fold(text)) state.labels.delete(fold(entry.name));
      if (entry) {
        const renamed = renamedLabels(draft.labels, entry.name, text);
        if (renamed) draft.labels = renamed;
        if (entry.name !== text) renameOnCards(entry.name, text);
      } else {
        draft.labels = [...draft.labels.filter((l) => fold(l) !== fold(text)), text];
      }
      changed();
      openLabels(anchor, draft, changed);
    };
    name.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        event.stopPropagation();
        save();
      }
    });
    body.append(
      el("label", { class: "field", text: "Name" }, name),
      palette,
      error,
      el(
        "div",
        { class: "popover-actions" },
        el("button", { type: "button", class: "button primary", text: entry ? "Save" : "Create", "data-testid": "label-save", onclick: save }),
        el("button", { type: "button", class: "button ghost", text: "Back", onclick: () => openLabels(anchor, draft, changed) }),
        entry
          ? el("button", {
              type: "button",
              class: "button danger",
              text: "Delete",
              "data-testid": "label-delete",
              onclick: (e) => deleteLabel(anchor, draft, changed, entry, e.currentTarget.parentElement),
            })
          : null,
      ),
    );
  });
}

// Each card that carries the label gets `fix(labels)` (its labels renamed or without it),
// a patch of its labels alone over the card as stored now.
function relabelCards(name, fix, label) {
  const cards = state.cards.filter((card) => fix(card.labels));
  if (!cards.length) return;
  write(label + " on " + cards.length + " card" + (cards.length === 1 ? "" : "s"), async () => {
    for (const card of cards) {
      await update(KEYS.card(card.id), (current) => {
        const labels = Array.isArray(current && current.labels) ? current.labels.filter((l) => typeof l === "string") : [];
        const next = fix(labels);
        return next ? patchCard({ labels: next })(current) : current;
      });
    }
  }).catch(() => toast("Some cards still carry “" + name + "”."));
}

const renameOnCards = (from, to) => relabelCards(from, (labels) => renamedLabels(labels, from, to), "Renaming the label");

// Asks in the popover, then takes the label out of the set and off every card.
function deleteLabel(anchor, draft, changed, entry, actions) {
  const count = state.cards.filter((card) => withoutLabel(card.labels, entry.name)).length;
  const yes = el("button", {
    type: "button",
    class: "button danger",
    text: "Delete",
    "data-testid": "label-delete-confirm",
    onclick: async () => {
      const ok = await write("Deleting the label", () => update(KEYS.labels, removeLabel(entry.name)));
      if (!ok) return;
      state.labels = new Map(state.labels);
      state.labels.delete(fold(entry.name));
      draft.labels = withoutLabel(draft.labels, entry.name) || draft.labels;
      relabelCards(entry.name, (labels) => withoutLabel(labels, entry.name), "Removing the label");
      changed();
      openLabels(anchor, draft, changed);
    },
  });
  const no = el("button", { type: "button", class: "button ghost", text: "Keep it", onclick: () => labelForm(anchor, draft, changed, entry) });
  actions.replaceChildren(
    el("p", {
      class: "popover-note",
      text:
        "Delete “" +
        entry.name +
        "” from the board" +
        (count ? " and from " + (count === 1 ? "the card that carries it" : "the " + count + " cards that carry it") : "") +
        "? There is no undo.",
    }),
    yes,
    no,
  );
  no.focus();
}
