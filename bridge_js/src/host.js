// window.KanbanHost: the board page's relay between the plugin's port and the one
// websocket of this page view. It trusts neither side's frames blindly.

import { V, BACKOFF_MIN, BACKOFF_MAX, LIMITS, FINAL_CLOSE } from "./protocol.js";
import { replyError, wireError } from "./errors.js";
import { hintsFor, withHint } from "./hints.js";
import { checkRequest, isFrame, isPlain } from "./guards.js";
import { createRpc } from "./rpc.js";
import { hostHandshake } from "./handshake.js";

/** @typedef {{ok: boolean, result?: any, error?: any}} Answer */
/** @typedef {Omit<import("./wire.js").Request, "id">} Relayed */
/**
 * @typedef {object} ConnectOptions
 * @property {HTMLIFrameElement} iframe
 * @property {string} projectId
 * @property {string} [wsUrl]
 * @property {unknown} [configuration]
 * @property {unknown} [context]
 * @property {unknown} [page]
 * @property {(status: string) => void} [onStatus]
 * @property {(error: {message: string, at: string}) => void} [onPluginError]
 * @property {(reason: string) => void} [onEnded]
 * @property {() => void} [onReload]
 * @property {import("./wire.js").Limits} [limits]
 */

/** @param {unknown} c */
function toHostConfiguration(c) {
  if (!isPlain(c)) return { id: "", name: "", values: {} };
  return {
    id: typeof c.id === "string" ? c.id : "",
    name: typeof c.name === "string" ? c.name : "",
    values: isPlain(c.values) ? c.values : {},
  };
}

// `env` is the host window (or a fake one): location, WebSocket, MessageChannel, crypto,
// add/removeEventListener, setTimeout/clearTimeout, fetch and document (its cookie: the
// CSRF token of an upload), and optionally random() for jitter.
/** @param {Window & typeof globalThis & {random?: () => number}} env */
export function createHost(env) {
  const random = env.random || Math.random;

  // `limits`: the server's {valueBytes, documentBytes, attachmentBytes} when they differ
  // from the spec's.
  // `context`: what the page knew of the user's access (kanban/access/context.py); the
  // socket sends it again when it opens and whenever it changes. `onPluginError` hears the
  // plugin page's uncaught errors ({message, at}); `onEnded(reason)` hears that the server
  // ended the connection for good.
  //
  // `page`: {url, fragment} of the board page, added to this project's context part (the
  // server's context does not know it); `setPage` tells the plugin of a new fragment.
  /** @param {ConnectOptions} options */
  function connect({ iframe, projectId, wsUrl, configuration, context, page, onStatus, onPluginError, onEnded, onReload, limits }) {
    if (!iframe || typeof iframe.addEventListener !== "function") {
      throw new TypeError("KanbanHost.connect needs the plugin iframe element");
    }
    const loc = env.location;
    const url = wsUrl || (loc.protocol === "https:" ? "wss" : "ws") + "://" + loc.host + "/ws/boards/" + encodeURIComponent(projectId) + "/";
    const rpc = createRpc(env);
    const serverLimits = { ...LIMITS, ...limits };
    const hints = hintsFor(serverLimits);
    // "subscribe:alias" / "watch:alias" (alias "" = this project) -> {gen, request} of the
    // subscribe or watch that created it, to repeat after a reconnect.
    /** @type {Map<string, {gen: number, request: Relayed}>} */
    const follows = new Map();
    /** @param {string} op @param {string | null | undefined} alias */
    const followKey = (op, alias) => op + ":" + (alias ?? "");
    let generation = 0;
    let config = toHostConfiguration(configuration);
    /** @type {MessagePort | null} */
    let port = null;
    /** @type {WebSocket | null} */
    let ws = null;
    /** @type {string | null} */
    let status = null;
    let opened = 0;
    let failures = 0;
    /** @type {number | null} */
    let retry = null;
    let closed = false;

    /** @param {object} frame */
    const toPlugin = (frame) => port && port.postMessage(frame);

    // The plugin hears its context in parts: this project's ({user, role, can}) under no
    // alias, and each related project's ({status, can}) under its alias; a part only
    // when it changed. alias ("" = this project) -> that part, as JSON.
    /** @type {Map<string, string>} */
    const parts = new Map();
    let lastContext = context;
    let pagePart = toPage(page);
    /** @param {unknown} c @returns {[string, object][]} */
    const contextParts = (c) => {
      if (!isPlain(c)) return [];
      const { related, ...own } = c;
      /** @type {[string, object][]} */
      const out = [["", pagePart ? { ...own, page: pagePart } : own]];
      if (isPlain(related)) for (const [alias, part] of Object.entries(related)) if (isPlain(part)) out.push([alias, part]);
      return out;
    };
    /** @param {string} alias @param {object} part */
    const contextFrame = (alias, part) => ({ v: V, event: "context", ...(alias && { alias }), context: part });
    /** @param {unknown} c */
    const setContext = (c) => {
      lastContext = c;
      for (const [alias, part] of contextParts(c)) {
        const text = JSON.stringify(part);
        if (parts.get(alias) === text) continue;
        parts.set(alias, text);
        toPlugin(contextFrame(alias, part));
      }
    };
    /** @param {string} s */
    const setStatus = (s) => {
      if (s === status) return;
      status = s;
      toPlugin({ v: V, event: "status", status: s });
      if (onStatus) onStatus(s);
    };

    /** @param {MessagePort} p @param {unknown} data */
    const relay = (p, data) => {
      if (p !== port) return;
      if (isPlain(data) && data.event === "error") {
        /** @param {unknown} x */
        const text = (x) => (typeof x === "string" ? x.slice(0, 2000) : "");
        return onPluginError && onPluginError({ message: text(data.message), at: text(data.at) });
      }
      let frame;
      try {
        frame = checkRequest(data, serverLimits);
      } catch (err) {
        const id = isPlain(data) && Number.isSafeInteger(data.id) && data.id > 0 ? data.id : null;
        const refused = /** @type {import("./wire.js").Reply & {ok: false}} */ (
          replyError(id, /** @type {any} */ (err).code, /** @type {any} */ (err).message)
        );
        return p.postMessage({ ...refused, error: withHint(refused.error, hints) });
      }
      const { id, ...request } = frame;
      const alias = request.alias ?? null;
      const op = request.op;
      /** @param {Answer} reply */
      const answer = (reply) =>
        p === port &&
        p.postMessage(reply.ok ? { v: V, id, ok: true, result: reply.result } : { v: V, id, ok: false, error: withHint(wireError(reply.error), hints) });
      if (op === "attachments.upload" || op === "attachments.list") {
        return (op === "attachments.upload" ? upload(request) : listed(request)).then(answer);
      }
      const gen = ++generation;
      const following = op === "subscribe" || op === "watch";
      if (following) follows.set(followKey(op, alias), { gen, request });
      if (op === "unsubscribe" || op === "unwatch") follows.delete(followKey(op.slice(2), alias));
      rpc.call(request).then((reply) => {
        const failed = !reply.ok && wireError(reply.error).code !== "unavailable";
        if (following && failed && follows.get(followKey(op, alias))?.gen === gen) {
          follows.delete(followKey(op, alias));
        }
        // A later document of this page view opens with the values saved.
        if (reply.ok && op === "configuration.set" && request.key === (config.id || "default")) {
          config = { ...config, values: request.value };
        }
        answer(reply);
      });
    };

    // Attachments. The plugin's page has no session, so the host (this origin, signed in)
    // uploads the file and fetches the covers: a download link is made for this person and
    // the sandboxed page could not use it in an <img>. `url` becomes absolute, for the
    // plugin to open in a new tab (which leaves the sandbox, with the session).
    const origin = loc.protocol + "//" + loc.host;
    const attachmentsUrl = origin + "/api/v1/projects/" + encodeURIComponent(projectId) + "/attachments/";
    // "alias\nid" -> Promise of the cover's Blob (or null): an attachment's cover never changes.
    /** @type {Map<string, Promise<Blob | null>>} */
    const covers = new Map();
    /** @param {string | null} alias @param {any} item @returns {Promise<Blob | null>} */
    const cover = (alias, item) => {
      if (typeof item.thumbnailUrl !== "string") return Promise.resolve(null);
      const slot = (alias ?? "") + "\n" + item.id;
      if (!covers.has(slot)) {
        if (covers.size >= MAX_COVERS) covers.delete(/** @type {string} */ (covers.keys().next().value));
        const blob = env
          .fetch(new URL(item.thumbnailUrl, origin).href, { credentials: "same-origin" })
          .then((r) => (r.ok ? r.blob() : null))
          .catch(() => null);
        covers.set(slot, blob);
        blob.then((b) => b || covers.delete(slot));
      }
      return /** @type {Promise<Blob | null>} */ (covers.get(slot));
    };
    /** @param {string | null} alias @param {any} item */
    const decorate = async (alias, item) => ({
      ...item,
      url: new URL(item.url, origin).href,
      thumbnailUrl: null,
      thumbnail: await cover(alias, item),
    });
    /** @param {Relayed} request @returns {Promise<Answer>} */
    const listed = async (request) => {
      const reply = await rpc.call(request);
      if (!reply.ok || !Array.isArray(reply.result)) return reply;
      const alias = request.alias ?? null;
      return { ok: true, result: await Promise.all(reply.result.map((item) => decorate(alias, item))) };
    };
    // The REST upload (the one the app uses, CSRF and all), then the card's list for the
    // links made for this person.
    /** @param {Relayed} request @returns {Promise<Answer>} */
    const upload = async (request) => {
      const { name, file } = request.value;
      const form = new FormData();
      form.append("card", /** @type {string} */ (request.key));
      if (request.alias) form.append("alias", request.alias);
      let response, body;
      try {
        // A copy of this page's: Chromium fails to send (ERR_ALPN_NEGOTIATION_FAILED) a
        // Blob that came from the plugin's page as it is.
        form.append("file", new Blob([await file.arrayBuffer()], { type: file.type }), name);
        response = await env.fetch(attachmentsUrl, {
          method: "POST",
          body: form,
          credentials: "same-origin",
          headers: { "X-CSRFToken": csrfToken(env) },
        });
        body = await response.json();
      } catch {
        return { ok: false, error: { code: "unavailable", message: "the upload did not reach the server" } };
      }
      if (!response.ok) return { ok: false, error: body };
      const { op: _, value: __, ...target } = request;
      const reply = await listed({ ...target, op: "attachments.list" });
      const found = reply.ok && reply.result.find((/** @type {{id: string}} */ item) => item.id === body.id);
      return found ? { ok: true, result: found } : { ok: true, result: { ...body, url: null, thumbnailUrl: null, thumbnail: null } };
    };

    // After a reconnect the server has forgotten our subscriptions and watches, and any
    // event in between was lost: subscribe and watch again, then tell the plugin to re-read.
    /** @param {number} n */
    const resync = (n) => {
      for (const [k, follow] of follows) {
        const { request } = follow;
        const alias = request.alias ?? null;
        rpc.call(request).then((reply) => {
          if (follows.get(k) !== follow) return;
          if (reply.ok) {
            return toPlugin(
              request.op === "watch"
                ? { v: V, event: "changes", alias, changes: [], resync: true }
                : { v: V, event: "revision", alias, revision: "resync-" + n },
            );
          }
          const code = wireError(reply.error).code;
          if (code === "unavailable") return;
          follows.delete(k);
          toPlugin({ v: V, event: "invalidated", alias, code });
        });
      }
    };

    /** @param {string} text */
    const fromServer = (text) => {
      /** @type {any} */
      let f;
      try {
        f = JSON.parse(text);
      } catch {
        return;
      }
      if (!isFrame(f)) return;
      if (f.event === undefined) return rpc.handle(f);
      const alias = typeof f.alias === "string" ? f.alias : null;
      if (f.event === "revision") {
        toPlugin({ v: V, event: "revision", alias, revision: String(f.revision) });
      } else if (f.event === "changes" && Array.isArray(f.changes)) {
        // Only the fields a change may carry: its key and revision, its pushed value or
        // deletion, and the write's source (as the key's history keeps it).
        const changes = f.changes
          .filter((/** @type {any} */ c) => typeof c?.key === "string" && typeof c.revision === "string")
          .map((/** @type {any} */ c) => ({
            key: c.key,
            revision: c.revision,
            ...(c.deleted === true ? { deleted: true } : "value" in c && { value: c.value }),
            ...(c.source && typeof c.source === "object" && !Array.isArray(c.source) && { source: c.source }),
          }));
        toPlugin({ v: V, event: "changes", alias, changes, ...(f.resync === true && { resync: true }) });
      } else if (f.event === "invalidated") {
        follows.delete(followKey("subscribe", alias));
        follows.delete(followKey("watch", alias));
        toPlugin({ v: V, event: "invalidated", alias, code: wireError(f).code });
      } else if (f.event === "context") {
        setContext(f.context);
      } else if (f.event === "reload") {
        // The plugin's files were re-imported: load the new ones. The plugin never sees
        // this event; its new document says hello and replaces the channel. What the old
        // document failed with is the page's to forget (onReload).
        if (onReload) onReload();
        // biome-ignore lint/correctness/noSelfAssign: setting src again is what reloads an iframe
        iframe.src = iframe.src;
      }
    };

    const open = () => {
      retry = null;
      const socket = (ws = new env.WebSocket(url));
      socket.onopen = () => {
        if (socket !== ws) return;
        failures = 0;
        const n = opened++;
        setStatus("open");
        rpc.attach((frame) => socket.send(JSON.stringify(frame)));
        if (n) resync(n);
      };
      socket.onmessage = (e) => socket === ws && fromServer(e.data);
      socket.onclose = (e) => {
        if (socket !== ws) return;
        ws = null;
        if (!closed && FINAL_CLOSE.includes(e.code)) return end(e.code === FINAL_CLOSE[0] ? "unauthenticated" : "forbidden");
        rpc.detach("the connection to the server was lost");
        if (closed) return;
        setStatus("reconnecting");
        const cap = Math.min(BACKOFF_MAX, BACKOFF_MIN * 2 ** failures++);
        retry = env.setTimeout(open, cap / 2 + (random() * cap) / 2);
      };
    };

    // A new document in the iframe: drop what the previous one subscribed to.
    const handshake = hostHandshake(env, iframe, (p) => {
      for (const { request } of follows.values()) rpc.call({ op: "un" + request.op, alias: request.alias });
      follows.clear();
      if (port) port.close();
      port = p;
      p.onmessage = (e) => relay(p, e.data);
      // The context first: when `configuration` resolves the SDK's ready, it is there.
      for (const [alias, text] of parts) p.postMessage(contextFrame(alias, JSON.parse(text)));
      p.postMessage({ v: V, event: "configuration", configuration: config });
      p.postMessage({ v: V, event: "status", status });
    });

    // The server ended this page view for good (`reason`: "unauthenticated" when the user
    // was signed out, "forbidden" when they may no longer open the board), or the page did
    // (null). No reconnect: the server would refuse it.
    /** @param {string | null} reason */
    function end(reason) {
      if (closed) return;
      closed = true;
      env.clearTimeout(/** @type {number} */ (retry));
      handshake.close();
      if (ws) ws.close();
      rpc.detach(reason ? "the server ended this board's connection (" + reason + ")" : "the board was closed", true);
      setStatus("closed");
      if (port) port.close();
      port = null;
      if (reason && onEnded) onEnded(reason);
    }

    setContext(context);
    setStatus("connecting");
    open();

    return {
      get status() {
        return status;
      },
      /** @param {unknown} c */
      setConfiguration(c) {
        config = toHostConfiguration(c);
        toPlugin({ v: V, event: "configuration", configuration: config });
      },
      /** @param {unknown} p */
      setPage(p) {
        pagePart = toPage(p);
        setContext(lastContext);
      },
      close: () => end(null),
    };
  }

  return { connect };
}

// Covers a page view keeps (small PNGs), the oldest forgotten first.
const MAX_COVERS = 500;

/** @param {{document?: {cookie?: string}}} env */
function csrfToken(env) {
  const match = /(?:^|;\s*)csrftoken=([^;]*)/.exec(env.document?.cookie || "");
  return match ? decodeURIComponent(match[1]) : "";
}

/** @param {unknown} p */
function toPage(p) {
  if (!isPlain(p) || typeof p.url !== "string") return null;
  return { url: p.url, fragment: typeof p.fragment === "string" ? p.fragment : "" };
}
