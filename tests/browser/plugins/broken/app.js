// A plugin with a typo, as a developer saves it halfway: it never starts.
const kanban = window.steamHarnessKanban;
kanban.ready.then(() => {
  document.getElementById("state").textContent = "started";
}};
