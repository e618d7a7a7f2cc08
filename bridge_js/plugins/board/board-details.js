// The card dialog's read-only part: what a Trello import kept that the Board does not edit
// (its start date and custom field values; board-labels.js reads them off the card).
import { el } from "../../static/bridge/plugin-kit.js";
import { $ } from "./board-state.js";

export function showDetails(card) {
  const start = card ? card.start : null;
  const fields = card ? card.customFields : [];
  $("card-details").hidden = !start && !fields.length;
  $("card-start").hidden = !start;
  $("card-start").textContent = start ? "Starts " + start : "";
  $("card-custom-fields-box").hidden = !fields.length;
  $("card-custom-fields").replaceChildren(
    ...fields.flatMap((field) => [el("dt", { text: field.name }), el("dd", { text: field.value || "—" })]),
  );
}
