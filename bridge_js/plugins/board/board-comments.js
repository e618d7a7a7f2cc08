// Comments on a card, pure logic: no DOM, no bridge, no clock: the page and the node tests
// import it as it is.
//
// A card's comments are one list under `comments:<cardId>`, read when its dialog opens
// (never with the board) and changed only with updateValue, so two people commenting at
// once both keep theirs. Each comment names its author's username. The page offers people
// to edit and delete their own comments, and owners to delete any; the server holds every
// write of the key to the same rules whichever way it comes (kanban/data/board/comments.py):
// a new comment's author is its writer, a list past MAX_COMMENTS or a text past
// MAX_COMMENT is refused, and a guest reads no comment history.
import { Refused } from "../../static/bridge/plugin-kit.js";

// The server reads these two numbers from this file (kanban/data/board/layout.py
// page_constant): keep each one an `export const NAME = <digits>;` line.
export const MAX_COMMENTS = 200;
export const MAX_COMMENT = 2000;
export const key = (cardId) => "comments:" + cardId;
export const isCommentKey = (k) => k.startsWith("comments:");
export const cardOf = (k) => k.slice("comments:".length);
const isId = (v) => typeof v === "string" && /^[A-Za-z0-9_-]{1,64}$/.test(v);
const text = (v) => (typeof v === "string" ? v.slice(0, MAX_COMMENT) : "");

export function normalizeComments(value) {
  if (!Array.isArray(value)) return [];
  const seen = new Set();
  const out = [];
  for (const c of value) {
    if (!c || typeof c !== "object" || !isId(c.id) || seen.has(c.id) || typeof c.author !== "string") continue;
    if (!text(c.text).trim()) continue;
    seen.add(c.id);
    out.push({
      id: c.id,
      author: c.author.slice(0, 150),
      text: text(c.text),
      at: typeof c.at === "string" ? c.at : "",
      edited: typeof c.edited === "string" ? c.edited : null,
    });
  }
  return out.slice(-MAX_COMMENTS);
}

function checkText(value) {
  const clean = String(value || "").trim();
  if (!clean) throw new Refused("empty", "A comment needs some text.");
  if (clean.length > MAX_COMMENT) throw new Refused("too_long", "A comment is at most " + MAX_COMMENT + " characters.");
  return clean;
}

// --- updaters (pure: updateValue may call them more than once) ------------------------------

export const addComment = (comment) => (current) => {
  const list = normalizeComments(current);
  if (list.some((c) => c.id === comment.id)) return list;
  if (list.length >= MAX_COMMENTS) throw new Refused("full", "This card holds its most comments, " + MAX_COMMENTS + ".");
  return [...list, { ...comment, text: checkText(comment.text), edited: null }];
};

function found(list, id) {
  const at = list.findIndex((c) => c.id === id);
  if (at < 0) throw new Refused("gone", "This comment was deleted meanwhile.");
  return at;
}

export const editComment = (id, author, newText, at) => (current) => {
  const list = normalizeComments(current);
  const i = found(list, id);
  if (list[i].author !== author) throw new Refused("not_yours", "Only its author edits a comment.");
  return list.map((c, j) => (j === i ? { ...c, text: checkText(newText), edited: at } : c));
};

// `owner`: the person deleting owns the board, and may delete anyone's.
export const deleteComment = (id, author, owner) => (current) => {
  const list = normalizeComments(current);
  const i = found(list, id);
  if (!owner && list[i].author !== author) throw new Refused("not_yours", "Only its author or an owner deletes a comment.");
  return list.filter((_, j) => j !== i);
};

// --- @mentions ---------------------------------------------------------------------------------

// The name being typed after an "@" just before the caret, or null.
export function mentionAt(value, caret) {
  const match = /(?:^|\s)@([\w.@+-]*)$/.exec(String(value).slice(0, caret));
  return match ? match[1] : null;
}

// Members whose username or display name starts with the typed part, at most `limit`.
export function mentionChoices(members, typed, limit = 6) {
  const t = typed.toLocaleLowerCase();
  return members
    .filter(
      (m) =>
        m.username.toLocaleLowerCase().startsWith(t) ||
        String(m.displayName || "")
          .toLocaleLowerCase()
          .startsWith(t),
    )
    .slice(0, limit);
}

// The text with the typed part replaced by the whole username, and the caret after it.
export function completeMention(value, caret, username) {
  const before = String(value).slice(0, caret);
  const start = before.lastIndexOf("@") + 1;
  const inserted = username + " ";
  return { text: before.slice(0, start) + inserted + value.slice(caret), caret: start + inserted.length };
}

// An @name: what the notification and the drawn comment (board-markdown.js) both take as
// a mention. Group 1 is what stands before the "@", group 2 the name (a sentence's final
// dots are not part of it: mentionName).
export const MENTION = /(^|[^\w.@+-])@([\w.@+-]+)/g;
export const mentionName = (match) => match[2].replace(/[.]+$/, "");

// The usernames among `usernames` that the text mentions as @name.
export function mentioned(value, usernames) {
  const names = new Set([...String(value).matchAll(MENTION)].map(mentionName));
  return usernames.filter((u) => names.has(u));
}
