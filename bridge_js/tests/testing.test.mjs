import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { createTestHost } from "../testing/host.mjs";

const opened = [];
async function host(options) {
  const h = await createTestHost(options);
  opened.push(h);
  return h;
}
test.afterEach(() => {
  while (opened.length) opened.pop().close();
});

describe("the plugin test host", () => {
  test("serves the real SDK: reads, compare-and-set writes and revisions", async () => {
    const h = await host({ kv: { counter: 1 } });
    const kv = h.kanban.kv;
    assert.equal(await kv.getValue("counter"), 1);
    assert.equal(await kv.getValue("nothing"), undefined);
    assert.equal(await kv.updateValue("counter", (n) => n + 1), 2);
    assert.equal(h.value("counter"), 2);
    const [found, absent] = await kv.getValues(["counter", "nothing"]);
    assert.equal(found.value, 2);
    assert.deepEqual(absent, { found: false });
    assert.equal(h.kanban.getConfiguration().name, "Default");
  });

  test("pushes someone else's writes to watches, with the value when small", async () => {
    const h = await host({ pushLimit: 20 });
    const events = [];
    h.kanban.kv.watch((e) => events.push(e));
    await h.settle();
    h.write("card:1", { t: "a" });
    h.write("card:2", { t: "x".repeat(40) });
    await h.settle();
    assert.deepEqual(
      events.map((e) => e.changes[0]).map((c) => ["value" in c, c.key]),
      [
        [true, "card:1"],
        [false, "card:2"],
      ],
    );
  });

  test("refuses with the server's codes: roles, grants, conflicts", async () => {
    const guest = await host({ role: "guest", kv: { k: 1 } });
    await assert.rejects(guest.kanban.kv.setValue("k", 2), { code: "forbidden" });
    assert.equal(guest.kanban.getContext().can.write, false);

    const h = await host({ related: { inventory: { kv: { "stock:a": 3, secret: 1 }, read: ["stock:"] } } });
    const inventory = h.kanban.relatedProjects.get("inventory");
    assert.equal(await inventory.kv.getValue("stock:a"), 3);
    await assert.rejects(inventory.kv.getValue("secret"), { code: "forbidden" });
    await assert.rejects(inventory.kv.setValue("stock:a", 2), { code: "forbidden" });
    await assert.rejects(h.kanban.relatedProjects.get("payroll").kv.getValue("x"), { code: "unknown_alias" });
    await assert.rejects(h.kanban.knowledge.listDocuments(), { code: "not_supported" });
  });

  test("refuses in the server's words, with the hint a board's host adds", async () => {
    const guest = await host({ role: "guest", kv: { counter: 1 } });
    await assert.rejects(
      guest.kanban.kv.updateValue("counter", (n) => n + 1),
      {
        code: "forbidden",
        message: "updating in this project needs the developer role",
        hint: "your role or the grant does not allow it",
      },
    );
    const h = await host({ related: { inventory: { read: ["stock:"] } } });
    await assert.rejects(h.kanban.relatedProjects.get("inventory").kv.getValue("secret"), {
      message: "reading 'secret' through 'inventory' is not allowed",
    });
    // What a board's host refuses before the server sees it, as it does.
    await assert.rejects(h.kanban.kv.getValue("k".repeat(1025)), { code: "invalid_argument", message: "key is longer than 1024 characters" });
  });

  test("notify reaches members only, never the sender, and only from a writer", async () => {
    const bob = { id: 2, username: "bob", displayName: "Bob", role: "developer" };
    const h = await host({ members: [bob] });
    assert.deepEqual(await h.kanban.notify({ users: ["bob", "alice"], text: " look ", card: "c1" }), { sent: ["bob"] });
    assert.deepEqual(h.notifications, [{ user: "bob", text: "look", card: "c1" }]);
    await assert.rejects(h.kanban.notify({ users: ["mallory"], text: "hi" }), { code: "invalid_argument" });
    const guest = await host({ role: "guest", members: [bob] });
    await assert.rejects(guest.kanban.notify({ users: ["bob"], text: "hi" }), { code: "forbidden" });
  });
});
