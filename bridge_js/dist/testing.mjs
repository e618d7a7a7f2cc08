/* built from bridge_js/src; do not edit */
// protocol.json
var protocol_default = {
  version: 1,
  handshake: {
    hello: "steamHarnessKanban:hello",
    connect: "steamHarnessKanban:connect",
    ready: "ready"
  },
  fields: [
    "v",
    "id",
    "op",
    "alias",
    "key",
    "value",
    "expectedRevision"
  ],
  ops: {
    get: {
      key: "required"
    },
    getMany: {
      value: "keys"
    },
    set: {
      key: "required",
      value: "required",
      expectedRevision: "optional"
    },
    subscribe: {},
    unsubscribe: {},
    watch: {
      value: [
        "prefix"
      ]
    },
    unwatch: {},
    "configuration.set": {
      key: "required",
      value: "required"
    },
    history: {
      key: "required",
      value: [
        "limit",
        "before"
      ]
    },
    notify: {
      value: [
        "users",
        "text",
        "card"
      ]
    }
  },
  knowledge: {
    listDocuments: {
      op: "knowledge.list",
      value: [
        "cursor"
      ]
    },
    getDocument: {
      op: "knowledge.get",
      key: "required",
      value: []
    },
    createDocument: {
      op: "knowledge.create",
      key: "optional",
      value: [
        "title",
        "markdown"
      ]
    },
    editDocument: {
      op: "knowledge.edit",
      key: "required",
      value: [
        "title",
        "markdown"
      ]
    },
    deleteDocument: {
      op: "knowledge.delete",
      key: "required",
      value: []
    },
    searchDocuments: {
      op: "knowledge.search",
      value: [
        "query",
        "documentId",
        "beforeLines",
        "afterLines"
      ]
    },
    readDocumentLines: {
      op: "knowledge.readLines",
      key: "required",
      value: [
        "start",
        "end"
      ]
    }
  },
  entrypoints: {
    listEntrypoints: {
      op: "entrypoints.list",
      value: []
    },
    runEntrypoint: {
      op: "entrypoints.run",
      key: "required",
      value: [
        "args"
      ]
    }
  },
  alias: "^[a-z][a-z0-9_-]{0,63}$",
  close: {
    unauthenticated: 4401,
    forbidden: 4403,
    tryAgainLater: 4013
  },
  limits: {
    keyChars: 1024,
    valueBytes: 1048576,
    documentBytes: 8388608,
    titleChars: 1024,
    depth: 64,
    revisionChars: 20,
    envelopeBytes: 65536,
    batchKeys: 256,
    batchBytes: 4194304,
    pushValueBytes: 16384
  },
  errors: [
    "invalid_argument",
    "unauthenticated",
    "forbidden",
    "not_found",
    "unknown_alias",
    "relationship_pending",
    "conflict",
    "too_large",
    "rate_limited",
    "unavailable",
    "not_supported"
  ]
};

// src/protocol.js
var V = protocol_default.version;
var HELLO = protocol_default.handshake.hello;
var CONNECT = protocol_default.handshake.connect;
var READY = protocol_default.handshake.ready;
var KNOWLEDGE = protocol_default.knowledge;
var ENTRYPOINTS = protocol_default.entrypoints;
var FIELDS = protocol_default.fields;
var ALIAS = /* @__PURE__ */ new RegExp(protocol_default.alias);
var MAX_DEPTH = protocol_default.limits.depth;
var LIMITS = protocol_default.limits;
var CODES = protocol_default.errors;
var TIMEOUT = 15e3;
var HELLO_EVERY = 200;
var HELLO_FOR = 5e3;
var MAX_EARLY = 256;
var FINAL_CLOSE = [protocol_default.close.unauthenticated, protocol_default.close.forbidden];

// src/errors.js
var BridgeError = class extends Error {
  constructor(code, message, current, hint) {
    super(message);
    this.name = "BridgeError";
    this.code = code;
    if (current !== void 0) this.current = current;
    if (hint) this.hint = hint;
  }
};
function typeError(message) {
  const err = new TypeError(message);
  err.code = "invalid_argument";
  return err;
}
function replyError(id, code, message) {
  return { v: 1, id, ok: false, error: { code, message } };
}

// src/guards.js
function isPlain(x) {
  if (x === null || typeof x !== "object" || Array.isArray(x)) return false;
  const proto = Object.getPrototypeOf(x);
  return proto === null || Object.getPrototypeOf(proto) === null;
}
function checkJson(x, strings, depth = 0, ancestors = []) {
  const type = typeof x;
  if (type === "string") {
    strings?.(x, "a string");
  } else if (type === "number") {
    if (!Number.isFinite(x)) throw typeError("NaN and Infinity are not JSON");
  } else if (type === "object" && x) {
    if (ancestors.includes(x)) throw typeError("value contains a cycle");
    if (depth >= MAX_DEPTH) throw typeError("value is nested deeper than " + MAX_DEPTH);
    const array = Array.isArray(x);
    if (!array && (!isPlain(x) || Object.getOwnPropertySymbols(x).length)) {
      throw typeError("only plain objects and arrays are JSON");
    }
    ancestors.push(x);
    if (array) {
      for (let i = 0; i < x.length; i++) {
        if (!(i in x)) throw typeError("arrays must not have holes");
        checkJson(x[i], strings, depth + 1, ancestors);
      }
    } else {
      for (const k of Object.keys(x)) {
        strings?.(k, "an object key");
        checkJson(x[k], strings, depth + 1, ancestors);
      }
    }
    ancestors.pop();
  } else if (x !== null && type !== "boolean") {
    throw typeError(type + " is not JSON");
  }
}
function checkKeyType(key) {
  if (typeof key !== "string" || !key) throw typeError("key must be a non-empty string");
}
function checkArguments(f) {
  if ("key" in f) checkKeyType(f.key);
  if ("value" in f) checkJson(f.value);
}
function checkAlias(alias) {
  if (typeof alias !== "string" || !ALIAS.test(alias)) {
    throw typeError("alias must match " + ALIAS.source);
  }
}

// src/rpc.js
function createRpc(timers, timeout = TIMEOUT) {
  const pending = /* @__PURE__ */ new Map();
  let lastId = 0;
  let send = null;
  const settle = (id, reply) => {
    const p = pending.get(id);
    if (!p) return false;
    pending.delete(id);
    timers.clearTimeout(p.timer);
    p.resolve(reply);
    return true;
  };
  const transmit = (p) => {
    p.sent = true;
    send(p.frame);
  };
  return {
    // `frame` is a request without id; requests wait in order while no link is attached.
    call(frame) {
      const id = ++lastId;
      return new Promise((resolve) => {
        const timer = timers.setTimeout(
          () => settle(id, replyError(id, "unavailable", "no reply within " + timeout / 1e3 + " s")),
          timeout
        );
        const p = { frame: { v: V, id, ...frame }, resolve, timer, sent: false };
        pending.set(id, p);
        if (send) transmit(p);
      });
    },
    handle(reply) {
      return settle(reply.id, reply);
    },
    attach(fn) {
      send = fn;
      for (const p of pending.values()) if (!p.sent) transmit(p);
    },
    // The link dropped: what was sent may be lost, so it fails; what waits keeps waiting,
    // unless `all` (the end: everything fails).
    detach(message, all) {
      send = null;
      for (const [id, p] of pending) if (all || p.sent) settle(id, replyError(id, "unavailable", message));
    }
  };
}

// src/handshake.js
function pluginHandshake(win, onPort, onGiveUp) {
  const parent = win.parent;
  let hellos = 0;
  let timer;
  const onMessage = (e) => {
    const d = e.data;
    if (e.source !== parent || !isPlain(d) || d.type !== CONNECT || d.v !== V) return;
    if (typeof d.nonce !== "string" || e.ports?.length !== 1) return;
    win.clearTimeout(timer);
    win.removeEventListener("message", onMessage);
    const port = e.ports[0];
    port.postMessage({ v: V, type: READY, nonce: d.nonce });
    onPort(port);
  };
  const hello = () => {
    if (hellos++ * HELLO_EVERY >= HELLO_FOR) return onGiveUp();
    parent.postMessage({ type: HELLO, v: V }, "*");
    timer = win.setTimeout(hello, HELLO_EVERY);
  };
  if (!parent || parent === win) return onGiveUp();
  win.addEventListener("message", onMessage);
  hello();
}
function nonce(env) {
  const bytes = env.crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
function hostHandshake(env, iframe, onReady) {
  let chan = null;
  let loads = 0;
  const drop = () => {
    if (!chan) return;
    chan.port.onmessage = null;
    chan.port.close();
    chan = null;
  };
  const onLoad = () => loads++;
  const onHello = (e) => {
    const d = e.data;
    const frame = iframe.contentWindow;
    if (!frame || e.source !== frame || !isPlain(d) || d.type !== HELLO || d.v !== V) return;
    if (chan && (chan.ready ? chan.loads === loads : ++chan.hellos < 5)) return;
    drop();
    const { port1, port2 } = new env.MessageChannel();
    const c = chan = { port: port1, nonce: nonce(env), ready: false, hellos: 0, loads };
    const early = [];
    port1.onmessage = (m) => {
      const r = m.data;
      if (chan !== c || c.ready) return;
      if (!isPlain(r) || r.type !== READY) return early.push(r) > MAX_EARLY ? drop() : void 0;
      if (r.v !== V || r.nonce !== c.nonce) return drop();
      c.ready = true;
      c.loads = loads;
      port1.onmessage = null;
      onReady(port1);
      for (const data of early) port1.onmessage?.({ data });
    };
    frame.postMessage({ type: CONNECT, v: V, nonce: c.nonce }, "*", [port2]);
  };
  env.addEventListener("message", onHello);
  iframe.addEventListener("load", onLoad);
  return {
    close() {
      env.removeEventListener("message", onHello);
      iframe.removeEventListener("load", onLoad);
      drop();
    }
  };
}

// src/sdk.js
var MAX_UPDATE_ATTEMPTS = 64;
function deepFreeze(x) {
  if (x && typeof x === "object" && !Object.isFrozen(x)) {
    Object.freeze(x);
    for (const k of Object.keys(x)) deepFreeze(x[k]);
  }
  return x;
}
var NO_CONTEXT = deepFreeze({ user: null, role: null, status: "unknown", can: {} });
var NO_CONFIGURATION = deepFreeze({ id: "", name: "", values: {} });
function createKanban(env) {
  const log = env.console;
  const rpc = createRpc(env);
  const subscriptions = /* @__PURE__ */ new Map();
  const watches = /* @__PURE__ */ new Map();
  const configListeners = /* @__PURE__ */ new Set();
  const contexts = /* @__PURE__ */ new Map();
  const contextListeners = /* @__PURE__ */ new Set();
  const invalidListeners = /* @__PURE__ */ new Set();
  const related = /* @__PURE__ */ new Map();
  const updateTails = /* @__PURE__ */ new Map();
  let configuration = NO_CONFIGURATION;
  let configured = false;
  let status = "connecting";
  let resolveReady;
  const ready = new Promise((resolve) => resolveReady = resolve);
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
  const add = (listeners, listener, prefix = "") => {
    if (typeof listener !== "function") throw typeError("listener must be a function");
    const entry = { listener, prefix };
    listeners.add(entry);
    return entry;
  };
  const listen = (listeners, listener, prefix) => {
    const entry = add(listeners, listener, prefix);
    return () => void listeners.delete(entry);
  };
  const call = async (frame) => {
    checkArguments(frame);
    const reply = await rpc.call(frame);
    if (reply.ok) return reply.result;
    const e = reply.error;
    throw new BridgeError(e.code, e.message, e.current, e.hint);
  };
  const pub = (promise) => promise.catch((err) => {
    if (err instanceof BridgeError) {
      log.warn(`steamHarnessKanban: ${err.code}: ${err.message}${err.hint ? ` (${err.hint})` : ""}`);
    }
    throw err;
  });
  const invalidate = (alias, code) => {
    const held = subscriptions.delete(alias) | watches.delete(alias);
    if (held) emit(invalidListeners, () => Object.freeze({ alias, code }));
  };
  const follow = (map, op, alias, target, listener, prefix) => {
    const listeners = map.get(alias) || /* @__PURE__ */ new Set();
    const entry = add(listeners, listener, prefix);
    const fresh = !map.has(alias);
    const widen = !fresh && listeners.prefix && listeners.prefix !== entry.prefix;
    if (fresh || widen) {
      map.set(alias, listeners);
      listeners.prefix = fresh ? entry.prefix : "";
      const value = op === "watch" ? { prefix: listeners.prefix } : void 0;
      pub(call(value ? { op, ...target, value } : { op, ...target })).catch((err) => {
        if (err.code !== "unavailable" && map.get(alias) === listeners) invalidate(alias, err.code);
      });
    }
    return () => {
      if (!listeners.delete(entry) || listeners.size || map.get(alias) !== listeners) return;
      map.delete(alias);
      call({ op: "un" + op, ...target }).catch(() => {
      });
    };
  };
  const update = async (target, key, updater) => {
    if (typeof updater !== "function") throw typeError("updater must be a function");
    const read = () => call({ op: "get", ...target, key });
    let current = await read();
    for (let attempt = 1; ; attempt++) {
      const value = updater(current.found ? current.value : void 0);
      if (value === void 0) throw typeError("the updater returned undefined");
      try {
        await call({ op: "set", ...target, key, value, expectedRevision: current.found ? String(current.revision) : null });
        return value;
      } catch (err) {
        if (!(err instanceof BridgeError) || err.code !== "conflict" || attempt >= MAX_UPDATE_ATTEMPTS) throw err;
        current = isPlain(err.current) ? err.current : await read();
      }
    }
  };
  const queuedUpdate = (target, key, updater) => {
    const slot = (target.alias || "") + "\n" + key;
    const run = (updateTails.get(slot) || Promise.resolve()).then(() => update(target, key, updater));
    const tail = run.catch(() => {
    });
    updateTails.set(slot, tail);
    tail.then(() => updateTails.get(slot) === tail && updateTails.delete(slot));
    return run;
  };
  const project = (alias) => {
    const target = alias === null ? {} : { alias };
    const knowledge = {};
    for (const [method, { op, key: byId, value: fields }] of Object.entries(KNOWLEDGE)) {
      knowledge[method] = (arg) => {
        const frame = { op, ...target };
        const plain = isPlain(arg);
        const id = plain ? arg.id : arg;
        if (byId === "required" || byId && id !== void 0) frame.key = id;
        if (fields.length) {
          frame.value = {};
          for (const f of fields) if (plain && arg[f] !== void 0) frame.value[f] = arg[f];
        }
        return pub(call(frame));
      };
    }
    return {
      // Entrypoints run locally, never on the server, which refuses with not_supported.
      listEntrypoints: () => pub(call({ op: "entrypoints.list", ...target })),
      runEntrypoint: (key, args = []) => pub(call({ op: "entrypoints.run", ...target, key, value: { args } })),
      kv: {
        getValue: (key) => pub(call({ op: "get", ...target, key })).then((r) => r.found ? r.value : void 0),
        getValues: (keys) => pub(call({ op: "getMany", ...target, value: keys })),
        setValue: (key, value) => pub(call({ op: "set", ...target, key, value })).then(() => {
        }),
        updateValue: (key, updater) => pub(queuedUpdate(target, key, updater)),
        getHistory: (key, options = {}) => pub(call({ op: "history", ...target, key, value: options })),
        subscribe: (listener) => follow(subscriptions, "subscribe", alias, target, listener),
        watch: (listener, options) => follow(watches, "watch", alias, target, listener, options?.prefix)
      },
      knowledge,
      getContext: () => contexts.get(alias) || NO_CONTEXT,
      onContextChange: (listener) => listen(contextListeners, listener, alias)
    };
  };
  const onHost = (f) => {
    if (!isPlain(f) || f.v !== V) return;
    if (f.event === void 0) return rpc.handle(f);
    const alias = typeof f.alias === "string" ? f.alias : null;
    if (f.event === "configuration") {
      configuration = deepFreeze(f.configuration);
      if (configured) emit(configListeners, () => configuration);
      configured = true;
      resolveReady();
    } else if (f.event === "context") {
      contexts.set(alias, deepFreeze(f.context));
      emit(contextListeners, ({ prefix }) => prefix === alias && contexts.get(alias));
    } else if (f.event === "revision") {
      const revision = String(f.revision);
      emit(subscriptions.get(alias) || [], () => Object.freeze({ alias, revision }));
    } else if (f.event === "changes") {
      const resync = f.resync === true;
      const all = deepFreeze(f.changes);
      emit(watches.get(alias) || [], ({ prefix }) => {
        const changes = all.filter((c) => c.key.startsWith(prefix));
        return (changes.length || resync) && Object.freeze({ alias, changes, ...resync && { resync } });
      });
    } else if (f.event === "invalidated") {
      invalidate(alias, f.code);
    } else if (f.event === "status") {
      status = f.status;
    }
  };
  const failures = [];
  let report = (f) => failures.push(f);
  env.addEventListener("error", (e) => report({ v: V, event: "error", message: e.message, at: e.filename + ":" + e.lineno }));
  env.addEventListener("unhandledrejection", (e) => report({ v: V, event: "error", message: "Unhandled rejection: " + (e.reason?.message ?? e.reason), at: ":" }));
  pluginHandshake(
    env,
    (port) => {
      port.onmessage = (e) => onHost(e.data);
      rpc.attach((frame) => port.postMessage(frame));
      report = (f) => port.postMessage(f);
      failures.forEach(report);
    },
    () => log.warn("steamHarnessKanban: no board host answered")
  );
  return {
    ready,
    get status() {
      return status;
    },
    BridgeError,
    ...project(null),
    relatedProjects: {
      get(alias) {
        checkAlias(alias);
        if (!related.has(alias)) related.set(alias, project(alias));
        return related.get(alias);
      }
    },
    getConfiguration: () => configuration,
    // Replaces the values of this user's configuration the plugin shows (getConfiguration(),
    // which keeps what the switch gave it); a save racing a switch lands where it was made.
    setConfigurationValues: (values) => pub(call({ op: "configuration.set", key: configuration.id || "default", value: values })).then(() => {
    }),
    onConfigurationChange: (listener) => listen(configListeners, listener),
    // Members of this board, in their inbox; the server decides who may and how often.
    notify: (notice) => pub(call({ op: "notify", value: notice })),
    onInvalidated: (listener) => listen(invalidListeners, listener)
  };
}

// testing/world.mjs
var WRITERS = /* @__PURE__ */ new Set(["developer", "owner"]);
var FIRST_USER = { id: 1, username: "alice", displayName: "Alice" };
function allows(rule, key) {
  if (rule === "all") return true;
  if (Array.isArray(rule)) return rule.some((prefix) => key.startsWith(prefix));
  return false;
}
var Refusal = class extends Error {
  constructor(code, message, extra) {
    super(message);
    this.code = code;
    this.extra = extra;
  }
};
function createTestWorld(options = {}) {
  const pushLimit = options.pushLimit ?? LIMITS.pushValueBytes;
  const members = [...options.members || []];
  const relationships = (options.relationships || []).map((r) => ({ read: "all", write: "none", ...r }));
  const projects = /* @__PURE__ */ new Map();
  const connections = /* @__PURE__ */ new Set();
  const requests = [];
  const delays = /* @__PURE__ */ new Map();
  const failures = /* @__PURE__ */ new Map();
  const notifications = [];
  const timers = /* @__PURE__ */ new Set();
  let revision = 0;
  function projectOf(id) {
    if (!projects.has(id)) projects.set(id, { values: /* @__PURE__ */ new Map(), revisions: /* @__PURE__ */ new Map(), history: /* @__PURE__ */ new Map() });
    return projects.get(id);
  }
  function store(id, key, value, by) {
    const target = projectOf(id);
    const rev = String(++revision);
    target.values.set(key, structuredClone(value));
    target.revisions.set(key, rev);
    const versions = target.history.get(key) || [];
    versions.unshift({ revision: rev, value: structuredClone(value), source: { user: by }, writtenAt: (/* @__PURE__ */ new Date()).toISOString() });
    target.history.set(key, versions.slice(0, 50));
    for (const page of connections) page.announce(id, key, rev, value);
    return rev;
  }
  for (const [id, spec] of Object.entries(options.projects || {})) {
    for (const [key, value] of Object.entries(spec.kv || {})) store(id, key, value, "seed");
  }
  function refuseIfFailing(op) {
    const failure = failures.get(op);
    if (!failure) return;
    if (--failure.times <= 0) failures.delete(op);
    throw new Refusal(failure.code, failure.message || `the test world refuses this ${op}`);
  }
  function later(ms, fn) {
    const id = setTimeout(() => (timers.delete(id), fn()), ms);
    timers.add(id);
  }
  function connect({ project, user = FIRST_USER, role = "developer", configuration } = {}) {
    const person = { ...user, role };
    if (!members.some((m) => m.username === person.username)) members.push(person);
    let config = configuration || { id: "", name: "Default", values: {} };
    let send = null;
    let follows = { subscribe: /* @__PURE__ */ new Set(), watch: /* @__PURE__ */ new Map() };
    const errors = [];
    function targetOf(alias) {
      if (alias === null) return { id: project, read: "all", write: "all" };
      const link = relationships.find((r) => r.from === project && r.alias === alias);
      if (!link) throw new Refusal("unknown_alias", `this project declares no alias ${JSON.stringify(alias)}`);
      if (link.pending) throw new Refusal("relationship_pending", `${JSON.stringify(alias)} has not declared this project back`);
      return { id: link.to, read: link.read, write: link.write };
    }
    function context(alias) {
      if (alias === null) {
        return { user, role, staff: false, can: { read: true, write: WRITERS.has(role) }, members: [...members] };
      }
      const link = relationships.find((r) => r.from === project && r.alias === alias);
      if (link.pending) return { status: "pending", can: { read: false, write: false, knowledgeRead: false, knowledgeWrite: false } };
      const write = link.write !== "none" && WRITERS.has(role);
      return { status: "confirmed", can: { read: link.read !== "none", write, knowledgeRead: false, knowledgeWrite: false } };
    }
    function read(target, key) {
      if (!allows(target.read, key)) throw new Refusal("forbidden", `reading ${JSON.stringify(key)} is not allowed`);
      const values = projectOf(target.id);
      if (!values.values.has(key)) return { found: false };
      return { found: true, value: structuredClone(values.values.get(key)), revision: values.revisions.get(key) };
    }
    function call(f, alias) {
      switch (f.op) {
        case "get":
          return read(targetOf(alias), f.key);
        case "getMany": {
          const target = targetOf(alias);
          return f.value.map((key) => {
            try {
              return read(target, key);
            } catch (refusal) {
              return { found: false, error: { code: refusal.code, message: refusal.message } };
            }
          });
        }
        case "set": {
          const target = targetOf(alias);
          if (!WRITERS.has(role) || !allows(target.write, f.key)) throw new Refusal("forbidden", `writing ${JSON.stringify(f.key)} is not allowed`);
          if ("expectedRevision" in f) {
            const now = projectOf(target.id).revisions.get(f.key) ?? null;
            if (now !== f.expectedRevision) {
              const current = allows(target.read, f.key) ? read(target, f.key) : void 0;
              throw new Refusal("conflict", `${JSON.stringify(f.key)} changed meanwhile`, current && { current });
            }
          }
          return { revision: store(target.id, f.key, f.value, user.username) };
        }
        case "history": {
          const target = targetOf(alias);
          read(target, f.key);
          const entries = projectOf(target.id).history.get(f.key) || [];
          return { entries: entries.slice(0, f.value?.limit || 20), cursor: null };
        }
        case "subscribe":
          targetOf(alias);
          follows.subscribe.add(alias);
          return { subscribed: true };
        case "unsubscribe":
          follows.subscribe.delete(alias);
          return { subscribed: false };
        case "watch":
          targetOf(alias);
          follows.watch.set(alias, f.value?.prefix || "");
          return { watching: true };
        case "unwatch":
          follows.watch.delete(alias);
          return { watching: false };
        case "configuration.set":
          config = { ...config, values: f.value };
          return {};
        case "notify":
          return notify(f, alias);
        default:
          throw new Refusal("not_supported", `the test host does not serve ${f.op}`);
      }
    }
    function notify(f, alias) {
      if (alias !== null) throw new Refusal("invalid_argument", "a plugin notifies members of its own board");
      if (!WRITERS.has(role)) throw new Refusal("forbidden", "notifying people needs the developer role");
      const { users, text, card } = f.value || {};
      if (!Array.isArray(users) || !users.length) throw new Refusal("invalid_argument", "users is a list of usernames");
      if (typeof text !== "string" || !text.trim() || text.length > 500) throw new Refusal("invalid_argument", "a notification is 1 to 500 characters");
      const stranger = users.find((name) => !members.some((m) => m.username === name));
      if (stranger !== void 0) throw new Refusal("invalid_argument", `${JSON.stringify(stranger)} is not a member of this board`);
      const sent = [...new Set(users)].filter((name) => name !== user.username);
      for (const name of sent) notifications.push({ user: name, text: text.trim(), card: card ?? null });
      return { sent };
    }
    function receive(f) {
      if (f?.event === "error") return errors.push(f);
      if (!f || f.v !== V || typeof f.id !== "number") return;
      const alias = f.alias ?? null;
      requests.push({ project, user: user.username, op: f.op, alias, key: f.key ?? null });
      let reply;
      try {
        refuseIfFailing(f.op);
        reply = { v: V, id: f.id, ok: true, result: call(f, alias) };
      } catch (refusal) {
        if (!(refusal instanceof Refusal)) throw refusal;
        reply = { v: V, id: f.id, ok: false, error: { code: refusal.code, message: refusal.message, ...refusal.extra } };
      }
      const delay = delays.get(f.key);
      const to = send;
      if (delay) later(delay, () => to === send && to?.(reply));
      else send?.(reply);
    }
    const page = {
      project,
      user,
      role,
      /** The page's reported errors ({message, at}). */
      errors,
      /** A new document on the page (the first, or one after a reload): what it hears. */
      attach(to) {
        send = to;
        follows = { subscribe: /* @__PURE__ */ new Set(), watch: /* @__PURE__ */ new Map() };
        send({ v: V, event: "context", context: context(null) });
        for (const r of relationships) if (r.from === project) send({ v: V, event: "context", alias: r.alias, context: context(r.alias) });
        send({ v: V, event: "configuration", configuration: config });
        send({ v: V, event: "status", status: "open" });
        return receive;
      },
      announce(id, key, rev, value) {
        for (const alias of /* @__PURE__ */ new Set([...follows.subscribe, ...follows.watch.keys()])) {
          let target;
          try {
            target = targetOf(alias);
          } catch {
            continue;
          }
          if (target.id !== id || !allows(target.read, key)) continue;
          if (follows.subscribe.has(alias)) send?.({ v: V, event: "revision", alias, revision: rev });
          const prefix = follows.watch.get(alias);
          if (prefix === void 0 || !key.startsWith(prefix)) continue;
          const small = new TextEncoder().encode(JSON.stringify(value)).length <= pushLimit;
          send?.({ v: V, event: "changes", alias, changes: [small ? { key, revision: rev, value } : { key, revision: rev }] });
        }
      },
      /** The configuration the page has now, with what it saved. */
      configuration: () => structuredClone(config),
      /** Switch the user's configuration, as the board page's picker does. */
      switchConfiguration(next) {
        config = next;
        send?.({ v: V, event: "configuration", configuration: config });
      },
      close() {
        send = null;
        connections.delete(page);
      }
    };
    connections.add(page);
    return page;
  }
  return {
    connect,
    requests,
    delays,
    /** The next `times` requests of `op` are refused with `code` (an outage, a busy server). */
    failNext(op, { code = "unavailable", message, times = 1 } = {}) {
      failures.set(op, { code, message, times });
    },
    notifications,
    /** Someone else's write (a person on another board, an agent): events reach the pages. */
    write(project, key, value, { by = "someone-else" } = {}) {
      return store(project, key, value, by);
    },
    /** What `project` holds under `key` (undefined: absent). */
    value(project, key) {
      return structuredClone(projectOf(project).values.get(key));
    },
    close() {
      for (const id of timers) clearTimeout(id);
      for (const page of [...connections]) page.close();
    }
  };
}

// testing/host.mjs
var OWN = "plugin";
async function createTestHost(options = {}) {
  const related = Object.entries(options.related || {});
  const world = createTestWorld({
    projects: Object.fromEntries([[OWN, { kv: options.kv }], ...related]),
    relationships: related.map(([alias, spec]) => ({ from: OWN, alias, to: alias, read: spec.read, write: spec.write, pending: spec.pending })),
    pushLimit: options.pushLimit,
    members: options.members
  });
  const page = world.connect({ project: OWN, user: options.user, role: options.role, configuration: options.configuration });
  const win = shimWindow(page);
  win.steamHarnessKanban = createKanban(win);
  await win.steamHarnessKanban.ready;
  const projectOf = (alias) => alias === null ? OWN : alias;
  return {
    window: win,
    kanban: win.steamHarnessKanban,
    world,
    errors: page.errors,
    notifications: world.notifications,
    write: (key, value, { alias = null, by } = {}) => world.write(projectOf(alias), key, value, { by }),
    value: (key, { alias = null } = {}) => world.value(projectOf(alias), key),
    switchConfiguration: page.switchConfiguration,
    /** Wait for every message in flight on the port to be handled. */
    settle: () => new Promise((resolve) => setTimeout(resolve, 5)),
    close() {
      win.close();
      world.close();
    }
  };
}
function shimWindow(page) {
  const listeners = /* @__PURE__ */ new Map();
  const timers = /* @__PURE__ */ new Set();
  const channel = new MessageChannel();
  const port = channel.port1;
  const dispatch = (type, event) => [...listeners.get(type) || []].forEach((fn) => fn(event));
  const parent = {
    postMessage(data) {
      if (data?.type !== HELLO) return;
      queueMicrotask(() => {
        const receive = page.attach((frame) => port.postMessage(frame));
        port.onmessage = (e) => receive(e.data);
        dispatch("message", { source: parent, data: { type: CONNECT, v: V, nonce: "test" }, ports: [channel.port2] });
      });
    }
  };
  return {
    parent,
    console,
    addEventListener: (type, fn) => (listeners.get(type) || listeners.set(type, /* @__PURE__ */ new Set()).get(type)).add(fn),
    removeEventListener: (type, fn) => listeners.get(type)?.delete(fn),
    setTimeout: (fn, ms) => {
      const id = setTimeout(() => (timers.delete(id), fn()), ms);
      timers.add(id);
      return id;
    },
    clearTimeout: (id) => (timers.delete(id), clearTimeout(id)),
    close() {
      for (const id of timers) clearTimeout(id);
      port.close();
      channel.port2.close();
    }
  };
}
function connectFrame(world, iframe, options = {}) {
  const page = world.connect(options);
  return new Promise((resolve) => {
    const handshake = hostHandshake(window, iframe, (port) => {
      const receive = page.attach((frame) => port.postMessage(frame));
      port.onmessage = (e) => receive(e.data);
      resolve(page);
    });
    const close = page.close;
    page.close = () => (handshake.close(), close());
  });
}
export {
  connectFrame,
  createTestHost,
  createTestWorld
};
