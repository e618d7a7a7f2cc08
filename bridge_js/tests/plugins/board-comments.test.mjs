import { test, describe } from "node:test";
import assert from "node:assert/strict";
import {
  MAX_COMMENT,
  addComment,
  completeMention,
  deleteComment,
  editComment,
  mentionAt,
  mentionChoices,
  mentioned,
  normalizeComments,
} from "../../plugins/board/board-comments.js";
const comment = (id, author, text = "hi") => ({ id, author, text, at: "2026-12-02T10:00:00Z" });

describe("comments", () => {
  test("two people commenting at once both keep theirs, each once", () => {
    const alice = addComment(comment("c1", "alice", "first"));
    const bob = addComment(comment("c2", "bob", "second"));
    const both = bob(alice(undefined));
    assert.deepEqual(
      both.map((c) => c.author),
      ["alice", "bob"],
    );
    assert.equal(alice(both).length, 2, "a retried add does not add twice");
  });

  test("only its author edits a comment; its author or an owner deletes it", () => {
    const list = [comment("c1", "alice")];
    assert.equal(editComment("c1", "alice", " better ", "t2")(list)[0].text, "better");
    assert.equal(editComment("c1", "alice", "better", "t2")(list)[0].edited, "t2");
    assert.throws(
      () => editComment("c1", "bob", "mine now", "t2")(list),
      (e) => e.reason === "not_yours",
    );
    assert.throws(
      () => deleteComment("c1", "bob", false)(list),
      (e) => e.reason === "not_yours",
    );
    assert.deepEqual(deleteComment("c1", "bob", true)(list), []);
    assert.deepEqual(deleteComment("c1", "alice", false)(list), []);
    assert.throws(
      () => deleteComment("c9", "alice", true)(list),
      (e) => e.reason === "gone",
    );
  });

  test("an empty or too long comment is refused, and junk in the stored list is dropped", () => {
    assert.throws(
      () => addComment(comment("c1", "a", "  "))([]),
      (e) => e.reason === "empty",
    );
    const long = "x".repeat(MAX_COMMENT + 1);
    assert.throws(
      () => addComment(comment("c1", "a", long))([]),
      (e) => e.reason === "too_long",
    );
    const stored = [comment("c1", "a"), comment("c1", "b"), { id: "c2", text: "no author" }, comment("bad id", "a"), 7];
    assert.deepEqual(
      normalizeComments(stored).map((c) => c.id),
      ["c1"],
    );
  });

  test("@mentions: the name being typed, the members it may be, and the text completed", () => {
    const members = [
      { username: "bob", displayName: "Bob B" },
      { username: "bea", displayName: "Beatrice" },
      { username: "carol", displayName: "Carol" },
    ];
    assert.equal(mentionAt("hi @b", 5), "b");
    assert.equal(mentionAt("mail a@b", 8), null, "an address is not a mention");
    assert.deepEqual(
      mentionChoices(members, "b").map((m) => m.username),
      ["bob", "bea"],
    );
    assert.deepEqual(completeMention("hi @b there", 5, "bob"), { text: "hi @bob  there", caret: 8 });
    assert.deepEqual(mentioned("@bob please check, cc @carol. a@bea", ["bob", "bea", "carol"]), ["bob", "carol"]);
  });
});
