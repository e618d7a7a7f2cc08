// The browser tests' probe plugin. It uses nothing but the SDK and starts nothing by
// itself: the tests call window.steamHarnessKanban through Playwright. It only keeps what
// the plugin was told (readiness, invalidations, and whatever a test passes to
// probe.note) on the page, so screenshots show it and tests can wait for it.
(function () {
  "use strict";
  const kanban = window.steamHarnessKanban;
  const log = document.getElementById("log");
  const seen = [];

  function note(kind, detail) {
    seen.push(Object.assign({ kind: kind }, detail));
    const item = document.createElement("li");
    item.className = kind;
    item.textContent = kind + " " + JSON.stringify(detail);
    log.appendChild(item);
  }

  window.probe = { seen: seen, note: note };
  kanban.onInvalidated(function (event) {
    note("invalidated", { alias: event.alias, code: event.code });
  });
  kanban.ready.then(function () {
    document.getElementById("state").textContent =
      "ready · configuration " + JSON.stringify(kanban.getConfiguration().name);
    note("ready", {});
  });
})();
