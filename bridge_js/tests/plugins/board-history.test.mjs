import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { agentNotices, agentOf, agentText, cardHistory, cardNotice, fieldChanges, partsText, restoreChoices } from "../../plugins/board/board-history.js";
import { normalizeCard } from "../../plugins/board/board-core.js";

const ctx = {
  columns: [
    { id: "todo", title: "To do" },
    { id: "doing", title: "Doing" },
    { id: "done", title: "Done" },
  ],
  person: (u) => ({ bob: "Bob Builder", carol: "Carol" })[u] || u,
  day: (d) => "day " + d,
};
const card = (fields) => normalizeCard("a", { title: "Deploy", column: "todo", rank: "i", ...fields });
const texts = (before, after) => fieldChanges(card(before), card(after), ctx).map((c) => partsText(c.parts));

describe("one entry per field a version changed", () => {
  test("a move names both columns; a move within one says up or down", () => {
    assert.deepEqual(texts({}, { column: "doing", rank: "k" }), ["moved this card from To do to Doing"]);
    assert.deepEqual(texts({ rank: "k" }, { rank: "b" }), ["moved this card up in To do"]);
  });

  test("checklist ticks, additions and removals each say which item", () => {
    const before = {
      checklist: [
        { id: "x1", text: "Deploy", done: false },
        { id: "x2", text: "Tag", done: false },
      ],
    };
    const after = {
      checklist: [
        { id: "x1", text: "Deploy", done: true },
        { id: "x3", text: "Announce", done: false },
      ],
    };
    assert.deepEqual(texts(before, after), ["ticked Deploy", "added Announce to the checklist", "removed Tag from the checklist"]);
  });

  test("members, labels and dates, one entry each, in the page's words", () => {
    assert.deepEqual(
      texts(
        { assignees: ["carol"], labels: ["bug"], due: "2026-12-01" },
        { assignees: ["bob"], labels: ["Bug", "ux"], due: "2026-12-24", start: "2026-12-02" },
      ),
      ["assigned Bob Builder", "unassigned Carol", "added the label ux", "set the start date to day 2026-12-02", "changed the due date to day 2026-12-24"],
    );
    assert.deepEqual(texts({ due: "2026-12-01" }, {}), ["removed the due date"]);
  });

  test("a name in an entry is set apart from the words around it", () => {
    const [change] = fieldChanges(card({}), card({ title: "Ship" }), ctx);
    assert.deepEqual(change, { field: "title", parts: ["renamed this card to ", { em: "Ship" }] });
  });
});

describe("a card's history", () => {
  const version = (revision, value, source, extra = {}) => ({ revision, value, source, writtenAt: "2026-12-02T07:0" + revision + ":00Z", ...extra });
  const bob = { user: "bob", via: "bridge" };
  const agent = { user: "bob", via: "mcp", runId: "r1" };

  test("says who changed what through what, newest first, and marks an agent", () => {
    const entries = [
      { revision: "4", deleted: true, source: bob, writtenAt: "2026-12-02T07:04:00Z" },
      version("3", { title: "Bolts", column: "done", rank: "k", due: "2026-12-24" }, agent),
      version("2", { title: "Bolts", column: "todo", rank: "i" }, { user: "alice", via: "api" }),
      version("1", { title: "Bolt", column: "todo", rank: "i" }, bob),
    ];
    const history = cardHistory("a", entries, true, ctx);
    assert.deepEqual(
      history.map((v) => [v.who, v.by, v.via, Boolean(v.agent), v.changes.map((c) => partsText(c.parts))]),
      [
        ["bob", "Bob Builder", "the board", false, ["deleted this card"]],
        ["bob", "Bob Builder's agent", "MCP", true, ["moved this card from To do to Done", "set the due date to day 2026-12-24"]],
        ["alice", "alice", "REST", false, ["renamed this card to Bolts"]],
        ["bob", "Bob Builder", "the board", false, ["added this card to To do"]],
      ],
    );
    assert.equal(history[0].latest, true);
    assert.equal(history[1].card.due, "2026-12-24", "each version's card, to restore");
    assert.equal(history[0].card, null);
  });

  test("the oldest version of a partial page changed what it cannot tell; a restore names its source", () => {
    assert.equal(partsText(cardHistory("a", [version("9", { title: "A" }, bob)], false, ctx)[0].changes[0].parts), "changed this card");
    const restored = { user: "carol", via: "admin", restoredFrom: "2" };
    const history = cardHistory("a", [version("5", { title: "A" }, restored), version("2", { title: "A" }, bob)], true, ctx);
    assert.equal(history[0].restoredFrom, "2");
    assert.equal(partsText(history[0].changes[0].parts), "saved this card unchanged");
  });
});

describe("agents, named with their owner", () => {
  test("a source names an agent by its token's name, or through MCP, a run or a conversation", () => {
    assert.deepEqual(agentOf({ user: "alice", via: "mcp", agent: " triage-bot " }), { name: "triage-bot", owner: "alice" });
    assert.deepEqual(agentOf({ user: "bob", via: "api", runId: "r1" }), { name: null, owner: "bob" });
    assert.deepEqual(agentOf({ user: "bob", via: "mcp", agent: "  " }), { name: null, owner: "bob" });
    assert.equal(agentOf({ user: "bob", via: "bridge" }), null);
    assert.equal(agentOf(undefined), null);
    assert.equal(agentOf("mcp"), null);
  });

  test("Activity names the agent and whose it is, in the page's names", () => {
    const entries = [{ revision: "2", value: { title: "A", column: "todo" }, source: { user: "bob", via: "mcp", agent: "triage-bot" }, writtenAt: "" }];
    const [version] = cardHistory("a", entries, true, ctx);
    assert.equal(version.by, "triage-bot (Bob Builder's agent)");
    assert.deepEqual(version.agent, { name: "triage-bot", owner: "bob" });
    assert.equal(agentText({ name: null, owner: "carol" }, ctx.person), "Carol's agent");
  });

  test("a change elsewhere is told as what it did to the card", () => {
    const notice = (before, after) => cardNotice(before && card(before), after && card(after), ctx);
    assert.equal(notice({}, { column: "doing" }), "moved “Deploy” to Doing");
    assert.equal(notice(null, { column: "doing" }), "added “Deploy” to Doing");
    assert.equal(notice({}, { archived: true, column: "doing" }), "archived “Deploy”");
    assert.equal(notice({ archived: true }, {}), "brought back “Deploy”");
    assert.equal(notice({}, { title: "Ship" }), "renamed “Deploy” to “Ship”");
    assert.equal(notice({}, { due: "2026-12-24", title: "Ship" }), "edited “Ship”");
    assert.equal(notice({}, { rank: "k" }), "moved “Deploy” in To do");
    assert.equal(notice({}, null), "deleted “Deploy”");
    assert.equal(notice(null, null), null);
  });

  test("one toast per event: one change told whole, several counted", () => {
    const bot = { name: "triage-bot", owner: "bob" };
    assert.equal(agentNotices([{ agent: bot, what: "moved “Deploy” to Doing" }], ctx.person), "triage-bot (Bob Builder's agent) moved “Deploy” to Doing.");
    assert.equal(
      agentNotices(
        [
          { agent: bot, what: "added “A” to To do" },
          { agent: bot, what: "added “B” to To do" },
        ],
        ctx.person,
      ),
      "triage-bot (Bob Builder's agent) changed 2 cards.",
    );
  });
});

describe("what a restore would change", () => {
  test("each differing field with its value now and then; the rest are not offered", () => {
    const now = card({ title: "Ship", description: "Long", due: "2026-12-24", labels: ["bug"] });
    const then = card({ title: "Deploy", description: "Long", labels: [] });
    assert.deepEqual(
      restoreChoices(now, then, ctx).map((c) => [c.field, c.now, c.then, c.value]),
      [
        ["title", "Ship", "Deploy", "Deploy"],
        ["labels", "bug", "none", []],
        ["due", "day 2026-12-24", "none", null],
      ],
    );
  });

  test("a column that no longer exists is not offered: the card stays where it is", () => {
    const choices = restoreChoices(card({ column: "doing" }), card({ column: "gone" }), ctx);
    assert.deepEqual(choices, []);
  });
});
