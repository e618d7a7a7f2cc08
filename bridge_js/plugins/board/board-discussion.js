// The card dialog's checklist and comments. The checklist lives on the card and changes
// item by item over the card as stored now; comments live under their own key, read when
// the dialog opens and kept current from the board's watch events while it is open.
import { announce, el, reportError, toast } from "../../static/bridge/plugin-kit.js";
import { fullText, momentText } from "./board-dates.js";
import { checklistProgress, KEYS, normalizeCard } from "./board-core.js";
import { changeChecklist as checklistUpdater, patchCard } from "./board-changes.js";
import * as Comments from "./board-comments.js";
import { markdownNode, plainExcerpt } from "./board-markdown.js";
import { $, findCard, kanban, me, members, newId, personLabel, render, state, write } from "./board-state.js";
import { confirmDialog } from "./board-prompts.js";
import { applyLocal, notify, settle, update } from "./board-actions.js";

// {id, comments (null until read), seen (events for the key so far)} of the open card.
let open = null;
const events = new Map();
const seenComments = (id) => events.get(id) || 0;

const owns = () => kanban.getContext().role === "owner" || kanban.getContext().staff === true;

export function openDiscussion(id) {
  open = { id, comments: null };
  delete $("checklist-items").dataset.signature;
  $("comment-input").value = "";
  hideChoices();
  renderChecklist();
  loadComments();
}

export function closeDiscussion() {
  open = null;
}

// --- checklist --------------------------------------------------------------------------------

// Drawn again only when the checklist changed, so a focused box keeps its focus.
export function renderChecklist() {
  if (!open) return;
  const card = findCard(open.id);
  if (!card) return;
  const signature = JSON.stringify([card.id, card.checklist, state.readOnly]);
  if ($("checklist-items").dataset.signature === signature) return;
  $("checklist-items").dataset.signature = signature;
  const { done, total } = checklistProgress(card);
  $("checklist-progress").textContent = total ? done + "/" + total : "";
  const last = card.checklist.length - 1;
  const button = (label, text, onclick, disabled) =>
    el("button", { type: "button", class: "icon-button editing-only", "aria-label": label, text, disabled, onclick });
  $("checklist-items").replaceChildren(
    ...card.checklist.map((item, i) =>
      el(
        "li",
        { class: item.done ? "done" : null, "data-testid": "checklist-item-" + item.id },
        el(
          "label",
          { class: "checklist-tick" },
          el("input", {
            type: "checkbox",
            checked: item.done,
            disabled: state.readOnly,
            onchange: (event) => changeChecklist(card.id, { tick: item.id, done: event.target.checked }),
          }),
          el("span", { text: item.text }),
        ),
        button("Move " + item.text + " up", "↑", () => changeChecklist(card.id, { move: item.id, to: i - 1 }), i === 0),
        button("Move " + item.text + " down", "↓", () => changeChecklist(card.id, { move: item.id, to: i + 1 }), i === last),
        button("Remove " + item.text, "×", () => changeChecklist(card.id, { remove: item.id })),
      ),
    ),
  );
}

export function addChecklistItem() {
  const input = $("checklist-new");
  const text = input.value.trim();
  if (!open || !text) return;
  input.value = "";
  changeChecklist(open.id, { add: { id: newId(), text } });
}

// Shown at once, written over the card as stored now.
function changeChecklist(id, op) {
  const card = findCard(id);
  if (!card) return toast("This card was deleted meanwhile.");
  let shown;
  try {
    shown = normalizeCard(id, checklistUpdater(op)(card));
  } catch (err) {
    return reportError(err, "Checklist");
  }
  const mark = applyLocal(id, shown);
  render();
  write("Saving the checklist", () => settle(id, mark, () => update(KEYS.card(id), checklistUpdater(op))));
  if (op.tick) {
    const { done, total } = checklistProgress(shown);
    announce(done + " of " + total + " done.");
  }
}

// --- comments ---------------------------------------------------------------------------------

async function loadComments() {
  const target = open;
  const since = seenComments(target.id);
  $("comments-status").textContent = "Loading…";
  $("comments-list").replaceChildren();
  let value;
  try {
    value = await kanban.kv.getValue(Comments.key(target.id));
  } catch (err) {
    if (open === target) $("comments-status").textContent = "Comments unavailable (" + (err.code || err) + ").";
    return;
  }
  // An event that came while the read was out is as new or newer, and already shown.
  if (open !== target || (seenComments(target.id) !== since && target.comments !== null)) return;
  const list = Comments.normalizeComments(value);
  showComments(list);
  if (!state.readOnly) countComments(target.id, list.length).catch(() => {});
}

function showComments(list) {
  open.comments = list;
  $("comments-status").textContent = list.length ? "" : "No comments yet.";
  const mine = me();
  const owner = owns();
  const usernames = members().map((m) => m.username);
  $("comments-list").replaceChildren(
    ...list.map((c) =>
      el(
        "li",
        { "data-testid": "comment-" + c.id, class: "comment" },
        el("strong", { text: personLabel(c.author) }),
        " ",
        el("time", { datetime: c.at, title: fullText(c.at), text: momentText(c.at) }),
        c.edited ? el("span", { class: "hint", text: " (edited)" }) : null,
        commentBody(c.text, usernames),
        c.author === mine && !state.readOnly
          ? el("button", { type: "button", class: "button small ghost", text: "Edit", onclick: () => editComment(c) })
          : null,
        (c.author === mine || owner) && !state.readOnly
          ? el("button", { type: "button", class: "button small ghost", text: "Delete", onclick: () => deleteComment(c) })
          : null,
      ),
    ),
  );
}

// The comment as markdown, drawn safely (board-markdown.js: no HTML, links open in a tab of
// their own with no way back to this page), its members' @names marked. Its edit box gets
// the text as typed.
function commentBody(text, usernames) {
  const body = markdownNode(text, { mentions: usernames });
  body.classList.add("comment-body");
  return body;
}

// A resync: what the open dialog shows may have missed changes.
export function reloadComments() {
  if (open) loadComments();
}

// The board's watch events for comments keys (app.js hands them over).
export function onCommentChanges(changes) {
  for (const change of changes) {
    const id = Comments.cardOf(change.key);
    events.set(id, seenComments(id) + 1);
    if (!open || open.id !== id) continue;
    if (change.deleted === true) showComments([]);
    else if ("value" in change) showComments(Comments.normalizeComments(change.value));
    else loadComments();
  }
}

// One change of the comments list, then the count on the card's face.
function writeComments(label, updater) {
  const id = open.id;
  const target = open;
  return write(label, async () => {
    const since = seenComments(id);
    const list = await kanban.kv.updateValue(Comments.key(id), updater);
    if (open === target && seenComments(id) === since) showComments(Comments.normalizeComments(list));
    await countComments(id, /** @type {unknown[]} */ (list).length);
  });
}

// The face's count follows the list; two people commenting at once may leave it one off
// until the next comment or the next open of the dialog, which sets it again.
async function countComments(id, count) {
  const card = findCard(id);
  if (!card || card.commentCount === count) return;
  await update(KEYS.card(id), patchCard({ commentCount: count }));
}

function postComment() {
  if (!open) return;
  const input = $("comment-input");
  const text = input.value.trim();
  if (!text) return;
  if (text.length > Comments.MAX_COMMENT) return toast("A comment is at most " + Comments.MAX_COMMENT + " characters.");
  input.value = "";
  hideChoices();
  const card = findCard(open.id);
  const mentioned = Comments.mentioned(
    text,
    members().map((m) => m.username),
  );
  const comment = { id: newId(), author: me(), text, at: new Date().toISOString() };
  writeComments("Posting the comment", Comments.addComment(comment)).then((posted) => {
    // The inbox and its mail show text: the comment's words without markdown's marks.
    if (posted && card) notify(mentioned, "mentioned you on “" + card.title + "”: " + plainExcerpt(text, 300), card.id);
  });
}

function editComment(comment) {
  const box = el("textarea", { class: "comment-edit", rows: "2", maxlength: String(Comments.MAX_COMMENT), "aria-label": "Edit comment" });
  box.value = comment.text;
  const item = $("comments-list").querySelector('[data-testid="comment-' + CSS.escape(comment.id) + '"]');
  if (!item) return;
  const save = () => writeComments("Saving the comment", Comments.editComment(comment.id, me(), box.value, new Date().toISOString()));
  item.replaceChildren(
    box,
    el("button", { type: "button", class: "button small primary", text: "Save", onclick: save }),
    el("button", { type: "button", class: "button small ghost", text: "Cancel", onclick: () => showComments(open.comments || []) }),
  );
  box.focus();
}

async function deleteComment(comment) {
  const target = open;
  if (!(await confirmDialog("Delete this comment?")) || open !== target) return;
  writeComments("Deleting the comment", Comments.deleteComment(comment.id, me(), owns()));
}

// --- @mentions --------------------------------------------------------------------------------

function hideChoices() {
  $("mention-choices").hidden = true;
  $("mention-choices").replaceChildren();
}

function suggest() {
  const input = $("comment-input");
  const typed = Comments.mentionAt(input.value, input.selectionStart);
  const choices = typed === null ? [] : Comments.mentionChoices(members(), typed);
  if (!choices.length) return hideChoices();
  $("mention-choices").replaceChildren(
    ...choices.map((m, i) =>
      el("li", {
        role: "option",
        "aria-selected": String(i === 0),
        "data-username": m.username,
        text: m.displayName + " @" + m.username,
        onmousedown: (event) => {
          event.preventDefault(); // keep the caret in the box
          complete(m.username);
        },
      }),
    ),
  );
  $("mention-choices").hidden = false;
}

function complete(username) {
  const input = $("comment-input");
  const next = Comments.completeMention(input.value, input.selectionStart, username);
  input.value = next.text;
  input.setSelectionRange(next.caret, next.caret);
  hideChoices();
  input.focus();
}

function onCommentKey(event) {
  const first = $("mention-choices").hidden ? null : /** @type {HTMLElement} */ ($("mention-choices").firstElementChild);
  if (first && (event.key === "Enter" || event.key === "Tab")) {
    event.preventDefault();
    complete(first.dataset.username);
  } else if (event.key === "Escape" && first) {
    event.preventDefault();
    event.stopPropagation();
    hideChoices();
  } else if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
    event.preventDefault();
    postComment();
  }
}

export function wireDiscussion() {
  $("checklist-add").addEventListener("click", addChecklistItem);
  $("comment-post").addEventListener("click", postComment);
  $("comment-input").addEventListener("input", suggest);
  $("comment-input").addEventListener("keydown", onCommentKey);
  $("comment-input").addEventListener("blur", hideChoices);
}
