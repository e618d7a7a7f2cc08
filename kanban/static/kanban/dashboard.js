// The dashboard's inbox list, kept as current as the top bar's count: inbox.js announces
// each count the inbox socket sends ("kanban:inbox"), and a count that differs from what the
// list was drawn with fetches the list again, drawn by the server (/inbox/list, the same
// template as the page's), so a new notification or offer shows without a reload.
(function () {
  "use strict";
  const section = document.getElementById("inbox");
  if (!section || !section.dataset.list) return;
  const badge = document.getElementById("inbox-count");
  let drawn = badge ? Number(badge.dataset.unread) : -1;
  let loading = null;
  let again = false;

  async function redraw() {
    const response = await fetch(section.dataset.list, { credentials: "same-origin", headers: { Accept: "text/html" } });
    if (!response.ok) return;
    const html = await response.text();
    // Keep focus where it was when the person was inside the list (a button by its text).
    const focused = section.contains(document.activeElement) ? document.activeElement : null;
    const template = document.createElement("template");
    template.innerHTML = html;
    section.replaceChildren(template.content);
    if (focused && focused.textContent) {
      const same = [...section.querySelectorAll("button, a")].find((el) => el.textContent === focused.textContent);
      if (same) same.focus();
    }
    section.dataset.drawn = String(Date.now());
  }

  // One fetch at a time; counts arriving meanwhile fetch once more after it.
  function refresh() {
    if (loading) {
      again = true;
      return;
    }
    loading = redraw()
      .catch(() => {})
      .finally(() => {
        loading = null;
        if (again) {
          again = false;
          refresh();
        }
      });
  }

  document.addEventListener("kanban:inbox", (event) => {
    const unread = /** @type {CustomEvent} */ (event).detail.unread;
    // The socket's first count, on opening, is usually what the page was drawn with.
    if (unread === drawn) return;
    drawn = unread;
    refresh();
  });
})();
