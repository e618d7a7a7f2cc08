// A plugin written the way seed 000's examples read, as a third party would: it calls
// the bridge the moment its script runs, without waiting for `ready` or anything else.
// Each load counts itself and waits for the revision event of its own write, then says
// "loaded N" (or what failed) for the test to read.
const kanban = window.steamHarnessKanban;
const state = document.getElementById("state");
let revisionSeen;
const revision = new Promise((resolve) => (revisionSeen = resolve));

kanban.kv.subscribe(({ alias, revision }) => revisionSeen({ alias, revision }));

(async () => {
  const loads = await kanban.kv.getValue("naive:loads");
  const count = (loads ?? 0) + 1;
  await kanban.kv.setValue("naive:loads", count);
  await revision;
  state.textContent = "loaded " + count;
})().catch((error) => {
  state.textContent = "failed " + error.code + ": " + error.message;
});
