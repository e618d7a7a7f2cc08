// A plugin whose mistake is inside an async handler, as third parties write them: the
// promise rejects, and nobody catches it.
const kanban = window.steamHarnessKanban;
kanban.ready.then(async () => {
  await kanban.kv.getValu("counter"); // a typo in the SDK's name
  document.getElementById("state").textContent = "started";
});
