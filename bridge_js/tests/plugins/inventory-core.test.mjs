import { test } from "node:test";
import assert from "node:assert/strict";
import { Refused } from "../../static/bridge/plugin-kit.js";
import {
  addToIndex,
  adjust,
  checkCount,
  checkName,
  createOnly,
  isItemId,
  newItemId,
  normalizeItem,
  sortItems,
} from "../../plugins/inventory/inventory-core.js";
const bytes = (n) => Uint8Array.from({ length: n }, (_, i) => i + 10);

test("item ids are readable slugs with a random suffix", () => {
  assert.equal(newItemId("Blue Pens (box)", bytes), "blue-pens-box-abcd");
  assert.equal(newItemId("Été", bytes), "ete-abcd");
  assert.equal(newItemId("!!!", bytes), "item-abcd");
  assert.ok(isItemId(newItemId("x".repeat(100), bytes)));
});

test("names and counts are checked before anything is written", () => {
  assert.deepEqual(checkName("  Pens "), { ok: true, value: "Pens" });
  assert.equal(checkName("   ").ok, false);
  assert.deepEqual(checkCount("12"), { ok: true, value: 12 });
  assert.deepEqual(checkCount(""), { ok: true, value: 0 });
  for (const bad of ["-1", "1.5", "lots", "1e12"]) assert.equal(checkCount(bad).ok, false, bad);
});

test("adjusting a count refuses to go below zero or to a missing item", () => {
  assert.deepEqual(adjust(-1)({ name: "Pens", count: 1 }), { name: "Pens", count: 0 });
  assert.deepEqual(adjust(+3)({ name: "Pens", count: 1 }), { name: "Pens", count: 4 });
  assert.throws(
    () => adjust(-1)({ name: "Pens", count: 0 }),
    (e) => e.reason === "negative",
  );
  assert.throws(
    () => adjust(1)(undefined),
    (e) => e.reason === "missing",
  );
});

test("the index merges additions and drops junk", () => {
  assert.deepEqual(addToIndex("b-1")(["a-1", "Bad Id", "a-1"]), ["a-1", "b-1"]);
  assert.deepEqual(addToIndex("a-1")(undefined), ["a-1"]);
  assert.throws(() => createOnly({ name: "x", count: 0 })({ name: "y", count: 1 }), Refused);
});

test("stored items are normalised and sorted by name", () => {
  const items = [normalizeItem("b-1", { name: "bolts", count: 3 }), normalizeItem("a-1", { name: "Anchors", count: -2 }), normalizeItem("c-1", "junk")].filter(
    Boolean,
  );
  assert.deepEqual(
    sortItems(items).map((i) => [i.id, i.count, i.broken]),
    [
      ["a-1", 0, true],
      ["b-1", 3, false],
    ],
  );
});
