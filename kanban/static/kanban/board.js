// Board host page: wires the sandboxed plugin iframe to the bridge relay (host.js) and the
// configuration picker (configurations.js) to the relay.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("board-data").textContent);
  const statusEl = document.getElementById("bridge-status");
  const labels = {
    connecting: "Connecting…",
    open: "Live",
    reconnecting: "Reconnecting…",
    closed: "Disconnected",
  };
  const errorPanel = document.getElementById("plugin-error");
  const errorText = document.getElementById("plugin-error-text");
  document.getElementById("plugin-error-close").addEventListener("click", () => (errorPanel.hidden = true));
  const iframe = document.getElementById("plugin-frame");
  // The plugin may link to its own things (a card: #card=<id>); it hears the fragment.
  const page = () => ({ url: location.origin + location.pathname + location.search, fragment: location.hash.slice(1) });
  const host = window.KanbanHost.connect({
    page: page(),
    iframe,
    projectId: data.projectId,
    configuration: data.configuration,
    context: data.context,
    limits: data.limits,
    onStatus(status) {
      statusEl.dataset.status = status;
      statusEl.textContent = labels[status] || status;
    },
    // Removed from the board, or signed out: what the plugin showed is no longer theirs.
    onEnded(reason) {
      iframe.src = "about:blank";
      iframe.hidden = true;
      const notice = document.getElementById("board-ended");
      for (const title of notice.querySelectorAll("[data-reason]")) title.hidden = title.dataset.reason !== reason;
      notice.hidden = false;
      // The board's configurations are gone with it: no New, Duplicate or picker to offer.
      document.getElementById("config-picker").hidden = true;
      statusEl.textContent = reason === "forbidden" ? "No access" : "Signed out";
    },
    // The plugin's files were imported again: its new document starts with no errors.
    onReload() {
      errorText.textContent = "";
      errorPanel.hidden = true;
    },
    // textContent only: the message is the plugin's text.
    onPluginError({ message, at }) {
      // The browser hides the text of an error from a script loaded without `crossorigin`.
      const muted = message === "Script error.";
      const text = muted ? message + " (load the plugin's scripts with crossorigin to see the error here)" : message;
      const line = at && at !== ":" && !muted ? text + "\n    at " + at : text;
      errorText.textContent = errorText.textContent ? errorText.textContent + "\n\n" + line : line;
      errorPanel.hidden = false;
    },
  });
  addEventListener("hashchange", () => host.setPage(page()));
  // The person chose another colour scheme in the top bar: the plugin's page starts again
  // with it in its address (?colorScheme=; none while following the device, whose
  // prefers-color-scheme the frame has already).
  document.addEventListener("kanban:color-scheme", (event) => {
    if (iframe.hidden) return;
    const url = new URL(iframe.src);
    const { scheme } = /** @type {CustomEvent} */ (event).detail;
    if (scheme === "system") url.searchParams.delete("colorScheme");
    else url.searchParams.set("colorScheme", scheme);
    if (url.href !== iframe.src) iframe.src = url.href;
  });
  const picker = window.KanbanConfigurations.mount({
    root: document.getElementById("config-picker"),
    projectId: data.projectId,
    active: data.configuration,
    onSwitch: (configuration) => host.setConfiguration(configuration),
  });
  window.kanbanBoard = { host, data, picker };
})();
