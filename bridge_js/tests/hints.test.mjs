import { test } from "node:test";
import assert from "node:assert/strict";
import { LIMITS } from "../src/protocol.js";
import { HINTS, hintsFor, sizeText } from "../src/hints.js";

test("a size reads as people read it", () => {
  assert.deepEqual([1048576, 16384, 1000, 3 * 1048576].map(sizeText), ["1 MiB", "16 KiB", "1000 bytes", "3 MiB"]);
});

test("the size hint follows the limit it is given, and the spec's by default", () => {
  assert.equal(HINTS.too_large, `values are limited to ${sizeText(LIMITS.valueBytes)}`);
  assert.equal(hintsFor({ ...LIMITS, valueBytes: 2 * 1048576 }).too_large, "values are limited to 2 MiB");
  assert.deepEqual(Object.keys(hintsFor({ valueBytes: 1 })), Object.keys(HINTS));
});
