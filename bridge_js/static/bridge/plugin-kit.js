// What the built-in plugins share, and any plugin may import: a refusal type for pure
// updaters, request generations, and the few DOM helpers every page needs (elements,
// announcements, toasts). One ES module, served beside the SDK as
// /static/bridge/plugin-kit.js (settings.STATICFILES_DIRS); nothing here touches the
// DOM until a helper is called, so node tests import it with the plugins' pure modules.
//
// A plugin file at /plugins/<id>/x.js imports it as "../../static/bridge/plugin-kit.js":
// on the server that is /static/bridge/plugin-kit.js, and in this repository the same
// relative path from bridge_js/plugins/<name>/ is this file, so node resolves it unchanged.

// What a pure updater throws to stop an updateValue: shown to the user as it is.
export class Refused extends Error {
  constructor(reason, message) {
    super(message);
    this.name = "Refused";
    this.reason = reason;
  }
}

// Request generations: a response of an older generation is dropped, never drawn.
export function createGenerations() {
  let current = 0;
  return {
    next: () => ++current,
    isCurrent: (generation) => generation === current,
    get current() {
      return current;
    },
  };
}

// el("button", {class, text, onclick, "data-x": 1}, ...children); null children skip.
// The colour scheme the person chose on the host (?colorScheme=dark|light on the page's
// address, bridge_js/README.md "Dark mode"), as <html data-theme>: plugin-kit.css draws it.
// Without one the frame follows the device (prefers-color-scheme).
export function followColorScheme(search = location.search) {
  const chosen = new URLSearchParams(search).get("colorScheme");
  if (chosen === "dark" || chosen === "light") document.documentElement.dataset.theme = chosen;
}

export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") node.className = value;
    else if (name === "text") node.textContent = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

// A button a redraw finds again: `focusKey` (data-focus-key) is what redraw() keeps the
// focus on. button("use-" + id, {class, "aria-label", text, onclick}, ...children)
export function button(focusKey, attrs, ...children) {
  return el("button", { type: "button", "data-focus-key": focusKey, ...attrs }, ...children);
}

// Replaces what `root` shows with draw(), and puts the focus back where it was: on the
// element with the same data-focus-key in what draw() made, when focus was inside `root`.
export function redraw(root, draw) {
  const focused = document.activeElement && root.contains(document.activeElement) ? document.activeElement : null;
  const focusKey = focused ? focused.getAttribute("data-focus-key") : null;
  draw();
  if (focusKey) {
    const again = root.querySelector('[data-focus-key="' + CSS.escape(focusKey) + '"]');
    if (again) again.focus();
  }
}

// Read by screen readers (#announcer, role=status); set after a beat so a repeat is heard.
export function announce(text) {
  const live = document.getElementById("announcer");
  live.textContent = "";
  setTimeout(() => (live.textContent = text), 30);
}

// A toast in #toasts; `code` marks an error, `action` ({label, run}) adds a button (Undo).
export function toast(message, code, action) {
  const box = el(
    "div",
    { class: "toast" + (code ? " toast-error" : ""), role: code ? "alert" : "status", "data-testid": "toast" },
    code ? el("span", { class: "toast-code", text: code }) : null,
    el("span", { class: "toast-text", text: message }),
    action
      ? el("button", {
          type: "button",
          class: "toast-action",
          "data-testid": "toast-action",
          text: action.label,
          onclick: () => (box.remove(), action.run()),
        })
      : null,
    el("button", { type: "button", class: "toast-close", "aria-label": "Dismiss", text: "×", onclick: () => box.remove() }),
  );
  document.getElementById("toasts").append(box);
  setTimeout(() => box.remove(), action ? 10000 : 6000);
}

// A refusal says what happened; a bridge error also its code; anything else is a bug.
export function reportError(err, context) {
  const where = context ? context + ": " : "";
  if (err instanceof Refused) {
    toast(err.message);
  } else if (err && typeof err.code === "string") {
    toast(where + err.message, err.code);
  } else {
    toast(where + String(err && err.message ? err.message : err), "error");
    console.error(err);
  }
}

// Whether the page may write, as it knows: read-only when the context says the user may
// not write or a write was refused (`forbidden`), writable again when the context says so;
// the server decides every write all the same. `state` holds `readOnly` and `pending`;
// the page has #readonly-note, and `render`, `refresh` (what the page does after a write,
// done or failed: the Board draws what it holds, the Inventory reads again) and `onEnter`
// (close what only edits) are its own.
export function createWriteMode({ state, render, refresh, onEnter = () => {} }) {
  const note = () => document.getElementById("readonly-note");
  function enter() {
    if (state.readOnly) return;
    state.readOnly = true;
    note().hidden = false;
    document.body.classList.add("read-only");
    onEnter();
    render();
  }
  // A host that says nothing (no `can.write`) leaves it to the first refused write.
  function apply(context) {
    if (context.can.write === false) return enter();
    if (context.can.write === true && state.readOnly) {
      state.readOnly = false;
      note().hidden = true;
      document.body.classList.remove("read-only");
    }
    render();
  }
  // One write: the page already shows its change; whatever happens, it refreshes.
  async function write(label, fn) {
    if (state.readOnly) {
      toast("Read only: your role here cannot change this.");
      return false;
    }
    state.pending++;
    try {
      await fn();
      return true;
    } catch (err) {
      if (err && err.code === "forbidden") enter();
      reportError(err, label);
      return false;
    } finally {
      state.pending--;
      refresh();
    }
  }
  return { apply, enter, write };
}
