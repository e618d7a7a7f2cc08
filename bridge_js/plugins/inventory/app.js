// The Inventory plugin: stock items in the project's KV, written only against the public
// SDK. Keys: `items` (the index of item ids, changed only with updateValue) and
// `stock:<id>` = {name, count}. The Board project reads and writes `stock:` keys through
// its `inventory` alias, so counts change only through updateValue here as well.
// The page's one module (index.html loads the SDK before it, as a classic script).
import { announce, button, createGenerations, createWriteMode, el, followColorScheme, redraw, reportError, toast } from "../../static/bridge/plugin-kit.js";
import * as Core from "./inventory-core.js";

followColorScheme();

const kanban = window.steamHarnessKanban;
const { KEYS } = Core;

const state = { loaded: false, items: /** @type {Core.Item[]} */ ([]), readOnly: false, pending: 0, renders: 0 };
const generations = createGenerations();
// An element of the page's markup (index.html has every id asked for); `any`, for the
// many kinds of element a page reads (an input's value, a dialog's open).
/** @param {string} id @returns {any} */
const $ = (id) => document.getElementById(id);

/** @type {(value?: void) => void} */
let resolveReady;
/** @type {Promise<void>} */
const ready = new Promise((resolve) => (resolveReady = resolve));
/** @type {any} */ (window).inventoryDebug = Object.freeze({
  ready,
  get state() {
    return Object.freeze(JSON.parse(JSON.stringify(state)));
  },
});

// A guest's inventory starts read-only (getContext) and unlocks live on promotion.
const { apply: applyContext, write } = createWriteMode({
  state,
  render: () => render(),
  refresh: () => scheduleRefresh(0),
});

async function load() {
  const generation = generations.next();
  try {
    const ids = Core.normalizeIndex(await kanban.kv.getValue(KEYS.items));
    const values = await Promise.all(ids.map((id) => kanban.kv.getValue(KEYS.stock(id))));
    if (!generations.isCurrent(generation)) return;
    state.items = Core.sortItems(ids.map((id, i) => Core.normalizeItem(id, values[i])).filter((item) => item !== null));
    state.loaded = true;
    render();
  } catch (err) {
    if (generations.isCurrent(generation)) reportError(err, "Loading the inventory failed");
  } finally {
    if (generations.isCurrent(generation)) resolveReady();
  }
}

/** @type {ReturnType<typeof setTimeout> | undefined} */
let timer;
/** @param {number} [delay] ms */
function scheduleRefresh(delay) {
  clearTimeout(timer);
  timer = setTimeout(load, delay === undefined ? 100 : delay);
}

async function addItem() {
  const name = Core.checkName($("item-name").value);
  const count = Core.checkCount($("item-count").value);
  const problem = !name.ok ? name.message : !count.ok ? count.message : "";
  $("add-error").hidden = !problem;
  $("add-error").textContent = problem;
  if (!name.ok || !count.ok) return;
  const id = Core.newItemId(name.value, (n) => crypto.getRandomValues(new Uint8Array(n)));
  const item = { name: name.value, count: count.value };
  state.items = Core.sortItems([...state.items, { id, ...item, broken: false }]);
  render();
  $("item-name").value = "";
  $("item-count").value = "0";
  $("item-name").focus();
  // The stock first, then the index, so the index never names a missing item.
  const done = await write("Adding the item", async () => {
    await kanban.kv.updateValue(KEYS.stock(id), Core.createOnly(item));
    await kanban.kv.updateValue(KEYS.items, Core.addToIndex(id));
  });
  if (done) announce("Added " + name.value + ".");
}

/** @param {Core.Item} item @param {number} delta */
function adjust(item, delta) {
  if (item.count + delta < 0) {
    toast("Stock cannot go below zero.");
    return;
  }
  const local = state.items.find((i) => i.id === item.id);
  if (local) local.count += delta;
  render();
  write("Changing the count", async () => {
    const stored = await kanban.kv.updateValue(KEYS.stock(item.id), Core.adjust(delta));
    announce(item.name + ": " + stored.count + " in stock.");
  });
}

function render() {
  if (!state.loaded) return;
  state.renders++;
  const body = $("items");
  redraw(body, () => {
    if (!state.items.length) {
      body.replaceChildren(
        el("tr", {}, el("td", { colspan: "3", class: "muted", text: state.readOnly ? "No items yet." : "No items yet: add the first one above." })),
      );
    } else {
      body.replaceChildren(...state.items.map(renderItem));
    }
  });
}

// The − and + beside a count: one fewer (never below none) or one more.
/** @param {Core.Item} item @param {number} delta */
function stepButton(item, delta) {
  const key = (delta < 0 ? "dec-" : "inc-") + item.id;
  return button(key, {
    class: "step",
    "data-testid": key,
    "aria-label": (delta < 0 ? "One fewer " : "One more ") + item.name,
    disabled: delta < 0 && item.count <= 0,
    text: delta < 0 ? "−" : "+",
    onclick: () => adjust(item, delta),
  });
}

/** @param {Core.Item} item */
function renderItem(item) {
  const count = el(
    "td",
    { class: "num" },
    state.readOnly ? null : stepButton(item, -1),
    el("span", { class: "count" + (item.count === 0 ? " count-empty" : ""), "data-testid": "count-" + item.id, text: String(item.count) }),
    state.readOnly ? null : stepButton(item, +1),
  );
  return el("tr", { "data-testid": "item-" + item.id }, el("th", { scope: "row", text: item.name }), el("td", {}, el("code", { text: item.id })), count);
}

$("add-item").addEventListener("click", addItem);
for (const id of ["item-name", "item-count"]) {
  // Sandboxed pages cannot submit forms: Enter adds by hand.
  $(id).addEventListener("keydown", (/** @type {KeyboardEvent} */ event) => {
    if (event.key === "Enter") {
      event.preventDefault();
      addItem();
    }
  });
}

/** @type {(() => void) | null} */
let unsubscribe = null;
kanban.ready.then(() => {
  applyContext(kanban.getContext());
  kanban.onContextChange(applyContext);
  unsubscribe = kanban.kv.subscribe(() => scheduleRefresh());
  load();
});
kanban.onConfigurationChange(() => load());
kanban.onInvalidated(({ alias, code }) => {
  if (alias === null) toast("Live updates stopped; reload to try again.", code);
});
addEventListener("pagehide", () => unsubscribe && unsubscribe());
