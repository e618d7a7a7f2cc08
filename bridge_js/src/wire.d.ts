// The shapes the JS modules pass each other and the wire, for tsc only: JSDoc imports these
// (`import("./wire.js").Request`); nothing here exists at run time or in dist/.

import type { ErrorCode } from "../static/bridge/kanban.js";

export type { ErrorCode };

/** A request frame as the host relays it (checkRequest's output). */
export interface Request {
  v: number;
  id: number;
  op: string;
  alias?: string | null;
  key?: string;
  value?: any;
  expectedRevision?: string | null;
}

/** What the SDK hands rpc.call: a request without its version and id. */
export type Call = Omit<Request, "v" | "id">;

/** An error as it travels in a reply (errors.js wireError normalises it). */
export interface WireError {
  code: ErrorCode;
  message: string;
  current?: any;
  hint?: string;
}

export type Reply = { v: number; id: number; ok: true; result?: any } | { v: number; id: number; ok: false; error: WireError };

/** An op's arguments in protocol.json: which of key and value it takes, and how. */
export interface Rule {
  op?: string;
  key?: string;
  value?: string | string[];
  expectedRevision?: string;
  blobs?: string[];
  via?: string;
}

/** A TypeError that carries a code, as a plugin calling the SDK wrongly gets it. */
export type CodedTypeError = TypeError & { code: ErrorCode };

/** The timers a module uses: a window's, or a fake clock in tests. */
export interface Timers {
  setTimeout(fn: () => void, ms: number): any;
  clearTimeout(timer: any): void;
}

/** What the SDK needs of its window (or a fake one in tests). */
export interface PluginEnv extends Timers {
  parent: { postMessage(message: any, targetOrigin: string): void } | null;
  addEventListener(type: string, listener: (event: any) => void): void;
  removeEventListener(type: string, listener: (event: any) => void): void;
  console: Pick<Console, "error" | "warn">;
  URL?: Pick<typeof URL, "createObjectURL" | "revokeObjectURL">;
}

/** A limits object as protocol.json's `limits` and the server's page name them. */
export type Limits = { [name: string]: number };
