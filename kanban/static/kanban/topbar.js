// The top bar. On a phone it is one row; its Menu button shows the rest (the page's links
// and pickers, the account) and hides it again. Its menus (<details class="menu">) close on
// Escape and on a click elsewhere. The Appearance buttons save the person's colour scheme
// and apply it at once (without JavaScript the form posts and the page comes back).
(function () {
  "use strict";
  const top = document.getElementById("top");
  if (!top) return;
  const toggle = top.querySelector(".menu-toggle");
  // On a phone the opened Menu shows each menu as a section of it, open.
  if (toggle) {
    toggle.addEventListener("click", () => {
      const open = top.classList.toggle("open");
      toggle.setAttribute("aria-expanded", String(open));
      for (const menu of top.querySelectorAll("details.menu")) menu.open = open;
    });
  }

  const menus = () => top.querySelectorAll("details.menu[open]");
  document.addEventListener("click", (event) => {
    // A dialog opened from a menu is outside it in the DOM, but part of what it does.
    const target = /** @type {Element} */ (event.target);
    if (top.classList.contains("open") || target.closest("dialog")) return;
    for (const menu of menus()) if (!menu.contains(target)) menu.open = false;
  });
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Escape" || top.classList.contains("open")) return;
    // A modal dialog opened from a menu handles its own Escape.
    if (document.querySelector("dialog[open]")) return;
    for (const menu of menus()) {
      menu.open = false;
      menu.querySelector("summary").focus();
    }
  });

  const schemes = top.querySelector("form.scheme-choice");
  if (!schemes) return;
  schemes.addEventListener("submit", async (event) => {
    const button = event.submitter;
    if (!button || !button.value) return;
    event.preventDefault();
    const body = new FormData(schemes);
    body.set("scheme", button.value);
    let response;
    try {
      response = await fetch(schemes.action, { method: "POST", body, headers: { Accept: "application/json" }, credentials: "same-origin" });
    } catch {
      return; // unreachable server: the choice stays as it was
    }
    if (!response.ok) return;
    const { scheme } = await response.json();
    document.documentElement.dataset.theme = scheme;
    for (const choice of schemes.querySelectorAll("button[name=scheme]")) {
      choice.setAttribute("aria-pressed", String(choice.value === scheme));
    }
    document.dispatchEvent(new CustomEvent("kanban:color-scheme", { detail: { scheme } }));
  });
})();
