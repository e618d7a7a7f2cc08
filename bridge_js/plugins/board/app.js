// The Board plugin: a kanban board kept in the project's shared KV, written only against
// the public SDK (window.steamHarnessKanban). Layout of the data:
//   board:columns   [{id, title, wip}]                      changed with updateValue
//   board:cards     [cardId, …]                             changed ONLY with updateValue
//   card:<id>       {id, title, description, assignees, assignee, labels, due, column, rank,
//                    item?, checklist: [{id, text, done}], commentCount}
//   comments:<id>   [{id, author, text, at, edited}]            changed ONLY with updateValue
//   board:labels    [{name, color}]    the label set (board-labels.js), written by imports
//   attachments:<id>  {attachments: [...]}   written only by the server (board-attachments.js)
// (`assignee` is the first of `assignees`, for Boards from before several assignees.)
// The view (filter, collapsed columns, density) is each user's own: it lives in the values
// of their configuration on screen (setConfigurationValues), the Default included.
// Moving a card writes only its own key, so two people moving different cards never
// collide, and index changes merge through updateValue's compare-and-set loop.
//
// The page's one module (index.html runs the SDK before it, as a classic script). It starts
// the board from its parts, each a module importing what it uses:
//   board-core.js, board-changes.js, board-comments.js  pure logic, tested in node
//   board-state.js     the state and helpers every part reads; imports no other part
//   board-sync.js      reads and change events        board-actions.js  writes and undo
//   board-prompts.js   two-answer prompts             board-dialogs.js  card, column, archive
//   board-discussion.js  checklist and comments       board-render.js   drawing, by patching
//   board-view.js      what shows: grouping, filter cache, windowing (pure, tested in node)
//   board-card.js      one card's face                board-quick-add.js  "+ Add card" in place
//   board-input.js     keyboard, drag, shortcuts and the toolbar
//   board-labels.js    label colours, start dates, custom fields (pure, tested in node)
//   board-details.js   the dialog's read-only imported details
//   board-attachments.js  files on cards: uploads, covers, the dialog's list
// Drawing is handed to board-state.js here (drawWith), so the parts import it from there.
import { followColorScheme, toast } from "../../static/bridge/plugin-kit.js";
import { isCommentKey } from "./board-comments.js";
import { applyContext, drawWith, inventory, kanban, render, state } from "./board-state.js";
import { configuredView, dropPendingView, flushView, load, onBoardChanges, onStockChanges, redrawBoard, resetStock } from "./board-sync.js";
import { openLinkedCard, wireDialogs } from "./board-dialogs.js";
import { onCommentChanges, reloadComments, wireDiscussion } from "./board-discussion.js";
import { renderBoard, revealCard } from "./board-render.js";
import { syncToolbar, wireToolbar } from "./board-input.js";
import { isAttachmentKey, loadAttachments, onAttachmentChanges, wireAttachments } from "./board-attachments.js";

followColorScheme();
drawWith({ render: renderBoard, redraw: redrawBoard, reveal: revealCard });

let unwatchBoard = () => {};
let unwatchStock = () => {};

function watchStock() {
  unwatchStock();
  state.inventoryProblem = inventoryProblemOf(inventory.getContext());
  unwatchStock = state.inventoryProblem ? () => {} : inventory.kv.watch(onStockChanges, { prefix: "stock:" });
}

function inventoryProblemOf(context) {
  if (context.status === "pending") return "relationship_pending";
  if (context.status === "unknown") return "unknown_alias";
  return context.can.read ? null : "forbidden";
}

// The inventory confirmed this board, or its grant changed, after the page opened:
// watch and read the stock again, no reload needed.
inventory.onContextChange((context) => {
  if (inventoryProblemOf(context) === state.inventoryProblem) return;
  watchStock();
  resetStock();
});

kanban.onInvalidated(({ alias, code }) => {
  if (alias === "inventory") {
    state.inventoryProblem = code;
    resetStock();
  } else if (alias === null) {
    toast("Live updates stopped for this board; reload to try again.", code);
  }
});

wireToolbar();
wireDialogs();
wireDiscussion();
wireAttachments();
// A link to a card (#card=<id> on the board page) opens its dialog once the board is in,
// and again whenever the page's fragment changes to another card.
let fragment = null;
function followLink(context) {
  const next = context.page ? context.page.fragment : "";
  if (next === fragment || !state.loaded) return;
  fragment = next;
  openLinkedCard(next);
}
kanban.ready.then(() => {
  performance.mark("board:ready");
  applyContext(kanban.getContext());
  kanban.onContextChange(applyContext);
  kanban.onContextChange(followLink);
  state.view = configuredView();
  syncToolbar();
  // Watch first, then read: every change after the read's start reaches the page.
  unwatchBoard = kanban.kv.watch(onChanges);
  watchStock();
  load().then(() => {
    followLink(kanban.getContext());
    loadAttachments();
  });
});
// The board's keys go to the board, a card's comments to its dialog if it is open; a resync
// may have missed changes of both.
function onChanges(event) {
  if (event.resync) reloadComments();
  const comments = event.resync ? [] : event.changes.filter((change) => isCommentKey(change.key));
  if (comments.length) onCommentChanges(comments);
  const files = event.resync ? [] : event.changes.filter((change) => isAttachmentKey(change.key));
  if (files.length) onAttachmentChanges(files);
  const loading = onBoardChanges(event);
  if (event.resync) Promise.resolve(loading).then(loadAttachments);
}

// A switch means other view settings over the same board: nothing to read again.
kanban.onConfigurationChange(() => {
  dropPendingView();
  state.view = configuredView();
  syncToolbar();
  render();
});
// A view change still waiting (typing in the filter) is saved before the page goes.
addEventListener("visibilitychange", () => document.visibilityState === "hidden" && flushView());
addEventListener("pagehide", () => {
  flushView();
  unwatchBoard();
  unwatchStock();
});
