// window.steamHarnessKanban: what a plugin inside the sandboxed iframe sees.

import { V, KNOWLEDGE, UPLOAD_TIMEOUT } from "./protocol.js";
import { BridgeError, typeError } from "./errors.js";
import { checkAlias, checkArguments, isBlob, isPlain } from "./guards.js";
import { createRpc } from "./rpc.js";
import { pluginHandshake } from "./handshake.js";

/** @typedef {import("../static/bridge/kanban.js").SteamHarnessKanban} SteamHarnessKanban */
/** @typedef {import("../static/bridge/kanban.js").RelatedProject} RelatedProject */
/** @typedef {import("../static/bridge/kanban.js").KanbanAttachments} KanbanAttachments */
/** @typedef {import("../static/bridge/kanban.js").KanbanCards} KanbanCards */
/** @typedef {import("../static/bridge/kanban.js").Configuration} Configuration */
/** @typedef {import("./wire.js").Call} Call */
/** @typedef {{listener: (event: any) => void, prefix: any}} Entry */
/** @typedef {Set<Entry> & {prefix?: string}} Listeners */
/** @typedef {{alias?: string}} Target */

const MAX_UPDATE_ATTEMPTS = 64;

/** @template T @param {T} x @returns {T} */
function deepFreeze(x) {
  if (x && typeof x === "object" && !Object.isFrozen(x)) {
    Object.freeze(x);
    for (const k of Object.keys(x)) deepFreeze(/** @type {any} */ (x)[k]);
  }
  return x;
}

// Before the host speaks, and for an alias this project does not declare.
const NO_CONTEXT = deepFreeze({ user: null, role: null, status: "unknown", can: {} });

// The host hands over `{id, name, values}` already checked (host.js toHostConfiguration).
/** @type {Configuration} */
const NO_CONFIGURATION = deepFreeze({ id: "", name: "", values: {} });

// `env` is the plugin's window (or a fake one in tests): parent, add/removeEventListener,
// setTimeout/clearTimeout and console.
/** @param {import("./wire.js").PluginEnv} env */
export function createKanban(env) {
  const log = env.console;
  const rpc = createRpc(env);
  // alias (null = this project) -> Set of {listener}; watches' entries carry a prefix too.
  /** @type {Map<string | null, Listeners>} */
  const subscriptions = new Map();
  /** @type {Map<string | null, Listeners>} */
  const watches = new Map();
  /** @type {Listeners} */
  const configListeners = new Set();
  // alias -> context; {listener, prefix: alias} entries hear their alias' changes only.
  /** @type {Map<string | null, any>} */
  const contexts = new Map();
  /** @type {Listeners} */
  const contextListeners = new Set();
  /** @type {Listeners} */
  const invalidListeners = new Set();
  /** @type {Map<string, RelatedProject>} */
  const related = new Map();
  /** @type {Map<string, Promise<unknown>>} */
  const updateTails = new Map();
  let configuration = NO_CONFIGURATION;
  let configured = false;
  /** @type {SteamHarnessKanban["status"]} */
  let status = "connecting";
  /** @type {(value?: void) => void} */
  let resolveReady;
  /** @type {Promise<void>} */
  const ready = new Promise((resolve) => (resolveReady = resolve));

  // Listener sets hold {listener} entries, so one function added twice is two listeners.
  // Each listener gets its own event from `make`.
  /** @param {Iterable<Entry>} entries @param {(entry: Entry) => any} make */
  const emit = (entries, make) => {
    for (const entry of [...entries]) {
      try {
        const event = make(entry);
        if (event) entry.listener(event);
      } catch (err) {
        log.error(err);
      }
    }
  };
  /** @param {Listeners} listeners @param {unknown} listener @param {any} [prefix] */
  const add = (listeners, listener, prefix = "") => {
    if (typeof listener !== "function") throw typeError("listener must be a function");
    const entry = { listener: /** @type {Entry["listener"]} */ (listener), prefix };
    listeners.add(entry);
    return entry;
  };
  /** @param {Listeners} listeners @param {unknown} listener @param {any} [prefix] @returns {() => void} */
  const listen = (listeners, listener, prefix) => {
    const entry = add(listeners, listener, prefix);
    return () => void listeners.delete(entry);
  };

  // Type mistakes fail here, before anything is posted; the limits (key length, 1 MiB)
  // are the host's, whose refusal comes back with the same code.
  /** @param {Call} frame @param {number} [wait] @param {Blob} [file] @returns {Promise<any>} */
  const call = async (frame, wait, file) => {
    checkArguments(frame);
    // A file is bytes, not JSON: it joins the value once the rest is checked.
    const reply = await rpc.call(file ? { ...frame, value: { ...frame.value, file } } : frame, wait);
    if (reply.ok) return reply.result;
    // The host normalised the error (errors.js wireError) before posting it.
    const e = reply.error;
    throw new BridgeError(e.code, e.message, e.current, e.hint);
  };
  // What a public method returns: failures are logged once, with a hint.
  /** @template T @param {Promise<T>} promise @returns {Promise<T>} */
  const pub = (promise) =>
    promise.catch((err) => {
      if (err instanceof BridgeError) {
        log.warn(`steamHarnessKanban: ${err.code}: ${err.message}${err.hint ? ` (${err.hint})` : ""}`);
      }
      throw err;
    });

  /** @param {string | null} alias @param {string} code */
  const invalidate = (alias, code) => {
    // Both deleted: `|` does not stop at the first.
    const held = /** @type {any} */ (subscriptions.delete(alias)) | /** @type {any} */ (watches.delete(alias));
    if (held) emit(invalidListeners, () => Object.freeze({ alias, code }));
  };

  // Listeners of one alias share one server subscription (`subscribe`) or watch (`watch`,
  // whose prefix is the first listener's, or "" once listeners differ: each listener still
  // hears only its own prefix). While the link is down the host re-subscribes on reconnect,
  // so an `unavailable` keeps them listening.
  /**
   * @param {Map<string | null, Listeners>} map
   * @param {"subscribe" | "watch"} op
   * @param {string | null} alias
   * @param {Target} target
   * @param {unknown} listener
   * @param {string} [prefix]
   */
  const follow = (map, op, alias, target, listener, prefix) => {
    const listeners = map.get(alias) || /** @type {Listeners} */ (new Set());
    const entry = add(listeners, listener, prefix);
    const fresh = !map.has(alias);
    const widen = !fresh && listeners.prefix && listeners.prefix !== entry.prefix;
    if (fresh || widen) {
      map.set(alias, listeners);
      listeners.prefix = fresh ? entry.prefix : "";
      const value = op === "watch" ? { prefix: listeners.prefix } : undefined;
      pub(call(value ? { op, ...target, value } : { op, ...target })).catch((/** @type {BridgeError} */ err) => {
        if (err.code !== "unavailable" && map.get(alias) === listeners) invalidate(alias, err.code);
      });
    }
    return () => {
      if (!listeners.delete(entry) || listeners.size || map.get(alias) !== listeners) return;
      map.delete(alias);
      call({ op: "un" + op, ...target }).catch(() => {});
    };
  };

  // Compare-and-set loop; the updater may run several times and must be pure.
  /** @param {Target} target @param {string} key @param {unknown} updater */
  const update = async (target, key, updater) => {
    if (typeof updater !== "function") throw typeError("updater must be a function");
    const read = () => call({ op: "get", ...target, key });
    let current = await read();
    for (let attempt = 1; ; attempt++) {
      const value = updater(current.found ? current.value : undefined);
      if (value === undefined) throw typeError("the updater returned undefined");
      try {
        await call({ op: "set", ...target, key, value, expectedRevision: current.found ? String(current.revision) : null });
        return value;
      } catch (err) {
        if (!(err instanceof BridgeError) || err.code !== "conflict" || attempt >= MAX_UPDATE_ATTEMPTS) throw err;
        current = isPlain(err.current) ? err.current : await read();
      }
    }
  };

  // One page's updates of one key run one after another. Run together they would only make
  // each other retry: fifty at once would cost over a thousand writes and exhaust attempts.
  /** @param {Target} target @param {string} key @param {unknown} updater */
  const queuedUpdate = (target, key, updater) => {
    const slot = (target.alias || "") + "\n" + key;
    const run = (updateTails.get(slot) || Promise.resolve()).then(() => update(target, key, updater));
    const tail = run.catch(() => {});
    updateTails.set(slot, tail);
    tail.then(() => updateTails.get(slot) === tail && updateTails.delete(slot));
    return run;
  };

  /** @param {string | null} alias */
  const project = (alias) => {
    /** @type {Target} */
    const target = alias === null ? {} : { alias };
    // One method per row of protocol.json's knowledge table.
    const knowledge = /** @type {Record<keyof typeof KNOWLEDGE, (arg?: any) => Promise<any>>} */ ({});
    for (const [method, { op, key: byId, value: fields }] of Object.entries(KNOWLEDGE)) {
      knowledge[/** @type {keyof typeof KNOWLEDGE} */ (method)] = (arg) => {
        /** @type {Call} */
        const frame = { op, ...target };
        const plain = isPlain(arg);
        const id = plain ? arg.id : arg;
        // A document id is required, or (createDocument) optional: a stable id to create.
        if (byId === "required" || (byId && id !== undefined)) frame.key = id;
        if (fields.length) {
          frame.value = {};
          for (const f of fields) if (plain && arg[f] !== undefined) frame.value[f] = arg[f];
        }
        return pub(call(frame));
      };
    }
    return /** @satisfies {RelatedProject} */ ({
      // Entrypoints run locally, never on the server, which refuses with not_supported.
      listEntrypoints: () => pub(call({ op: "entrypoints.list", ...target })),
      runEntrypoint: (key, args = []) => pub(/** @type {Promise<never>} */ (call({ op: "entrypoints.run", ...target, key, value: { args } }))),
      kv: {
        getValue: (key) => pub(call({ op: "get", ...target, key })).then((r) => (r.found ? r.value : undefined)),
        getValues: (keys) => pub(call({ op: "getMany", ...target, value: keys })),
        setValue: (key, value) => pub(call({ op: "set", ...target, key, value })).then(() => {}),
        updateValue: (key, updater) => pub(queuedUpdate(target, key, updater)),
        getHistory: (key, options = {}) => pub(call({ op: "history", ...target, key, value: options })),
        subscribe: (listener) => follow(subscriptions, "subscribe", alias, target, listener),
        watch: (listener, options) => follow(watches, "watch", alias, target, listener, options?.prefix),
      },
      knowledge,
      // A Context for this project, a RelatedContext for an alias (kanban.d.ts).
      getContext: () => contexts.get(alias) || NO_CONTEXT,
      onContextChange: (/** @type {(context: any) => void} */ listener) => listen(contextListeners, listener, alias),
    });
  };

  /** @param {any} f */
  const onHost = (f) => {
    if (!isPlain(f) || f.v !== V) return; // the host checked the rest (isFrame)
    if (f.event === undefined) return rpc.handle(/** @type {import("./wire.js").Reply} */ (f));
    const alias = typeof f.alias === "string" ? f.alias : null;
    if (f.event === "configuration") {
      configuration = deepFreeze(f.configuration);
      if (configured) emit(configListeners, () => configuration);
      configured = true;
      resolveReady();
    } else if (f.event === "context") {
      // The host sends a part only when it changed.
      contexts.set(alias, deepFreeze(f.context));
      emit(contextListeners, ({ prefix }) => prefix === alias && contexts.get(alias));
    } else if (f.event === "revision") {
      const revision = String(f.revision);
      emit(subscriptions.get(alias) || [], () => Object.freeze({ alias, revision }));
    } else if (f.event === "changes") {
      const resync = f.resync === true;
      // Pushed values are shared by every listener: frozen, none can change another's.
      const all = deepFreeze(f.changes);
      emit(watches.get(alias) || [], ({ prefix }) => {
        const changes = all.filter((/** @type {{key: string}} */ c) => c.key.startsWith(prefix));
        return (changes.length || resync) && Object.freeze({ alias, changes, ...(resync && { resync }) });
      });
    } else if (f.event === "invalidated") {
      invalidate(alias, f.code);
    } else if (f.event === "status") {
      status = f.status;
    }
  };

  // Attachments of a card, in this project (alias null) or a related one. A cover comes
  // from the host as a Blob (it fetched it with the session, which this sandboxed page has
  // not); a blob: URL made here is one an <img> of this page can show. One per attachment
  // ("alias\nid"): an attachment's cover never changes.
  /** @type {Map<string, string>} */
  const covers = new Map();
  /** @param {string} slot @param {any} item */
  const shown = (slot, { thumbnail, ...item }) => {
    slot += item.id;
    if (isBlob(thumbnail) && !covers.has(slot)) covers.set(slot, (env.URL || URL).createObjectURL(thumbnail));
    return deepFreeze({ ...item, thumbnailUrl: covers.get(slot) ?? null });
  };
  /**
   * @param {"upload" | "list" | "delete"} op
   * @param {string | null} alias
   * @param {string} card
   * @param {any} [value]
   * @param {Blob} [file]
   */
  const attached = (op, alias, card, value, file) => {
    const slot = (alias ?? "") + "\n";
    /** @type {Call} */
    const frame = { op: "attachments." + op, key: card, ...(value && { value }) };
    return pub(
      (async () => {
        if (alias != null) checkAlias((frame.alias = alias));
        if (file !== undefined && !isBlob(file)) throw typeError("file must be a Blob or File");
        const result = await call(frame, file && UPLOAD_TIMEOUT, file);
        if (op === "upload") return shown(slot, result);
        if (op === "list") return Object.freeze(result.map((/** @type {any} */ item) => shown(slot, item)));
        if (covers.has(slot + value.id)) (env.URL || URL).revokeObjectURL(/** @type {string} */ (covers.get(slot + value.id)));
        covers.delete(slot + value.id);
      })(),
    );
  };
  const attachments = /** @satisfies {KanbanAttachments} */ ({
    // A File has a name; any other Blob is "file".
    upload: (alias, card, /** @type {Blob & {name?: string}} */ file, options) =>
      attached("upload", alias, card, { name: options?.name ?? (file?.name || "file") }, file),
    list: (alias, card) => attached("list", alias, card),
    remove: (alias, card, id) => attached("delete", alias, card, { id }),
  });

  // The Board's cards to another Board the person can write (copy, move: value
  // {targetProject, column}), with their comments, checklist and attachments.
  const cards = /** @type {KanbanCards} */ ({ targets: () => pub(call({ op: "cards.targets" })) });
  for (const m of /** @type {const} */ (["copy", "move"])) cards[m] = (key, value) => pub(call({ op: "cards." + m, key, value }));

  // The page's uncaught errors go to the host, which shows them: a plugin that fails to
  // start would otherwise leave its page blank, its console unseen.
  /** @type {object[]} */
  const failures = [];
  /** @param {object} f */
  /** @type {(f: object) => unknown} */
  let report = (f) => failures.push(f);
  env.addEventListener("error", (/** @type {ErrorEvent} */ e) => report({ v: V, event: "error", message: e.message, at: e.filename + ":" + e.lineno }));
  // A rejection nobody handled (an SDK typo inside an async handler) is as much a failure.
  env.addEventListener("unhandledrejection", (/** @type {PromiseRejectionEvent} */ e) =>
    report({ v: V, event: "error", message: "Unhandled rejection: " + (e.reason?.message ?? e.reason), at: ":" }),
  );

  pluginHandshake(
    env,
    (port) => {
      port.onmessage = (e) => onHost(e.data);
      rpc.attach((frame) => port.postMessage(frame));
      report = (f) => port.postMessage(f);
      failures.forEach(report);
    },
    () => log.warn("steamHarnessKanban: no board host answered"),
  );

  return /** @satisfies {SteamHarnessKanban} */ ({
    ready,
    get status() {
      return status;
    },
    // A class's `name` is Error's string to tsc; the constructor sets "BridgeError".
    BridgeError: /** @type {import("../static/bridge/kanban.js").BridgeErrorConstructor} */ (/** @type {unknown} */ (BridgeError)),
    ...project(null),
    relatedProjects: {
      get(alias) {
        checkAlias(alias);
        if (!related.has(alias)) related.set(alias, project(alias));
        return /** @type {RelatedProject} */ (related.get(alias));
      },
    },
    getConfiguration: () => configuration,
    // Replaces the values of this user's configuration the plugin shows (getConfiguration(),
    // which keeps what the switch gave it); a save racing a switch lands where it was made.
    setConfigurationValues: (values) => pub(call({ op: "configuration.set", key: configuration.id || "default", value: values })).then(() => {}),
    onConfigurationChange: (listener) => listen(configListeners, listener),
    // Members of this board, in their inbox; the server decides who may and how often.
    notify: (notice) => pub(call({ op: "notify", value: notice })),
    onInvalidated: (listener) => listen(invalidListeners, listener),
    attachments,
    cards,
  });
}
