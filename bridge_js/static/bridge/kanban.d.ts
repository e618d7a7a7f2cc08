// TypeScript declarations for window.steamHarnessKanban (served as written at
// /static/bridge/kanban.d.ts). Members marked "extension" go beyond the seed contract.

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * The same strings on HTTP, the websocket and here. What to do about each:
 * - invalid_argument: check the key, value and alias passed to the call (a TypeError when
 *   the SDK caught the mistake itself, a BridgeError when the host refused a limit).
 * - unauthenticated: the session ended; sign in again and reload the board.
 * - forbidden: your role or the target project's grant does not allow this.
 * - not_found: the project or document does not exist.
 * - unknown_alias: declare this alias in package.json steamHarness.projectInfo.relatedProjects.
 * - relationship_pending: the other project must declare this one back.
 * - conflict: the value changed meanwhile; re-read it, or use updateValue.
 * - too_large: values are limited to 1 MiB (1,048,576 bytes) of JSON text.
 * - quota_exceeded: the write would take the project past its storage quota (values, kept
 *   versions and documents together; the message says how much); nothing was written.
 *   Delete values, or have the owner purge a key's kept versions.
 * - limit_reached: a person is at a count limit (the boards one may own); no plugin call
 *   meets it today, but the list is the server's one list.
 * - built_in: the default configuration is built in; it cannot be renamed or deleted.
 * - rate_limited: too many requests; retry later.
 * - unavailable: the server is unreachable or did not answer within 15 s; retry after the
 *   board reconnects (see `status`).
 * - not_supported: never possible here, such as running an entrypoint (they run locally).
 */
export type ErrorCode =
  | "invalid_argument"
  | "unauthenticated"
  | "forbidden"
  | "not_found"
  | "unknown_alias"
  | "relationship_pending"
  | "conflict"
  | "too_large"
  | "quota_exceeded"
  | "limit_reached"
  | "built_in"
  | "rate_limited"
  | "unavailable"
  | "not_supported";

export interface CurrentValue {
  readonly found: boolean;
  readonly value?: JsonValue;
  readonly revision?: string;
}

/** Every failed bridge call rejects with a BridgeError (or a TypeError for bad arguments). */
export interface BridgeError extends Error {
  readonly name: "BridgeError";
  readonly code: ErrorCode;
  /** Set on some `conflict` errors: what is stored now. */
  readonly current?: CurrentValue;
  /** What the code asks of you, in a few words (set on refusals the host relayed). */
  readonly hint?: string;
}

export interface BridgeErrorConstructor {
  new (code: ErrorCode, message: string, current?: CurrentValue, hint?: string): BridgeError;
  readonly prototype: BridgeError;
}

export interface RevisionEvent {
  /** null for the current project. */
  readonly alias: string | null;
  /** Opaque; compare only for equality. */
  readonly revision: string;
}

/**
 * One key of a watch's event. It carries the new `value` when its JSON is at most the
 * server's push limit (`KANBAN_PUSH_VALUE_BYTES`, 16 KiB by default), or `deleted: true`
 * when the key was removed: apply it without reading. With neither, read the key.
 * `source` is who made the change and through what, as the key's history keeps it
 * (`Version.source`: `user`, `via`, an agent's `agent` name, …); absent when the write
 * named none.
 */
export type Change<T extends JsonValue = JsonValue> = { readonly key: string; readonly revision: string; readonly source?: WriteSource } & (
  | { readonly value: T; readonly deleted?: undefined }
  | { readonly deleted: true }
  | { readonly deleted?: undefined }
);

/** Who wrote a value and through what: `user` (a username), `via` (bridge, api, mcp, …),
 * and for an agent's write its token's `agent` name; other fields may be present. */
export type WriteSource = { readonly [field: string]: JsonValue };

/** A watch's event: the keys that changed (only keys the grant lets you read). */
export interface ChangesEvent<T extends JsonValue = JsonValue> {
  readonly alias: string | null;
  readonly changes: ReadonlyArray<Change<T>>;
  /** After a reconnect or lost events: re-read everything you hold. */
  readonly resync?: true;
}

export interface InvalidatedEvent {
  readonly alias: string | null;
  readonly code: ErrorCode;
}

export type Unsubscribe = () => void;

/**
 * One key of a `getValues` read, in the order asked. `source` is there only when an agent
 * made the value's last write (it names an `agent`, came `via: "mcp"`, or names a `runId` or
 * `conversationId`): of that write's source, as its history and a watch change carry it,
 * the `user`, `via`, `agent`, `runId` and `conversationId` it has.
 */
export type ReadResult<T extends JsonValue = JsonValue> =
  | { readonly found: true; readonly value: T; readonly revision: string; readonly source?: WriteSource }
  | { readonly found: false }
  /** forbidden: the grant does not open this key; too_large: read it alone with getValue. */
  | { readonly found: false; readonly error: { readonly code: ErrorCode; readonly message: string } };

/** One kept version of a value (`kv.getHistory`). */
export type Version<T extends JsonValue = JsonValue> = {
  readonly revision: string;
  readonly source: WriteSource | null;
  readonly writtenAt: string;
} & ({ readonly value: T } | { readonly deleted: true });

export interface History<T extends JsonValue = JsonValue> {
  readonly entries: ReadonlyArray<Version<T>>;
  readonly cursor: string | null;
}

export interface KanbanKV {
  /** Resolves undefined when the key is absent, null for a stored null. */
  getValue<T extends JsonValue = JsonValue>(key: string): Promise<T | undefined>;
  /**
   * Extension: up to 256 named keys in one request (and one database round trip), each
   * decided by the same read rule as getValue; a key the grant does not open is refused
   * alone, the others are read. No listing: name every key.
   */
  getValues<T extends JsonValue = JsonValue>(keys: string[]): Promise<ReadResult<T>[]>;
  /**
   * Rejects with TypeError for undefined or non-JSON values, before sending anything; with
   * BridgeError "too_large" (from the host) for more than 1 MiB of JSON.
   */
  setValue(key: string, value: JsonValue): Promise<void>;
  /**
   * Compare-and-set loop (up to 64 attempts). The updater may run more than once and must
   * be pure; it receives undefined when the key is absent. Resolves with the stored value.
   * Extension on the current project's kv.
   */
  updateValue<T extends JsonValue = JsonValue>(key: string, updater: (current: T | undefined) => T): Promise<T>;
  /**
   * Extension: the key's kept versions, newest first (its current value first), each with
   * who wrote it and through what (`source`) and when; a deletion has `deleted: true` and
   * no value. Under the key's own read rule. Pass `cursor` back as `before` for older ones
   * (null: no more). At most `KANBAN_HISTORY_REVISIONS` (50) per key are kept.
   */
  getHistory<T extends JsonValue = JsonValue>(key: string, options?: { limit?: number; before?: string }): Promise<History<T>>;
  /** Extension on the current project's kv. */
  subscribe(listener: (event: RevisionEvent) => void): Unsubscribe;
  /**
   * Extension: events that name the keys that changed, under `prefix` (default: every key),
   * one per committed write batch, in commit order; `{changes: [], resync: true}` after a
   * reconnect. A change carries its new value (or `deleted: true`) when small: apply it;
   * read only the keys that came without one (getValues), and everything on a resync.
   */
  watch<T extends JsonValue = JsonValue>(listener: (event: ChangesEvent<T>) => void, options?: { prefix?: string }): Unsubscribe;
}

export interface KnowledgeResult {
  readonly [field: string]: JsonValue;
}

export interface KanbanKnowledge {
  listDocuments(options?: { cursor?: string | null }): Promise<KnowledgeResult>;
  getDocument(id: string | { id: string }): Promise<KnowledgeResult>;
  /** `id`: a stable id of your choosing (one document per conversation, say); left out,
   * the server picks one. An id already in use is a `conflict`. */
  createDocument(document: { id?: string; title: string; markdown: string }): Promise<KnowledgeResult>;
  editDocument(document: { id: string; title?: string; markdown?: string }): Promise<KnowledgeResult>;
  deleteDocument(id: string | { id: string }): Promise<KnowledgeResult>;
  searchDocuments(options: { query: string; documentId?: string; beforeLines?: number; afterLines?: number }): Promise<KnowledgeResult>;
  readDocumentLines(range: { id: string; start: number; end: number }): Promise<KnowledgeResult>;
}

export type Role = "guest" | "developer" | "owner";

/** Who uses the plugin and what they may do in this project. Never more than the user
 * could learn by trying. Before `ready`, `user` and `role` are null and `can` is empty. */
export interface Context {
  readonly user: { readonly id: number; readonly username: string; readonly displayName: string } | null;
  /** The role the user's membership names, as the members list shows it; null for an
   * administrator without one (then `staff` is true and they may act as an owner). */
  readonly role: Role | null;
  /** An administrator of the server: may act as an owner of every board. */
  readonly staff?: boolean;
  /** Guests read; developers and owners also write (KV and Knowledge alike). */
  readonly can: { readonly read?: boolean; readonly write?: boolean };
  /** The project's members, by display name: whom a card can be assigned to. */
  readonly members?: ReadonlyArray<{
    readonly id: number;
    readonly username: string;
    readonly displayName: string;
    readonly role: Role;
  }>;
  /** The board page the plugin is shown on: its address (without a fragment), and the
   * fragment it was opened with or changed to ("" for none), e.g. "card=abc" for a link to
   * one of the plugin's own things. A link is `url + "#" + fragment`. */
  readonly page?: { readonly url: string; readonly fragment: string };
}

/** What this user may do through an alias: "pending" until the related project declares
 * this one back; "unknown" for an alias this project does not declare. Each `can` is true
 * when the grant (and the user's roles on both sides) opens any key or document at all. */
export interface RelatedContext {
  readonly status: "confirmed" | "pending" | "unknown";
  readonly can: {
    readonly read?: boolean;
    readonly write?: boolean;
    readonly knowledgeRead?: boolean;
    readonly knowledgeWrite?: boolean;
  };
}

/** One of a project's `steamHarness.entrypoints`. */
export interface Entrypoint {
  readonly id: string;
  readonly title: string;
}

export interface KanbanEntrypoints {
  /** The project's declared entrypoints that its `entrypoints` grant lets you see. */
  listEntrypoints(): Promise<Entrypoint[]>;
  /** Always rejects: entrypoints run locally, from the project's own directory, and this
   * server never starts a project. `not_supported` for one the grant covers, `forbidden`
   * for one it does not. */
  runEntrypoint(id: string, args?: string[]): Promise<never>;
}

export interface RelatedProject extends KanbanEntrypoints {
  readonly kv: KanbanKV;
  readonly knowledge: KanbanKnowledge;
  /** Synchronous; frozen. */
  getContext(): RelatedContext;
  /** Fires when the relationship is confirmed or lost, or the grant narrows or widens. */
  onContextChange(listener: (context: RelatedContext) => void): Unsubscribe;
}

export interface Configuration {
  /** "" for the default configuration. */
  readonly id: string;
  readonly name: string;
  readonly values: { readonly [key: string]: JsonValue };
}

export type BridgeStatus = "connecting" | "open" | "reconnecting" | "closed";

/** A Board a card may be copied or moved to: one the person can write (`current`: this one). */
export interface KanbanCardTarget {
  readonly id: string;
  readonly name: string;
  readonly current: boolean;
  readonly columns: ReadonlyArray<{ readonly id: string; readonly title: string }>;
}

/** What a copy or move made on the target, as REST's `POST .../cards/{card}/copy|move`. */
export interface KanbanCardTransfer {
  readonly projectId: string;
  readonly card: string;
  readonly column: string;
  readonly moved: boolean;
  readonly comments: number;
  readonly attachments: number;
  readonly assignees: ReadonlyArray<string>;
}

/** The built-in Board's cards (this project's only; another plugin's project answers
 * invalid_argument). A copy needs read here and write on the target, a move write on both
 * (a guest cannot move); the card goes with its comments, checklist and attachments, at the
 * end of `column` (default: a column of the same id there, else the first). */
export interface KanbanCards {
  /** The Boards this person can write, this one among them when they can, by name. */
  targets(): Promise<ReadonlyArray<KanbanCardTarget>>;
  copy(card: string, target: { targetProject: string; column?: string }): Promise<KanbanCardTransfer>;
  move(card: string, target: { targetProject: string; column?: string }): Promise<KanbanCardTransfer>;
}

/** A file attached to a card, as the REST list shows it (`/api/v1/projects/{id}/attachments/`). */
export interface Attachment {
  readonly id: string;
  readonly card: string;
  /** The file's name, as offered on download. */
  readonly name: string;
  /** image/png, image/jpeg, image/webp or image/gif when the server read it as that image;
   * application/octet-stream for anything else, whatever the upload claimed. */
  readonly contentType: string;
  /** Bytes. */
  readonly size: number;
  /** null unless the file is an image, which then has a cover (`thumbnailUrl`). */
  readonly image: { readonly width: number; readonly height: number } | null;
  /** The uploader's username. */
  readonly uploadedBy: string;
  /** ISO 8601, UTC. */
  readonly uploadedAt: string;
  /** Absolute download link made for this person, living KANBAN_ATTACHMENT_URL_SECONDS
   * (300 s by default; list again for fresh ones). Open it in a new tab (`<a href={url}
   * target="_blank" rel="noopener">`): the tab leaves the sandbox and has the session. An
   * image shows there, anything else is saved. Not for `<img src>` (use `thumbnailUrl`). */
  readonly url: string;
  /** The cover (a PNG of at most 320x240) as a `blob:` URL of this page, for `<img src>`:
   * the same for an attachment as long as the page lives; null unless `image`. */
  readonly thumbnailUrl: string | null;
}

/** Files on cards. `alias` null is this project; a related project's alias decides by its
 * grants as `get` / `set` of the key `attachments:<card>` there. Reading needs the read
 * grant, uploading and removing the developer role and the write grant. */
export interface KanbanAttachments {
  /** Attach `file` to `card` (its name, or `options.name`, or "file"); resolves once it is
   * stored. Rejects `too_large` past KANBAN_ATTACHMENT_BYTES (before a byte is sent) or
   * past 100 files on the card, `quota_exceeded` past the board's storage, `forbidden`
   * for a guest. */
  upload(alias: string | null, card: string, file: Blob, options?: { readonly name?: string }): Promise<Attachment>;
  /** The card's attachments, oldest first. */
  list(alias: string | null, card: string): Promise<readonly Attachment[]>;
  /** Rejects `not_found` when the card has no such attachment. */
  remove(alias: string | null, card: string, attachmentId: string): Promise<void>;
}

export interface SteamHarnessKanban extends KanbanEntrypoints {
  /** Resolves once the host has delivered the first configuration. */
  readonly ready: Promise<void>;
  /** Extension: the host's websocket status. */
  readonly status: BridgeStatus;
  /** Extension: the class of rejected errors, for instanceof checks. */
  readonly BridgeError: BridgeErrorConstructor;
  readonly kv: KanbanKV;
  /** The current project's Knowledge base. */
  readonly knowledge: KanbanKnowledge;
  readonly relatedProjects: {
    /** Throws TypeError when alias does not match [a-z][a-z0-9_-]{0,63}. */
    get(alias: string): RelatedProject;
  };
  /** Synchronous; a frozen copy. */
  getConfiguration(): Configuration;
  /** Fires on every configuration switch after the first configuration. */
  onConfigurationChange(listener: (configuration: Configuration) => void): Unsubscribe;
  /** Extension: replaces the values of this user's configuration the plugin shows (the
   * Default included); at most 64 KiB of JSON. `getConfiguration()` keeps what the switch
   * gave it. */
  setConfigurationValues(values: { readonly [key: string]: JsonValue }): Promise<void>;
  /** Synchronous; frozen. Set before `ready` resolves. */
  getContext(): Context;
  /** Fires when the user's role here changes, live (granted, changed or removed). */
  onContextChange(listener: (context: Context) => void): Unsubscribe;
  /** Extension: a subscription was dropped (relationship, grant or membership changed). */
  onInvalidated(listener: (event: InvalidatedEvent) => void): Unsubscribe;
  /** Extension: puts a notice in the inboxes of members of this board (usernames; the
   * sender is skipped), linking to `card` when given (an id of the plugin's, opened as
   * `#card=<id>`). Only someone who may write here may notify; `text` is 1-500 characters;
   * rejects `invalid_argument` for a non-member and `rate_limited` past the server's rate
   * (30 recipients a minute by default). Resolves with the usernames notified. */
  notify(notice: { readonly users: readonly string[]; readonly text: string; readonly card?: string }): Promise<{
    readonly sent: readonly string[];
  }>;
  /** Extension: files attached to cards, here or in a related project. */
  readonly attachments: KanbanAttachments;
  /** Extension: the built-in Board's cards, copied or moved to another Board. */
  readonly cards: KanbanCards;
}

declare global {
  interface Window {
    readonly steamHarnessKanban: SteamHarnessKanban;
  }
  // eslint-disable-next-line no-var
  var steamHarnessKanban: SteamHarnessKanban;
}
