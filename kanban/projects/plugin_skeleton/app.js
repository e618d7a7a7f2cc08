// __PLUGIN_NAME__: a counter kept in this board's KV, live for everyone who has it open.
// Everything goes through window.steamHarnessKanban (the SDK loaded by index.html).
// Checked by TypeScript against the SDK's types: `npx tsc -p .` (tsconfig.json, kanban.d.ts).
(() => {
  "use strict";

  const kanban = window.steamHarnessKanban;
  const KEY = "counter";
  /** @param {string} id */
  const byId = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

  // Each configuration may set its own step in its values, e.g. {"step": 5}. Anything else
  // (a string, a fraction) means the default: values are whatever a user saved.
  function step() {
    const wanted = kanban.getConfiguration().values.step;
    return typeof wanted === "number" && Number.isSafeInteger(wanted) && wanted > 0 ? wanted : 1;
  }

  function showConfiguration() {
    byId("configuration").textContent = kanban.getConfiguration().name || "Default";
    byId("step").textContent = String(step());
  }

  /** @param {unknown} count */
  function show(count) {
    byId("count").textContent = String(typeof count === "number" ? count : 0);
  }

  /** @param {unknown} err */
  function showError(err) {
    // The SDK logs every failed call to the console with its code, too.
    if (!(err instanceof kanban.BridgeError)) throw err; // a bug here, not a refusal
    byId("message").textContent = err.code === "forbidden" ? "Read only: your role cannot change this board." : err.code + ": " + err.message;
  }

  // Only the latest read may paint, so a slow answer cannot overwrite a newer one.
  let generation = 0;
  async function refresh() {
    const mine = ++generation;
    try {
      const count = await kanban.kv.getValue(KEY);
      if (mine === generation) show(count);
    } catch (err) {
      showError(err);
    }
  }

  byId("increment").addEventListener("click", async () => {
    const by = step();
    try {
      // updateValue retries on conflict, so simultaneous clicks all count. Keep it pure.
      generation++;
      show(await kanban.kv.updateValue(KEY, (count) => (typeof count === "number" ? count : 0) + by));
      byId("message").textContent = "";
    } catch (err) {
      showError(err);
    }
  });

  kanban.ready.then(() => {
    showConfiguration();
    // Events carry no value: re-read. Someone else's click arrives here too.
    const unsubscribe = kanban.kv.subscribe(refresh);
    addEventListener("pagehide", unsubscribe);
    refresh();
  });
  kanban.onConfigurationChange(showConfiguration);
})();
