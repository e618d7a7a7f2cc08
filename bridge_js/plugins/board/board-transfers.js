// The card dialog's Move and Copy: to a column of this board, or to a column of another
// Board the person can write. Within this board a move is the dialog's own (its Save writes
// the column, as any field); to another board the server copies or moves the card with its
// comments, checklist and attachments in one commit (kanban.cards, REST's card_transfer),
// and this board's watch sees the card go.
import { el, reportError, toast } from "../../static/bridge/plugin-kit.js";
import { kanban, state } from "./board-state.js";
import { closePopover, openPopover } from "./board-popover.js";

const HERE = "";

// The Boards a copy or move may go to, as the server lists them ({id, name, current,
// columns}); none when the host has no such call.
export async function targets() {
  if (!kanban.cards) return [];
  try {
    return await kanban.cards.targets();
  } catch (err) {
    if (err && err.code !== "not_supported") reportError(err, "Listing your boards");
    return [];
  }
}

// A board picker and a column picker that follows it; `here` offers this board first.
function pickers(body, boards, { here, column }) {
  const others = boards.filter((b) => !b.current);
  const board = el("select", { "data-testid": "transfer-board", "aria-label": "Board" });
  if (here) board.append(el("option", { value: HERE, text: "This board" }));
  for (const b of others) board.append(el("option", { value: b.id, text: b.name }));
  const columns = el("select", { "data-testid": "transfer-column", "aria-label": "List" });
  const fill = () => {
    const list = board.value === HERE ? state.columns : (others.find((b) => b.id === board.value) || { columns: [] }).columns;
    columns.replaceChildren(...list.map((c) => el("option", { value: c.id, text: c.title })));
    if (board.value === HERE && column) columns.value = column;
  };
  board.addEventListener("change", fill);
  fill();
  body.append(el("label", { class: "field", text: "Board" }, board), el("label", { class: "field", text: "List" }, columns));
  return { board, columns, boardName: () => board.selectedOptions[0]?.textContent || "" };
}

// `card` null: a new card, which moves only within this board. `unsaved()` says whether the
// dialog holds changes a move to another board would leave behind.
export async function openMove(anchor, { card, draft, changed, done, unsaved }) {
  const boards = card ? await targets() : [];
  openPopover(anchor, "Move card", (body) => {
    const { board, columns, boardName } = pickers(body, boards, { here: true, column: draft.column });
    const error = el("p", { class: "field-error", role: "alert", hidden: true });
    const move = async () => {
      if (board.value === HERE) {
        draft.column = columns.value;
        changed();
        closePopover();
        return;
      }
      if (unsaved()) {
        error.textContent = "Save or cancel your changes first: a move takes the card as it is saved.";
        error.hidden = false;
        return;
      }
      const name = boardName();
      try {
        await kanban.cards.move(card.id, { targetProject: board.value, column: columns.value });
      } catch (err) {
        error.textContent = err && err.message ? err.message : String(err);
        error.hidden = false;
        return;
      }
      closePopover({ restore: false });
      done();
      toast("Moved “" + card.title + "” to " + name + ".");
    };
    body.append(
      error,
      el(
        "div",
        { class: "popover-actions" },
        el("button", { type: "button", class: "button primary", text: "Move", "data-testid": "transfer-move", onclick: move }),
      ),
    );
    if (card && !boards.some((b) => !b.current)) body.append(el("p", { class: "popover-note", text: "You can write no other board to move it to." }));
  });
}

export async function openCopy(anchor, { card, done, unsaved }) {
  const boards = await targets();
  openPopover(anchor, "Copy card", (body) => {
    const writable = boards.filter((b) => b.current).length > 0 && !state.readOnly;
    const { board, columns, boardName } = pickers(body, boards, { here: writable, column: card.column });
    const error = el("p", { class: "field-error", role: "alert", hidden: true });
    if (!board.options.length) {
      body.replaceChildren(el("p", { class: "popover-note", text: "You can write no board to copy it to." }));
      return;
    }
    const copy = async () => {
      const target = board.value === HERE ? /** @type {{id: string}} */ (boards.find((b) => b.current)).id : board.value;
      const name = boardName();
      try {
        await kanban.cards.copy(card.id, { targetProject: target, column: columns.value });
      } catch (err) {
        error.textContent = err && err.message ? err.message : String(err);
        error.hidden = false;
        return;
      }
      closePopover({ restore: false });
      if (board.value !== HERE) done();
      toast("Copied “" + card.title + "” to " + (board.value === HERE ? "this board" : name) + (unsaved() ? ", as it was saved." : "."));
    };
    body.append(
      el("p", { class: "popover-note", text: "With its checklist, comments and attachments." }),
      error,
      el(
        "div",
        { class: "popover-actions" },
        el("button", { type: "button", class: "button primary", text: "Copy", "data-testid": "transfer-copy", onclick: copy }),
      ),
    );
  });
}
