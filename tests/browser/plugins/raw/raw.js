// A plugin written without the SDK. It does the port handshake by hand, so a test can send
// frames the SDK would never build (a project id, a scope, a target, a path) and read the
// host's replies: window.raw.send(frame) posts one frame on the port and resolves with the
// reply to its id. window.raw.post(frame) posts without waiting (a fuzzer's frames may have
// no usable id); window.raw.replies holds every reply in arrival order.
(function () {
  "use strict";
  const log = document.getElementById("log");
  const waiting = new Map();
  const events = [];
  const replies = [];
  let gotPort;
  const connected = new Promise(function (resolve) {
    gotPort = resolve;
  });

  function hello() {
    parent.postMessage({ type: "steamHarnessKanban:hello", v: 1 }, "*");
  }
  const timer = setInterval(hello, 200);

  addEventListener("message", function onConnect(event) {
    const data = event.data;
    if (event.source !== parent || !data || data.type !== "steamHarnessKanban:connect") return;
    if (!event.ports || event.ports.length !== 1) return;
    removeEventListener("message", onConnect);
    clearInterval(timer);
    const port = event.ports[0];
    port.onmessage = function (message) {
      const frame = message.data;
      if (frame.event !== undefined) {
        events.push(frame);
        return;
      }
      replies.push(frame);
      if (replies.length <= 100) {
        const item = document.createElement("li");
        item.textContent = JSON.stringify(frame).slice(0, 200);
        log.appendChild(item);
      }
      const resolve = waiting.get(frame.id);
      if (resolve) {
        waiting.delete(frame.id);
        resolve(frame);
      }
    };
    port.postMessage({ v: 1, type: "ready", nonce: data.nonce });
    gotPort(port);
  });
  hello();

  let port = null;
  connected.then(function (p) {
    port = p;
  });

  window.raw = {
    events: events,
    replies: replies,
    // Synchronous once connected; throws what postMessage throws (an uncloneable frame).
    post: function (frame) {
      port.postMessage(frame);
    },
    connected: connected.then(function () {
      return true;
    }),
    send: function (frame) {
      return connected.then(function (port) {
        return new Promise(function (resolve) {
          waiting.set(frame.id, resolve);
          port.postMessage(frame);
        });
      });
    },
  };
})();
