// Test doubles for the environment the bridge runs in: a clock, message ports, a host
// window with a sandboxed iframe, and a WebSocket. The bridge code under test is real.

export const flush = () => new Promise((resolve) => setImmediate(resolve));

export function fakeClock() {
  let now = 0;
  let lastId = 0;
  const timers = new Map();
  return {
    timers,
    now: () => now,
    setTimeout(fn, ms = 0) {
      timers.set(++lastId, { at: now + ms, fn });
      return lastId;
    },
    clearTimeout(id) {
      timers.delete(id);
    },
    async advance(ms) {
      const end = now + ms;
      await flush();
      for (;;) {
        let next = null;
        for (const [id, t] of timers) if (t.at <= end && (!next || t.at < next[1].at)) next = [id, t];
        if (!next) break;
        timers.delete(next[0]);
        now = next[1].at;
        next[1].fn();
        await flush();
      }
      now = end;
      await flush();
    },
  };
}

// Like a MessagePort: messages are cloned, queued until onmessage is set, and nothing
// crosses once either end is closed.
export class FakePort {
  constructor() {
    this.other = null;
    this.posted = [];
    this.closed = false;
    this.inbox = [];
    this.handler = null;
  }
  get onmessage() {
    return this.handler;
  }
  set onmessage(fn) {
    this.handler = fn;
    while (fn && this.inbox.length) this.deliver(this.inbox.shift());
  }
  deliver(data) {
    if (this.closed) return;
    if (this.handler) this.handler({ data });
    else this.inbox.push(data);
  }
  postMessage(data) {
    this.posted.push(data);
    if (this.closed || this.other.closed) return;
    const copy = structuredClone(data);
    queueMicrotask(() => !this.other.closed && this.other.deliver(copy));
  }
  close() {
    this.closed = true;
  }
}

export function FakeMessageChannel() {
  this.port1 = new FakePort();
  this.port2 = new FakePort();
  this.port1.other = this.port2;
  this.port2.other = this.port1;
}

export function fakeConsole() {
  const lines = { warn: [], error: [], log: [] };
  return {
    lines,
    warn: (...a) => lines.warn.push(a.join(" ")),
    error: (...a) => lines.error.push(a.map(String).join(" ")),
    log: (...a) => lines.log.push(a.join(" ")),
  };
}

// A window whose postMessage is called by one known peer (its parent or its child), so
// deliveries carry that peer as event.source, as browsers do.
export class FakeWindow {
  constructor(clock, name) {
    this.name = name;
    this.clock = clock;
    this.listeners = new Set();
    this.received = [];
    this.errorListeners = new Set();
    this.console = fakeConsole();
    this.sender = null;
    this.parent = this;
  }
  setTimeout(fn, ms) {
    return this.clock.setTimeout(fn, ms);
  }
  clearTimeout(id) {
    this.clock.clearTimeout(id);
  }
  addEventListener(type, fn) {
    if (type === "message") this.listeners.add(fn);
    if (type === "error") this.errorListeners.add(fn);
  }
  // An uncaught error in the page, as the browser reports it to "error" listeners.
  uncaught(message, filename, lineno) {
    for (const fn of this.errorListeners) fn({ message, filename, lineno });
  }
  removeEventListener(type, fn) {
    if (type === "message") this.listeners.delete(fn);
  }
  postMessage(data, _target, transfer = []) {
    this.receive(structuredClone(data), this.sender, transfer);
  }
  // Delivers a message event as if `source` had posted it.
  receive(data, source, ports = []) {
    const event = { data, source, ports, origin: "null" };
    this.received.push(event);
    queueMicrotask(() => {
      for (const fn of [...this.listeners]) fn(event);
    });
  }
}

// A host window with one sandboxed iframe whose content window is `frame`.
export function fakePage(clock) {
  const host = new FakeWindow(clock, "host");
  const frame = new FakeWindow(clock, "frame");
  frame.parent = host;
  host.sender = frame;
  frame.sender = host;
  const iframeListeners = new Set();
  const iframe = {
    contentWindow: frame,
    addEventListener: (type, fn) => type === "load" && iframeListeners.add(fn),
    removeEventListener: (_type, fn) => iframeListeners.delete(fn),
    // A navigation: a fresh content window with the same identity (a WindowProxy stays).
    fireLoad: () => {
      for (const fn of [...iframeListeners]) fn({});
    },
  };
  return { host, frame, iframe };
}

export function fakeSockets() {
  const sockets = [];
  class FakeWebSocket {
    constructor(url) {
      this.url = url;
      this.sent = [];
      this.readyState = 0;
      this.onopen = this.onmessage = this.onclose = null;
      sockets.push(this);
    }
    send(text) {
      if (this.readyState !== 1) throw new Error("InvalidStateError: not open");
      this.sent.push(JSON.parse(text));
      if (this.server) queueMicrotask(() => this.readyState === 1 && this.server(JSON.parse(text), this));
    }
    close() {
      if (this.readyState === 3) return;
      this.readyState = 3;
      queueMicrotask(() => this.onclose && this.onclose({ code: 1000 }));
    }
    // Test controls.
    accept() {
      this.readyState = 1;
      this.onopen && this.onopen({});
    }
    receive(frame) {
      this.onmessage && this.onmessage({ data: typeof frame === "string" ? frame : JSON.stringify(frame) });
    }
    drop(code = 1006) {
      this.readyState = 3;
      this.onclose && this.onclose({ code });
    }
    reply(request, result) {
      this.receive({ v: 1, id: request.id, ok: true, result });
    }
    fail(request, code, message = code, extra = {}) {
      this.receive({ v: 1, id: request.id, ok: false, error: { code, message, ...extra } });
    }
  }
  return { WebSocket: FakeWebSocket, sockets, last: () => sockets[sockets.length - 1] };
}

// A host environment: the fake page's host window plus what the host relay needs.
export function hostEnv(_clock, page, sockets, random = () => 0.5) {
  return Object.assign(page.host, {
    location: { protocol: "http:", host: "127.0.0.1:8000" },
    WebSocket: sockets.WebSocket,
    MessageChannel: FakeMessageChannel,
    crypto: globalThis.crypto,
    random,
  });
}

// A minimal in-memory bridge server: per-alias KV with string revisions, CAS conflicts
// carrying `current`, subscriptions with revision events. Enough to run SDK and host
// end to end; the real rules live in the Django consumer.
export function memoryServer() {
  const data = new Map();
  let seq = 0;
  const sockets = new Set();
  return {
    data,
    sockets,
    bumpOutside(alias, key, value) {
      const revision = String(++seq);
      data.set((alias ?? "") + "\u0000" + key, { value, revision });
      for (const ws of sockets) {
        if (ws.readyState === 1 && ws.subs.has(alias ?? null)) {
          ws.receive({ v: 1, event: "revision", alias: alias ?? null, revision });
        }
      }
      return revision;
    },
    attach(ws) {
      ws.subs = new Set();
      sockets.add(ws);
      ws.server = (f) => {
        const alias = f.alias ?? null;
        const slot = (alias ?? "") + "\u0000" + f.key;
        const stored = data.get(slot);
        if (f.op === "get") {
          return ws.reply(f, stored ? { found: true, ...stored } : { found: false });
        }
        if (f.op === "set") {
          if ("expectedRevision" in f && (stored ? stored.revision : null) !== f.expectedRevision) {
            return ws.fail(f, "conflict", "revision mismatch", {
              current: stored ? { found: true, ...stored } : { found: false },
            });
          }
          const revision = this.bumpOutside(alias, f.key, f.value);
          return ws.reply(f, { revision });
        }
        if (f.op === "subscribe") {
          if (alias === "stranger") return ws.fail(f, "unknown_alias", "no such alias");
          ws.subs.add(alias);
          return ws.reply(f, {});
        }
        if (f.op === "unsubscribe") {
          ws.subs.delete(alias);
          return ws.reply(f, {});
        }
        return ws.reply(f, { op: f.op, key: f.key ?? null, value: f.value ?? null });
      };
    },
  };
}
