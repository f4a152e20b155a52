/**
 * The task protocol's statements in process (v0.5 SDK, issue 41 item 3; src/calls/task/), on the
 * PARTITIONED schema (test/helpers/partitioned.ts: `tasks` distributed by run_id like every run
 * table), through the engine's own command path:
 *
 * - the step that opens a `call task` writes the task `ready`; a claim takes it once (a second
 *   claim finds nothing), as attempt 1, with a token whose hash alone is stored;
 * - a heartbeat extends the lease; a completion's command routes the run and ends the task;
 * - a lease that ran out is found by the sweeper's probe; its command offers the task again as
 *   attempt 2 (after the backoff: `nextAt`);
 * - the statements on one task name one partition (a router statement);
 * - an answer is checked against the `returns` event as a link's body is (extra members refused);
 * - a fanned-out `call task` makes one task per element;
 * - an idle poll costs one claim for its whole wait, and is woken by the type's Redis message;
 * - SLOTFLOW_WORKER_TOKEN: parsed comma-separated; a placeholder refused in production; the
 *   start-up check names a deployed workflow with a `call task`.
 */
import { randomUUID } from "node:crypto";
import test from "ava";
import { answerCommand, lapsedCommands } from "../../src/calls/task/lease.js";
import { announceTasks, TaskWaiters } from "../../src/calls/task/waiters.js";
import { redisClient } from "../../src/queue/redis.js";
import { eventually } from "../helpers/server.js";
import { claimTasks, extendLease, heldTask, lapsedLeases, lockSha256, lockTokenRunId } from "../../src/calls/task/store.js";
import { checkWorkerToken } from "../../src/cli/startup.js";
import { loadConfig } from "../../src/config.js";
import { createDb, type Db } from "../../src/db.js";
import { applyCommand, type EngineDeps } from "../../src/engine/commands/apply.js";
import { prepareTaskAnswer } from "../../src/engine/commands/prepare.js";
import { Sealer } from "../../src/engine/sealing/seal.js";
import { deploy, taskTypesOf } from "../../src/engine/versions/deploy.js";
import { RefusalCode, RefusalError } from "../../src/engine/refusals.js";
import { requireWorker } from "../../src/auth/tokens.js";
import { parsePoll } from "../../src/web/tasks-api.js";
import { dropDatabase, freshDatabase, sql } from "../helpers/db.js";
import { partitionedTests, partitionRunTables } from "../helpers/partitioned.js";

const FLOW = `workflow Scoring(company: string)
event Scored(score: int, band: string)
initial state Checking {
  call task "store-score" as credit returns Scored {
    Input { company: company }
    Timeout: 10s
    Attempts: 2
  }
  on credit(score, band) {
    when (score >= 700) -> Good
    default -> Manual
  }
  on credit.failed -> Failed
}
terminal state Good
terminal state Manual
terminal state Failed
`;

const FAN = `workflow Fan(names: list<string>)
event Ok(v: int)
initial state S {
  call task "store-fan" as lookups returns Ok for each c in names { Input { name: c } }
  on lookups(v) { when (lookups.done) -> Done }
}
terminal state Done
`;

const PING = `workflow Ping(c: string)
initial state S {
  call task "store-ping" as x { Input { c: c } }
  on x() -> Done
}
terminal state Done
`;

let url = "";
let db: Db;
let deps: EngineDeps;
const sealer = new Sealer("test-seal-key-task-store");

test.before(async () => {
  url = await freshDatabase("taskstore");
  if (!partitionedTests()) await partitionRunTables(url);
  db = createDb(url, 4);
  deps = { db, sealer, baseUrl: "http://slotflow.test" };
  await deploy(db, FLOW);
  await deploy(db, PING);
  await deploy(db, FAN);
});
test.after.always(async () => {
  await db?.$disconnect();
  if (url) await dropDatabase(url);
});

async function start(company: string): Promise<string> {
  const runId = randomUUID();
  const started = await applyCommand(deps, { kind: "start", commandId: randomUUID(), runId, workflow: "Scoring", version: 1, input: { company } });
  if (!started.outcome.ok) throw new Error(JSON.stringify(started.outcome));
  const queued = started.queuedCalls ?? [];
  if (queued.length !== 1 || queued[0]!.task !== "store-score") throw new Error(`expected one task offered: ${JSON.stringify(queued)}`);
  return runId;
}

const runState = async (runId: string) => (await sql<{ state: string }>(url, "SELECT state FROM runs WHERE id = $1", [runId]))[0]!.state;

test.serial("claim once, heartbeat, complete through the command path: the run routes, the task is done", async (t) => {
  const runId = await start("ACME");
  const [row] = await sql<{ status: string; attempt: number }>(url, "SELECT status, attempt FROM tasks WHERE run_id = $1", [runId]);
  t.like(row, { status: "ready", attempt: 0 });
  const { tasks } = await claimTasks(db, ["store-score"], 10);
  t.is(tasks.length, 1);
  const task = tasks[0]!;
  t.like(task, { runId, type: "store-score", attempt: 1 });
  t.is(lockTokenRunId(task.lockToken), runId);
  t.deepEqual((JSON.parse(sealer.openText(task.request)) as { input: unknown }).input, { company: "ACME" });
  const [stored] = await sql<{ lock_sha256: string }>(url, "SELECT lock_sha256 FROM tasks WHERE run_id = $1", [runId]);
  t.is(stored!.lock_sha256, lockSha256(task.id, task.lockToken), "only the hash is stored");
  t.false(JSON.stringify(stored).includes(task.lockToken.split(".")[1]!));
  t.deepEqual((await claimTasks(db, ["store-score"], 10)).tasks, [], "held by one");
  const [calls] = await sql<{ attempts: number }>(url, "SELECT attempts FROM calls WHERE run_id = $1", [runId]);
  t.is(calls!.attempts, 1, "the claim counts the attempt on the call");
  t.truthy(await extendLease(db, task.id, task.lockToken));
  t.is(await extendLease(db, task.id, `${runId}.${"B".repeat(43)}`), null, "another token holds nothing");
  const held = await heldTask(db, task.id, task.lockToken);
  t.truthy(held);
  const applied = await applyCommand(deps, answerCommand(held!, { score: 720, band: "A" }));
  t.true(applied.outcome.ok);
  t.is(await runState(runId), "Good");
  const [done] = await sql<{ status: string; lock_sha256: string | null }>(url, "SELECT status, lock_sha256 FROM tasks WHERE run_id = $1", [runId]);
  t.deepEqual(done, { status: "done", lock_sha256: null });
  t.is(await heldTask(db, task.id, task.lockToken), null, "a second completion finds no lock");
});

test.serial("a lease that ran out: the sweeper's command offers the task again as attempt 2; then attempts spent fail the call", async (t) => {
  const runId = await start("Globex");
  const { tasks } = await claimTasks(db, ["store-score"], 1);
  t.is(tasks.length, 1);
  const later = new Date(Date.now() + 60_000);
  const lapsed = (await lapsedLeases(db, later, 100)).filter((l) => l.runId === runId);
  t.is(lapsed.length, 1);
  const retried = await applyCommand(deps, lapsedCommands(lapsed)[0]!);
  t.like(retried.outcome, { ok: true, status: "retried" });
  t.is(retried.queuedCalls?.[0]?.task, "store-score");
  const [row] = await sql<{ status: string; attempt: number; lock_sha256: string | null }>(url, "SELECT status, attempt, lock_sha256 FROM tasks WHERE run_id = $1", [runId]);
  t.deepEqual(row, { status: "ready", attempt: 1, lock_sha256: null });
  // the old token no longer holds it
  t.is(await heldTask(db, tasks[0]!.id, tasks[0]!.lockToken), null);
  // offered after the backoff: claimable once due (moved to now here)
  await sql(url, "UPDATE tasks SET available_at = now() WHERE run_id = $1", [runId]);
  const again = await claimTasks(db, ["store-score"], 1);
  t.is(again.tasks[0]?.attempt, 2);
  const lapsed2 = (await lapsedLeases(db, later, 100)).filter((l) => l.runId === runId);
  const failed = await applyCommand(deps, lapsedCommands(lapsed2)[0]!);
  t.like(failed.outcome, { ok: true, status: "failed" });
  t.is(await runState(runId), "Failed");
  const [call] = await sql<{ error: string }>(url, "SELECT error FROM calls WHERE run_id = $1", [runId]);
  t.regex(call!.error, /^timeout after 10s: the lease ran out .* \(2 attempts\)$/);
});

test.serial("the statements on one task touch one partition of tasks (router statements)", async (t) => {
  const runId = randomUUID();
  const plan = await sql<{ "QUERY PLAN": unknown }>(
    url,
    `EXPLAIN (FORMAT JSON) UPDATE tasks SET lock_expires_at = now() WHERE run_id = '${runId}'::uuid AND id = '${randomUUID()}'::uuid AND status = 'held' AND lock_sha256 = 'x'`,
  );
  const text = JSON.stringify(plan);
  const partitions = new Set(text.match(/tasks_h\d+/g) ?? []);
  t.is(partitions.size, 1, text);
});

test("SLOTFLOW_WORKER_TOKEN: comma-separated tokens; a placeholder refused in production; parsePoll bounds", (t) => {
  t.deepEqual(loadConfig({}).workerTokens, []);
  t.deepEqual(loadConfig({ SLOTFLOW_WORKER_TOKEN: " new-token , old-token ," }).workerTokens, ["new-token", "old-token"]);
  const prod = { NODE_ENV: "production", SLOTFLOW_ADMIN_TOKEN: "a-real-admin-token", SLOTFLOW_JWT_SECRET: "a-real-jwt-secret", SLOTFLOW_SEAL_KEY: "a-real-seal-key", SLOTFLOW_SESSION_SECRET: "a-real-session-secret" };
  t.throws(() => loadConfig({ ...prod, SLOTFLOW_WORKER_TOKEN: "real-one,change-me" }, { secrets: ["SLOTFLOW_ADMIN_TOKEN"] }), { message: /SLOTFLOW_WORKER_TOKEN holds a known placeholder/ });
  t.deepEqual(parsePoll({ types: ["a", "a", "b"] }), { types: ["a", "b"], max: 1, waitSeconds: 0 });
  t.throws(() => parsePoll({ types: ["a"], waitSeconds: 61 }), { message: /waitSeconds/ });
  t.throws(() => parsePoll({ types: ["a"], max: 0 }), { message: /max/ });
  t.throws(() => parsePoll({ types: "a" }), { message: /types/ });
});

test.serial("the start-up check names a deployed workflow with a call task", async (t) => {
  await t.throwsAsync(checkWorkerToken(url), { message: /workflow "(Fan|Ping|Scoring)" has a `call task`.*SLOTFLOW_WORKER_TOKEN/ });
  const other = await freshDatabase("tasknone");
  try {
    await t.notThrowsAsync(checkWorkerToken(other));
  } finally {
    await dropDatabase(other);
  }
});

test.serial("a deploy with refuseTaskCalls (production, no SLOTFLOW_WORKER_TOKEN) refuses a call task with 500 configuration-fault and deploys nothing; other workflows deploy", async (t) => {
  const other = await freshDatabase("taskdeploy");
  const odb = createDb(other, 2);
  try {
    const refused = await t.throwsAsync(deploy(odb, FAN, "fan.flow", { refuseTaskCalls: true }), { instanceOf: RefusalError });
    t.is(refused.code, RefusalCode.ConfigurationFault);
    t.regex(refused.message, /Workflow Fan has a `call task` \("store-fan"\).*set SLOTFLOW_WORKER_TOKEN/);
    t.deepEqual(await sql(other, "SELECT name FROM workflows WHERE name = 'Fan'"), [], "nothing deployed");
    const plain = `workflow Plain(a: string)
event Ok(ok: bool)
initial state Wait {
  subscribe Ok(ok) as done {
    Title: "Ok?"
  }
  on done(ok) -> End
}
terminal state End
`;
    t.like(await deploy(odb, plain, "plain.flow", { refuseTaskCalls: true }), { name: "Plain", created: true });
    t.deepEqual(taskTypesOf((await db.workflowVersion.findFirstOrThrow({ where: { workflowName: "Fan" } })).compiled as never), ["store-fan"]);
  } finally {
    await odb.$disconnect();
    await dropDatabase(other);
  }
});

test.serial("an idle poll claims once and then waits on Redis; a task offered wakes it to claim again", async (t) => {
  const config = loadConfig({ ...process.env, SLOTFLOW_QUEUE_PREFIX: `sft-tw-${randomUUID().slice(0, 8)}` });
  const waiters = new TaskWaiters(config);
  const publisher = redisClient(config);
  try {
    waiters.subscribe();
    await eventually(async () => waiters.subscribed, 10_000);
    let claims = 0;
    const idle = await waiters.poll(["idle-type"], 1500, async () => {
      claims++;
      return { tasks: [] as string[], nextAt: null };
    });
    t.deepEqual(idle, []);
    t.is(claims, 1, "one claim for a whole idle wait: no query per second while it waits");
    // a poll that finds nothing, then is woken by the type's message, claims again and gets it
    let offered = false;
    let woken = 0;
    const polling = waiters.poll(["wake-type"], 30_000, async () => {
      woken++;
      return { tasks: offered ? ["task"] : [], nextAt: null };
    });
    await eventually(async () => waiters.size === 1, 10_000);
    offered = true;
    await announceTasks(publisher, config.queuePrefix, ["wake-type"]);
    t.deepEqual(await polling, ["task"]);
    t.is(woken, 2);
  } finally {
    waiters.close();
    publisher.disconnect();
  }
});

test("an answer is checked against the returns event as a link body: extra, missing, mistyped refused; none for a call without returns", async (t) => {
  const scoring = { workflow: "Scoring", version: 1, state: "Checking", alias: "credit" };
  t.like(await prepareTaskAnswer(db, scoring, { score: 1, band: "C" }), { ok: true, answer: { score: 1, band: "C" } });
  for (const bad of [{ score: 1, band: "C", extra: true }, { band: "C" }, { score: "high", band: "C" }, [1], "text"]) {
    const r = await prepareTaskAnswer(db, scoring, bad);
    t.like(r, { ok: false, refusal: { code: "invalid-body" } }, JSON.stringify(bad));
  }
  const ping = { workflow: "Ping", version: 1, state: "S", alias: "x" };
  t.like(await prepareTaskAnswer(db, ping, {}), { ok: true, answer: {} });
  t.like(await prepareTaskAnswer(db, ping, { x: 1 }), { ok: false, refusal: { code: "invalid-body" } });
});

test.serial("twenty concurrent polls for one task: exactly one claims it (FOR UPDATE SKIP LOCKED)", async (t) => {
  const runId = await start("Contended");
  const results = await Promise.all(Array.from({ length: 20 }, () => claimTasks(db, ["store-score"], 5)));
  const got = results.flatMap((r) => r.tasks).filter((x) => x.runId === runId);
  t.is(got.length, 1);
  t.is(got[0]!.attempt, 1);
});

test.serial("a fanned-out call task: one task per element, each answered once, the run goes on when all are done", async (t) => {
  const runId = randomUUID();
  const started = await applyCommand(deps, { kind: "start", commandId: randomUUID(), runId, workflow: "Fan", version: 1, input: { names: ["a", "b", "c"] } });
  t.true(started.outcome.ok);
  t.is((started.queuedCalls ?? []).filter((c) => c.task === "store-fan").length, 3);
  const { tasks } = await claimTasks(db, ["store-fan"], 10);
  const mine = tasks.filter((x) => x.runId === runId);
  t.deepEqual(mine.map((x) => (JSON.parse(sealer.openText(x.request)) as { input: { name: string } }).input.name).sort(), ["a", "b", "c"]);
  for (const [i, task] of mine.entries()) {
    t.is(await runState(runId), "S");
    const held = await heldTask(db, task.id, task.lockToken);
    const applied = await applyCommand(deps, answerCommand(held!, { v: i }));
    t.true(applied.outcome.ok, JSON.stringify(applied.outcome));
  }
  t.is(await runState(runId), "Done");
});

test("the task API's token: a worker token; outside production the admin token when none is set; in production never the admin token", (t) => {
  const ctxOf = (token: string) => ({ get: (h: string) => (h.toLowerCase() === "authorization" ? `Bearer ${token}` : ""), headers: { authorization: `Bearer ${token}` }, request: { headers: { authorization: `Bearer ${token}` } } }) as never;
  t.notThrows(() => requireWorker(ctxOf("w2"), ["w1", "w2"], "admin"));
  t.throws(() => requireWorker(ctxOf("admin"), ["w1", "w2"], "admin"), { message: /SLOTFLOW_WORKER_TOKEN/ });
  t.notThrows(() => requireWorker(ctxOf("admin"), [], "admin"));
  t.throws(() => requireWorker(ctxOf("admin"), [], "admin", true), { message: /in production/ });
  t.notThrows(() => requireWorker(ctxOf("w1"), ["w1"], "admin", true));
});
