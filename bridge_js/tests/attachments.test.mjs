// kanban.attachments: the SDK sends a file beside its checked arguments, the board's host
// uploads it over HTTP (never the socket) and hands covers over as Blobs, and the plugin
// test host keeps attachments as a board does, refusing in the server's words.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { createHost } from "../src/host.js";
import { createTestHost } from "../testing/host.mjs";
import { fakeClock, fakePage, fakeSockets, hostEnv, flush } from "./fakes.mjs";

const PROJECT = "0b7f3c52-6d0e-4f57-9d0a-2f5a2b1f9c11";
// A 4x3 PNG, as Pillow writes it.
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAQAAAADCAIAAAA7ljmRAAAAFElEQVR4nGM8ISfHAANMDEgAhQMAJtoBCkAAOw8AAAAASUVORK5CYII=", "base64");
const png = () => new Blob([PNG], { type: "image/png" });

const LISTED = {
  id: "a".repeat(32),
  card: "c1",
  name: "shot.png",
  contentType: "image/png",
  size: PNG.length,
  image: { width: 4, height: 3 },
  uploadedBy: "alice",
  uploadedAt: "2026-12-05T02:00:00+00:00",
  url: "/attachments/signed-file/",
  thumbnailUrl: "/attachments/signed-cover/",
};

// A board page whose host answers the plugin; `fetch` records what the host asked over HTTP.
async function board({ respond, limits } = {}) {
  const clock = fakeClock();
  const page = fakePage(clock);
  const sockets = fakeSockets();
  const fetched = [];
  const env = Object.assign(hostEnv(clock, page, sockets), {
    document: { cookie: "theme=dark; csrftoken=t0k%3Den" },
    async fetch(url, init = {}) {
      fetched.push({ url, init });
      const [status, body] = respond(url, init);
      return body instanceof Blob ? { ok: status < 300, status, blob: async () => body } : { ok: status < 300, status, json: async () => body };
    },
  });
  createHost(env).connect({ iframe: page.iframe, projectId: PROJECT, configuration: {}, limits });
  sockets.last().accept();
  page.host.receive({ type: "steamHarnessKanban:hello", v: 1 }, page.frame);
  await flush();
  const connect = page.frame.received.find((e) => e.data.type === "steamHarnessKanban:connect");
  const port = connect.ports[0];
  const inbox = [];
  port.onmessage = (e) => inbox.push(e.data);
  port.postMessage({ v: 1, type: "ready", nonce: connect.data.nonce });
  await flush();
  const ws = sockets.last();
  return {
    ws,
    fetched,
    async send(frame) {
      port.postMessage(frame);
      await flush();
    },
    // The socket answers attachments.list with `items`.
    lists(items) {
      ws.server = (frame, socket) => socket.reply(frame, items);
    },
    replies: () => inbox.filter((f) => "id" in f),
    settle: () => new Promise((resolve) => setTimeout(resolve, 5)),
  };
}

describe("the board host", () => {
  test("uploads over HTTP with the session's CSRF token, the card and the alias, then answers with the card's listing of it", async () => {
    const b = await board({
      respond: (url) => (url.endsWith("/signed-cover/") ? [200, png()] : [201, { ...LISTED, url: undefined, thumbnailUrl: undefined }]),
    });
    b.lists([LISTED]);
    await b.send({ v: 1, id: 9, op: "attachments.upload", alias: "inventory", key: "c1", value: { name: "shot.png", file: png() } });
    await b.settle();

    const [upload, cover] = b.fetched;
    assert.equal(upload.url, `http://127.0.0.1:8000/api/v1/projects/${PROJECT}/attachments/`);
    assert.equal(upload.init.method, "POST");
    assert.equal(upload.init.headers["X-CSRFToken"], "t0k=en");
    assert.equal(upload.init.body.get("card"), "c1");
    assert.equal(upload.init.body.get("alias"), "inventory");
    assert.equal(upload.init.body.get("file").name, "shot.png");
    assert.deepEqual(Buffer.from(await upload.init.body.get("file").arrayBuffer()), PNG);
    assert.equal(cover.url, "http://127.0.0.1:8000/attachments/signed-cover/");
    // The bytes never went through the socket: it only listed the card.
    assert.deepEqual(
      b.ws.sent.map((f) => [f.op, f.alias, f.key]),
      [["attachments.list", "inventory", "c1"]],
    );

    const [reply] = b.replies();
    assert.equal(reply.id, 9);
    assert.equal(reply.ok, true);
    const { thumbnail, ...attachment } = reply.result;
    assert.deepEqual(attachment, { ...LISTED, url: "http://127.0.0.1:8000/attachments/signed-file/", thumbnailUrl: null });
    assert.deepEqual(Buffer.from(await thumbnail.arrayBuffer()), PNG);
  });

  test("a file past the server's attachmentBytes is too_large before a byte is sent; one at it is sent", async () => {
    const b = await board({ limits: { attachmentBytes: 5 }, respond: () => [201, { ...LISTED, image: null, thumbnailUrl: null }] });
    b.lists([]);
    await b.send({ v: 1, id: 1, op: "attachments.upload", key: "c1", value: { name: "six", file: new Blob(["123456"]) } });
    await b.settle();
    assert.deepEqual(b.fetched, []);
    assert.deepEqual(b.replies()[0].error.code, "too_large");
    assert.equal(b.replies()[0].error.message, "a file may have at most 5 bytes (KANBAN_ATTACHMENT_BYTES)");

    await b.send({ v: 1, id: 2, op: "attachments.upload", key: "c1", value: { name: "five", file: new Blob(["12345"]) } });
    await b.settle();
    assert.equal(b.fetched.length, 1);
    assert.equal(b.replies()[1].ok, true);
  });

  test("the server's refusal of an upload reaches the plugin with its code and message", async () => {
    const b = await board({ respond: () => [403, { code: "forbidden", message: "writing in this project needs the developer role" }] });
    await b.send({ v: 1, id: 3, op: "attachments.upload", key: "c1", value: { name: "a.png", file: png() } });
    await b.settle();
    const [reply] = b.replies();
    assert.equal(reply.error.code, "forbidden");
    assert.equal(reply.error.message, "writing in this project needs the developer role");
  });

  test("an upload without a Blob, or with fields of its own, is refused without a request", async () => {
    const b = await board({ respond: () => [500, {}] });
    await b.send({ v: 1, id: 1, op: "attachments.upload", key: "c1", value: { name: "a", file: "bytes" } });
    await b.send({ v: 1, id: 2, op: "attachments.upload", key: "c1", value: { name: "a", file: png(), path: "/etc" } });
    await b.send({ v: 1, id: 3, op: "attachments.upload", key: "c1" });
    assert.deepEqual(b.fetched, []);
    assert.deepEqual(
      b.replies().map((r) => r.error.code),
      ["invalid_argument", "invalid_argument", "invalid_argument"],
    );
  });

  test("a listing's covers are fetched once per attachment and its links made absolute", async () => {
    const b = await board({ respond: () => [200, png()] });
    b.lists([LISTED, { ...LISTED, id: "b".repeat(32), image: null, thumbnailUrl: null }]);
    await b.send({ v: 1, id: 1, op: "attachments.list", key: "c1" });
    await b.send({ v: 1, id: 2, op: "attachments.list", key: "c1" });
    await b.settle();
    assert.equal(b.fetched.length, 1);
    for (const reply of b.replies()) {
      const [withCover, without] = reply.result;
      assert.ok(withCover.thumbnail instanceof Blob);
      assert.equal(without.thumbnail, null);
      assert.equal(without.url, "http://127.0.0.1:8000/attachments/signed-file/");
    }
  });
});

describe("the SDK on the plugin test host", () => {
  test("a developer attaches a PNG: listed with its size and a cover the page can show, heard by watchers, then removed", async () => {
    const host = await createTestHost({ role: "developer" });
    const { kanban } = host;
    const heard = [];
    kanban.kv.watch((e) => heard.push(...e.changes), { prefix: "attachments:" });
    await host.settle();

    const attached = await kanban.attachments.upload(null, "c1", png(), { name: "dir/shot.png" });
    assert.equal(attached.name, "shot.png");
    assert.equal(attached.contentType, "image/png");
    assert.deepEqual(attached.image, { width: 4, height: 3 });
    assert.equal(attached.size, PNG.length);
    assert.equal(attached.uploadedBy, "alice");
    assert.match(attached.thumbnailUrl, /^blob:/);
    assert.ok(Object.isFrozen(attached));

    const [listed] = await kanban.attachments.list(null, "c1");
    assert.equal(listed.id, attached.id);
    assert.equal(listed.thumbnailUrl, attached.thumbnailUrl, "one blob: URL per attachment");
    assert.deepEqual(
      host.value("attachments:c1").attachments.map((a) => a.id),
      [attached.id],
    );

    await kanban.attachments.remove(null, "c1", attached.id);
    assert.deepEqual(await kanban.attachments.list(null, "c1"), []);
    await host.settle();
    assert.deepEqual(
      heard.map((c) => [c.key, c.deleted === true]),
      [
        ["attachments:c1", false],
        ["attachments:c1", true],
      ],
    );
    host.close();
  });

  test("a file that is no image gets no cover; a Blob without a name is called file", async () => {
    const host = await createTestHost();
    const attached = await host.kanban.attachments.upload(null, "c1", new Blob(["<script>"]));
    assert.equal(attached.name, "file");
    assert.equal(attached.contentType, "application/octet-stream");
    assert.equal(attached.image, null);
    assert.equal(attached.thumbnailUrl, null);
    host.close();
  });

  test("a guest lists and may not upload or remove, in the server's words", async () => {
    const host = await createTestHost({ role: "guest" });
    const { kanban } = host;
    assert.deepEqual(await kanban.attachments.list(null, "c1"), []);
    await assert.rejects(kanban.attachments.upload(null, "c1", png()), {
      code: "forbidden",
      message: "writing in this project needs the developer role",
    });
    await assert.rejects(kanban.attachments.remove(null, "c1", "0".repeat(32)), { code: "forbidden" });
    assert.equal(host.value("attachments:c1"), undefined);
    host.close();
  });

  test("a file at the byte limit is attached, one byte more is too_large and nothing is written", async () => {
    const host = await createTestHost({ attachmentBytes: 64 });
    const { kanban } = host;
    await assert.rejects(kanban.attachments.upload(null, "c1", new Blob([new Uint8Array(65)])), {
      code: "too_large",
      message: "a file may have at most 64 bytes (KANBAN_ATTACHMENT_BYTES)",
    });
    assert.equal(host.value("attachments:c1"), undefined);
    const attached = await kanban.attachments.upload(null, "c1", new Blob([new Uint8Array(64)]));
    assert.equal(attached.size, 64);
    host.close();
  });

  test("through an alias the grants decide as for get and set of attachments:<card>", async () => {
    const host = await createTestHost({ related: { inventory: { read: ["attachments:"], write: "none" } } });
    const { kanban } = host;
    assert.deepEqual(await kanban.attachments.list("inventory", "c1"), []);
    await assert.rejects(kanban.attachments.upload("inventory", "c1", png()), {
      code: "forbidden",
      message: "writing 'attachments:c1' through 'inventory' is not allowed",
    });
    await assert.rejects(kanban.attachments.list("nope", "c1"), { code: "unknown_alias" });
    assert.throws(() => kanban.relatedProjects.get("Bad"), { code: "invalid_argument" });
    await assert.rejects(kanban.attachments.list("Bad", "c1"), { code: "invalid_argument" });
    host.close();
  });

  test("mistakes fail in the plugin: no Blob, no card; the card's key is the attachments' own", async () => {
    const host = await createTestHost();
    const { kanban } = host;
    await assert.rejects(kanban.attachments.upload(null, "c1", "bytes"), TypeError);
    await assert.rejects(kanban.attachments.list(null, ""), TypeError);
    await assert.rejects(kanban.attachments.remove(null, "c1", "0".repeat(32)), {
      code: "not_found",
      message: "no such attachment on this card",
    });
    await assert.rejects(kanban.kv.setValue("attachments:c1", { attachments: [] }), {
      code: "invalid_argument",
      message: "keys starting with 'attachments:' hold a card's attachments; use the attachments operations",
    });
    host.close();
  });
});
