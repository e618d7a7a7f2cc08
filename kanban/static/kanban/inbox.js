// The top bar's inbox count, kept current while the page is open: the server sends
// {"unread": n} over /ws/inbox/ when it opens and whenever the person's inbox changes;
// each count is announced to the page as a "kanban:inbox" event.
(function () {
  "use strict";
  const link = document.getElementById("inbox-count");
  if (!link || typeof WebSocket !== "function") return;
  const badge = link.querySelector(".inbox-badge");
  const FINAL = new Set([4400, 4401]); // not ours to retry: signed out, or a bad client
  let delay = 500;

  function show(unread) {
    link.dataset.unread = String(unread);
    link.setAttribute("aria-label", "Inbox, " + unread + " unread");
    badge.textContent = String(unread);
    badge.hidden = unread === 0;
    // The dashboard's list (dashboard.js) draws itself again when the count moves.
    document.dispatchEvent(new CustomEvent("kanban:inbox", { detail: { unread } }));
  }

  function connect() {
    const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws/inbox/");
    ws.addEventListener("message", (event) => {
      let data;
      try {
        data = JSON.parse(event.data);
      } catch {
        return;
      }
      if (Number.isInteger(data.unread) && data.unread >= 0) show(data.unread);
      delay = 500;
    });
    ws.addEventListener("close", (event) => {
      if (FINAL.has(event.code)) return;
      setTimeout(connect, delay + Math.random() * delay);
      delay = Math.min(delay * 2, 15000);
    });
  }

  connect();
})();
