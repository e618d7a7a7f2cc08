// Shows getConfiguration() and updates on onConfigurationChange, nothing else.
(function () {
  "use strict";
  const kanban = window.steamHarnessKanban;
  let changes = 0;
  const text = (id, value) => (document.getElementById(id).textContent = value);

  function show(configuration) {
    text("configuration-id", configuration.id || "default");
    text("configuration-name", configuration.name);
    text("configuration-values", JSON.stringify(configuration.values));
    text("configuration-changes", String(changes));
  }

  kanban.ready.then(() => show(kanban.getConfiguration()));
  kanban.onConfigurationChange((configuration) => {
    changes += 1;
    show(configuration);
  });
})();
