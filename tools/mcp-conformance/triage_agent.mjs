// The triage agent of tests/browser/test_agent_scenario.py, on the official TypeScript MCP
// SDK client (pinned in this folder's package-lock.json); tests/browser/triage_agent.py is
// the same agent on the official Python client. Both speak one line protocol, so the test
// drives either the same way:
//
//   node triage_agent.mjs MCP_URL TOKEN BOARD_ID
//
// stdout, one JSON object a line: {"event": "columns"}, {"event": "card", "id"},
// {"event": "ready"} (its card is added, commented, ticked and moved, and no notification
// came for 0.5 s), {"event": "notified", "at"} (epoch seconds of the first
// notifications/resources/updated after "ready", or null), {"event": "done", ...}; a failure
// is {"event": "error", "message"} and exit status 1. stdin: one line "saved" once the
// person's change is made, after "ready".
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [url, token, board] = process.argv.slice(2);
const QUIET_MS = 500;
const NOTIFIED_WITHIN_MS = 3000;
const MISTAKE = "Login fails on Safari (duplicate?)";

const say = (event, fields = {}) => process.stdout.write(JSON.stringify({ event, ...fields }) + "\n");
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const lines = createInterface({ input: process.stdin });
const waiting = [];
lines.on("line", (line) => waiting.shift()?.(line.trim()));
const nextLine = () => new Promise((resolve) => waiting.push(resolve));

/** notifications/resources/updated, each with the time it came (epoch ms). */
const heard = [];

async function main() {
  const client = new Client({ name: "triage-bot", version: "1.0.0" });
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    heard.push({ uri: n.params.uri, at: Date.now() });
  });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  let conflicts = 0;

  /** One board_cards call: its typed answer, or {error} with the tool's error body. */
  async function cards(args) {
    const result = await client.callTool({ name: "board_cards", arguments: args });
    const body = result.structuredContent ?? JSON.parse(result.content[0].text);
    if (result.isError) return { error: body };
    return body;
  }
  async function must(args) {
    const answer = await cards(args);
    if (answer.error) throw new Error(`${args.action}: ${JSON.stringify(answer.error)}`);
    return answer;
  }
  /** A compare-and-set write over the card as read now; a conflict reads again and retries,
   * as an agent that lost a race does. */
  async function overLatest(id, args) {
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const card = await must({ action: "get", id });
      const answer = await cards({ ...args, id, revision: card.revision });
      if (!answer.error) return answer;
      if (answer.error.code !== "conflict") throw new Error(JSON.stringify(answer.error));
      conflicts += 1;
    }
    throw new Error(`${args.action}: still a conflict after 5 reads`);
  }

  const { columns } = await must({ action: "list" });
  say("columns", { columns: columns.map((c) => c.id) });
  const [todo, doing] = columns;

  let subscribed = null;
  try {
    await client.subscribeResource({ uri: `kanban://boards/${board}` });
    subscribed = true;
  } catch (error) {
    subscribed = String(error.message ?? error);
  }

  const card = await must({
    action: "add",
    title: "Login fails on Safari",
    column: todo.id,
    checklist: ["Reproduce", "Find the commit", "Write a test", "Fix", "Release"],
    labels: ["bug", "safari"],
    assignees: ["alice", "bob"],
    due: "2027-03-01",
    text: "Seen by three customers this morning.",
  });
  say("card", { id: card.id });
  await must({ action: "comment", id: card.id, text: "Reproduced on Safari 17.4." });
  for (const item of card.checklist.slice(0, 3)) {
    await must({ action: "checklist_tick", id: card.id, item: item.id, done: true });
  }
  await must({ action: "move", id: card.id, column: doing.id });

  // Quiet: every notification of its own writes has come, so the next one is someone else's.
  let seen = heard.length;
  for (;;) {
    await sleep(QUIET_MS);
    if (heard.length === seen) break;
    seen = heard.length;
  }
  const readyAt = Date.now();
  say("ready", { heard: heard.length, subscribed });
  if ((await nextLine()) !== "saved") throw new Error("expected 'saved' on stdin");
  const deadline = Date.now() + NOTIFIED_WITHIN_MS;
  let notified = null;
  while (notified === null && Date.now() < deadline) {
    notified = heard.find((h) => h.at > readyAt) ?? null;
    if (notified === null) await sleep(10);
  }
  say("notified", { at: notified && notified.at / 1000, uri: notified && notified.uri });

  for (const item of card.checklist.slice(3)) {
    await must({ action: "checklist_tick", id: card.id, item: item.id, done: true });
  }
  // A mistake, undone from the card's history over the revision read (compare-and-set).
  await overLatest(card.id, { action: "update", title: MISTAKE });
  const { versions } = await must({ action: "history", id: card.id });
  const before = versions.find((v) => v.card && v.card.title !== MISTAKE);
  if (!before) throw new Error("no version before the mistake");
  const restored = await overLatest(card.id, { action: "restore_version", version: before.revision });
  say("done", { card: restored, versions: versions.length, conflicts, restored: before.revision });
  await client.close();
}

main().then(
  () => process.exit(0),
  (error) => {
    say("error", { message: String(error.stack ?? error) });
    process.exit(1);
  },
);
