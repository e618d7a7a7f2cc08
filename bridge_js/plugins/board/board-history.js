// A card's activity from its kept versions, pure like board-core.js: one entry per field a
// version changed ("bob ticked Deploy", "alice moved this card from To do to Doing"), and
// what restoring a version would change, field by field, for the dialog to preview.
//
// `ctx` names things as the page shows them: {columns: [{id, title}], person(username) ->
// name, day("YYYY-MM-DD") -> text}. A part of an entry's text is a string or {em: text}, a
// name the page sets apart (a checklist item, a label).
import { normalizeCard } from "./board-core.js";

const VIA = Object.freeze({ bridge: "the board", api: "REST", mcp: "MCP", admin: "admin", cli: "the command line", import: "an import" });

// The fields a restore may bring back, in the order the preview lists them.
export const RESTORABLE = Object.freeze(["title", "description", "column", "assignees", "labels", "start", "due", "item", "checklist", "archived"]);
export const RESTORE_NAMES = Object.freeze({
  title: "Title",
  description: "Description",
  column: "Column",
  assignees: "Members",
  labels: "Labels",
  start: "Start date",
  due: "Due date",
  item: "Inventory item",
  checklist: "Checklist",
  archived: "Archived",
});

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const em = (text) => ({ em: text });
/** @type {{columns: {id: string, title: string}[], person: (username: string) => string, day: (date: string) => string}} */
const defaults = { columns: [], person: (u) => u, day: (d) => d };

export function columnTitle(ctx, id) {
  const column = (ctx.columns || []).find((c) => c.id === id);
  return column ? column.title : id || "no column";
}

// [parts] per change from `before` to `after` (two normalized cards).
export function fieldChanges(before, after, ctx = defaults) {
  ctx = { ...defaults, ...ctx };
  const out = [];
  const add = (field, ...parts) => out.push({ field, parts });
  if (before.title !== after.title) add("title", "renamed this card to ", em(after.title));
  if (before.description !== after.description) {
    add("description", !before.description ? "added a description" : !after.description ? "removed the description" : "changed the description");
  }
  if (before.column !== after.column) {
    add("column", "moved this card from ", em(columnTitle(ctx, before.column)), " to ", em(columnTitle(ctx, after.column)));
  } else if (before.rank !== after.rank && !before.archived && !after.archived) {
    add("rank", "moved this card " + (after.rank < before.rank ? "up" : "down") + " in ", em(columnTitle(ctx, after.column)));
  }
  if (before.archived !== after.archived) add("archived", after.archived ? "archived this card" : "brought this card back from the archive");
  for (const name of after.assignees.filter((n) => !before.assignees.includes(n))) add("assignees", "assigned ", em(ctx.person(name)));
  for (const name of before.assignees.filter((n) => !after.assignees.includes(n))) add("assignees", "unassigned ", em(ctx.person(name)));
  const fold = (s) => s.toLocaleLowerCase();
  const had = new Set(before.labels.map(fold));
  const has = new Set(after.labels.map(fold));
  for (const label of after.labels.filter((l) => !had.has(fold(l)))) add("labels", "added the label ", em(label));
  for (const label of before.labels.filter((l) => !has.has(fold(l)))) add("labels", "removed the label ", em(label));
  for (const field of ["start", "due"]) {
    const name = field === "due" ? "the due date" : "the start date";
    if (before[field] === after[field]) continue;
    if (!after[field]) add(field, "removed " + name);
    else add(field, (before[field] ? "changed " : "set ") + name + " to ", em(ctx.day(after[field])));
  }
  if (before.item !== after.item) add("item", after.item ? "linked the inventory item " : "unlinked the inventory item", after.item ? em(after.item) : "");
  checklistChanges(before.checklist, after.checklist, add);
  if (before.commentCount !== after.commentCount) add("comments", after.commentCount > before.commentCount ? "commented" : "deleted a comment");
  return out;
}

function checklistChanges(before, after, add) {
  const old = new Map(before.map((item) => [item.id, item]));
  const now = new Map(after.map((item) => [item.id, item]));
  for (const item of after) {
    const was = old.get(item.id);
    if (!was) add("checklist", "added ", em(item.text), " to the checklist");
    else {
      if (was.text !== item.text) add("checklist", "renamed the checklist item ", em(was.text), " to ", em(item.text));
      if (was.done !== item.done) add("checklist", item.done ? "ticked " : "unticked ", em(item.text));
    }
  }
  for (const item of before) if (!now.has(item.id)) add("checklist", "removed ", em(item.text), " from the checklist");
  const order = (list, other) => list.filter((item) => other.has(item.id)).map((item) => item.id);
  if (!same(order(before, now), order(after, old))) add("checklist", "reordered the checklist");
}

// --- agents ---------------------------------------------------------------------------------
// A write source (a kept version's, or a watch change's: the same object) names an agent
// when it came through the MCP server, names its token's agent, or names a run or
// conversation. {name, owner}: the token's name (null when it has none) and the username
// of the person whose agent it is; null for a person's own write.
export function agentOf(source) {
  if (!source || typeof source !== "object") return null;
  const name = typeof source.agent === "string" && source.agent.trim() ? source.agent.trim() : null;
  if (!name && source.via !== "mcp" && !source.runId && !source.conversationId) return null;
  return { name, owner: typeof source.user === "string" ? source.user : "someone" };
}

// "triage-bot (Alice Martin's agent)", or "Alice Martin's agent" for an unnamed one.
export function agentText(agent, person = defaults.person) {
  const whose = person(agent.owner) + "'s agent";
  return agent.name ? agent.name + " (" + whose + ")" : whose;
}

// What a change elsewhere did to a card, for a toast after who did it ("moved “Deploy”
// to Doing"): `before` and `after` are normalized cards or null (not held, deleted).
// Null when there is nothing to tell (a card the page never held that is now gone).
export function cardNotice(before, after, ctx = defaults) {
  ctx = { ...defaults, ...ctx };
  const card = after || before;
  if (!card) return null;
  const quoted = "“" + card.title + "”";
  if (!after) return "deleted " + quoted;
  if (!before) return "added " + quoted + " to " + columnTitle(ctx, after.column);
  if (before.archived !== after.archived) return (after.archived ? "archived " : "brought back ") + quoted;
  if (before.column !== after.column) return "moved " + quoted + " to " + columnTitle(ctx, after.column);
  const changes = fieldChanges(before, after, ctx);
  if (changes.length && changes.every((c) => c.field === "rank")) return "moved " + quoted + " in " + columnTitle(ctx, after.column);
  if (changes.length === 1 && changes[0].field === "title") return "renamed “" + before.title + "” to " + quoted;
  return "edited " + quoted;
}

// One toast's text for an event's changes by agents ([{agent, what}], each `what` a
// cardNotice): "triage-bot (Alice Martin's agent) moved “Deploy” to Doing."; several
// changes by one agent in one event are counted, not listed.
export function agentNotices(told, person = defaults.person) {
  const who = [...new Set(told.map((t) => agentText(t.agent, person)))];
  if (told.length === 1) return who[0] + " " + told[0].what + ".";
  return who.join(", ") + " changed " + told.length + " cards.";
}

// The versions of kv.getHistory (newest first) as {revision, at, who, by, via, agent
// (agentOf the source), restoredFrom, latest, card, changes: [{field, parts}]}. The
// oldest version of a page that is not the whole history changed what this page cannot
// tell.
export function cardHistory(id, entries, complete, ctx = defaults) {
  ctx = { ...defaults, ...ctx };
  const cardAt = (entry) => (entry && !entry.deleted ? normalizeCard(id, entry.value) : null);
  return entries.map((entry, index) => {
    const older = entries[index + 1];
    const card = cardAt(entry);
    const before = cardAt(older);
    let changes;
    if (!card) changes = [{ field: "deleted", parts: ["deleted this card"] }];
    else if (older ? !before : complete) changes = [{ field: "created", parts: ["added this card to ", em(columnTitle(ctx, card.column))] }];
    else if (!older) changes = [{ field: "unknown", parts: ["changed this card"] }];
    else {
      changes = fieldChanges(before, card, ctx);
      if (!changes.length) changes = [{ field: "none", parts: ["saved this card unchanged"] }];
    }
    const source = entry.source && typeof entry.source === "object" ? entry.source : {};
    const who = typeof source.user === "string" ? source.user : "someone";
    const agent = agentOf(source);
    return Object.freeze({
      revision: String(entry.revision),
      at: typeof entry.writtenAt === "string" ? entry.writtenAt : "",
      who,
      // Whom the entry names: the person, or the agent and whose it is.
      by: agent ? agentText(agent, ctx.person) : ctx.person(who),
      via: VIA[source.via] || String(source.via || "?"),
      agent,
      restoredFrom: source.restoredFrom ? String(source.restoredFrom) : null,
      changes,
      card,
      latest: index === 0,
    });
  });
}

export const partsText = (parts) => parts.map((p) => (typeof p === "string" ? p : p.em)).join("");

// A field's value as the preview shows it.
export function valueText(field, value, ctx = defaults) {
  ctx = { ...defaults, ...ctx };
  if (field === "column") return columnTitle(ctx, value);
  if (field === "assignees") return value.length ? value.map(ctx.person).join(", ") : "nobody";
  if (field === "labels") return value.length ? value.join(", ") : "none";
  if (field === "start" || field === "due") return value ? ctx.day(value) : "none";
  if (field === "checklist") return value.length ? value.map((i) => (i.done ? "☑ " : "☐ ") + i.text).join(", ") : "empty";
  if (field === "archived") return value ? "yes" : "no";
  if (field === "description") return value ? (value.length > 120 ? value.slice(0, 119) + "…" : value) : "empty";
  return value === null || value === "" ? "none" : String(value);
}

// What restoring `version` over `now` (two normalized cards) would change: [{field, name,
// now, then, value}], `value` being what the field becomes. A column that is gone is left out
// (the card stays where it is).
export function restoreChoices(now, version, ctx = defaults) {
  ctx = { ...defaults, ...ctx };
  const out = [];
  for (const field of RESTORABLE) {
    if (same(now[field], version[field])) continue;
    if (field === "column" && !(ctx.columns || []).some((c) => c.id === version.column)) continue;
    out.push({
      field,
      name: RESTORE_NAMES[field],
      now: valueText(field, now[field], ctx),
      // biome-ignore lint/suspicious/noThenProperty: a plain record of a restore preview (now and then), never awaited
      then: valueText(field, version[field], ctx),
      value: version[field],
    });
  }
  return out;
}
