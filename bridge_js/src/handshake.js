// The handshake moves one MessagePort into the sandboxed iframe. window.postMessage
// carries nothing but the hello, the port and a one-time nonce; all data uses the port.

import { V, HELLO, CONNECT, READY, HELLO_EVERY, HELLO_FOR, MAX_EARLY } from "./protocol.js";
import { isPlain } from "./guards.js";

// Plugin side: say hello until the parent answers, accept the first connect from it.
/**
 * @param {import("./wire.js").PluginEnv} win
 * @param {(port: MessagePort) => void} onPort
 * @param {() => void} onGiveUp
 */
export function pluginHandshake(win, onPort, onGiveUp) {
  const parent = win.parent;
  let hellos = 0;
  /** @type {unknown} */
  let timer;
  /** @param {MessageEvent} e */
  const onMessage = (e) => {
    const d = e.data;
    if (e.source !== parent || !isPlain(d) || d.type !== CONNECT || d.v !== V) return;
    if (typeof d.nonce !== "string" || e.ports?.length !== 1) return;
    win.clearTimeout(timer);
    win.removeEventListener("message", onMessage);
    const port = e.ports[0];
    // ready goes first: onPort sends the calls the plugin made before the connect, and
    // a port delivers in order.
    port.postMessage({ v: V, type: READY, nonce: d.nonce });
    onPort(port);
  };
  const hello = () => {
    if (hellos++ * HELLO_EVERY >= HELLO_FOR) return onGiveUp();
    /** @type {NonNullable<typeof parent>} */ (parent).postMessage({ type: HELLO, v: V }, "*");
    timer = win.setTimeout(hello, HELLO_EVERY);
  };
  if (!parent || /** @type {unknown} */ (parent) === win) return onGiveUp();
  win.addEventListener("message", onMessage);
  hello();
}

/** @param {{crypto: Crypto}} env */
function nonce(env) {
  const bytes = env.crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

// Host side. The plugin is recognised by event.source === iframe.contentWindow, never by
// origin (a sandboxed frame's origin is "null"). One channel per iframe document: a hello
// while a channel is open means a new document only once the iframe has fired `load`
// since that channel became ready (the SDK stops saying hello once connected, but a hello
// already in flight may arrive late).
/** @typedef {{port: MessagePort, nonce: string, ready: boolean, hellos: number, loads: number}} Channel */
/**
 * @param {Pick<Window, "addEventListener" | "removeEventListener" | "crypto"> & {MessageChannel: typeof MessageChannel}} env
 * @param {HTMLIFrameElement} iframe
 * @param {(port: MessagePort) => void} onReady
 */
export function hostHandshake(env, iframe, onReady) {
  /** @type {Channel | null} */
  let chan = null;
  let loads = 0;
  const drop = () => {
    if (!chan) return;
    chan.port.onmessage = null;
    chan.port.close();
    chan = null;
  };
  const onLoad = () => loads++;
  /** @param {MessageEvent} e */
  const onHello = (e) => {
    const d = e.data;
    const frame = iframe.contentWindow;
    if (!frame || e.source !== frame || !isPlain(d) || d.type !== HELLO || d.v !== V) return;
    // A channel whose ready never came within ~5 more hellos (1 s) belonged to a
    // document that is gone.
    if (chan && (chan.ready ? chan.loads === loads : ++chan.hellos < 5)) return;
    drop();
    const { port1, port2 } = new env.MessageChannel();
    const c = /** @type {Channel} */ ((chan = { port: port1, nonce: nonce(env), ready: false, hellos: 0, loads }));
    // Frames that arrive before ready (an SDK that sent its queued calls first) wait for
    // it, a bounded number of them, and are then handed over in order.
    /** @type {unknown[]} */
    const early = [];
    port1.onmessage = (m) => {
      const r = m.data;
      if (chan !== c || c.ready) return;
      if (!isPlain(r) || r.type !== READY) return early.push(r) > MAX_EARLY ? drop() : undefined;
      if (r.v !== V || r.nonce !== c.nonce) return drop();
      c.ready = true;
      c.loads = loads;
      port1.onmessage = null;
      onReady(port1);
      // onReady has set the port's onmessage (or not): tsc narrowed it to null above.
      for (const data of early) /** @type {((e: {data: unknown}) => void) | null} */ (port1.onmessage)?.({ data });
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
    },
  };
}
