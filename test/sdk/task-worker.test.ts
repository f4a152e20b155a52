/**
 * Task workers (v0.5 SDK, issue 41 item 3; docs/sdk.md "Task workers"): `call task "type"` served
 * by `slotflow/worker`'s TaskWorker over the task protocol, against ONE real `slotflow serve` (real
 * PostgreSQL and Redis). Each test uses its own task type, so the tests of the file never take
 * each other's tasks.
 *
 * - a TaskWorker's answer routes the run (`on x(…)`), checked against the `returns` event;
 * - a second completion of the same task is 409 task-lock-lost, and the answer is applied once;
 * - `TaskError(…, {retry: false})` fails the call at once: `on x.failed` with `x.error`;
 * - a worker killed (SIGKILL) mid-task: after the lease (the call's Timeout) the task is offered
 *   again as attempt 2, another worker answers it, and the answer is applied once;
 * - `stop()` lets a task the worker holds finish (its answer applied) before it resolves;
 * - a task withdrawn (its run cancelled): the next heartbeat rejects with TaskLockLost and
 *   `ctx.signal` is aborted; the late answer is refused (409, told to onError);
 * - a poll with waitSeconds and no task answers an empty list; a poll without a worker token is 401.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import test from "ava";
import { TaskError, TaskLockLost, TaskWorker } from "../../src/sdk/worker.js";
import { showRun, startRun, type RunView } from "../helpers/callback.js";
import { dropDatabase } from "../helpers/db.js";
import { ADMIN_TOKEN, eventually, request, ROOT, startCluster, type Cluster } from "../helpers/server.js";

const WORKER_TOKEN = "test-worker-token-2";
let cluster: Cluster;

/** A workflow calling task type `type`: Good / Manual on the answer, Failed on `credit.failed`. */
const flow = (name: string, type: string, timeout: string, attempts: number) => `workflow ${name}(company: string)
entity Case {
  note: string?
}
event Scored(score: int, band: string)
initial state Checking {
  call task "${type}" as credit returns Scored {
    Input { company: company }
    Timeout: ${timeout}
    Attempts: ${attempts}
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

const FLOWS = [
  flow("Basic", "score-basic", "30s", 3),
  flow("Twice", "score-twice", "30s", 3),
  flow("Fatal", "score-fatal", "30s", 3),
  flow("Crash", "score-crash", "2s", 3),
  flow("Graceful", "score-graceful", "30s", 3),
  flow("Withdrawn", "score-withdrawn", "30s", 3),
];

test.before(async () => {
  // two tokens: rotation (the worker uses the second)
  cluster = await startCluster("sdk-tasks", { env: { SLOTFLOW_WORKER_TOKEN: `test-worker-token-1, ${WORKER_TOKEN}` } });
  for (const source of FLOWS) {
    const res = await request(cluster.baseUrl, "POST", "/api/workflows", { token: ADMIN_TOKEN, text: source });
    if (res.status !== 201) throw new Error(res.text);
  }
});

test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

const tasks = (path: string, json: unknown, token = WORKER_TOKEN) => request(cluster.baseUrl, "POST", `/api/tasks${path}`, { token, json });

async function ended(runId: string) {
  return eventually(async () => {
    const run = await showRun(cluster.baseUrl, runId);
    return run.status !== "running" ? run : null;
  }, 60_000);
}

const kinds = (run: RunView, kind: string) => run.history.filter((h) => h.kind === kind);

test.serial("a TaskWorker's answer routes the run; the task was held by one worker with the call's input", async (t) => {
  const runId = await startRun(cluster.baseUrl, "Basic", { company: "ACME" });
  const seen: { input: unknown; attempt: number; runId: string }[] = [];
  const worker = new TaskWorker({
    url: cluster.baseUrl,
    token: WORKER_TOKEN,
    concurrency: 2,
    waitSeconds: 5,
    tasks: {
      "score-basic": async (input, ctx) => {
        seen.push({ input, attempt: ctx.attempt, runId: ctx.runId });
        await ctx.heartbeat();
        return { score: 720, band: "A" };
      },
    },
  });
  const running = worker.run();
  const run = await ended(runId);
  await worker.stop();
  await running;
  t.is(run.state, "Good");
  t.deepEqual(seen, [{ input: { company: "ACME" }, attempt: 1, runId }]);
  const slot = run.slots.find((s: { alias: string }) => s.alias === "credit") as Record<string, unknown>;
  t.like(slot, { kind: "call", callee: { type: "task", task: "score-basic" }, attempts: 1 });
  t.is(kinds(run, "call-answered").length, 1);
});

test.serial("a second completion is 409 task-lock-lost; an answer not of the returns event is 422; the answer is applied once", async (t) => {
  const runId = await startRun(cluster.baseUrl, "Twice", { company: "Initech" });
  const polled = await eventually(async () => {
    const r = await tasks("/poll", { types: ["score-twice"], max: 5, waitSeconds: 5 });
    return r.status === 200 && r.body.tasks.length > 0 ? r.body.tasks : null;
  }, 30_000);
  t.is(polled.length, 1);
  const task = polled[0];
  t.like(task, { type: "score-twice", runId, input: { company: "Initech" }, attempt: 1 });
  t.regex(task.lockToken, /^[0-9a-f-]{36}\./);
  t.false(cluster.output().some((l) => l.includes(task.lockToken)), "the lock token is never logged");
  // held: another poll does not get it
  const other = await tasks("/poll", { types: ["score-twice"], max: 5, waitSeconds: 0 });
  t.deepEqual(other.body, { tasks: [] });
  const wrong = await tasks(`/${task.id}/complete`, { lockToken: task.lockToken, answer: { score: 500, band: "C", extra: true } });
  t.is(wrong.status, 422, wrong.text);
  t.is(wrong.body.code, "invalid-body");
  const stranger = await tasks(`/${task.id}/complete`, { lockToken: `${runId}.${"A".repeat(43)}`, answer: { score: 500, band: "C" } });
  t.is(stranger.status, 409);
  t.is(stranger.body.code, "task-lock-lost");
  const first = await tasks(`/${task.id}/complete`, { lockToken: task.lockToken, answer: { score: 500, band: "C" } });
  // 202 when the command worker is slower than SLOTFLOW_DEPOSIT_WAIT_MS (a loaded machine): applied later
  t.true(first.status === 200 || first.status === 202, first.text);
  t.is(first.body.status, first.status === 200 ? "completed" : "accepted");
  const run = await ended(runId);
  const second = await tasks(`/${task.id}/complete`, { lockToken: task.lockToken, answer: { score: 900, band: "A" } });
  t.is(second.status, 409, second.text);
  t.is(second.body.code, "task-lock-lost");
  const beat = await tasks(`/${task.id}/heartbeat`, { lockToken: task.lockToken });
  t.is(beat.status, 409);
  t.is(run.state, "Manual");
  t.is(kinds(run, "call-answered").length, 1);
});

test.serial("TaskError with retry: false fails the call at once: on x.failed runs after one attempt", async (t) => {
  const runId = await startRun(cluster.baseUrl, "Fatal", { company: "Hooli" });
  let calls = 0;
  const worker = new TaskWorker({
    url: cluster.baseUrl,
    token: WORKER_TOKEN,
    waitSeconds: 5,
    tasks: {
      "score-fatal": async () => {
        calls++;
        throw new TaskError("company unknown to the bureau", { retry: false });
      },
    },
  });
  const running = worker.run();
  const run = await ended(runId);
  await worker.stop();
  await running;
  t.is(run.state, "Failed");
  t.is(calls, 1);
  const slot = run.slots.find((s: { alias: string }) => s.alias === "credit") as Record<string, unknown>;
  t.like(slot, { status: "failed", callStatus: "failed", attempts: 1, error: "company unknown to the bureau" });
});

test.serial("a worker killed mid-task: after the lease another worker gets it as attempt 2, and its answer is applied once", async (t) => {
  const runId = await startRun(cluster.baseUrl, "Crash", { company: "Globex" });
  const child = spawn(process.execPath, [join(ROOT, "test", "sdk", "fixtures", "hanging-worker.mjs")], {
    cwd: ROOT,
    env: { ...process.env, SLOTFLOW_URL: cluster.baseUrl, SLOTFLOW_WORKER_TOKEN: WORKER_TOKEN, TASK_TYPE: "score-crash" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr.on("data", (c: Buffer) => (out += c.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    await eventually(async () => /took \S+ attempt 1/.test(out), 30_000).catch(() => {
      throw new Error(`the hanging worker took no task: ${out}`);
    });
  } finally {
    child.kill("SIGKILL");
  }
  await exited;
  const attempts: number[] = [];
  const worker = new TaskWorker({
    url: cluster.baseUrl,
    token: WORKER_TOKEN,
    waitSeconds: 5,
    tasks: {
      "score-crash": async (_input, ctx) => {
        attempts.push(ctx.attempt);
        return { score: 800, band: "A" };
      },
    },
  });
  const running = worker.run();
  const run = await ended(runId);
  await worker.stop();
  await running;
  t.is(run.state, "Good");
  t.deepEqual(attempts, [2]);
  const tried = kinds(run, "call-attempt").map((h) => ({ attempt: h.data.attempt, error: h.data.error === null ? null : String(h.data.error).slice(0, 12) }));
  t.deepEqual(tried, [
    { attempt: 1, error: "timeout afte" },
    { attempt: 2, error: null },
  ]);
  t.is(kinds(run, "call-answered").length, 1);
});

test.serial("a poll with waitSeconds and no task answers an empty list; the task API needs a worker token", async (t) => {
  const idle = await tasks("/poll", { types: ["nobody-serves-this"], max: 3, waitSeconds: 1 });
  t.is(idle.status, 200, idle.text);
  t.deepEqual(idle.body, { tasks: [] });
  const admin = await tasks("/poll", { types: ["x"], waitSeconds: 0 }, ADMIN_TOKEN);
  t.is(admin.status, 401, "with SLOTFLOW_WORKER_TOKEN set, the admin token is not a worker's");
  const bad = await tasks("/poll", { types: [], waitSeconds: 99, extra: 1 });
  t.is(bad.status, 422);
  t.deepEqual(bad.body.errors.map((e: { name: string }) => e.name).sort(), ["extra"]);
});

test.serial("stop() lets the task a worker holds finish: its answer is applied before stop resolves", async (t) => {
  const runId = await startRun(cluster.baseUrl, "Graceful", { company: "Umbrella" });
  let release: () => void = () => undefined;
  const released = new Promise<void>((r) => (release = r));
  let started = false;
  const worker = new TaskWorker({
    url: cluster.baseUrl,
    token: WORKER_TOKEN,
    waitSeconds: 5,
    tasks: {
      "score-graceful": async () => {
        started = true;
        await released;
        return { score: 710, band: "B" };
      },
    },
  });
  const running = worker.run();
  await eventually(async () => started, 30_000);
  let stopped = false;
  const stopping = worker.stop().then(() => (stopped = true));
  t.is(worker.holding, 1);
  t.false(stopped, "stop waits for the task it holds");
  release();
  await stopping;
  await running;
  t.is(worker.holding, 0);
  const run = await ended(runId);
  t.is(run.state, "Good");
});

test.serial("a task withdrawn (its run cancelled): the heartbeat rejects with TaskLockLost, ctx.signal is aborted, the late answer is refused", async (t) => {
  const runId = await startRun(cluster.baseUrl, "Withdrawn", { company: "Cyberdyne" });
  let started = false;
  let lost: unknown = null;
  let aborted = false;
  const errors: Error[] = [];
  const worker = new TaskWorker({
    url: cluster.baseUrl,
    token: WORKER_TOKEN,
    waitSeconds: 5,
    onError: (err) => errors.push(err),
    tasks: {
      "score-withdrawn": async (_input, ctx) => {
        started = true;
        // heartbeats until the task is withdrawn (recorded facts only: no sleep-and-hope)
        for (;;) {
          try {
            await ctx.heartbeat();
          } catch (err) {
            lost = err;
            break;
          }
          await new Promise((r) => setTimeout(r, 100));
        }
        aborted = ctx.signal.aborted;
        return { score: 700, band: "A" };
      },
    },
  });
  const running = worker.run();
  await eventually(async () => started, 30_000);
  const cancel = await request(cluster.baseUrl, "POST", `/api/runs/${runId}/cancel`, { token: ADMIN_TOKEN, json: { reason: "no longer needed" } });
  t.true(cancel.status === 200 || cancel.status === 202, cancel.text);
  await eventually(async () => lost !== null, 30_000);
  await eventually(async () => worker.holding === 0, 30_000);
  await worker.stop();
  await running;
  t.true(lost instanceof TaskLockLost);
  t.true(aborted);
  t.true(errors.some((e) => /task-lock-lost/.test(e.message)), errors.map((e) => e.message).join("; "));
  const run = await showRun(cluster.baseUrl, runId);
  t.is(run.status, "cancelled");
  t.is(kinds(run, "call-answered").length, 0);
});
