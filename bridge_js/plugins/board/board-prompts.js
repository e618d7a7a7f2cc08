// The two-answer prompts: a confirmation and the conflict of two people's edits of a card.
// Writes ask them, and so do the dialogs, which write.
import { el } from "../../static/bridge/plugin-kit.js";
import { FIELD_NAMES } from "./board-changes.js";
import { $, personLabel, state } from "./board-state.js";
import { valueText } from "./board-history.js";
import { dayText } from "./board-dates.js";

// A modal with two answers: true for `yes`, false for `no` or Escape.
function ask(dialog, yes, no, focus) {
  return new Promise((resolve) => {
    const done = (answer) => {
      yes.removeEventListener("click", onYes);
      no.removeEventListener("click", onNo);
      dialog.removeEventListener("close", onNo);
      if (dialog.open) dialog.close();
      resolve(answer);
    };
    const onYes = () => done(true);
    const onNo = () => done(false);
    yes.addEventListener("click", onYes);
    no.addEventListener("click", onNo);
    dialog.addEventListener("close", onNo);
    dialog.showModal();
    focus.focus();
  });
}

export function confirmDialog(text) {
  $("confirm-text").textContent = text;
  return ask($("confirm-dialog"), $("confirm-ok"), $("confirm-cancel"), $("confirm-cancel"));
}

// Resolves true to keep this user's values of the conflicting fields, false for theirs.
export function conflictDialog(conflict, changes) {
  // Each value as the restore preview writes it (board-history.js): one wording for both.
  const shown = (field, value) => valueText(field, value, { columns: state.columns, person: personLabel, day: (d) => dayText(d) });
  $("conflict-text").textContent = conflict.message + " Keep your version of these fields, or take theirs?";
  $("conflict-fields").replaceChildren(
    ...conflict.fields.flatMap((field) => [
      el("dt", { text: FIELD_NAMES[field] }),
      el("dd", { text: "Theirs: " + shown(field, conflict.current[field]) }),
      el("dd", { text: "Yours: " + shown(field, changes[field]) }),
    ]),
  );
  return ask($("conflict-dialog"), $("conflict-mine"), $("conflict-theirs"), $("conflict-mine"));
}
