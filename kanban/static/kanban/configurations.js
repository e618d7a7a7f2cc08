// The board's View menu: the person's own named configurations of this board ("views").
//
// The selected entry is always the active configuration. Switching tells the server first
// (so the choice survives a reload), then the plugin through the host relay, without a
// page reload. New and Duplicate switch to what they create; deleting the active one falls
// back to Default, as the server does.
//
// window.KanbanConfigurations.mount({root, projectId, active, onSwitch}) wires the markup
// in templates/kanban/board.html (the menu's button names the active view); onSwitch({id, name, values}) is called on every change
// of the active configuration (board.js passes host.setConfiguration).
(function () {
  "use strict";

  // The API lists the default as "default", the id its path takes; this page and the
  // plugin know it as "" (what the host has always handed plugins).
  const DEFAULT_IN_URL = "default";
  const local = (c) => (c && c.id === DEFAULT_IN_URL ? { ...c, id: "" } : c);
  function localIds(data) {
    if (!data || typeof data !== "object") return data;
    if (Array.isArray(data.configurations)) {
      return { ...data, configurations: data.configurations.map(local) };
    }
    return data.active ? { ...data, active: local(data.active) } : local(data);
  }

  function csrfToken() {
    const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]*)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  class ApiError extends Error {
    constructor(code, message) {
      super(message);
      this.code = code;
    }
  }

  async function request(method, url, body) {
    const headers = { Accept: "application/json" };
    const init = { method, headers, credentials: "same-origin" };
    if (method !== "GET") headers["X-CSRFToken"] = csrfToken();
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(url, init);
    } catch {
      throw new ApiError("unavailable", "the server cannot be reached");
    }
    let data = null;
    try {
      data = await response.json();
    } catch {
      // A proxy's HTML error page: fall through to the status line.
    }
    if (!response.ok) {
      const code = data && typeof data.code === "string" ? data.code : "unavailable";
      const message = data && typeof data.message === "string" ? data.message : "";
      throw new ApiError(code, message || `the request failed (${response.status})`);
    }
    return localIds(data);
  }

  const forBridge = (c) => ({ id: c.id, name: c.name, values: c.values });

  function mount({ root, projectId, active, onSwitch }) {
    const base = "/api/v1/projects/" + encodeURIComponent(projectId) + "/configurations/";
    const urlOf = (id, action) =>
      base + encodeURIComponent(id || DEFAULT_IN_URL) + "/" + (action ? action + "/" : "");

    const select = root.querySelector("select");
    const summary = root.querySelector("summary");
    const currentName = root.querySelector(".view-current");
    const message = root.querySelector(".config-message");
    const buttons = {};
    for (const button of root.querySelectorAll("button[data-action]")) {
      buttons[button.dataset.action] = button;
    }
    const nameDialog = root.querySelector('dialog[data-dialog="name"]');
    const deleteDialog = root.querySelector('dialog[data-dialog="delete"]');

    // What the plugin has now, and every configuration the server listed.
    let current = forBridge(active);
    let items = [{ ...current, active: true }];
    let loaded = false;

    // A note under the bar; what went well fades after a while, a failure stays.
    let fade = 0;
    const say = (text, kind) => {
      clearTimeout(fade);
      message.textContent = text;
      message.dataset.kind = kind || "info";
      if (kind !== "error") fade = setTimeout(() => (message.textContent = ""), 6000);
    };

    function render() {
      select.replaceChildren(
        ...items.map((item) => {
          const option = document.createElement("option");
          option.value = item.id;
          option.textContent = item.name;
          option.selected = item.id === current.id;
          return option;
        }),
      );
      currentName.textContent = current.name;
      summary.setAttribute("aria-label", "View: " + current.name);
      select.disabled = !loaded;
      buttons.new.disabled = buttons.duplicate.disabled = !loaded;
      // The built-in default cannot be renamed or deleted.
      buttons.rename.disabled = buttons.delete.disabled = !loaded || current.id === "";
    }

    // The server's answer is the truth: remember it and hand it to the plugin. A new
    // configuration is appended here; the next refresh() puts it in the server's order.
    function apply(configuration) {
      current = forBridge(configuration);
      const known = items.some((item) => item.id === current.id);
      items = (known ? items : [...items, configuration]).map((item) =>
        item.id === current.id ? { ...configuration, active: true } : { ...item, active: false },
      );
      render();
      onSwitch(current);
    }

    async function refresh() {
      try {
        const listed = await request("GET", base);
        items = listed.configurations;
        loaded = true;
        const serverActive = items.find((item) => item.active);
        if (serverActive && serverActive.id !== current.id) apply(serverActive);
        else render();
      } catch (err) {
        say("Views could not be loaded: " + err.message, "error");
      }
    }

    // Switches are sent one at a time and only the last choice reaches the plugin, so
    // quick arrow-key browsing through the list cannot end on a stale configuration.
    let wanted = null;
    let switching = false;
    async function switchTo(id) {
      wanted = id;
      if (switching) return;
      switching = true;
      try {
        while (wanted !== null) {
          const target = wanted;
          wanted = null;
          try {
            const switched = await request("POST", urlOf(target, "activate"));
            if (wanted === null) {
              apply(switched);
              say("Switched to " + switched.name + ".");
            }
          } catch (err) {
            if (wanted !== null) continue;
            say("Could not switch: " + err.message, "error");
            render();
            if (err.code === "not_found") await refresh();
          }
        }
      } finally {
        switching = false;
      }
    }

    // --- dialogs --------------------------------------------------------------------------

    let opener = null;
    let submitHandler = null;

    function openDialog(dialog, onSubmit) {
      opener = document.activeElement;
      submitHandler = onSubmit;
      dialog.querySelector(".config-error").textContent = "";
      dialog.querySelector("[data-submit]").disabled = false;
      dialog.showModal();
    }

    function closeDialog(dialog) {
      if (dialog.open) dialog.close();
    }

    for (const dialog of [nameDialog, deleteDialog]) {
      const form = dialog.querySelector("form");
      const error = dialog.querySelector(".config-error");
      const submit = dialog.querySelector("[data-submit]");
      dialog.querySelector("[data-close]").addEventListener("click", () => closeDialog(dialog));
      // Escape closes a modal dialog natively (a "cancel" event); focus goes back to the
      // button that opened it either way.
      dialog.addEventListener("close", () => {
        // The close event is queued as a task: a fast Escape then Enter can reopen the
        // dialog before it arrives, and that new opening must keep its handler and focus.
        if (dialog.open) return;
        submitHandler = null;
        const usable = (el) => el && el.isConnected && !el.disabled && el.checkVisibility();
        const back = usable(opener) ? opener : usable(select) ? select : summary;
        opener = null;
        back.focus();
      });
      form.addEventListener("submit", async (event) => {
        event.preventDefault();
        if (!submitHandler || submit.disabled) return;
        submit.disabled = true;
        error.textContent = "";
        try {
          await submitHandler();
          closeDialog(dialog);
        } catch (err) {
          error.textContent = err.message;
          submit.disabled = false;
          const input = dialog.querySelector("input");
          if (input) input.focus();
        }
      });
    }

    // One dialog asks for a name for New, Rename and Duplicate.
    function askName({ title, action, value, placeholder, optional, run }) {
      const input = nameDialog.querySelector("input");
      nameDialog.querySelector("h2").textContent = title;
      nameDialog.querySelector("[data-submit]").textContent = action;
      input.value = value || "";
      input.placeholder = placeholder || "";
      input.required = !optional;
      openDialog(nameDialog, async () => {
        const name = input.value.trim();
        if (!name && !optional) throw new ApiError("invalid_argument", "Enter a name.");
        await run(name);
      });
      input.select();
    }

    buttons.new.addEventListener("click", () =>
      askName({
        title: "Save as new view",
        action: "Save",
        run: async (name) => {
          const created = await request("POST", base, { name });
          await switchTo(created.id);
          await refresh();
        },
      }),
    );

    buttons.rename.addEventListener("click", () =>
      askName({
        title: "Rename view " + current.name,
        action: "Rename",
        value: current.name,
        run: async (name) => {
          const renamed = await request("PATCH", urlOf(current.id), { name });
          apply(renamed);
          say("Renamed to " + renamed.name + ".");
        },
      }),
    );

    buttons.duplicate.addEventListener("click", () =>
      askName({
        title: "Duplicate " + current.name,
        action: "Duplicate",
        placeholder: "Leave empty for an automatic name",
        optional: true,
        run: async (name) => {
          const copy = await request("POST", urlOf(current.id, "duplicate"), name ? { name } : {});
          await switchTo(copy.id);
          await refresh();
        },
      }),
    );

    buttons.delete.addEventListener("click", () => {
      const doomed = current;
      deleteDialog.querySelector("#config-delete-text").textContent =
        "Delete the view \u201c" + doomed.name + "\u201d? The board goes back to Default.";
      openDialog(deleteDialog, async () => {
        const result = await request("DELETE", urlOf(doomed.id));
        items = items.filter((item) => item.id !== doomed.id);
        apply(result.active);
        say("Deleted " + doomed.name + ".");
      });
    });

    select.addEventListener("change", () => switchTo(select.value));

    render();
    const ready = refresh();
    return {
      ready,
      refresh,
      switchTo,
      get current() {
        return current;
      },
    };
  }

  window.KanbanConfigurations = { mount };
})();
