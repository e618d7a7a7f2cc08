import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { KEYS } from "../../plugins/board/board-core.js";
import { createStore, readEntries } from "../../plugins/board/board-changes.js";
import { WINDOW_FROM, createFilterCache, createGrouping, groupByColumn, offsetOf, windowOf } from "../../plugins/board/board-view.js";

const COLUMNS = [
  { id: "todo", title: "To do", wip: 0 },
  { id: "done", title: "Done", wip: 0 },
];
const card = (id, column, rank, extra = {}) => ({ id, column, rank, title: id, description: "", assignees: [], labels: [], ...extra });

describe("the store hands unchanged cards back as the same objects", () => {
  test("a change of one card gives a new object for it alone", () => {
    const store = createStore();
    store.set(KEYS.columns, COLUMNS);
    store.set(KEYS.cards, ["a", "b"]);
    store.set(KEYS.card("a"), card("a", "todo", "h"));
    store.set(KEYS.card("b"), card("b", "todo", "p"));
    const before = store.board().cards;
    store.apply([{ key: KEYS.card("b"), value: card("b", "done", "p") }]);
    const after = store.board().cards;
    assert.equal(after[0], before[0], "a is untouched: the page keeps its node");
    assert.notEqual(after[1], before[1]);
    assert.equal(after[1].column, "done");
  });

  test("changes one after another, a deletion and a new index each show in board()", () => {
    const store = createStore();
    store.set(KEYS.cards, ["a", "b", "c"]);
    for (const id of ["a", "b", "c"]) store.set(KEYS.card(id), card(id, "todo", id === "a" ? "h" : id === "b" ? "p" : "t"));
    store.board();
    store.apply([{ key: KEYS.card("a"), value: card("a", "done", "h") }]);
    assert.equal(store.board().cards[0].column, "done");
    store.apply([{ key: KEYS.card("c"), value: card("c", "done", "t") }]);
    assert.deepEqual(
      store.board().cards.map((c) => c.column),
      ["done", "todo", "done"],
    );
    store.apply([{ key: KEYS.card("b"), deleted: true }]);
    assert.deepEqual(
      store.board().cards.map((c) => c.id),
      ["a", "c"],
    );
    store.apply([
      { key: KEYS.cards, value: ["c", "a", "d"] },
      { key: KEYS.card("d"), value: card("d", "todo", "x") },
    ]);
    assert.deepEqual(
      store.board().cards.map((c) => c.id),
      ["c", "a", "d"],
    );
  });

  test("a resync forgets what it had normalized", () => {
    const store = createStore();
    const value = card("a", "todo", "h");
    store.set(KEYS.cards, ["a"]);
    store.set(KEYS.card("a"), value);
    const first = store.board().cards[0];
    store.clear();
    store.set(KEYS.cards, ["a"]);
    store.set(KEYS.card("a"), value);
    assert.notEqual(store.board().cards[0], first);
  });
});

describe("the store keeps whose write an agent's card was", () => {
  const bot = { user: "alice", userId: 3, via: "mcp", agent: "triage-bot" };
  const person = { user: "bob", via: "bridge" };
  const holding = () => {
    const store = createStore();
    store.set(KEYS.cards, ["a", "b"]);
    store.set(KEYS.card("a"), card("a", "todo", "h"));
    store.set(KEYS.card("b"), card("b", "todo", "p"));
    store.board();
    return store;
  };

  test("an agent's change marks the card with the agent; a person's next change clears it", () => {
    const store = holding();
    const untouched = store.board().cards[1];
    store.apply([{ key: KEYS.card("a"), revision: "5", value: card("a", "done", "h"), source: bot }]);
    assert.deepEqual(store.board().cards[0].agent, { name: "triage-bot", owner: "alice" });
    assert.equal(store.board().cards[1], untouched, "the other card keeps its node");
    store.apply([{ key: KEYS.card("a"), revision: "6", value: card("a", "done", "k"), source: person }]);
    assert.equal(store.board().cards[0].agent, undefined);
  });

  test("a value named only keeps its writer for the read that follows; the page's own write clears it", () => {
    const store = holding();
    assert.deepEqual(store.apply([{ key: KEYS.card("b"), revision: "7", source: bot }]), [KEYS.card("b")]);
    store.set(KEYS.card("b"), card("b", "done", "p")); // the read: it names no writer
    assert.equal(store.board().cards[1].agent.name, "triage-bot");
    store.set(KEYS.card("b"), card("b", "todo", "p"), null); // this person's write
    assert.equal(store.board().cards[1].agent, undefined);
  });

  test("a change without a source, or a resync, leaves no mark", () => {
    const store = holding();
    store.apply([{ key: KEYS.card("a"), value: card("a", "done", "h"), source: bot }]);
    store.apply([{ key: KEYS.card("a"), value: card("a", "todo", "h") }]);
    assert.equal(store.board().cards[0].agent, undefined);
    store.apply([{ key: KEYS.card("a"), value: card("a", "done", "h"), source: bot }]);
    store.clear();
    store.set(KEYS.cards, ["a"]);
    store.set(KEYS.card("a"), card("a", "done", "h"));
    assert.equal(store.board().cards[0].agent, undefined);
  });

  test("card(key) is the card as held now, or null", () => {
    const store = holding();
    assert.equal(store.card(KEYS.card("a")).column, "todo");
    assert.equal(store.card(KEYS.card("zz")), null);
    assert.equal(store.card(KEYS.cards), null);
  });
});

describe("grouping", () => {
  test("columns in board order; archived cards out; a card of a gone column in the first", () => {
    const cards = [card("x", "done", "b"), card("y", "todo", "c"), card("z", "gone", "a"), card("w", "todo", "a", { archived: true })];
    const groups = groupByColumn(cards, COLUMNS);
    assert.deepEqual(
      groups.get("todo").map((c) => c.id),
      ["z", "y"],
    );
    assert.deepEqual(
      groups.get("done").map((c) => c.id),
      ["x"],
    );
  });

  test("an edit patches its own column alone; a move or a new card groups again", () => {
    const grouping = createGrouping();
    const cards = [card("a", "todo", "h"), card("b", "done", "p"), card("c", "todo", "t")];
    const first = grouping(cards, COLUMNS);
    assert.equal(grouping(cards, COLUMNS), first);
    const same = grouping([...cards], COLUMNS);
    assert.equal(same.get("todo"), first.get("todo"), "the same cards in a new array change nothing");
    const edited = [cards[0], cards[1], { ...cards[2], title: "C, renamed" }];
    const patched = grouping(edited, COLUMNS);
    assert.notEqual(patched.get("todo"), first.get("todo"));
    assert.equal(patched.get("done"), first.get("done"), "an untouched column keeps its array");
    assert.deepEqual(
      patched.get("todo").map((c) => c.title),
      ["a", "C, renamed"],
    );
    const moved = grouping([edited[0], edited[1], { ...edited[2], column: "done" }], COLUMNS);
    assert.deepEqual(
      moved.get("done").map((c) => c.id),
      ["b", "c"],
    );
    assert.deepEqual(
      moved.get("todo").map((c) => c.id),
      ["a"],
    );
    const added = grouping([...cards, card("d", "todo", "a")], COLUMNS);
    assert.deepEqual(
      added.get("todo").map((c) => c.id),
      ["d", "a", "c"],
    );
  });
});

describe("the filter cache", () => {
  test("asks each card once per filter, and a new card object again", () => {
    const cache = createFilterCache();
    const a = card("a", "todo", "h", { title: "Fix login" });
    const b = card("b", "todo", "p", { title: "Write docs" });
    const filter = { text: "login", label: "", assignee: "", due: "" };
    assert.deepEqual(
      cache.shown([a, b], filter, "2026-12-05", "alice").map((c) => c.id),
      ["a"],
    );
    const b2 = { ...b, title: "Login page" };
    assert.deepEqual(
      cache.shown([a, b2], filter, "2026-12-05", "alice").map((c) => c.id),
      ["a", "b"],
    );
    assert.deepEqual(
      cache.shown([a, b2], { ...filter, text: "docs" }, "2026-12-05", "alice").map((c) => c.id),
      [],
    );
  });

  test("no filter shows the column as it is", () => {
    const cards = [card("a", "todo", "h")];
    assert.equal(createFilterCache().shown(cards, { text: "" }, "2026-12-05", "alice"), cards);
  });
});

describe("windowing", () => {
  const heights = (n, h = 80) => Array.from({ length: n }, () => h);

  test("a short column draws every card", () => {
    assert.deepEqual(windowOf({ heights: heights(WINDOW_FROM - 1), gap: 8, top: 5000, height: 600 }), {
      start: 0,
      end: WINDOW_FROM - 1,
      before: 0,
      after: 0,
    });
  });

  test("a long column draws what shows and a margin, spacers standing for the rest", () => {
    const all = heights(5000);
    const w = windowOf({ heights: all, gap: 8, top: 88 * 1000, height: 704, margin: 880 });
    assert.equal(w.start, 990);
    assert.equal(w.end, 1018);
    assert.equal(w.before, 990 * 88);
    assert.equal(w.after, (5000 - 1018) * 88);
    assert.equal(w.before + (w.end - w.start) * 88 + w.after, 5000 * 88, "nothing lost or counted twice");
  });

  test("the top of a long column starts at its first card, and the bottom ends at its last", () => {
    const all = heights(400, 50);
    assert.equal(windowOf({ heights: all, gap: 0, top: 0, height: 500, margin: 100 }).start, 0);
    const end = windowOf({ heights: all, gap: 0, top: 400 * 50 - 500, height: 500, margin: 100 });
    assert.equal(end.end, 400);
    assert.equal(end.after, 0);
  });

  test("offsetOf agrees with the spacer before a card", () => {
    const all = [10, 20, 30, 40, ...heights(200, 5)];
    assert.equal(offsetOf(all, 2, 3), 10 + 20 + 30 + 3 * 2);
  });
});

describe("a Board opened after an agent's change marks the card from its read", () => {
  // What a read carries of an agent's write source (kanban/data/kv.py, agent_source).
  const bot = { user: "alice", via: "mcp", agent: "triage-bot" };
  // A project's kv as the bridge answers getValues: a source only for an agent's write.
  const fakeKv = (stored, { tooLarge = [] } = {}) => {
    const calls = [];
    return {
      calls,
      async getValues(keys) {
        calls.push(keys);
        return keys.map((key) => {
          if (keys.length > 1 && tooLarge.includes(key)) return { found: false, error: { code: "too_large", message: "read it alone" } };
          if (!(key in stored)) return { found: false };
          const { value, source } = stored[key];
          return { found: true, value, revision: "1", ...(source && { source }) };
        });
      },
      async getValue(key) {
        calls.push(key);
        return stored[key]?.value;
      },
    };
  };
  const loaded = async (kv, ids, batch = 256) => {
    const store = createStore();
    store.set(KEYS.cards, ids);
    const keys = store.missing();
    const entries = await readEntries(kv, keys, batch);
    keys.forEach((key, i) => {
      store.read(key, entries[i]);
    });
    return store;
  };

  test("the read's source marks an agent's card; a person's card, or an absent one, has none", async () => {
    const kv = fakeKv({
      [KEYS.card("a")]: { value: card("a", "todo", "h"), source: bot },
      [KEYS.card("b")]: { value: card("b", "todo", "p") },
    });
    const store = await loaded(kv, ["a", "b", "gone"], 2);
    assert.deepEqual(kv.calls, [[KEYS.card("a"), KEYS.card("b")], [KEYS.card("gone")]]);
    const [a, b] = store.board().cards;
    assert.deepEqual(a.agent, { name: "triage-bot", owner: "alice" });
    assert.equal(b.agent, undefined);
    assert.equal(store.board().cards.length, 2);
  });

  test("a value too big for its batch is read alone and keeps its writer", async () => {
    const kv = fakeKv(
      {
        [KEYS.card("a")]: { value: card("a", "todo", "h"), source: bot },
        [KEYS.card("b")]: { value: card("b", "todo", "p") },
      },
      { tooLarge: [KEYS.card("a")] },
    );
    const store = await loaded(kv, ["a", "b"]);
    assert.deepEqual(kv.calls, [[KEYS.card("a"), KEYS.card("b")], [KEYS.card("a")]]);
    assert.equal(store.board().cards[0].agent.name, "triage-bot");
  });

  test("a person's change after the load clears the mark, as does a later read without a source", async () => {
    const stored = { [KEYS.card("a")]: { value: card("a", "todo", "h"), source: bot } };
    const store = await loaded(fakeKv(stored), ["a"]);
    assert.equal(store.board().cards[0].agent.name, "triage-bot");
    store.apply([{ key: KEYS.card("a"), revision: "2", value: card("a", "done", "h"), source: { user: "bob", via: "bridge" } }]);
    assert.equal(store.board().cards[0].agent, undefined);

    assert.deepEqual(store.apply([{ key: KEYS.card("a"), revision: "3", source: bot }]), [KEYS.card("a")]); // named only: read next
    const [entry] = await readEntries(fakeKv({ [KEYS.card("a")]: { value: card("a", "todo", "h") } }), [KEYS.card("a")], 256);
    store.read(KEYS.card("a"), entry); // a person wrote it again before the read
    assert.equal(store.board().cards[0].agent, undefined);
  });

  test("a read the server could not serve in time is asked again", async () => {
    let refusals = 1;
    const kv = {
      async getValues(keys) {
        if (refusals-- > 0) throw Object.assign(new Error("busy"), { code: "unavailable" });
        return keys.map(() => ({ found: true, value: card("a", "todo", "h"), revision: "1", source: bot }));
      },
    };
    const [entry] = await readEntries(kv, [KEYS.card("a")], 256);
    assert.deepEqual(entry.source, bot);
  });
});
