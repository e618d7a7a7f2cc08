import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { Refused, createGenerations } from "../../static/bridge/plugin-kit.js";
import {
  MAX_CHECKLIST,
  ME,
  archivedCards,
  cardsInColumn,
  checklistProgress,
  columnOf,
  defaultView,
  dueState,
  isFiltering,
  isRank,
  keyboardTarget,
  localDate,
  matchesFilter,
  newId,
  normalizeCard,
  normalizeColumns,
  normalizeView,
  parseLabels,
  rankBetween,
  rankForPlacement,
  wipState,
} from "../../plugins/board/board-core.js";
import {
  Conflict,
  addColumn,
  addToIndex,
  changeChecklist,
  changedFields,
  defaultColumnsIfAbsent,
  mergeCard,
  moveColumnTo,
  patchCard,
  patchColumn,
  removeColumn,
  removeFromIndex,
  useOne,
} from "../../plugins/board/board-changes.js";

const card = (id, rank, extra = {}) => ({
  id,
  rank,
  column: "todo",
  title: id,
  description: "",
  assignees: [],
  labels: [],
  due: null,
  item: null,
  checklist: [],
  commentCount: 0,
  ...extra,
});
const COLUMNS = [
  { id: "todo", title: "To do", wip: 0 },
  { id: "doing", title: "Doing", wip: 2 },
  { id: "done", title: "Done", wip: 0 },
];

// A deterministic pseudo-random source, so a failing case can be replayed.
function lcg(seed) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

describe("ranks", () => {
  test("an empty column starts in the middle and appending keeps growing", () => {
    const first = rankBetween(null, null);
    const second = rankBetween(first, null);
    const before = rankBetween(null, first);
    assert.ok(isRank(first) && isRank(second) && isRank(before));
    assert.ok(before < first && first < second);
  });

  test("there is always a rank between two neighbours, however close", () => {
    const cases = [
      ["1", "2"],
      ["a", "a1"],
      ["az", null],
      ["z", null],
      [null, "1"],
      [null, "01"],
      ["1z", "2"],
      ["i", "i01"],
      ["zzzz", null],
    ];
    for (const [low, high] of cases) {
      const mid = rankBetween(low, high);
      assert.ok(isRank(mid), `${mid} is a rank`);
      if (low !== null) assert.ok(low < mid, `${low} < ${mid}`);
      if (high !== null) assert.ok(mid < high, `${mid} < ${high}`);
    }
  });

  test("a thousand random insertions keep a strict order without rewriting anyone", () => {
    const random = lcg(7);
    const ranks = [];
    for (let i = 0; i < 1000; i++) {
      const at = Math.floor(random() * (ranks.length + 1));
      const rank = rankBetween(ranks[at - 1] ?? null, ranks[at] ?? null);
      ranks.splice(at, 0, rank);
    }
    for (let i = 1; i < ranks.length; i++) assert.ok(ranks[i - 1] < ranks[i], `${ranks[i - 1]} < ${ranks[i]}`);
    assert.ok(ranks.every(isRank));
    assert.ok(Math.max(...ranks.map((r) => r.length)) < 30, "ranks stay short under random inserts");
  });

  test("always inserting at the top grows ranks slowly", () => {
    let top = rankBetween(null, null);
    for (let i = 0; i < 200; i++) {
      const next = rankBetween(null, top);
      assert.ok(next < top);
      top = next;
    }
    assert.ok(top.length <= 45, top);
  });

  test("neighbours out of order or malformed are refused", () => {
    assert.throws(() => rankBetween("b", "a"), RangeError);
    assert.throws(() => rankBetween("a", "a"), RangeError);
    assert.throws(() => rankBetween("a0", null), TypeError);
    assert.throws(() => rankBetween(null, "A"), TypeError);
    assert.equal(isRank(""), false);
    assert.equal(isRank(3), false);
  });
});

describe("card order and placement", () => {
  test("cards sort by rank, and by id when two ranks tie", () => {
    const cards = [card("c", "m"), card("b", "i"), card("a", "m")];
    assert.deepEqual(
      cardsInColumn(cards, COLUMNS, "todo").map((c) => c.id),
      ["b", "a", "c"],
    );
  });

  test("a card whose column was removed shows in the first column", () => {
    const cards = [card("a", "i", { column: "gone" }), card("b", "m", { column: "doing" })];
    assert.deepEqual(
      cardsInColumn(cards, COLUMNS, "todo").map((c) => c.id),
      ["a"],
    );
    assert.equal(columnOf(cards[0], COLUMNS), "todo");
  });

  test("placing before a card lands between it and its upper neighbour", () => {
    const list = [card("a", "c"), card("b", "i"), card("c", "p")];
    const rank = rankForPlacement(list, "b");
    assert.ok("c" < rank && rank < "i");
    assert.ok(rankForPlacement(list, null) > "p");
    assert.ok(rankForPlacement(list, "a") < "c");
    assert.ok(rankForPlacement([], null));
  });

  test("a tie left by two simultaneous inserts is stepped over, not split", () => {
    const list = [card("a", "c"), card("b", "i"), card("c", "i"), card("d", "p")];
    const rank = rankForPlacement(list, "c");
    assert.ok("i" < rank && rank < "p", rank);
  });

  test("keyboard moves step over one visible card and across columns", () => {
    const cards = [card("a", "c"), card("b", "i"), card("hidden", "k"), card("c", "p"), card("x", "i", { column: "doing" })];
    const visible = (col) => cardsInColumn(cards, COLUMNS, col).filter((c) => c.id !== "hidden");
    const byId = (id) => cards.find((c) => c.id === id);
    assert.deepEqual(keyboardTarget(byId("b"), "up", COLUMNS, visible), { column: "todo", beforeId: "a" });
    assert.deepEqual(keyboardTarget(byId("a"), "down", COLUMNS, visible), { column: "todo", beforeId: "c" });
    assert.deepEqual(keyboardTarget(byId("b"), "down", COLUMNS, visible), { column: "todo", beforeId: null });
    assert.equal(keyboardTarget(byId("a"), "up", COLUMNS, visible), null);
    assert.equal(keyboardTarget(byId("c"), "down", COLUMNS, visible), null);
    assert.equal(keyboardTarget(byId("a"), "left", COLUMNS, visible), null);
    assert.deepEqual(keyboardTarget(byId("a"), "right", COLUMNS, visible), { column: "doing", beforeId: "x" });
    assert.deepEqual(keyboardTarget(byId("b"), "right", COLUMNS, visible), { column: "doing", beforeId: null });
    assert.deepEqual(keyboardTarget(byId("x"), "left", COLUMNS, visible), { column: "todo", beforeId: "a" });
  });
});

describe("filters", () => {
  const cards = [
    card("a", "c", { title: "Fix login", labels: ["bug", "Auth"], assignees: ["Alice"] }),
    card("b", "i", { title: "Write docs", description: "Explain the login page", assignees: ["bob", "carol"] }),
    card("c", "p", { title: "Ship it", labels: ["release"] }),
  ];
  const ids = (filter, me = "") => cards.filter((c) => matchesFilter(c, filter, "2026-12-01", me)).map((c) => c.id);

  test("text matches title, description, assignee and labels, every word, any case", () => {
    assert.deepEqual(ids({ text: "LOGIN" }), ["a", "b"]);
    assert.deepEqual(ids({ text: "login docs" }), ["b"]);
    assert.deepEqual(ids({ text: "auth" }), ["a"]);
    assert.deepEqual(ids({ text: "alice" }), ["a"]);
    assert.deepEqual(ids({ text: "   " }), ["a", "b", "c"]);
  });

  test("label and assignee filters match whole values", () => {
    assert.deepEqual(ids({ label: "auth" }), ["a"]);
    assert.deepEqual(ids({ label: "au" }), []);
    assert.deepEqual(ids({ assignee: "BOB" }), ["b"]);
    assert.deepEqual(ids({ text: "login", assignee: "alice" }), ["a"]);
    assert.deepEqual(ids({ assignee: "carol" }), ["b"], "any of several assignees");
  });

  test("assigned to me is the cards naming the viewer, and nobody's name can mean it", () => {
    assert.deepEqual(ids({ assignee: ME }, "carol"), ["b"]);
    assert.deepEqual(ids({ assignee: ME }, ""), []);
    assert.equal(isFiltering({ assignee: ME }), true);
    assert.match(ME, /:/, "Django usernames have no colon");
  });

  test("an empty filter is not filtering", () => {
    assert.equal(isFiltering(defaultView().filter), false);
    assert.equal(isFiltering({ text: " x" }), true);
    assert.equal(isFiltering({ label: "bug" }), true);
  });
});

describe("WIP limits and due dates", () => {
  test("a column warns only when it holds more cards than its limit", () => {
    assert.deepEqual(wipState({ wip: 2 }, 3), { count: 3, limit: 2, over: true, full: false });
    assert.deepEqual(wipState({ wip: 2 }, 2), { count: 2, limit: 2, over: false, full: true });
    assert.deepEqual(wipState({ wip: 0 }, 50), { count: 50, limit: 0, over: false, full: false });
    assert.equal(wipState({ wip: "3" }, 9).over, false);
  });

  test("due dates are overdue before today", () => {
    assert.equal(dueState("2026-01-01", "2026-01-02"), "overdue");
    assert.equal(dueState("2026-01-02", "2026-01-02"), "today");
    assert.equal(dueState("2026-02-01", "2026-01-02"), "later");
    assert.equal(dueState(null, "2026-01-02"), "none");
    assert.equal(localDate(new Date(2026, 0, 5)), "2026-01-05");
  });

  test("labels are trimmed, deduplicated regardless of case, and bounded", () => {
    assert.deepEqual(parseLabels(" bug, Bug ,ui,, "), ["bug", "ui"]);
    assert.equal(parseLabels(Array.from({ length: 30 }, (_, i) => "l" + i).join(",")).length, 12);
  });
});

describe("view settings", () => {
  test("stored views are normalised, whatever was written", () => {
    assert.deepEqual(normalizeView(undefined), defaultView());
    assert.deepEqual(normalizeView({ filter: { text: 5, label: "bug" }, collapsed: ["done", "done", 3], density: "huge" }), {
      filter: { text: "", label: "bug", assignee: "", due: "" },
      collapsed: ["done"],
      density: "comfortable",
    });
    assert.equal(normalizeView({ density: "compact" }).density, "compact");
  });
});

describe("stored board values", () => {
  test("columns keep valid, unique entries", () => {
    assert.equal(normalizeColumns(undefined), null);
    assert.deepEqual(normalizeColumns([{ id: "a", title: "A", wip: 2 }, { id: "a" }, { id: "b c" }, null, { id: "z", wip: -1 }]), [
      { id: "a", title: "A", wip: 2 },
      { id: "z", title: "z", wip: 0 },
    ]);
  });

  test("a card tombstone or junk reads as no card", () => {
    assert.equal(normalizeCard("a", { id: "a", deleted: true }), null);
    assert.equal(normalizeCard("a", [1]), null);
    assert.equal(normalizeCard("a", undefined), null);
    const c = normalizeCard("a", { title: "T", labels: ["x", 3], due: "soon", rank: "A", item: "" });
    assert.deepEqual(
      { ...c, labels: [...c.labels] },
      {
        id: "a",
        title: "T",
        description: "",
        assignees: [],
        labels: ["x"],
        due: null,
        column: "",
        rank: "i",
        item: null,
        archived: false,
        checklist: [],
        commentCount: 0,
        start: null,
        customFields: [],
      },
    );
  });

  test("a card from before several assignees names its one; junk assignees and items go", () => {
    assert.deepEqual(normalizeCard("a", { assignee: " bob " }).assignees, ["bob"]);
    assert.deepEqual(normalizeCard("a", { assignees: ["bob", "bob", 3, "", "carol"], assignee: "x" }).assignees, ["bob", "carol"]);
    const items = [{ id: "i1", text: " Buy ", done: true }, { id: "i1", text: "again" }, { id: "bad id", text: "x" }, { id: "i2", text: "" }, "x"];
    assert.deepEqual(normalizeCard("a", { checklist: items }).checklist, [{ id: "i1", text: "Buy", done: true }]);
    assert.equal(normalizeCard("a", { commentCount: -2 }).commentCount, 0);
  });

  test("an archived card is in no column and in the archive", () => {
    const cards = [
      normalizeCard("a", { title: "Kept", column: "todo", rank: "c" }),
      normalizeCard("b", { title: "Gone", column: "todo", rank: "d", archived: true }),
    ];
    assert.deepEqual(
      cardsInColumn(cards, COLUMNS, "todo").map((c) => c.id),
      ["a"],
    );
    assert.deepEqual(
      archivedCards(cards).map((c) => c.id),
      ["b"],
    );
  });
});

describe("updaters", () => {
  test("index changes merge: adding is idempotent and removing keeps the others", () => {
    assert.deepEqual(addToIndex("b")(["a"]), ["a", "b"]);
    assert.deepEqual(addToIndex("b")(["a", "b"]), ["a", "b"]);
    assert.deepEqual(addToIndex("a")(undefined), ["a"]);
    assert.deepEqual(removeFromIndex("a")(["a", "b", "a"]), ["b"]);
  });

  test("a card patch applies to what is stored now and refuses a deleted card", () => {
    const stored = { id: "a", title: "Moved elsewhere", column: "done", rank: "x" };
    assert.deepEqual(patchCard({ title: "New" })(stored), { ...stored, title: "New" });
    assert.throws(
      () => patchCard({ title: "New" })({ id: "a", deleted: true }),
      (e) => e.reason === "gone",
    );
    assert.throws(() => patchCard({ title: "New" })(undefined), Refused);
  });

  test("a dialog save names only the fields its user changed", () => {
    const base = normalizeCard("a", { title: "Bolts", description: "M6", labels: ["x"], column: "todo" });
    const fields = { title: "Bolts", description: "M8", labels: ["x"], assignees: [], due: null };
    assert.deepEqual(changedFields(base, fields), { description: "M8" });
  });

  test("two people editing different fields of one card both keep their edit", () => {
    const base = normalizeCard("a", { id: "a", title: "Bolts", description: "M6", column: "todo", rank: "i" });
    const afterAlice = { ...base, title: "Bolts, zinc" };
    const merged = mergeCard(base, { description: "M8" })(afterAlice);
    assert.equal(merged.title, "Bolts, zinc");
    assert.equal(merged.description, "M8");
  });

  test("the same field changed by someone else meanwhile is a conflict naming it", () => {
    const base = normalizeCard("a", { id: "a", title: "Bolts", column: "todo", rank: "i" });
    const theirs = { ...base, title: "Nuts", column: "done", rank: "k" };
    assert.throws(
      () => mergeCard(base, { title: "Screws", description: "new" })(theirs),
      (e) => e instanceof Conflict && e.fields.join() === "title" && e.current.title === "Nuts" && /Title/.test(e.message),
    );
    // The same change on both sides is no conflict; a rank moves with its column.
    assert.equal(mergeCard(base, { title: "Nuts" })(theirs).title, "Nuts");
    assert.throws(
      () => mergeCard(base, { column: "doing", rank: "j" })(theirs),
      (e) => e.fields.join() === "column",
    );
    assert.throws(
      () => mergeCard(base, { title: "x" })({ id: "a", deleted: true }),
      (e) => e.reason === "gone",
    );
  });

  test("default columns are written only when absent", () => {
    assert.deepEqual(
      defaultColumnsIfAbsent(undefined).map((c) => c.title),
      ["To do", "Doing", "Done"],
    );
    assert.throws(
      () => defaultColumnsIfAbsent([]),
      (e) => e.reason === "exists",
    );
  });

  test("a column moves into another's place, the rest keeping their order", () => {
    const ids = (list) => list.map((c) => c.id);
    const cols = COLUMNS.map((c) => ({ ...c }));
    assert.deepEqual(ids(moveColumnTo("done", "doing")(cols)), ["todo", "done", "doing"]);
    assert.deepEqual(ids(moveColumnTo("todo", "done")(cols)), ["doing", "done", "todo"]);
    assert.deepEqual(ids(moveColumnTo("todo", "todo")(cols)), ["todo", "doing", "done"]);
    assert.throws(
      () => moveColumnTo("gone", "todo")(cols),
      (e) => e.reason === "gone",
    );
  });

  test("column updaters", () => {
    const cols = COLUMNS.map((c) => ({ ...c }));
    assert.deepEqual(
      addColumn({ id: "qa", title: "QA", wip: 1 })(cols).map((c) => c.id),
      ["todo", "doing", "done", "qa"],
    );
    assert.equal(patchColumn("doing", { wip: 5 })(cols)[1].wip, 5);
    assert.throws(() => patchColumn("nope", { wip: 5 })(cols), Refused);
    assert.deepEqual(
      removeColumn("doing")(cols).map((c) => c.id),
      ["todo", "done"],
    );
  });

  test("using one item never takes stock below zero", () => {
    assert.deepEqual(useOne({ name: "Pens", count: 2 }), { name: "Pens", count: 1 });
    assert.throws(
      () => useOne({ name: "Pens", count: 0 }),
      (e) => e.reason === "empty",
    );
    assert.throws(
      () => useOne(undefined),
      (e) => e.reason === "missing",
    );
  });
});

describe("request generations", () => {
  test("only the latest request may apply its answer", async () => {
    const generations = createGenerations();
    const applied = [];
    const load = async (name, delay) => {
      const mine = generations.next();
      await new Promise((resolve) => setTimeout(resolve, delay));
      if (generations.isCurrent(mine)) applied.push(name);
    };
    // The slow read of the old configuration answers last and is dropped.
    await Promise.all([load("before the switch", 30), load("after the switch", 5)]);
    assert.deepEqual(applied, ["after the switch"]);
    assert.equal(generations.current, 2);
  });
});

test("ids are 12 base-36 characters", () => {
  const id = newId((n) => Uint8Array.from({ length: n }, (_, i) => i * 37));
  assert.match(id, /^[0-9a-z]{12}$/);
});

describe("the due filters", () => {
  const today = "2026-12-28";
  const due = (date) => card("a", "i", { due: date });

  test("due soon is today to seven days on, across a year's end; overdue is before today", () => {
    const soon = (date) => matchesFilter(due(date), { due: "soon" }, today);
    assert.deepEqual(["2026-12-27", "2026-12-28", "2027-01-04", "2027-01-05"].map(soon), [false, true, true, false]);
    assert.equal(soon(null), false, "a card without a date is never due");
    const overdue = (date) => matchesFilter(due(date), { due: "overdue" }, today);
    assert.deepEqual(["2026-12-27", "2026-12-28", null].map(overdue), [true, false, false]);
  });

  test("a stored view keeps a known due filter, drops any other, and counts as filtering", () => {
    assert.equal(normalizeView({ filter: { due: "overdue" } }).filter.due, "overdue");
    assert.equal(normalizeView({ filter: { due: "someday" } }).filter.due, "");
    assert.equal(isFiltering({ due: "soon" }), true);
    assert.deepEqual(defaultView().filter, { text: "", label: "", assignee: "", due: "" });
  });
});

describe("assignees and checklists", () => {
  test("a change of assignees also writes the first as assignee, for older Boards", () => {
    const base = normalizeCard("a", { title: "A", column: "todo" });
    const stored = mergeCard(base, { assignees: ["bob", "carol"] })({ title: "A", column: "todo" });
    assert.deepEqual([stored.assignees, stored.assignee], [["bob", "carol"], "bob"]);
    assert.equal(mergeCard(base, { assignees: [] })({ title: "A" }).assignee, "");
  });

  const stored = {
    id: "a",
    title: "A",
    checklist: [
      { id: "x", text: "X" },
      { id: "y", text: "Y" },
      { id: "z", text: "Z" },
    ],
  };
  const texts = (card) => card.checklist.map((i) => i.text + (i.done ? "+" : "")).join(" ");

  test("two people ticking different items both keep theirs", () => {
    const alice = changeChecklist({ tick: "x", done: true });
    const bob = changeChecklist({ tick: "z", done: true });
    assert.equal(texts(bob(alice(stored))), "X+ Y Z+");
    assert.deepEqual(checklistProgress(normalizeCard("a", bob(alice(stored)))), { done: 2, total: 3 });
  });

  test("items are added at the end, moved within bounds and removed; a removed one is gone", () => {
    assert.equal(texts(changeChecklist({ add: { id: "w", text: " W " } })(stored)), "X Y Z W");
    assert.equal(texts(changeChecklist({ move: "z", to: 0 })(stored)), "Z X Y");
    assert.equal(texts(changeChecklist({ move: "x", to: 99 })(stored)), "Y Z X");
    assert.equal(texts(changeChecklist({ remove: "y" })(stored)), "X Z");
    assert.throws(
      () => changeChecklist({ tick: "gone", done: true })(stored),
      (e) => e.reason === "gone",
    );
    assert.throws(
      () => changeChecklist({ add: { id: "w", text: "W" } })({ id: "a", deleted: true }),
      (e) => e.reason === "gone",
    );
  });

  test("a checklist holds at most its maximum", () => {
    const full = { checklist: Array.from({ length: MAX_CHECKLIST }, (_, i) => ({ id: "i" + i, text: "t" })) };
    assert.throws(
      () => changeChecklist({ add: { id: "new", text: "one more" } })(full),
      (e) => e.reason === "full",
    );
  });
});
