import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { customFieldsOf, labelColour, LABEL_COLOURS, normalizeLabelSet, startOf } from "../../plugins/board/board-labels.js";
import { normalizeCard } from "../../plugins/board/board-core.js";

describe("the board's label set", () => {
  test("a label named in the set shows its colour, whatever its case; others have none", () => {
    const colours = normalizeLabelSet([{ name: "Bug", color: "red" }, { name: "Design", color: "purple" }]);
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
