// On a phone the top bar is one row; its Menu button shows the rest (the page's links and
// pickers, the account) and hides it again.
(function () {
  "use strict";
  const top = document.getElementById("top");
  const toggle = top && top.querySelector(".menu-toggle");
  if (!toggle) return;
  toggle.addEventListener("click", () => {
    const open = top.classList.toggle("open");
    toggle.setAttribute("aria-expanded", String(open));
  });
})();
