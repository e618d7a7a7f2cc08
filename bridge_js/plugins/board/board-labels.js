// What a Trello import brings that the Board shows beside its own fields, pure like
// board-core.js: the board's label colours, a card's start date and its custom fields.
//
//   board:labels   [{name, color}]   the board's label set; a card names its labels, and one
//                                    named here shows in its colour (case-blind, as filters
//                                    match labels), any other in the colour its name hashes to
//   card:<id>.trello                 what the import kept of the Trello card: `start`, and
//                                    `customFields: [{field, type, value}]`, shown read-only
// The import writes them (kanban/imports/trello_labels.py, trello_map.py); a card's edit
// keeps them, for it writes only the fields it changed over the card as stored.

// Trello's base colours: its _dark and _light variants are stored as their base, so the page
// keeps one palette with readable contrast (style.css, .label-<colour>).
export const LABEL_COLOURS = Object.freeze(["green", "yellow", "orange", "red", "purple", "blue", "sky", "lime", "pink", "black"]);
const MAX_SET = 200;
const MAX_FIELDS = 50;

const fold = (s) => String(s || "").toLocaleLowerCase();

// Folded label name -> colour; the first entry of a name wins, entries not in the palette go.
export function normalizeLabelSet(value) {
  const colours = new Map();
  if (!Array.isArray(value)) return colours;
  for (const entry of value.slice(0, MAX_SET)) {
    if (!entry || typeof entry !== "object" || typeof entry.name !== "string" || !entry.name.trim()) continue;
    const name = fold(entry.name.trim());
    if (LABEL_COLOURS.includes(entry.color) && !colours.has(name)) colours.set(name, entry.color);
  }
  return colours;
}

export const labelColour = (colours, label) => colours.get(fold(label)) || null;

const trelloOf = (value) => (value && typeof value.trello === "object" && value.trello) || {};

// Trello's start is a moment ("2024-03-01T09:00:00.000Z"); the Board shows days, in UTC as
// the import writes due dates.
export function startOf(value) {
  const start = trelloOf(value).start;
  return typeof start === "string" && /^\d{4}-\d{2}-\d{2}(T|$)/.test(start) ? start.slice(0, 10) : null;
}

// [{name, value}] as text: a checkbox is Yes/No, a date its day, a number as written.
export function customFieldsOf(value) {
  const fields = trelloOf(value).customFields;
  if (!Array.isArray(fields)) return [];
  const out = [];
  for (const field of fields.slice(0, MAX_FIELDS)) {
    if (!field || typeof field !== "object" || typeof field.field !== "string" || !field.field) continue;
    out.push({ name: field.field.slice(0, 200), value: fieldText(field.type, field.value) });
  }
  return out;
}

function fieldText(type, value) {
  if (type === "checkbox") return value === true || value === "true" ? "Yes" : "No";
  if (value === null || value === undefined || typeof value === "object") return "";
  const text = String(value);
  if (type === "date" && /^\d{4}-\d{2}-\d{2}T/.test(text)) return text.slice(0, 10);
  return text.slice(0, 500);
}
