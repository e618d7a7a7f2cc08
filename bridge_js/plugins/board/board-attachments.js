// Files on cards: a file dropped on a card's face or into its open dialog, or a screenshot
// pasted into the dialog, is uploaded through the SDK (kanban.attachments); an image becomes
// the card's cover, any other file a row in the dialog. Readers see covers and download.
//
// What a card holds is the server's `attachments:<card>` value, which only the attachments
// service writes: read when the card is first drawn (a long column draws few), then kept
// current from the board's watch events like any other key. It says which cards have a cover; the cover itself and the
// download links come from kanban.attachments.list, asked again only when a card's value
// changes or its links would expire.
import { announce, el, reportError } from "../../static/bridge/plugin-kit.js";
import { $, findCard, icon, kanban, personLabel, render, state, write } from "./board-state.js";
import { readAll } from "./board-sync.js";
import { confirmDialog } from "./board-prompts.js";

export const isAttachmentKey = (key) => key.startsWith(PREFIX);
const PREFIX = "attachments:";
// The server's links live KANBAN_ATTACHMENT_URL_SECONDS (300 by default): a listing older
// than this is asked again before its links are offered. Covers are the SDK's blob: URLs,
// which do not expire.
const LINKS_FRESH_MS = 4 * 60 * 1000;
const THIS_PROJECT = null;

// card -> {count, images}, from attachments:<card> as stored.
const held = new Map();
// card -> how many events changed its value, so a read that raced one does not undo it.
const events = new Map();
// card -> {items, at} as kanban.attachments.list gave them (items: [] when refused).
const listed = new Map();
// card -> {again}: a listing queued or out; `again` when a change came once it was out.
const listing = new Map();
// Cards waiting to be listed: a board opening with many covers asks a few at a time.
const queue = [];
const MAX_LISTING = 4;
let out = 0;
// card -> how many uploads are out.
const uploading = new Map();
let openId = null;
let freshTimer = null;

function summary(value) {
  const items = value && Array.isArray(value.attachments) ? value.attachments.filter((i) => i && typeof i === "object") : [];
  return { count: items.length, images: items.filter((i) => i.image).length };
}

// Listings come one by one: the board is drawn once for those that came together.
let drawTimer = null;
function drawSoon() {
  if (drawTimer !== null) return;
  drawTimer = setTimeout(() => {
    drawTimer = null;
    render();
    renderAttachments();
  }, 20);
}

// --- reading ----------------------------------------------------------------------------------

// Cards whose value the page holds (read, or pushed by an event); cards drawn without it,
// gathered for one batched read. Only cards that are drawn ask: a 5,000-card board whose
// columns draw a few dozen cards each reads a few dozen values, not 5,000.
const known = new Set();
const wanted = new Set();
let readQueued = false;

// A windowed column that draws a card the page knows nothing of asks for the whole block
// of cards around it (board-render.js), so scrolling a little or a card moving nearby
// needs no read of its own.
export const attachmentsKnown = (id) => known.has(id) || wanted.has(id);
export function wantAttachments(ids) {
  for (const id of ids) want(id);
}

function want(id) {
  if (known.has(id) || wanted.has(id)) return;
  // A card that came after the board was read has had its files' changes pushed with the
  // rest (the watch started first): nothing to read for it.
  if (!loaded.has(id)) {
    known.add(id);
    return;
  }
  wanted.add(id);
  if (readQueued) return;
  readQueued = true;
  setTimeout(readWanted, 40); // a first drawing and its window settling ask once
}

async function readWanted() {
  readQueued = false;
  const ids = [...wanted];
  wanted.clear();
  for (const id of ids) known.add(id);
  const since = ids.map((id) => events.get(id) || 0);
  const values = await readAll(
    kanban.kv,
    ids.map((id) => PREFIX + id),
  ).catch((err) => {
    for (const id of ids) known.delete(id);
    reportError(err, "Reading the attachments");
    return null;
  });
  if (!values) return;
  let changed = false;
  ids.forEach((id, i) => {
    if ((events.get(id) || 0) !== since[i]) return; // an event since is as new or newer
    const was = held.get(id);
    if (values[i] === undefined) held.delete(id);
    else held.set(id, summary(values[i]));
    const now = held.get(id);
    changed ||= (was ? was.count + "/" + was.images : "") !== (now ? now.count + "/" + now.images : "");
  });
  // Most cards have no files: their answer changes nothing drawn.
  if (changed) render();
}

// The cards the board's last full read found, whose files only a read can tell.
let loaded = new Set();

// After the board's first load and after a resync: every drawn card asks again.
export async function loadAttachments() {
  loaded = new Set(state.cards.map((c) => c.id));
  known.clear();
  for (const id of [...listed.keys()]) refresh(id);
  if (openId) refresh(openId);
  render();
}

// The watch event's changes of attachments:<card>; a value too big to be pushed is read.
export async function onAttachmentChanges(changes) {
  for (const change of changes) {
    const id = change.key.slice(PREFIX.length);
    events.set(id, (events.get(id) || 0) + 1);
    known.add(id);
    if (change.deleted === true) held.delete(id);
    else if ("value" in change) held.set(id, summary(change.value));
    else held.set(id, summary(await kanban.kv.getValue(change.key).catch(() => undefined)));
    if (listed.has(id) || id === openId) refresh(id);
  }
  render();
}

// Lists the card's attachments (once more if a change comes while it is out).
function refresh(id) {
  const job = listing.get(id);
  if (job) return void (job.again = job.started);
  listing.set(id, { again: false, started: false });
  queue.push(id);
  pump();
}

function pump() {
  while (out < MAX_LISTING && queue.length) {
    const id = queue.shift();
    const job = listing.get(id);
    job.started = true;
    out++;
    kanban.attachments
      .list(THIS_PROJECT, id)
      .then((items) => listed.set(id, { items: items.map(normalize), at: Date.now() }))
      .catch((err) => {
        listed.set(id, { items: [], at: Date.now() });
        if (id === openId) reportError(err, "Listing the attachments");
      })
      .finally(() => {
        out--;
        listing.delete(id);
        if (job.again) refresh(id);
        drawSoon();
        pump();
      });
  }
}

const text = (v) => (typeof v === "string" ? v : "");
// As the SDK gives it (the REST list's names): an image has `image` ({width, height}) and a
// thumbnailUrl, a blob: URL of this page that never expires; `url` is the signed download.
function normalize(a) {
  return {
    id: text(a.id),
    name: text(a.name) || "file",
    type: text(a.contentType),
    size: Number.isFinite(a.size) ? a.size : 0,
    by: text(a.uploadedBy),
    at: text(a.uploadedAt),
    image: Boolean(a.image),
    url: text(a.url),
    thumbnailUrl: text(a.thumbnailUrl),
  };
}

// The card's cover for its face: its newest image. A card known to have one that is not
// listed yet is listed (drawn when it comes).
export function coverOf(id) {
  want(id);
  const entry = listed.get(id);
  if (!entry) {
    if ((held.get(id) || {}).images && !listing.has(id)) refresh(id);
    return null;
  }
  const cover = entry.items.filter((a) => a.image && a.thumbnailUrl).pop();
  return cover ? { url: cover.thumbnailUrl, name: cover.name } : null;
}

export function attachmentCount(id) {
  want(id);
  return (held.get(id) || { count: 0 }).count;
}
export const uploadsOut = (id) => uploading.get(id) || 0;

// --- uploading and removing ---------------------------------------------------------------------

const hasFiles = (event) => Boolean(event.dataTransfer) && [...event.dataTransfer.types].includes("Files");

// A pasted screenshot comes as "image.png": named for when it was pasted instead.
function nameOf(file, pasted) {
  if (!pasted) return file.name || "file";
  const stamp = new Date().toISOString().slice(0, 19).replace("T", " ").replaceAll(":", ".");
  const extension = (file.type.split("/")[1] || "png").replace("jpeg", "jpg");
  return "Screenshot " + stamp + "." + extension;
}

export function uploadFiles(id, files, { pasted = false } = {}) {
  if (!findCard(id) || !files.length || state.readOnly) return;
  for (const file of files) {
    const name = nameOf(file, pasted);
    uploading.set(id, uploadsOut(id) + 1);
    render();
    renderAttachments();
    write("Attaching " + name, async () => {
      try {
        const attachment = normalize(await kanban.attachments.upload(THIS_PROJECT, id, file, { name }));
        const entry = listed.get(id);
        if (entry && !entry.items.some((a) => a.id === attachment.id)) entry.items.push(attachment);
        else if (!entry) listed.set(id, { items: [attachment], at: Date.now() });
        announce("Attached " + name + ".");
      } finally {
        uploading.set(id, uploadsOut(id) - 1);
        renderAttachments();
      }
    });
  }
}

async function removeAttachment(id, attachment) {
  if (!(await confirmDialog('Remove "' + attachment.name + '" from this card?'))) return;
  await write("Removing " + attachment.name, async () => {
    await kanban.attachments.remove(THIS_PROJECT, id, attachment.id);
    const entry = listed.get(id);
    if (entry) entry.items = entry.items.filter((a) => a.id !== attachment.id);
    announce("Removed " + attachment.name + ".");
  });
  renderAttachments();
}

// A card's face takes files dropped on it (a card being moved is not a file: it passes).
export function wireFileDrop(node, id) {
  const accepts = (event) => hasFiles(event) && !state.readOnly && !state.dragging;
  node.addEventListener("dragover", (event) => {
    if (!accepts(event)) return;
    event.preventDefault();
    event.stopPropagation();
    event.dataTransfer.dropEffect = "copy";
    node.classList.add("file-over");
  });
  node.addEventListener("dragleave", (event) => {
    if (!node.contains(/** @type {Node} */ (event.relatedTarget))) node.classList.remove("file-over");
  });
  node.addEventListener("drop", (event) => {
    node.classList.remove("file-over");
    if (!accepts(event)) return;
    event.preventDefault();
    event.stopPropagation();
    uploadFiles(id, [...event.dataTransfer.files]);
  });
}

// --- the card dialog's section -------------------------------------------------------------------

export function openAttachments(id) {
  openId = id;
  $("card-attachments").hidden = !id;
  if (!id) return;
  const entry = listed.get(id);
  if (!entry || Date.now() - entry.at > LINKS_FRESH_MS) refresh(id);
  renderAttachments();
  // Links offered while the dialog stays open are renewed before they expire.
  clearInterval(freshTimer);
  freshTimer = setInterval(() => openId && refresh(openId), LINKS_FRESH_MS);
}

function closeAttachments() {
  openId = null;
  clearInterval(freshTimer);
}

const when = (at) => (Number.isNaN(Date.parse(at)) ? "" : new Date(at).toLocaleString());

const SIZES = ["bytes", "KB", "MB", "GB"];
export function formatSize(bytes) {
  let n = bytes;
  let unit = 0;
  while (n >= 1024 && unit < SIZES.length - 1) {
    n /= 1024;
    unit++;
  }
  return (unit ? n.toFixed(n < 10 ? 1 : 0) : String(n)) + " " + SIZES[unit];
}

function renderAttachments() {
  if (!openId) return;
  const id = openId;
  const entry = listed.get(id);
  const out = uploadsOut(id);
  $("attachments-status").textContent = out ? "Uploading " + out + (out === 1 ? " file…" : " files…") : entry ? "" : "Loading…";
  const items = entry ? entry.items : [];
  $("attachments-list").replaceChildren(
    ...items.map((a) =>
      el(
        "li",
        { class: "attachment", "data-testid": "attachment-" + a.id },
        a.thumbnailUrl ? el("img", { class: "attachment-thumb", src: a.thumbnailUrl, alt: "" }) : icon("clip"),
        el("span", { class: "attachment-name", title: a.by ? "Added by " + personLabel(a.by) + (a.at ? ", " + when(a.at) : "") : null, text: a.name }),
        el("span", { class: "attachment-size hint", text: formatSize(a.size) }),
        // A new tab leaves the sandbox, where the browser saves what the server sends.
        a.url
          ? el("a", { class: "button ghost small", href: a.url, target: "_blank", rel: "noopener", "data-testid": "download-" + a.id, text: "Download" })
          : null,
        state.readOnly
          ? null
          : el("button", {
              type: "button",
              class: "button ghost small editing-only",
              "aria-label": "Remove " + a.name,
              text: "Remove",
              onclick: () => removeAttachment(id, a),
            }),
      ),
    ),
  );
  $("attachments-empty").hidden = items.length > 0 || !entry;
}

export function wireAttachments() {
  const dialog = $("card-dialog");
  const target = () => (openId && !state.readOnly ? openId : null);
  dialog.addEventListener("close", closeAttachments);
  dialog.addEventListener("dragover", (event) => {
    if (!hasFiles(event) || !target()) return;
    event.preventDefault();
    $("card-attachments").classList.add("file-over");
  });
  dialog.addEventListener("dragleave", (event) => {
    if (!dialog.contains(/** @type {Node} */ (event.relatedTarget))) $("card-attachments").classList.remove("file-over");
  });
  dialog.addEventListener("drop", (event) => {
    $("card-attachments").classList.remove("file-over");
    if (!hasFiles(event) || !target()) return;
    event.preventDefault();
    uploadFiles(target(), [...event.dataTransfer.files]);
  });
  dialog.addEventListener("paste", (event) => {
    const files = [...(event.clipboardData ? event.clipboardData.files : [])];
    if (!files.length || !target()) return;
    event.preventDefault();
    uploadFiles(target(), files, { pasted: true });
  });
  $("attachment-pick").addEventListener("click", () => $("attachment-input").click());
  $("attachment-input").addEventListener("change", (event) => {
    const input = /** @type {HTMLInputElement} */ (event.target);
    if (target()) uploadFiles(target(), [...(input.files || [])]);
    input.value = "";
  });
  // A file dropped anywhere else is not opened in place of the board.
  for (const type of ["dragover", "drop"]) {
    document.addEventListener(type, (event) => hasFiles(event) && event.preventDefault());
  }
}
