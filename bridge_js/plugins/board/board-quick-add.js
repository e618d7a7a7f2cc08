// "+ Add card" as a title field in place, as Trello and Planka have it: Enter adds the card
// and keeps the field open for the next one, Shift+Enter is a new line, Escape closes. The
// whole card is edited in its dialog afterwards; most cards begin as a title.
import { button, el } from "../../static/bridge/plugin-kit.js";
import { MAX_TEXT } from "./board-core.js";
import { createCard } from "./board-actions.js";

// column id -> opens its field: the `n` shortcut (board-input.js) starts adding from the keyboard.
const openers = new Map();
export function startAdding(columnId) {
  const show = openers.get(columnId);
  if (show) show();
  return Boolean(show);
}

// One column's footer. It is kept across drawings (board-render.js), so a title being
// typed survives any change that arrives meanwhile.
export function quickAdd(columnId, titleOf) {
  const footer = el("div", { class: "quick-add editing-only" });
  const open = button("add-" + columnId, {
    class: "add-card",
    "data-testid": "add-card-" + columnId,
    text: "+ Add card",
    onclick: () => show(),
  });
  const field = el("textarea", {
    class: "quick-add-title",
    rows: "2",
    maxlength: String(MAX_TEXT),
    placeholder: "Enter a title for this card…",
    "data-testid": "quick-add-" + columnId,
    "data-focus-key": "quick-add-" + columnId,
  });
  const add = button("quick-add-save-" + columnId, {
    class: "button primary small",
    "data-testid": "quick-add-save-" + columnId,
    text: "Add card",
    onclick: () => submit(),
  });
  const close = button("quick-add-close-" + columnId, { class: "icon-button", "aria-label": "Stop adding cards", text: "×" });
  const form = el("div", { class: "quick-add-form", hidden: true }, field, el("div", { class: "quick-add-actions" }, add, close));

  function show() {
    field.setAttribute("aria-label", "Title of a new card in " + titleOf());
    open.hidden = true;
    form.hidden = false;
    field.focus();
  }
  function hide({ refocus = true } = {}) {
    field.value = "";
    form.hidden = true;
    open.hidden = false;
    if (refocus) open.focus();
  }
  function submit() {
    const title = field.value.replace(/\s+/g, " ").trim();
    if (!title) return field.focus();
    field.value = "";
    field.focus();
    createCard({ column: columnId, title }, { focus: false });
  }

  field.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      submit();
    } else if (event.key === "Escape") {
      event.preventDefault();
      hide();
    }
  });
  close.addEventListener("click", () => hide());
  // Leaving an empty field closes it; one with a title in it stays, nothing typed is lost.
  field.addEventListener("blur", () =>
    setTimeout(() => {
      if (!field.value.trim() && !form.contains(document.activeElement)) hide({ refocus: false });
    }, 150),
  );
  footer.append(open, form);
  openers.set(columnId, show);
  return footer;
}
