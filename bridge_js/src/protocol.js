// Wire protocol of the bridge: one version, one set of ops and fields, shared by the
// plugin SDK, the host relay and (by value) the server consumer.

export const V = 1;
export const HELLO = "steamHarnessKanban:hello";
export const CONNECT = "steamHarnessKanban:connect";

// SDK method name -> [op, takes a document id in `key`, fields copied into `value`].
export const KNOWLEDGE = {
  listDocuments: ["knowledge.list", 0, ["cursor"]],
  getDocument: ["knowledge.get", 1],
  createDocument: ["knowledge.create", 0, ["title", "markdown"]],
  editDocument: ["knowledge.edit", 1, ["title", "markdown"]],
  deleteDocument: ["knowledge.delete", 1],
  searchDocuments: ["knowledge.search", 0, ["query", "documentId", "beforeLines", "afterLines"]],
  readDocumentLines: ["knowledge.readLines", 1, ["start", "end"]],
};

// PURE: a bundle that never checks a request (the SDK) drops the list.
export const OPS = /* @__PURE__ */ ["get", "set", "subscribe", "unsubscribe"].concat(
  /* @__PURE__ */ Object.values(KNOWLEDGE).map((k) => k[0]),
);

// The only fields a request may carry: the target is always derived by the server from
// the page and the alias, never named by the plugin.
export const FIELDS = ["v", "id", "op", "alias", "key", "value", "expectedRevision"];

export const ALIAS = /^[a-z][a-z0-9_-]{0,63}$/;
export const MAX_KEY = 1024;
export const MAX_BYTES = 1048576;
export const MAX_DEPTH = 64;
export const MAX_REVISION = 64;
export const TIMEOUT = 15000;
export const HELLO_EVERY = 200;
export const HELLO_FOR = 5000;
export const MAX_EARLY = 256;
export const BACKOFF_MIN = 250;
export const BACKOFF_MAX = 5000;
export const STATUSES = ["connecting", "open", "reconnecting", "closed"];
