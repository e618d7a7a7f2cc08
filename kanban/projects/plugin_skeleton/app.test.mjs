// The plugin's own test, run without a server: `node --test`. The test host (kanban-testing.mjs,
// the server's bridge_js/testing/host.mjs with the SDK inside) answers as a board would; a few
// lines stand in for the page's DOM. Add your own cases here.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createTestHost } from "./kanban-testing.mjs";

// The elements app.js uses, by id, with what it reads and writes of them.
function page() {
  const elements = new Map();
  const element = (id) => {
    if (!elements.has(id)) {
      const listeners = {};
      elements.set(id, {
        textContent: "",
        addEventListener: (type, fn) => (listeners[type] = fn),
        click: () => listeners.click?.(),
      });
    }
    return elements.get(id);
  };
  return { getElementById: element };
}

async function open(options) {
  const host = await createTestHost(options);
  const document = page();
  const source = readFileSync(new URL("./app.js", import.meta.url), "utf8");
  new Function("window", "document", "addEventListener", source)(host.window, document, () => {});
  await host.settle();
  return { host, document };
}

test("the counter counts by the configuration's step and shows others' clicks", async () => {
  const { host, document } = await open({ kv: { counter: 2 }, configuration: { id: "c1", name: "Fives", values: { step: 5 } } });
  try {
    assert.equal(document.getElementById("count").textContent, "2");
    document.getElementById("increment").click();
    await host.settle();
    assert.equal(host.value("counter"), 7);
    host.write("counter", 40); // someone else, on another board
    await host.settle();
    assert.equal(document.getElementById("count").textContent, "40");
  } finally {
    host.close();
  }
});

test("a guest is told the board is read only", async () => {
  const { host, document } = await open({ role: "guest" });
  try {
    document.getElementById("increment").click();
    await host.settle();
    assert.match(document.getElementById("message").textContent, /Read only/);
  } finally {
    host.close();
  }
});
