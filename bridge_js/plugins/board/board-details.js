// The card dialog's read-only part: the custom field values a Trello import kept, which the
// Board does not edit (board-labels.js reads them off the card). The start date the import
// kept shows with the card's dates (board-pickers.js), where it can be changed.
import { el } from "../../static/bridge/plugin-kit.js";
import { $ } from "./board-state.js";

export function showDetails(card) {
  const fields = card ? card.customFields : [];
  $("card-details").hidden = !fields.length;
  $("card-custom-fields-box").hidden = !fields.length;
  $("card-custom-fields").replaceChildren(...fields.flatMap((field) => [el("dt", { text: field.name }), el("dd", { text: field.value || "—" })]));
}
