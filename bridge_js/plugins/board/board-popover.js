// The card dialog's one popover: a small box by the button that opened it (Members, Labels,
// Dates, Move, Copy, a version's Restore). Tab stays inside it, Escape closes it without
// closing the dialog, and the focus goes back to that button. A click outside closes it.
import { $ } from "./board-state.js";

let opener = null;
let onClose = null;

const focusable = (root) =>
  [...root.querySelectorAll("button, input, select, textarea, a[href], [tabindex]:not([tabindex='-1'])")].filter(
    (node) => !node.disabled && !node.hidden && node.getClientRects().length,
  );

// Opens it by `anchor` titled `title`; `build(body)` fills it. `close` is called (once) as it
// closes, however it closes.
export function openPopover(anchor, title, build, { close = null } = {}) {
  closePopover({ restore: false });
  const box = $("card-popover");
  opener = anchor;
  onClose = close;
  $("card-popover-title").textContent = title;
  const body = $("card-popover-body");
  body.replaceChildren();
  build(body);
  box.hidden = false;
  if (anchor) anchor.setAttribute("aria-expanded", "true");
  place(box, anchor);
  const first = focusable(body)[0] || $("card-popover-close");
  first.focus();
}

export const popoverOpen = () => !$("card-popover").hidden;

export function closePopover({ restore = true } = {}) {
  const box = $("card-popover");
  if (box.hidden) return;
  box.hidden = true;
  $("card-popover-body").replaceChildren();
  const back = opener;
  const done = onClose;
  opener = null;
  onClose = null;
  if (back) back.setAttribute("aria-expanded", "false");
  if (done) done();
  if (restore && back && document.contains(back) && !back.hidden) back.focus();
}

// Below the anchor, inside the dialog's panes; left-aligned with it unless that runs out.
function place(box, anchor) {
  const panes = box.offsetParent || box.parentElement;
  if (!anchor || !panes) return;
  const frame = panes.getBoundingClientRect();
  const at = anchor.getBoundingClientRect();
  const width = box.offsetWidth;
  let left = at.left - frame.left;
  if (left + width > panes.clientWidth) left = Math.max(0, at.right - frame.left - width);
  box.style.left = left + "px";
  box.style.top = at.bottom - frame.top + 4 + panes.scrollTop + "px";
  box.scrollIntoView({ block: "nearest" });
}

export function wirePopover() {
  const box = $("card-popover");
  $("card-popover-close").addEventListener("click", () => closePopover());
  box.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      // The dialog would close on Escape too: only the popover does.
      event.preventDefault();
      event.stopPropagation();
      closePopover();
      return;
    }
    if (event.key !== "Tab") return;
    const nodes = focusable(box);
    if (!nodes.length) return;
    const first = nodes[0];
    const last = nodes[nodes.length - 1];
    if (event.shiftKey && document.activeElement === first) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && document.activeElement === last) {
      event.preventDefault();
      first.focus();
    }
  });
  // Chromium closes a modal dialog on Escape through `cancel`, which keydown's
  // preventDefault stops; an Escape that got past the popover while it is open closes it.
  $("card-dialog").addEventListener("cancel", (event) => {
    if (popoverOpen()) {
      event.preventDefault();
      closePopover();
    }
  });
  $("card-dialog").addEventListener("pointerdown", (event) => {
    const target = /** @type {Node} */ (event.target);
    if (!popoverOpen() || box.contains(target)) return;
    if (opener && opener.contains(target)) return;
    closePopover({ restore: false });
  });
}
