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

// --- changing the set (updaters for kv.updateValue: pure, may run more than once) ----------
// A label's name is what cards carry, so it may not hold a comma (cards' labels are read as
// a comma-joined list, board-core.js parseLabels) and is unique, case-blind, in the set.

export const MAX_LABEL = 40;

export class LabelProblem extends Error {
  constructor(code, message) {
    super(message);
    this.name = "LabelProblem";
    this.code = code;
  }
}

// The name as stored, or a LabelProblem saying why not.
export function labelName(text) {
  const name = String(text || "")
    .trim()
    .replace(/\s+/g, " ");
  if (!name) throw new LabelProblem("invalid_argument", "A label needs a name.");
  if (name.includes(",")) throw new LabelProblem("invalid_argument", "A label's name cannot hold a comma.");
  if (name.length > MAX_LABEL) throw new LabelProblem("invalid_argument", "A label's name is at most " + MAX_LABEL + " characters.");
  return name;
}

const entries = (value) => (Array.isArray(value) ? value : []).filter((e) => e && typeof e === "object" && typeof e.name === "string" && e.name.trim());

// Adds {name, color}; a name already in the set (any case) is refused.
export const addLabel = (name, color) => (current) => {
  const list = entries(current);
  if (!LABEL_COLOURS.includes(color)) throw new LabelProblem("invalid_argument", "Pick one of the palette's colours.");
  if (list.some((e) => fold(e.name.trim()) === fold(name))) throw new LabelProblem("exists", "The board already has a label " + name + ".");
  if (list.length >= MAX_SET) throw new LabelProblem("full", "A board holds at most " + MAX_SET + " labels.");
  return [...list, { name, color }];
};

// Renames and recolours the label named `from` (any case); a new name another label has is
// refused. Entries the page cannot read are kept as they are.
export const editLabel =
  (from, { name, color }) =>
  (current) => {
    const list = Array.isArray(current) ? current : [];
    const at = list.findIndex((e) => e && typeof e.name === "string" && fold(e.name.trim()) === fold(from));
    if (at < 0) throw new LabelProblem("gone", "That label was removed meanwhile.");
    if (!LABEL_COLOURS.includes(color)) throw new LabelProblem("invalid_argument", "Pick one of the palette's colours.");
    if (fold(name) !== fold(from) && entries(list).some((e) => fold(e.name.trim()) === fold(name))) {
      throw new LabelProblem("exists", "The board already has a label " + name + ".");
    }
    return list.map((e, i) => (i === at ? { ...e, name, color } : e));
  };

// The set without the label named `name` (any case); one removed meanwhile is no error.
export const removeLabel = (name) => (current) =>
  (Array.isArray(current) ? current : []).filter((e) => !(e && typeof e.name === "string" && fold(e.name.trim()) === fold(name)));

// A card's labels without `name` (any case); null when it has none.
export function withoutLabel(labels, name) {
  return labels.some((l) => fold(l) === fold(name)) ? labels.filter((l) => fold(l) !== fold(name)) : null;
}

// A card's labels with `from` (any case) renamed `to`, in place; null when it has none.
export function renamedLabels(labels, from, to) {
  if (!labels.some((l) => fold(l) === fold(from))) return null;
  const out = [];
  for (const label of labels) {
    const next = fold(label) === fold(from) ? to : label;
    if (!out.some((l) => fold(l) === fold(next))) out.push(next);
  }
  return out;
}

// The set in its stored order as [{name, color}], for a picker.
export function labelSet(value) {
  const seen = new Set();
  const out = [];
  for (const e of entries(value).slice(0, MAX_SET)) {
    const key = fold(e.name.trim());
    if (seen.has(key) || !LABEL_COLOURS.includes(e.color)) continue;
    seen.add(key);
    out.push({ name: e.name.trim(), color: e.color });
  }
  return out;
}

const trelloOf = (value) => (value && typeof value.trello === "object" && value.trello) || {};

// A card's own start day (the dialog's Dates), else Trello's start, a moment
// ("2024-03-01T09:00:00.000Z"): the Board shows days, in UTC as the import writes due dates.
// A card whose start was cleared holds `start: null`, which hides the import's too.
export function startOf(value) {
  if (value && "start" in value) return typeof value.start === "string" && /^\d{4}-\d{2}-\d{2}$/.test(value.start) ? value.start : null;
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
