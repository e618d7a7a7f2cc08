// The SDK (src/sdk.js, typed by its JSDoc) and the declarations plugin developers read as
// its contract (static/bridge/kanban.d.ts) say the same: tsc refuses this file when one has
// a member the other lacks, or a member of a type the other does not allow. tsc also checks
// sdk.js itself against the declarations (its `@satisfies`), so a drift shows there first;
// this file adds what that cannot see (a member the declarations dropped that the SDK
// spreads in) and the other direction. npm run typecheck runs it; types.test.mjs proves it
// fails when a method is removed from either side.

import type { createKanban } from "../../src/sdk.js";
import type { SteamHarnessKanban } from "../../static/bridge/kanban.js";

type Sdk = ReturnType<typeof createKanban>;

// What the SDK returns is what the declarations promise, member by member ...
export const sdkIsDeclared = (sdk: Sdk): SteamHarnessKanban => sdk;
// ... and what they promise could be the SDK's.
export const declaredIsSdk = (declared: SteamHarnessKanban): Sdk => declared;

// The same member names on both sides, at each level a plugin reaches.
type Same<A, B> = [Exclude<keyof A, keyof B>, Exclude<keyof B, keyof A>] extends [never, never]
  ? true
  : { onlyInTheSdk: Exclude<keyof A, keyof B>; onlyDeclared: Exclude<keyof B, keyof A> };

export const sameMembers: [
  Same<Sdk, SteamHarnessKanban>,
  Same<Sdk["kv"], SteamHarnessKanban["kv"]>,
  Same<Sdk["knowledge"], SteamHarnessKanban["knowledge"]>,
  Same<Sdk["relatedProjects"], SteamHarnessKanban["relatedProjects"]>,
  Same<Sdk["attachments"], SteamHarnessKanban["attachments"]>,
  Same<Sdk["cards"], SteamHarnessKanban["cards"]>,
] = [true, true, true, true, true, true];
