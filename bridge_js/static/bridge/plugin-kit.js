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
  /** @param {string} reason a word for the page's own use @param {string} message what the person reads */
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
    isCurrent: (/** @type {number} */ generation) => generation === current,
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

/**
 * @template {string} K
 * @param {K} tag
 * @param {Record<string, any> | null} [attrs]
 * @param {...(Node | string | null | undefined | false)} children
 * @returns {K extends keyof HTMLElementTagNameMap ? HTMLElementTagNameMap[K] : HTMLElement}
 */
export function el(tag, attrs, ...children) {
  const node = /** @type {any} */ (document.createElement(tag));
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
/**
 * @param {string} focusKey
 * @param {Record<string, any>} [attrs]
 * @param {...(Node | string | null | undefined | false)} children
 */
export function button(focusKey, attrs, ...children) {
  return el("button", { type: "button", "data-focus-key": focusKey, ...attrs }, ...children);
}

// Replaces what `root` shows with draw(), and puts the focus back where it was: on the
// element with the same data-focus-key in what draw() made, when focus was inside `root`.
/** @param {HTMLElement} root @param {() => void} draw */
export function redraw(root, draw) {
  const focused = document.activeElement && root.contains(document.activeElement) ? document.activeElement : null;
  const focusKey = focused ? focused.getAttribute("data-focus-key") : null;
  draw();
  if (focusKey) {
    const again = root.querySelector('[data-focus-key="' + CSS.escape(focusKey) + '"]');
    if (again instanceof HTMLElement) again.focus();
  }
}

// The page's live regions: #announcer (read by screen readers, never seen) and #toasts. The
// kit makes both at its first announcement or toast, so a plugin page carries no markup for
// them; a page that places its own keeps them.
/** @param {string} id @returns {HTMLElement} */
function liveRegion(id) {
  const found = document.getElementById(id);
  if (found) return found;
  const made =
    id === "announcer"
      ? el("div", { id, class: "sr-only", role: "status", "aria-live": "polite" })
      : el("div", { id, class: "toasts", "aria-live": "assertive" });
  document.body.append(made);
  return made;
}

// Read by screen readers (#announcer, role=status); set after a beat so a repeat is heard
// (and so a region made just now is in the page before it speaks).
/** @param {string} text */
export function announce(text) {
  const live = liveRegion("announcer");
  live.textContent = "";
  setTimeout(() => (live.textContent = text), 30);
}

// A toast in #toasts; `code` marks an error, `action` ({label, run}) adds a button (Undo).
/**
 * @param {string} message
 * @param {string | null} [code]
 * @param {{label: string, run: () => void}} [action]
 */
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
  liveRegion("toasts").append(box);
  setTimeout(() => box.remove(), action ? 10000 : 6000);
}

// A refusal says what happened; a bridge error also its code; anything else is a bug.
/** @param {any} err @param {string} [context] what was being done ("Saving the card failed") */
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
/**
 * @param {{state: {readOnly: boolean, pending: number}, render: () => void, refresh: () => void, onEnter?: () => void}} page
 */
export function createWriteMode({ state, render, refresh, onEnter = () => {} }) {
  const note = () => /** @type {HTMLElement} */ (document.getElementById("readonly-note"));
  function enter() {
    if (state.readOnly) return;
    state.readOnly = true;
    note().hidden = false;
    document.body.classList.add("read-only");
    onEnter();
    render();
  }
  // A host that says nothing (no `can.write`) leaves it to the first refused write.
  /** @param {{can: {write?: boolean}}} context the SDK's getContext() */
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
  /** @param {string} label @param {() => unknown} fn */
  async function write(label, fn) {
    if (state.readOnly) {
      toast("Read only: your role here cannot change this.");
      return false;
    }
    state.pending++;
    try {
      await fn();
      return true;
    } catch (/** @type {any} */ err) {
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
