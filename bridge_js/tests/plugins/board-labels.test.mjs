import { test, describe } from "node:test";
import assert from "node:assert/strict";
import {
  addLabel,
  customFieldsOf,
  editLabel,
  labelColour,
  LABEL_COLOURS,
  labelName,
  labelSet,
  normalizeLabelSet,
  removeLabel,
  renamedLabels,
  startOf,
  withoutLabel,
} from "../../plugins/board/board-labels.js";
import { normalizeCard } from "../../plugins/board/board-core.js";

describe("the board's label set", () => {
  test("a label named in the set shows its colour, whatever its case; others have none", () => {
    const colours = normalizeLabelSet([
      { name: "Bug", color: "red" },
      { name: "Design", color: "purple" },
    ]);
    assert.equal(labelColour(colours, "bug"), "red");
    assert.equal(labelColour(colours, "DESIGN"), "purple");
    assert.equal(labelColour(colours, "Chore"), null);
  });

  test("only Trello's ten base colours are kept, the first entry of a name wins, junk goes", () => {
    const colours = normalizeLabelSet([
      { name: "Bug", color: "red" },
      { name: "bug", color: "green" },
      { name: "Dark", color: "red_dark" },
      { name: "Script", color: "url(x)" },
      { name: "", color: "blue" },
      { color: "blue" },
      "Bug",
      null,
    ]);
    assert.deepEqual([...colours], [["bug", "red"]]);
    assert.equal(LABEL_COLOURS.length, 10);
    assert.equal(normalizeLabelSet({ Bug: "red" }).size, 0);
    assert.equal(normalizeLabelSet(undefined).size, 0);
  });
});

describe("what an import kept on a card", () => {
  test("Trello's start moment shows as its day; anything else as no start", () => {
    assert.equal(startOf({ trello: { start: "2024-03-01T09:30:00.000Z" } }), "2024-03-01");
    assert.equal(startOf({ trello: { start: "soon" } }), null);
    assert.equal(startOf({ trello: null }), null);
    assert.equal(startOf({}), null);
  });

  test("custom fields read as text: checkboxes Yes/No, dates their day, objects nothing", () => {
    const card = {
      trello: {
        customFields: [
          { field: "Points", type: "number", value: "5" },
          { field: "Shipped", type: "checkbox", value: "true" },
          { field: "Reviewed", type: "checkbox", value: null },
          { field: "Launch", type: "date", value: "2024-05-01T12:00:00.000Z" },
          { field: "Odd", type: "text", value: { nested: 1 } },
          { type: "text", value: "no name" },
          "junk",
        ],
      },
    };
    assert.deepEqual(customFieldsOf(card), [
      { name: "Points", value: "5" },
      { name: "Shipped", value: "Yes" },
      { name: "Reviewed", value: "No" },
      { name: "Launch", value: "2024-05-01" },
      { name: "Odd", value: "" },
    ]);
  });

  test("a card carries them as it is normalised", () => {
    const card = normalizeCard("a", { title: "T", trello: { start: "2024-03-01", customFields: [{ field: "Team", value: "Core" }] } });
    assert.equal(card.start, "2024-03-01");
    assert.deepEqual(card.customFields, [{ name: "Team", value: "Core" }]);
  });
});

describe("changing the label set", () => {
  const set = [
    { name: "Bug", color: "red" },
    { name: "Design", color: "purple" },
  ];

  test("a new label joins the set in the palette's colour; a name it has, in any case, is refused", () => {
    assert.deepEqual(addLabel("Chore", "lime")(set), [...set, { name: "Chore", color: "lime" }]);
    assert.deepEqual(addLabel("Chore", "lime")(undefined), [{ name: "Chore", color: "lime" }]);
    assert.throws(() => addLabel("bug", "green")(set), { code: "exists" });
    assert.throws(() => addLabel("Chore", "teal")(set), { code: "invalid_argument" });
  });

  test("a name is trimmed, and may not be empty, hold a comma or run long", () => {
    assert.equal(labelName("  needs   review "), "needs review");
    assert.throws(() => labelName("  "), { code: "invalid_argument" });
    assert.throws(() => labelName("a,b"), { code: "invalid_argument" });
    assert.throws(() => labelName("x".repeat(41)), { code: "invalid_argument" });
  });

  test("a label is renamed and recoloured where it stands; another's name is refused", () => {
    assert.deepEqual(editLabel("bug", { name: "Defect", color: "orange" })(set), [{ name: "Defect", color: "orange" }, set[1]]);
    assert.deepEqual(editLabel("Bug", { name: "BUG", color: "red" })(set)[0], { name: "BUG", color: "red" });
    assert.throws(() => editLabel("Bug", { name: "design", color: "red" })(set), { code: "exists" });
    assert.throws(() => editLabel("Chore", { name: "Chores", color: "red" })(set), { code: "gone" });
  });

  test("a card's labels follow a rename, without doubling one it already had", () => {
    assert.deepEqual(renamedLabels(["ux", "bug"], "Bug", "Defect"), ["ux", "Defect"]);
    assert.deepEqual(renamedLabels(["bug", "Defect"], "bug", "Defect"), ["Defect"]);
    assert.equal(renamedLabels(["ux"], "bug", "Defect"), null);
  });

  test("a deleted label leaves the set and the cards that carried it; one gone meanwhile is no error", () => {
    assert.deepEqual(removeLabel("BUG")(set), [set[1]]);
    assert.deepEqual(removeLabel("chore")(set), set);
    assert.deepEqual(withoutLabel(["ux", "Bug"], "bug"), ["ux"]);
    assert.equal(withoutLabel(["ux"], "bug"), null);
  });

  test("the picker lists the set in its stored order, readable entries only", () => {
    assert.deepEqual(labelSet([...set, { name: "bug", color: "green" }, { name: "X", color: "teal" }, null]), set);
  });

  test("a card's own start day wins over Trello's, and a cleared one hides it", () => {
    assert.equal(startOf({ start: "2026-12-01", trello: { start: "2024-03-01T09:30:00.000Z" } }), "2026-12-01");
    assert.equal(startOf({ start: null, trello: { start: "2024-03-01T09:30:00.000Z" } }), null);
  });
});
