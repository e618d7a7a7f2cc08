// The Board plugin's pure logic: no DOM, no bridge, no clock. The page loads this file as a
// classic script (window.BoardCore); node tests load the same file.
(function (root) {
  "use strict";

  // From plugin-kit.js, which the page (and the node tests) load first.
  const { Refused, createGenerations } = root.PluginKit;

  const KEYS = Object.freeze({
    columns: "board:columns",
    cards: "board:cards",
    card: (id) => "card:" + id,
  });

  const DEFAULT_COLUMNS = Object.freeze([
    Object.freeze({ id: "todo", title: "To do", wip: 0 }),
    Object.freeze({ id: "doing", title: "Doing", wip: 3 }),
    Object.freeze({ id: "done", title: "Done", wip: 0 }),
  ]);

  const DENSITIES = Object.freeze(["comfortable", "compact"]);
  const MAX_TEXT = 200;
  const MAX_DESCRIPTION = 4000;
  const MAX_LABELS = 12;
  const MAX_ASSIGNEES = 10;
  const MAX_CHECKLIST = 50;
  // The assignee filter's choice for "the cards assigned to the viewer": a colon is in no
  // username, so no member's name can mean it.
  const ME = ":me";

  // --- ranks ------------------------------------------------------------------------------
  // A rank is a base-36 fraction written without "0." and without trailing zeros, compared
  // as a plain string. Between any two distinct ranks there is always another one, so a
  // moved card takes a rank between its new neighbours and no other card is rewritten.

  const DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz";
  const RANK_RE = /^[0-9a-z]*[1-9a-z]$/;

  function isRank(value) {
    return typeof value === "string" && value.length <= 256 && RANK_RE.test(value);
  }

  // `low` may be "" (zero); `high` may be null (one).
  function midpoint(low, high) {
    if (high !== null) {
      let same = 0;
      while (same < high.length && (low[same] || "0") === high[same]) same++;
      if (same > 0) return high.slice(0, same) + midpoint(low.slice(same), high.slice(same));
    }
    const a = low ? DIGITS.indexOf(low[0]) : 0;
    const b = high !== null ? DIGITS.indexOf(high[0]) : DIGITS.length;
    if (b - a > 1) return DIGITS[Math.round((a + b) / 2)];
    if (high !== null && high.length > 1) return high.slice(0, 1);
    return DIGITS[a] + midpoint(low.slice(1), null);
  }

  // A rank strictly between `before` and `after` (either may be null for an open end).
  function rankBetween(before, after) {
    if (before !== null && !isRank(before)) throw new TypeError("bad rank " + before);
    if (after !== null && !isRank(after)) throw new TypeError("bad rank " + after);
    if (before !== null && after !== null && before >= after) {
      throw new RangeError("ranks out of order: " + before + " >= " + after);
    }
    return midpoint(before || "", after);
  }

  function compareCards(a, b) {
    if (a.rank !== b.rank) return a.rank < b.rank ? -1 : 1;
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  }

  // Cards of one column in board order. A card whose column no longer exists shows in the
  // first column rather than vanishing.
  function cardsInColumn(cards, columns, columnId) {
    const known = new Set(columns.map((c) => c.id));
    const fallback = columns.length ? columns[0].id : null;
    return cards
      .filter((card) => !card.archived && (known.has(card.column) ? card.column : fallback) === columnId)
      .sort(compareCards);
  }

  // An archived card is out of every column until it is restored; the archive lists by title.
  function archivedCards(cards) {
    return cards.filter((card) => card.archived).sort((a, b) => (a.title < b.title ? -1 : a.title > b.title ? 1 : 0));
  }

  function columnOf(card, columns) {
    return columns.some((c) => c.id === card.column) ? card.column : columns.length ? columns[0].id : null;
  }

  // The rank for a card placed just before `beforeId` in `list` (null: at the end). `list`
  // is the target column in board order without the moving card. Equal ranks (two users
  // inserting at one spot at once) leave no room between them, so the card goes after
  // the whole tie.
  function rankForPlacement(list, beforeId) {
    let index = beforeId == null ? list.length : list.findIndex((c) => c.id === beforeId);
    if (index < 0) index = list.length;
    const before = index > 0 ? list[index - 1].rank : null;
    let after = null;
    for (let i = index; i < list.length; i++) {
      if (before === null || list[i].rank > before) {
        after = list[i].rank;
        break;
      }
    }
    return rankBetween(before, after);
  }

  // Where a keyboard move sends a card, as {column, beforeId}, or null when it cannot go
  // further. `visible` maps a column id to the cards shown there (filters apply), so a
  // move steps over exactly one card the user can see.
  function keyboardTarget(card, direction, columns, visible) {
    const columnId = columnOf(card, columns);
    const shown = visible(columnId);
    const at = shown.findIndex((c) => c.id === card.id);
    if (direction === "up" || direction === "down") {
      if (at < 0) return null;
      if (direction === "up") {
        if (at === 0) return null;
        return { column: columnId, beforeId: shown[at - 1].id };
      }
      if (at === shown.length - 1) return null;
      const next = shown[at + 2];
      return { column: columnId, beforeId: next ? next.id : null };
    }
    const ci = columns.findIndex((c) => c.id === columnId);
    const ti = direction === "left" ? ci - 1 : direction === "right" ? ci + 1 : -1;
    if (ci < 0 || ti < 0 || ti >= columns.length) return null;
    const target = columns[ti].id;
    const others = visible(target).filter((c) => c.id !== card.id);
    const slot = others[Math.max(0, at)];
    return { column: target, beforeId: slot ? slot.id : null };
  }

  // --- filters, WIP, dates ------------------------------------------------------------------

  const fold = (s) => String(s || "").toLocaleLowerCase();

  // "Due soon": from today to this many days on.
  const SOON_DAYS = 7;
  const DUE_FILTERS = Object.freeze(["", "soon", "overdue"]);

  // `today` ("YYYY-MM-DD", the viewer's) is needed only by a due filter, `me` (the viewer's
  // username) only by "assigned to me".
  function matchesFilter(card, filter, today, me) {
    const f = filter || {};
    if (f.due === "overdue" && dueState(card.due, today) !== "overdue") return false;
    if (f.due === "soon" && !(isDate(card.due) && card.due >= today && card.due <= addDays(today, SOON_DAYS))) return false;
    const text = fold(f.text).trim();
    if (text) {
      const haystack = [card.title, card.description, ...card.assignees, ...card.labels].map(fold).join("\n");
      if (!text.split(/\s+/).every((word) => haystack.includes(word))) return false;
    }
    if (f.label && !card.labels.some((l) => fold(l) === fold(f.label))) return false;
    if (f.assignee === ME) return card.assignees.includes(me);
    if (f.assignee && !card.assignees.some((a) => fold(a) === fold(f.assignee))) return false;
    return true;
  }

  function isFiltering(filter) {
    return Boolean(filter && (String(filter.text || "").trim() || filter.label || filter.assignee || filter.due));
  }

  // Counts every card in the column, filtered or not: the limit is about the work.
  function wipState(column, count) {
    const limit = column && Number.isInteger(column.wip) && column.wip > 0 ? column.wip : 0;
    return { count, limit, over: limit > 0 && count > limit, full: limit > 0 && count === limit };
  }

  // `today` is the viewer's local date as "YYYY-MM-DD"; ISO dates compare as strings.
  function dueState(due, today) {
    if (!isDate(due)) return "none";
    if (due < today) return "overdue";
    if (due === today) return "today";
    return "later";
  }

  function isDate(value) {
    return typeof value === "string" && /^\d{4}-\d{2}-\d{2}$/.test(value);
  }

  function addDays(day, days) {
    const [year, month, date] = day.split("-").map(Number);
    return localDate(new Date(year, month - 1, date + days));
  }

  function localDate(date) {
    const pad = (n) => String(n).padStart(2, "0");
    return date.getFullYear() + "-" + pad(date.getMonth() + 1) + "-" + pad(date.getDate());
  }

  function parseLabels(text) {
    const seen = new Set();
    const out = [];
    for (const raw of String(text || "").split(",")) {
      const label = raw.trim().slice(0, 40);
      if (label && !seen.has(fold(label)) && out.length < MAX_LABELS) {
        seen.add(fold(label));
        out.push(label);
      }
    }
    return out;
  }

  function distinct(values) {
    const seen = new Map();
    for (const v of values) if (v && !seen.has(fold(v))) seen.set(fold(v), v);
    return [...seen.values()].sort((a, b) => fold(a).localeCompare(fold(b)));
  }

  // --- stored values --------------------------------------------------------------------------
  // Anyone with write access can store anything under these keys, so every read is
  // normalised into the shapes the page renders.

  const str = (v, max) => (typeof v === "string" ? v.slice(0, max) : "");
  const isId = (v) => typeof v === "string" && /^[A-Za-z0-9_-]{1,64}$/.test(v);

  function normalizeColumns(value) {
    if (!Array.isArray(value)) return null;
    const seen = new Set();
    const out = [];
    for (const c of value) {
      if (!c || typeof c !== "object" || !isId(c.id) || seen.has(c.id)) continue;
      seen.add(c.id);
      const wip = Number.isInteger(c.wip) && c.wip > 0 ? Math.min(c.wip, 999) : 0;
      out.push({ id: c.id, title: str(c.title, MAX_TEXT) || c.id, wip });
    }
    return out;
  }

  function normalizeIndex(value) {
    if (!Array.isArray(value)) return [];
    return [...new Set(value.filter(isId))];
  }

  // Several assignees; a card from before them names one as `assignee`.
  function normalizeAssignees(value) {
    const names = Array.isArray(value.assignees) ? value.assignees : [value.assignee];
    const out = [];
    for (const name of names) {
      const clean = str(name, MAX_TEXT).trim();
      if (clean && !out.includes(clean) && out.length < MAX_ASSIGNEES) out.push(clean);
    }
    return out;
  }

  function normalizeChecklist(value) {
    if (!Array.isArray(value)) return [];
    const seen = new Set();
    const out = [];
    for (const item of value) {
      if (!item || typeof item !== "object" || !isId(item.id) || seen.has(item.id) || out.length >= MAX_CHECKLIST) continue;
      const text = str(item.text, MAX_TEXT).trim();
      if (!text) continue;
      seen.add(item.id);
      out.push({ id: item.id, text, done: item.done === true });
    }
    return out;
  }

  function normalizeCard(id, value) {
    if (!value || typeof value !== "object" || Array.isArray(value) || value.deleted) return null;
    return {
      id,
      title: str(value.title, MAX_TEXT) || "Untitled",
      description: str(value.description, MAX_DESCRIPTION),
      assignees: normalizeAssignees(value),
      labels: Array.isArray(value.labels) ? parseLabels(value.labels.filter((l) => typeof l === "string").join(",")) : [],
      due: isDate(value.due) ? value.due : null,
      column: typeof value.column === "string" ? value.column : "",
      rank: isRank(value.rank) ? value.rank : "i",
      item: typeof value.item === "string" && value.item ? value.item.slice(0, 200) : null,
      archived: value.archived === true,
      checklist: normalizeChecklist(value.checklist),
      // How many comments the card's comments key holds, kept on the card for its face.
      commentCount: Number.isInteger(value.commentCount) && value.commentCount > 0 ? value.commentCount : 0,
    };
  }

  function checklistProgress(card) {
    return { done: card.checklist.filter((item) => item.done).length, total: card.checklist.length };
  }

  function defaultView() {
    return { filter: { text: "", label: "", assignee: "", due: "" }, collapsed: [], density: "comfortable" };
  }

  function normalizeView(value) {
    const view = defaultView();
    if (!value || typeof value !== "object") return view;
    const f = value.filter && typeof value.filter === "object" ? value.filter : {};
    view.filter = {
      text: str(f.text, MAX_TEXT),
      label: str(f.label, MAX_TEXT),
      assignee: str(f.assignee, MAX_TEXT),
      due: DUE_FILTERS.includes(f.due) ? f.due : "",
    };
    view.collapsed = Array.isArray(value.collapsed) ? [...new Set(value.collapsed.filter(isId))] : [];
    view.density = DENSITIES.includes(value.density) ? value.density : "comfortable";
    return view;
  }

  // --- what the page holds ---------------------------------------------------------------------
  // The board's stored values as the page last read them or was pushed them: key -> value
  // (undefined: absent). A watch event changes them in commit order; the page derives its
  // columns and cards from them and reads only what it neither holds nor was sent.

  const isBoardKey = (key) => key === KEYS.columns || key === KEYS.cards || key.startsWith("card:");
  // Cards written before their id reached the index (an add writes the card, then the
  // index), kept so the index change needs no read; the oldest go past this many.
  const MAX_UNINDEXED = 500;

  function createStore() {
    const values = new Map();
    // key -> how many events changed it: a write can tell whether one came while it was out.
    const events = new Map();
    const indexed = () => normalizeIndex(values.get(KEYS.cards));
    return {
      has: (key) => values.has(key),
      get: (key) => values.get(key),
      seen: (key) => events.get(key) || 0,
      set(key, value) {
        values.delete(key); // re-inserted last: the newest unindexed card is kept longest
        values.set(key, value);
      },
      clear: () => values.clear(),
      // A watch event's changes of the board's keys; the keys it named without a value.
      apply(changes) {
        const unread = [];
        for (const change of changes) {
          if (!isBoardKey(change.key)) continue;
          events.set(change.key, (events.get(change.key) || 0) + 1);
          if (change.deleted === true) this.set(change.key, undefined);
          else if ("value" in change) this.set(change.key, change.value);
          else unread.push(change.key);
        }
        return unread;
      },
      // The card keys the index names that the page does not hold.
      missing: () => indexed().map(KEYS.card).filter((key) => !values.has(key)),
      board() {
        const ids = indexed();
        const inIndex = new Set(ids.map(KEYS.card));
        const unindexed = [...values.keys()].filter((key) => key.startsWith("card:") && !inIndex.has(key));
        for (const key of unindexed.slice(0, Math.max(0, unindexed.length - MAX_UNINDEXED))) values.delete(key);
        return {
          columns: normalizeColumns(values.get(KEYS.columns)) || [],
          cards: ids.map((id) => normalizeCard(id, values.get(KEYS.card(id)))).filter(Boolean),
        };
      },
    };
  }

  // --- updaters (pure: updateValue may call them more than once) -------------------------------

  const addToIndex = (id) => (ids) => {
    const list = normalizeIndex(ids);
    return list.includes(id) ? list : [...list, id];
  };

  const removeFromIndex = (id) => (ids) => normalizeIndex(ids).filter((x) => x !== id);

  // Thrown inside an updater to abandon the write; updateValue rejects with it.

  // Applies `patch` to the card as stored now, so an edit and a concurrent move both land.
  const patchCard = (patch) => (current) => {
    if (!current || typeof current !== "object" || current.deleted) {
      throw new Refused("gone", "This card was deleted meanwhile.");
    }
    return { ...current, ...patch };
  };

  // --- edits of one card by several people ----------------------------------------------------
  // A dialog saves only the fields its user changed, against the card as the dialog showed
  // it (`base`). A field that someone else changed meanwhile, to something other than what
  // this user chose, is a conflict: the save stops and names it, so nobody's edit is lost
  // without them being told.

  const EDITABLE = Object.freeze(["title", "description", "assignees", "labels", "due", "item", "column"]);
  const FIELD_NAMES = Object.freeze({
    title: "Title",
    description: "Description",
    assignees: "Assignees",
    labels: "Labels",
    due: "Due date",
    item: "Inventory item",
    column: "Column",
  });

  const sameValue = (a, b) => JSON.stringify(a) === JSON.stringify(b);

  function changedFields(base, fields) {
    const changes = {};
    for (const name of EDITABLE) {
      if (name in fields && !sameValue(base[name], fields[name])) changes[name] = fields[name];
    }
    return changes;
  }

  // A card's activity from its kept versions (kv.getHistory, newest first): who wrote each,
  // through what, when, and which fields it changed from the version before it. The oldest
  // version of a page that is not the whole history changed what we cannot tell.
  const ACTIVITY_NAMES = Object.freeze({ ...FIELD_NAMES, rank: "Position", archived: "Archived", checklist: "Checklist", commentCount: "Comments" });
  const VIA = Object.freeze({ bridge: "the board", api: "REST", mcp: "MCP", admin: "admin", cli: "the command line" });

  function cardActivity(id, entries, complete) {
    const cardAt = (entry) => (entry && !entry.deleted ? normalizeCard(id, entry.value) : null);
    return entries.map((entry, index) => {
      const older = entries[index + 1];
      const card = cardAt(entry);
      const before = cardAt(older);
      let what;
      if (!card) what = "deleted it";
      else if (older ? !before : complete) what = "created it";
      else if (!older) what = "changed it";
      else {
        const fields = Object.keys(ACTIVITY_NAMES).filter((f) => !sameValue(before[f], card[f]));
        what = fields.length ? "changed " + fields.map((f) => ACTIVITY_NAMES[f].toLowerCase()).join(", ") : "saved it unchanged";
      }
      const source = entry.source && typeof entry.source === "object" ? entry.source : {};
      return Object.freeze({
        revision: String(entry.revision),
        at: typeof entry.writtenAt === "string" ? entry.writtenAt : "",
        who: typeof source.user === "string" ? source.user : "someone",
        via: VIA[source.via] || String(source.via || "?"),
        // An agent: the MCP server, or a write that names its run or conversation.
        agent: source.via === "mcp" || Boolean(source.runId || source.conversationId),
        restoredFrom: source.restoredFrom ? String(source.restoredFrom) : null,
        what,
        card,
        latest: index === 0,
      });
    });
  }

  class Conflict extends Refused {
    constructor(fields, current) {
      super("conflict", "Someone else changed " + fields.map((f) => FIELD_NAMES[f]).join(", ") + " meanwhile.");
      this.name = "Conflict";
      this.fields = fields;
      this.current = current;
    }
  }

  // `changes` may carry `rank` beside `column`: a rank is where the column change puts the
  // card, so it is written with it and never compared on its own.
  const mergeCard = (base, changes) => (current) => {
    const now = normalizeCard(base.id, current);
    if (!now) throw new Refused("gone", "This card was deleted meanwhile.");
    const conflicts = Object.keys(changes).filter(
      (f) => f !== "rank" && !sameValue(now[f], base[f]) && !sameValue(now[f], changes[f]),
    );
    if (conflicts.length) throw new Conflict(conflicts, now);
    return { ...current, ...storedChanges(changes) };
  };

  // What a change writes: beside `assignees`, the first of them as `assignee`, which Boards
  // from before several assignees show (kanban/data/board/layout.py writes the same).
  function storedChanges(changes) {
    if (!("assignees" in changes)) return changes;
    return { ...changes, assignee: changes.assignees[0] || "" };
  }

  // One change of a card's checklist, applied to the card as stored now, so two people
  // ticking different items both keep theirs. `op`: {add: {id, text}} | {tick: id, done} |
  // {remove: id} | {move: id, to: index}.
  const changeChecklist = (op) => (current) => {
    if (!current || typeof current !== "object" || current.deleted) {
      throw new Refused("gone", "This card was deleted meanwhile.");
    }
    const list = normalizeChecklist(current.checklist);
    const target = op.add ? null : list.findIndex((item) => item.id === (op.tick || op.remove || op.move));
    if (target !== null && target < 0) throw new Refused("gone", "This item was removed meanwhile.");
    let next;
    if (op.add) {
      if (list.length >= MAX_CHECKLIST) throw new Refused("full", "A checklist holds at most " + MAX_CHECKLIST + " items.");
      next = [...list, { id: op.add.id, text: str(op.add.text, MAX_TEXT).trim(), done: false }];
    } else if (op.tick) {
      next = list.map((item, i) => (i === target ? { ...item, done: op.done === true } : item));
    } else if (op.remove) {
      next = list.filter((_, i) => i !== target);
    } else {
      next = list.filter((_, i) => i !== target);
      next.splice(Math.max(0, Math.min(op.to, next.length)), 0, list[target]);
    }
    return { ...current, checklist: next };
  };

  // Only if absent: a value already there is never overwritten.
  const createOnly = (value) => (current) => {
    if (current !== undefined) throw new Refused("exists", "Already there.");
    return value;
  };

  const defaultColumnsIfAbsent = createOnly(DEFAULT_COLUMNS.map((c) => ({ ...c })));

  const addColumn = (column) => (columns) => {
    const list = normalizeColumns(columns) || [];
    return list.some((c) => c.id === column.id) ? list : [...list, column];
  };

  const patchColumn = (id, patch) => (columns) => {
    const list = normalizeColumns(columns) || [];
    if (!list.some((c) => c.id === id)) throw new Refused("gone", "This column was removed meanwhile.");
    return list.map((c) => (c.id === id ? { ...c, ...patch } : c));
  };

  const removeColumn = (id) => (columns) => (normalizeColumns(columns) || []).filter((c) => c.id !== id);

  // Puts column `id` where column `target` is now (the others keep their order).
  const moveColumnTo = (id, target) => (columns) => {
    const list = normalizeColumns(columns) || [];
    const from = list.findIndex((c) => c.id === id);
    const to = list.findIndex((c) => c.id === target);
    if (from < 0) throw new Refused("gone", "This column was removed meanwhile.");
    if (to < 0 || from === to) return list;
    const moved = list.filter((c) => c.id !== id);
    moved.splice(to, 0, list[from]);
    return moved;
  };

  // Inventory stock, as the Inventory plugin stores it: {name, count}.
  const useOne = (stock) => {
    if (!stock || typeof stock !== "object" || !Number.isInteger(stock.count)) {
      throw new Refused("missing", "This item is no longer in the inventory.");
    }
    if (stock.count <= 0) throw new Refused("empty", "None left in stock.");
    return { ...stock, count: stock.count - 1 };
  };

  // Card and column ids: 12 base-36 characters from the given random bytes.
  function newId(randomBytes) {
    const bytes = randomBytes(12);
    let out = "";
    for (let i = 0; i < 12; i++) out += DIGITS[bytes[i] % 36];
    return out;
  }

  const api = Object.freeze({
    KEYS,
    DEFAULT_COLUMNS,
    DENSITIES,
    isRank,
    rankBetween,
    compareCards,
    cardsInColumn,
    archivedCards,
    columnOf,
    rankForPlacement,
    keyboardTarget,
    ME,
    matchesFilter,
    isFiltering,
    wipState,
    dueState,
    localDate,
    parseLabels,
    distinct,
    normalizeColumns,
    normalizeIndex,
    normalizeCard,
    normalizeChecklist,
    checklistProgress,
    changeChecklist,
    storedChanges,
    MAX_CHECKLIST,
    normalizeView,
    defaultView,
    addToIndex,
    removeFromIndex,
    Refused,
    patchCard,
    FIELD_NAMES,
    changedFields,
    cardActivity,
    Conflict,
    mergeCard,
    createOnly,
    defaultColumnsIfAbsent,
    addColumn,
    patchColumn,
    removeColumn,
    moveColumnTo,
    useOne,
    createGenerations,
    newId,
    isBoardKey,
    createStore,
    MAX_UNINDEXED,
  });

  if (typeof module === "object" && module && module.exports) module.exports = api;
  else root.BoardCore = api;
})(this);
