// The Board plugin: a kanban board kept in the project's shared KV, written only against
// the public SDK (window.steamHarnessKanban). Layout of the data:
//   board:columns   [{id, title, wip}]                      changed with updateValue
//   board:cards     [cardId, …]                             changed ONLY with updateValue
//   card:<id>       {id, title, description, assignees, assignee, labels, due, column, rank,
//                    item?, checklist: [{id, text, done}], commentCount}
//   comments:<id>   [{id, author, text, at, edited}]            changed ONLY with updateValue
// (`assignee` is the first of `assignees`, for Boards from before several assignees.)
// The view (filter, collapsed columns, density) is each user's own: it lives in the values
// of their configuration on screen (setConfigurationValues), the Default included.
// Moving a card writes only its own key, so two people moving different cards never
// collide, and index changes merge through updateValue's compare-and-set loop.
//
// The page loads it in parts, in order (index.html): plugin-kit.js (shared with the
// Inventory), board-core.js (pure logic), then board-state.js, board-sync.js,
// board-actions.js, board-dialogs.js, board-render.js, board-input.js and this file, which
// starts the board. Each part adds its functions to window.BoardApp and calls the others'
// through it.
(function (B) {
  "use strict";

  const { toast } = window.PluginKit;
  const { kanban, inventory, state } = B;

  let unwatchBoard = () => {};
  let unwatchStock = () => {};

  function watchStock() {
    unwatchStock();
    state.inventoryProblem = inventoryProblemOf(inventory.getContext());
    unwatchStock = state.inventoryProblem ? () => {} : inventory.kv.watch(B.onStockChanges, { prefix: "stock:" });
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
    B.resetStock();
  });

  kanban.onInvalidated(({ alias, code }) => {
    if (alias === "inventory") {
      state.inventoryProblem = code;
      B.resetStock();
    } else if (alias === null) {
      toast("Live updates stopped for this board; reload to try again.", code);
    }
  });

  B.wireToolbar();
  B.wireDialogs();
  B.wireDiscussion();
  // A link to a card (#card=<id> on the board page) opens its dialog once the board is in,
  // and again whenever the page's fragment changes to another card.
  let fragment = null;
  function followLink(context) {
    const next = context.page ? context.page.fragment : "";
    if (next === fragment || !state.loaded) return;
    fragment = next;
    B.openLinkedCard(next);
  }
  kanban.ready.then(() => {
    B.applyContext(kanban.getContext());
    kanban.onContextChange(B.applyContext);
    kanban.onContextChange(followLink);
    state.view = B.configuredView();
    B.syncToolbar();
    // Watch first, then read: every change after the read's start reaches the page.
    unwatchBoard = kanban.kv.watch(B.onBoardChanges);
    watchStock();
    B.load().then(() => followLink(kanban.getContext()));
  });
  // A switch means other view settings over the same board: nothing to read again.
  kanban.onConfigurationChange(() => {
    B.dropPendingView();
    B.applyView();
  });
  // A view change still waiting (typing in the filter) is saved before the page goes.
  addEventListener("visibilitychange", () => document.visibilityState === "hidden" && B.flushView());
  addEventListener("pagehide", () => {
    B.flushView();
    unwatchBoard();
    unwatchStock();
  });
})(window.BoardApp);
