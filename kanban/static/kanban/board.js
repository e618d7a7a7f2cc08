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
  const host = window.KanbanHost.connect({
    iframe: document.getElementById("plugin-frame"),
    projectId: data.projectId,
    configuration: data.configuration,
    limits: data.limits,
    onStatus(status) {
      statusEl.dataset.status = status;
      statusEl.textContent = labels[status] || status;
    },
  });
  const picker = window.KanbanConfigurations.mount({
    root: document.getElementById("config-picker"),
    projectId: data.projectId,
    active: data.configuration,
    onSwitch: (configuration) => host.setConfiguration(configuration),
  });
  window.kanbanBoard = { host, data, picker };
})();
