// What a test host stands in for: the server's side of the bridge, in memory. Projects
// hold values with revisions and history; relationships give one project's pages an alias
// onto another's values, with read and write rules; every plugin page connected to the
// world is answered as the bridge answers it, and hears every write it may read, whoever
// made it: another page, another person, the test itself.
//
//   const world = createTestWorld({
//     projects: { board: { kv: {} }, inventory: { kv: { items: [] } } },
//     relationships: [{ from: "board", alias: "inventory", to: "inventory", read: "all", write: ["stock:"] }],
//   });
//   const page = world.connect({ project: "board", role: "guest" });  // then page.attach(send)
//
// A rule is "all", "none" or a list of key prefixes; `pending: true` makes a relationship
// the other side has not confirmed. `members` are the people a board lists (whom `notify`
// may reach); `pushLimit` is the size in bytes of JSON up to which watch events carry values;
// `attachmentBytes` the largest file a card takes (KANBAN_ATTACHMENT_BYTES; the spec's default).

import { V, LIMITS } from "../src/protocol.js";
import { checkRequest } from "../src/guards.js";
import { withHint } from "../src/hints.js";
import { createAttachments } from "./attachments.mjs";

/** @typedef {"all" | "none" | string[]} Rule a grant: everything, nothing, or keys under these prefixes */
/** @typedef {{from: string, alias: string, to: string, read?: Rule, write?: Rule, pending?: boolean}} Relationship */
/** @typedef {{id: number, username: string, displayName: string}} User */
/** @typedef {User & {role?: string}} Member */
/** @typedef {{id: string, name: string, values: Record<string, unknown>}} Configuration */
/**
 * @typedef {object} WorldOptions
 * @property {Record<string, {kv?: Record<string, unknown>}>} [projects]
 * @property {Relationship[]} [relationships]
 * @property {Member[]} [members]
 * @property {number} [pushLimit]
 * @property {number} [attachmentBytes]
 */
/**
 * @typedef {object} PageOptions
 * @property {string} [project]
 * @property {User} [user]
 * @property {string} [role]
 * @property {Configuration} [configuration]
 */
/** @typedef {{id: string, alias: string | null, read: Rule, write: Rule}} Target */
/** @typedef {(frame: any) => void} Send */

const WRITERS = new Set(["developer", "owner"]);
const FIRST_USER = { id: 1, username: "alice", displayName: "Alice" };

/** @param {Rule} rule @param {string} key */
function allows(rule, key) {
  if (rule === "all") return true;
  if (Array.isArray(rule)) return rule.some((prefix) => key.startsWith(prefix));
  return false;
}

// Python's repr() of a string: the server's messages quote keys, aliases and usernames so.
/** @param {string} text */
export function quoted(text) {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of text) {
    const c = /** @type {number} */ (ch.codePointAt(0));
    if (ch === quote || ch === "\\") out += "\\" + ch;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (ch === " " || !/[\p{C}\p{Z}]/u.test(ch)) out += ch;
    else if (c <= 0xff) out += "\\x" + c.toString(16).padStart(2, "0");
    else if (c <= 0xffff) out += "\\u" + c.toString(16).padStart(4, "0");
    else out += "\\U" + c.toString(16).padStart(8, "0");
  }
  return out + quote;
}

// The server's refusals, in its words (kanban/access/decision.py, kanban/data,
// storage/engine.py): a plugin's test that checks a message passes here and on a board.
// tests/bridge_js/test_testing_host.py sends the same bad calls to both and compares.
/** @type {Record<string, string>} */
const GERUNDS = { get: "reading", history: "reading", getMany: "reading", subscribe: "subscribing", watch: "subscribing", set: "writing", update: "updating" };
const MAX_TEXT = 500;
const MAX_RECIPIENTS = 20;
const CARD = /^[A-Za-z0-9_-]{1,64}$/;
const CONTROL = /[^\P{C}\n]|[\p{Zl}\p{Zp}]|[^\P{Zs} ]/u;
/** @typedef {string | null} Alias */
const say = {
  noAlias: (/** @type {string} */ alias) => new Refusal("unknown_alias", `this project declares no relationship ${quoted(alias)}`),
  pending: (/** @type {string} */ alias) =>
    new Refusal("relationship_pending", `relationship ${quoted(alias)} is pending until the related project declares this one`),
  role: (/** @type {string} */ op, /** @type {Alias} */ alias) =>
    new Refusal(
      "forbidden",
      alias === null
        ? `${GERUNDS[op]} in this project needs the developer role`
        : `${GERUNDS[op]} through ${quoted(alias)} needs the developer role in this project`,
    ),
  grant: (/** @type {string} */ op, /** @type {string | null} */ key, /** @type {any} */ alias) =>
    new Refusal("forbidden", `${GERUNDS[op]}${key === null ? "" : " " + quoted(key)} through ${quoted(alias)} is not allowed`),
  conflict: (/** @type {string} */ project, /** @type {string} */ key, /** @type {string | null} */ expected) =>
    new Refusal("conflict", `project.${project}.kv/${quoted(key)} is not ${expected === null ? "absent" : "revision " + expected}; nothing was written`),
};

class Refusal extends Error {
  /** @param {string} code @param {string} message @param {object} [extra] fields the error carries besides (a conflict's current) */
  constructor(code, message, extra) {
    super(message);
    this.code = code;
    this.extra = extra;
  }
}

/** @param {WorldOptions} [options] */
export function createTestWorld(options = {}) {
  const pushLimit = options.pushLimit ?? LIMITS.pushValueBytes;
  const members = [...(options.members || [])];
  const relationships = (options.relationships || []).map((r) => ({ read: /** @type {Rule} */ ("all"), write: /** @type {Rule} */ ("none"), ...r }));
  /** @type {Map<string, {values: Map<string, unknown>, revisions: Map<string, string>, history: Map<string, object[]>}>} */
  const projects = new Map();
  /** @type {Set<{announce: (id: string, key: string, rev: string, value: unknown, by: string) => void, close: () => void}>} */
  const connections = new Set();
  /** Every request a page sent: {project, user, op, alias, key}. @type {object[]} */
  const requests = [];
  /** key -> milliseconds: replies to requests naming that key come this much later. */
  /** @type {Map<string, number>} */
  const delays = new Map();
  /** op -> {code, message, times}: the next `times` requests of that op are refused so. */
  /** @type {Map<string, {code: string, message?: string, times: number}>} */
  const failures = new Map();
  /** What `kanban.notify` sent: [{user, text, card}]. @type {{user: string, text: string, card: string | null}[]} */
  const notifications = [];
  /** @type {Set<ReturnType<typeof setTimeout>>} */
  const timers = new Set();
  let revision = 0;

  /** @param {string} id */
  function projectOf(id) {
    let project = projects.get(id);
    if (!project) projects.set(id, (project = { values: new Map(), revisions: new Map(), history: new Map() }));
    return project;
  }

  /** @param {string} id @param {string} key @param {unknown} value @param {string} by */
  function store(id, key, value, by) {
    const target = projectOf(id);
    const rev = String(++revision);
    target.values.set(key, structuredClone(value));
    target.revisions.set(key, rev);
    const versions = target.history.get(key) || [];
    versions.unshift({ revision: rev, value: structuredClone(value), source: { user: by }, writtenAt: new Date().toISOString() });
    target.history.set(key, versions.slice(0, 50));
    for (const page of connections) page.announce(id, key, rev, value, by);
    return rev;
  }

  // A deletion (the last attachment of a card removed): watchers hear `deleted: true`.
  /** @param {string} id @param {string} key @param {string} by */
  function drop(id, key, by) {
    const target = projectOf(id);
    const rev = String(++revision);
    target.values.delete(key);
    target.revisions.delete(key);
    const versions = target.history.get(key) || [];
    versions.unshift({ revision: rev, value: null, deleted: true, source: { user: by }, writtenAt: new Date().toISOString() });
    target.history.set(key, versions.slice(0, 50));
    for (const page of connections) page.announce(id, key, rev, undefined, by);
  }

  const attachments = createAttachments({ store, drop, refusal: (/** @type {string} */ code, /** @type {string} */ message) => new Refusal(code, message) });
  // The board host's refusal of a larger file, before it sends a byte (the server's setting).
  const limits = { ...LIMITS, attachmentBytes: options.attachmentBytes ?? LIMITS.attachmentBytes };

  for (const [id, spec] of Object.entries(options.projects || {})) {
    for (const [key, value] of Object.entries(spec.kv || {})) store(id, key, value, "seed");
  }

  /** @param {string} op */
  function refuseIfFailing(op) {
    const failure = failures.get(op);
    if (!failure) return;
    if (--failure.times <= 0) failures.delete(op);
    throw new Refusal(failure.code, failure.message || `the test world refuses this ${op}`);
  }

  /** @param {number} ms @param {() => void} fn */
  function later(ms, fn) {
    const id = setTimeout(() => (timers.delete(id), fn()), ms);
    timers.add(id);
  }

  // One plugin page: a person with a role on a project, looking through its aliases.
  /** @param {PageOptions} [options] */
  function connect({ project = "", user = FIRST_USER, role = "developer", configuration } = {}) {
    const person = { ...user, role };
    if (!members.some((m) => m.username === person.username)) members.push(person);
    let config = configuration || { id: "", name: "Default", values: {} };
    /** @type {Send | null} */
    let send = null;
    /** @type {{subscribe: Set<Alias>, watch: Map<Alias, string>}} */
    let follows = { subscribe: new Set(), watch: new Map() }; // alias; alias -> prefix
    /** @type {object[]} */
    const errors = [];

    // alias -> {id, read, write, pending}: null is the page's own project, all of it.
    /** @param {Alias} alias @returns {Target} */
    function targetOf(alias) {
      if (alias === null) return { id: project, alias, read: "all", write: "all" };
      const link = relationships.find((r) => r.from === project && r.alias === alias);
      if (!link) throw say.noAlias(alias);
      if (link.pending) throw say.pending(alias);
      return { id: link.to, alias, read: link.read, write: link.write };
    }

    /** @param {Alias} alias */
    function context(alias) {
      if (alias === null) {
        return { user, role, staff: false, can: { read: true, write: WRITERS.has(role) }, members: [...members] };
      }
      const link = /** @type {Relationship & {read: Rule, write: Rule}} */ (relationships.find((r) => r.from === project && r.alias === alias));
      if (link.pending) return { status: "pending", can: { read: false, write: false, knowledgeRead: false, knowledgeWrite: false } };
      const write = link.write !== "none" && WRITERS.has(role);
      return { status: "confirmed", can: { read: link.read !== "none", write, knowledgeRead: false, knowledgeWrite: false } };
    }

    /** @param {Target} target @param {string} key */
    function read(target, key) {
      if (!allows(target.read, key)) throw say.grant("get", key, target.alias);
      const values = projectOf(target.id);
      if (!values.values.has(key)) return { found: false };
      return { found: true, value: structuredClone(values.values.get(key)), revision: values.revisions.get(key) };
    }

    /** @param {any} f a checked request @param {Alias} alias @returns {any} */
    function call(f, alias) {
      switch (f.op) {
        case "get":
          return read(targetOf(alias), f.key);
        case "getMany": {
          const target = targetOf(alias);
          return f.value.map((/** @type {string} */ key) => {
            try {
              return read(target, key);
            } catch (/** @type {any} */ refusal) {
              return { found: false, error: { code: refusal.code, message: refusal.message } };
            }
          });
        }
        case "set": {
          const target = targetOf(alias);
          // A compare-and-set is decided as an update: it needs the read grant as well.
          const op = "expectedRevision" in f ? "update" : "set";
          if (!WRITERS.has(role)) throw say.role(op, alias);
          if (!allows(target.write, f.key) || (op === "update" && !allows(target.read, f.key))) throw say.grant(op, f.key, alias);
          attachments.guard(f.key);
          if (op === "update") {
            const now = projectOf(target.id).revisions.get(f.key) ?? null;
            if (now !== f.expectedRevision) {
              const current = read(target, f.key);
              const refusal = say.conflict(target.id, f.key, f.expectedRevision);
              refusal.extra = { current };
              throw refusal;
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
          following(alias);
          follows.subscribe.add(alias);
          return { subscribed: true };
        case "unsubscribe":
          follows.subscribe.delete(alias);
          return { subscribed: false };
        case "watch":
          following(alias);
          follows.watch.set(alias, f.value?.prefix || "");
          return { watching: true };
        case "unwatch":
          follows.watch.delete(alias);
          return { watching: false };
        case "configuration.set":
          if (alias !== null) throw new Refusal("invalid_argument", "a configuration belongs to this board");
          config = { ...config, values: f.value };
          return {};
        case "notify":
          return notify(f, alias);
        case "attachments.list": {
          const target = targetOf(alias);
          if (!allows(target.read, "attachments:" + f.key)) throw say.grant("get", "attachments:" + f.key, alias);
          return attachments.list(target.id, f.key);
        }
        case "attachments.upload":
          attachments.name(f.value.name);
          return attachments.upload(writable(alias, f.key).id, f.key, f.value, user);
        case "attachments.delete": {
          const id = attachments.id(f.value);
          return attachments.remove(writable(alias, f.key).id, f.key, id, user);
        }
        default:
          throw new Refusal("not_supported", `the test host does not serve ${f.op}`);
      }
    }

    // An attachment is written as its card's key `attachments:<card>` is (Op.SET).
    /** @param {Alias} alias @param {string} card */
    function writable(alias, card) {
      const target = targetOf(alias);
      if (!WRITERS.has(role)) throw say.role("set", alias);
      if (!allows(target.write, "attachments:" + card)) throw say.grant("set", "attachments:" + card, alias);
      return target;
    }

    // A subscription needs the read grant to open something (knowledge is not served here).
    /** @param {Alias} alias */
    function following(alias) {
      const target = targetOf(alias);
      if (alias !== null && target.read === "none") throw say.grant("subscribe", null, alias);
    }

    /** @param {any} f @param {Alias} alias */
    function notify(f, alias) {
      const refuse = (/** @type {string} */ message) => new Refusal("invalid_argument", message);
      if (alias !== null) throw refuse("a plugin notifies members of its own board");
      if (!WRITERS.has(role)) throw new Refusal("forbidden", "notifying people needs the developer role");
      const { users, text, card } = f.value || {};
      if (!Array.isArray(users) || !users.every((/** @type {unknown} */ name) => typeof name === "string")) throw refuse("users is a list of usernames");
      if (users.length < 1 || users.length > MAX_RECIPIENTS) throw refuse(`notify 1 to ${MAX_RECIPIENTS} people at once`);
      if (typeof text !== "string" || !text.trim()) throw refuse("a notification needs text");
      // Python's strip() and len(): whitespace at both ends, and code points, not UTF-16 units.
      const trimmed = text.trim();
      if ([...trimmed].length > MAX_TEXT) throw refuse(`a notification is at most ${MAX_TEXT} characters`);
      if (CONTROL.test(trimmed)) throw refuse("a notification has no control characters");
      if (card !== undefined && card !== null && (typeof card !== "string" || !CARD.test(card)))
        throw refuse("card is an id of 1 to 64 letters, digits, _ and -");
      const stranger = users.find((/** @type {string} */ name) => !members.some((m) => m.username === name));
      if (stranger !== undefined) throw refuse(`${quoted(stranger)} is not a member of this board`);
      const sent = [.../** @type {Set<string>} */ (new Set(users))].filter((name) => name !== user.username);
      for (const name of sent) notifications.push({ user: name, text: trimmed, card: card ?? null });
      return { sent };
    }

    /** @param {any} f a frame from the page */
    function receive(f) {
      if (f?.event === "error") return errors.push(f);
      if (!f || f.v !== V || typeof f.id !== "number") return;
      const alias = f.alias ?? null;
      requests.push({ project, user: user.username, op: f.op, alias, key: f.key ?? null });
      const to = send;
      /** @param {object} reply */
      const answer = (reply) => {
        const delay = delays.get(f.key);
        if (delay) later(delay, () => to === send && to?.(reply));
        else if (to === send) send?.(reply);
      };
      /** @param {any} refusal */
      const refused = (refusal) => {
        if (!(refusal instanceof Refusal) && typeof refusal?.code !== "string") throw refusal;
        // The board's host adds each code's hint to every refusal it relays.
        return { v: V, id: f.id, ok: false, error: withHint({ code: refusal.code, message: refusal.message, ...refusal.extra }) };
      };
      /** @type {any} */
      let result;
      try {
        // What a board's host checks before it relays a frame (src/host.js): the same
        // refusal, in the same words, for a key too long or a value (or file) too large.
        checkRequest(f, limits);
        refuseIfFailing(f.op);
        result = call(f, alias);
      } catch (refusal) {
        return answer(refused(refusal));
      }
      // An upload reads its file first.
      if (result instanceof Promise)
        result.then(
          (/** @type {unknown} */ r) => answer({ v: V, id: f.id, ok: true, result: r }),
          (/** @type {unknown} */ e) => answer(refused(e)),
        );
      else answer({ v: V, id: f.id, ok: true, result });
    }

    const page = {
      project,
      user,
      role,
      /** The page's reported errors ({message, at}). */
      errors,
      /** A new document on the page (the first, or one after a reload): what it hears. */
      /** @param {Send} to */
      attach(to) {
        send = to;
        follows = { subscribe: new Set(), watch: new Map() };
        send({ v: V, event: "context", context: context(null) });
        for (const r of relationships) if (r.from === project) send({ v: V, event: "context", alias: r.alias, context: context(r.alias) });
        send({ v: V, event: "configuration", configuration: config });
        send({ v: V, event: "status", status: "open" });
        return receive;
      },
      /** @param {string} id @param {string} key @param {string} rev @param {unknown} value @param {string} by */
      announce(id, key, rev, value, by) {
        for (const alias of new Set([...follows.subscribe, ...follows.watch.keys()])) {
          let target;
          try {
            target = targetOf(alias);
          } catch {
            continue;
          }
          if (target.id !== id || !allows(target.read, key)) continue;
          if (follows.subscribe.has(alias)) send?.({ v: V, event: "revision", alias, revision: rev });
          const prefix = follows.watch.get(alias);
          if (prefix === undefined || !key.startsWith(prefix)) continue;
          const small = value !== undefined && new TextEncoder().encode(JSON.stringify(value)).length <= pushLimit;
          // The write's source, as a server's event carries it (the history keeps the same).
          const source = { user: by };
          const change =
            value === undefined
              ? { key, revision: rev, deleted: true, source }
              : small
                ? { key, revision: rev, value, source }
                : { key, revision: rev, source };
          send?.({ v: V, event: "changes", alias, changes: [change] });
        }
      },
      /** The configuration the page has now, with what it saved. */
      configuration: () => structuredClone(config),
      /** Switch the user's configuration, as the board page's picker does. */
      /** @param {Configuration} next */
      switchConfiguration(next) {
        config = next;
        send?.({ v: V, event: "configuration", configuration: config });
      },
      close() {
        send = null;
        connections.delete(page);
      },
    };
    connections.add(page);
    return page;
  }

  return {
    connect,
    requests,
    delays,
    /** The next `times` requests of `op` are refused with `code` (an outage, a busy server). */
    /** @param {string} op @param {{code?: string, message?: string, times?: number}} [refusal] */
    failNext(op, { code = "unavailable", message, times = 1 } = {}) {
      failures.set(op, { code, message, times });
    },
    notifications,
    /** Someone else's write (a person on another board, an agent): events reach the pages. */
    /** @param {string} project @param {string} key @param {unknown} value @param {{by?: string}} [options] */
    write(project, key, value, { by = "someone-else" } = {}) {
      return store(project, key, value, by);
    },
    /** What `project` holds under `key` (undefined: absent). */
    /** @param {string} project @param {string} key */
    value(project, key) {
      return structuredClone(projectOf(project).values.get(key));
    },
    close() {
      for (const id of timers) clearTimeout(id);
      for (const page of [...connections]) page.close();
    },
  };
}
