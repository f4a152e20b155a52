/**
 * Who answered (interfaces.md v0.4 "Who answered") at the engine, on real PostgreSQL: a raise
 * command's optional `via` decides the slot's `answeredBy` — absent or "principal" for the web
 * (the API, the task page), "slack" for an answer given inside Slack — stored in
 * `slots.answered_by` and in the history's `event` entry; a command with any other `via` is
 * refused by the command schema before it is applied.
 */
import { randomUUID } from "node:crypto";
import test from "ava";
import { createDb, type Db } from "../../src/db.js";
import { applyCommand, type EngineDeps } from "../../src/engine/commands/apply.js";
import { validateCommand, type Command } from "../../src/engine/commands/types.js";
import { deploy } from "../../src/engine/versions/deploy.js";
import { Sealer } from "../../src/engine/sealing/seal.js";
import { showRun } from "../../src/engine/views/views.js";
import { dropDatabase, freshDatabase, sql } from "../helpers/db.js";

const FLOW = `workflow Who(owner: Owner)
entity Owner { name: string }
event Answer(ok: bool)
initial state Open {
  subscribe Answer(ok) as web { Candidates: anyone() }
  subscribe Answer(ok) as chat { Candidates: anyone() }
  subscribe Answer(ok) as api { Candidates: anyone() }
  on api(ok) -> Done
}
terminal state Done
`;

let url = "";
let db: Db;
let deps: EngineDeps;
const sealer = new Sealer("test-seal-key-answered-by");

test.before(async () => {
  url = await freshDatabase("answeredby");
  db = createDb(url, 4);
  deps = { db, sealer, baseUrl: "http://slotflow.test" };
  await deploy(db, FLOW);
});
test.after.always(async () => {
  await db?.$disconnect();
  if (url) await dropDatabase(url);
});

const principal = { id: "slack:T1:U2", email: "u2@example.test", roles: ["approver"] };

function raise(runId: string, alias: string, via?: "principal" | "slack"): Extract<Command, { kind: "raise" }> {
  return { kind: "raise", commandId: randomUUID(), runId, alias, element: null, args: { ok: true }, principal, ...(via ? { via } : {}) };
}

test("a raise records answeredBy by its via: slack, principal, and principal when absent; stored, shown, and in the history", async (t) => {
  const runId = randomUUID();
  const started = await applyCommand(deps, { kind: "start", commandId: randomUUID(), runId, workflow: "Who", version: 1, input: { owner: { name: "Ann" } } });
  t.true(started.outcome.ok);
  for (const [alias, via] of [["chat", "slack"], ["web", "principal"], ["api", undefined]] as const) {
    const cmd = validateCommand(raise(runId, alias, via));
    const applied = await applyCommand(deps, cmd);
    t.true(applied.outcome.ok, alias);
  }
  const rows = await sql<{ alias: string; answered_by: unknown }>(url, "SELECT alias, answered_by FROM slots WHERE run_id = $1 ORDER BY alias", [runId]);
  t.deepEqual(rows, [
    { alias: "api", answered_by: { via: "principal", id: "slack:T1:U2", email: "u2@example.test" } },
    { alias: "chat", answered_by: { via: "slack", id: "slack:T1:U2", email: "u2@example.test" } },
    { alias: "web", answered_by: { via: "principal", id: "slack:T1:U2", email: "u2@example.test" } },
  ]);
  const view = await showRun(db, sealer, runId);
  t.deepEqual(view?.slots.find((s) => s.alias === "chat")?.answeredBy, { via: "slack", id: "slack:T1:U2", email: "u2@example.test" });
  const chat = view?.history.find((h) => h.kind === "event" && (h.data as { alias?: string }).alias === "chat");
  t.deepEqual(chat?.data, { alias: "chat", element: null, via: "raise", principal: "slack:T1:U2", answeredBy: { via: "slack", id: "slack:T1:U2", email: "u2@example.test" } });
});

test("a raise command with any other via is refused by the command schema", (t) => {
  t.throws(() => validateCommand({ ...raise(randomUUID(), "web"), via: "link" }));
  t.throws(() => validateCommand({ ...raise(randomUUID(), "web"), via: 3 }));
  t.notThrows(() => validateCommand(raise(randomUUID(), "web")));
});
