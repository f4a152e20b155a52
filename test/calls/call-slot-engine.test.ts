/**
 * The call slot's lifecycle in the engine (issue 40 item 2), in process against a real database and
 * a real local HTTP service that verifies every request's Standard Webhooks signature with the
 * `standardwebhooks` library. The workflow's compiled form is the one the language will produce for
 * `call http "bureau" as credit returns Scored { Path, Input, Attempts }` with `on credit.failed`
 * (lang/compiled.ts CompiledCall), built here from a compiled `subscribe` with the same handlers,
 * so these rows hold whatever the front-end does; test/calls/calls-e2e.test.ts drives the same
 * through a deployed `.flow` and a real server.
 *
 * Rows: the call row is written with the step that opens the slot, its request sealed; each attempt
 * is claimed once (a second claim of a held attempt waits; a repeated job finds nothing to do);
 * the answer completes the slot through the command path, exactly once per attempt; extra
 * properties dropped; a retry keeps the Idempotency-Key and is scheduled with the backoff; a final
 * status and a missing parameter fail the call (`on x.failed`); an answer arriving after the run was
 * cancelled is refused as for a closed slot and the call is recorded cancelled.
 */
import test from "ava";
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { Webhook } from "standardwebhooks";
import { AttemptUnderWay, runCallAttempt, type CallAttemptDeps } from "../../src/calls/run-attempt.js";
import { loadConfig } from "../../src/config.js";
import { createDb, type Db } from "../../src/db.js";
import { setEndpoint } from "../../src/endpoints/endpoints.js";
import { applyCommand, type Applied, type EngineDeps } from "../../src/engine/commands/apply.js";
import type { Command } from "../../src/engine/commands/types.js";
import { Sealer } from "../../src/engine/sealing/seal.js";
import { showRun } from "../../src/engine/views/views.js";
import { Workflow } from "../../src/testing/index.js";
import { sql } from "../helpers/db.js";
import { useKitDatabase } from "../helpers/kit.js";

useKitDatabase(test, "call-slot-engine");

const SOURCE = `workflow Check(company: string, mode: string, c: Case)
entity Case {
  note: string?
}
event Scored(score: int, band: string)
event Other()
initial state Checking {
  subscribe Scored(score, band) as credit
  subscribe Other() as other
  enter {
    c.note = "/score/" + mode
    c.note = company
  }
  on credit(score, band) {
    c.note = band
    when (score >= 700) -> Good
    default -> Manual
  }
  on credit.expired -> Failed
  on other.expired -> Expired
}
terminal state Good
terminal state Manual
terminal state Failed
terminal state Expired
`;

/** The compiled `subscribe` made into the call the language compiles (lang/compiled.ts CompiledCall). */
function asCall(compiled: any): any {
  const state = compiled.states.Checking;
  const [pathAssign, companyAssign] = state.enter[0];
  const credit = state.slots.find((s: { alias: string }) => s.alias === "credit");
  credit.kind = "call";
  credit.call = {
    callee: { type: "http", endpoint: "bureau", method: "POST" },
    path: pathAssign.value,
    input: [{ name: "company", value: companyAssign.value }],
    timeout: null,
    attempts: { kind: "literal", type: "int", value: 2, raw: "2", range: pathAssign.range },
  };
  state.slots = state.slots.filter((s: { alias: string }) => s.alias !== "other");
  state.failed = { credit: state.expired.credit };
  state.expired = {};
  state.enter = [];
  return compiled;
}

let db: Db;
let deps: EngineDeps;
let secret = "";
const seen: { path: string; headers: IncomingMessage["headers"]; body: string; verified: boolean }[] = [];
const sockets = new Set<Socket>();
const hits = new Map<string, number>();
const callee = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    let verified = true;
    try {
      new Webhook(secret).verify(body, req.headers as Record<string, string>);
    } catch {
      verified = false;
    }
    const path = req.url ?? "/";
    seen.push({ path, headers: req.headers, body, verified });
    const n = (hits.get(path) ?? 0) + 1;
    hits.set(path, n);
    const json = (status: number, v: unknown, h: Record<string, string> = {}) => res.writeHead(status, { "content-type": "application/json", ...h }).end(JSON.stringify(v));
    if (!verified) return json(401, {});
    const mode = path.split("/").pop();
    if (mode === "good") return json(200, { score: 720, band: "A", extra: "dropped" });
    if (mode === "flaky") return n === 1 ? json(503, {}, { "retry-after": "2" }) : json(200, { score: 600, band: "C" });
    if (mode === "down") return json(503, {});
    if (mode === "refuse") return json(422, { error: "no" });
    if (mode === "missing") return json(200, { band: "B" });
    json(404, {});
  });
});
callee.on("connection", (s) => {
  sockets.add(s);
  s.on("close", () => sockets.delete(s));
});

let ready: Promise<void> | null = null;
const setup = () =>
  (ready ??= (async () => {
    await new Promise<void>((r) => callee.listen(0, "127.0.0.1", () => r()));
    const config = loadConfig(process.env, { secrets: ["SLOTFLOW_SEAL_KEY"] });
    db = createDb(process.env.DATABASE_URL!, 4);
    const sealer = new Sealer(config.sealKeys);
    deps = { db, sealer, baseUrl: "http://slotflow.test" };
    const port = (callee.address() as AddressInfo).port;
    secret = (await setEndpoint(db, sealer, "bureau", "http", new URL(`http://127.0.0.1:${port}/v1`), { Authorization: "Bearer sk_engine_credential" })).secret!;
    await Workflow.deploy(SOURCE);
    const [row] = await sql(process.env.DATABASE_URL!, "SELECT compiled FROM workflow_versions WHERE workflow_name = 'Check'");
    await sql(process.env.DATABASE_URL!, "UPDATE workflow_versions SET compiled = $1 WHERE workflow_name = 'Check'", [JSON.stringify(asCall(row.compiled))]);
  })());

test.after.always(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((r) => callee.close(() => r()));
  await db?.$disconnect();
});

/** Deps of the calls worker whose enqueue applies the command at once and keeps what it applied. */
function workerDeps(applied: { cmd: Command; applied: Applied }[], apply = true): CallAttemptDeps {
  return {
    db,
    sealer: deps.sealer,
    allowPrivate: true,
    maxDepth: 32,
    enqueue: async (cmd) => {
      applied.push({ cmd, applied: apply ? await applyCommand(deps, cmd) : (null as unknown as Applied) });
    },
  };
}

async function startRun(mode: string): Promise<{ runId: string; callId: string }> {
  await setup();
  const wf = await Workflow.deploy(SOURCE);
  const run = await wf.start({ company: "ACME", mode, c: {} });
  const [call] = await sql(process.env.DATABASE_URL!, "SELECT id FROM calls WHERE run_id = $1", [run.id]);
  return { runId: run.id, callId: call.id };
}
const view = async (runId: string) => (await showRun(db, deps.sealer, runId))!;
const callKinds = (v: Awaited<ReturnType<typeof view>>) => v.history.map((h) => h.kind).filter((k) => k.startsWith("call-"));

test.serial("the call row is written with the step that opens the slot; the answer completes the slot once; extra properties dropped", async (t) => {
  const { runId, callId } = await startRun("good");
  const [row] = await sql(process.env.DATABASE_URL!, "SELECT * FROM calls WHERE id = $1", [callId]);
  t.like(row, { status: "pending", attempts: 0, max_attempts: 2, type: "http", endpoint: "bureau", method: "POST", timeout_ms: 30_000 });
  t.false(String(row.request).includes("ACME"), "the request is sealed");
  const before = await view(runId);
  t.like(before.slots.find((s) => s.alias === "credit"), { kind: "call", status: "open", callStatus: "pending", attempts: 0, callee: { type: "http", endpoint: "bureau", method: "POST", path: "/score/good" } });

  const applied: { cmd: Command; applied: Applied }[] = [];
  const report = await runCallAttempt(workerDeps(applied), { callId, runId, attempt: 1 });
  t.is(report.kind, "attempted");
  t.like(applied[0].applied.outcome, { ok: true, status: "completed", run: { state: "Good" } });
  const req = seen.find((s) => s.path === "/v1/score/good")!;
  t.true(req.verified);
  t.is(req.headers["idempotency-key"], callId);
  t.is(req.headers.authorization, "Bearer sk_engine_credential");
  t.deepEqual(JSON.parse(req.body), { company: "ACME" });

  // the same outcome applied again (a worker died before acknowledging): its recorded outcome, nothing twice
  const again = await applyCommand(deps, applied[0].cmd);
  t.like(again.outcome, { ok: true, status: "completed" });
  // the same job again: nothing to do
  t.like(await runCallAttempt(workerDeps([]), { callId, runId, attempt: 1 }), { kind: "skipped" });

  const after = await view(runId);
  t.is(after.state, "Good");
  t.is((after.entities.c as { note: string }).note, "A");
  t.like(after.slots.find((s) => s.alias === "credit"), { kind: "call", status: "completed", callStatus: "answered", attempts: 1, answeredBy: { via: "call", callId } });
  t.deepEqual(callKinds(after), ["call-started", "call-attempt", "call-answered"]);
  t.is(after.history.filter((h) => h.kind === "event").length, 1);
  const [slot] = await sql(process.env.DATABASE_URL!, "SELECT args FROM slots WHERE run_id = $1 AND alias = 'credit'", [runId]);
  t.deepEqual(slot.args, { score: 720, band: "A" });
  t.false(JSON.stringify(after).includes("sk_engine_credential"));
});

test.serial("a held attempt is not made twice: a second claim waits (AttemptUnderWay) until the outcome is applied, then finds nothing to do", async (t) => {
  const { runId, callId } = await startRun("good");
  const held: { cmd: Command; applied: Applied }[] = [];
  // the first worker makes the attempt but its outcome is not applied yet
  await runCallAttempt(workerDeps(held, false), { callId, runId, attempt: 1 });
  await t.throwsAsync(runCallAttempt(workerDeps([]), { callId, runId, attempt: 1 }), { instanceOf: AttemptUnderWay });
  t.like((await applyCommand(deps, held[0].cmd)).outcome, { ok: true, status: "completed" });
  t.like(await runCallAttempt(workerDeps([]), { callId, runId, attempt: 1 }), { kind: "skipped" });
  t.is(seen.filter((s) => s.headers["idempotency-key"] === callId).length, 1);
});

test.serial("a retryable status schedules the next attempt with the same Idempotency-Key; its answer is applied", async (t) => {
  const { runId, callId } = await startRun("flaky");
  const applied: { cmd: Command; applied: Applied }[] = [];
  await runCallAttempt(workerDeps(applied), { callId, runId, attempt: 1 });
  t.like(applied[0].applied.outcome, { ok: true, status: "retried", run: { state: "Checking" } });
  const [next] = applied[0].applied.queuedCalls!;
  t.like(next, { callId, runId, attempt: 2 });
  t.true(next.delayMs >= 2000, "at least the Retry-After");
  const pending = await view(runId);
  const slot = pending.slots.find((s) => s.alias === "credit")!;
  t.like(slot, { status: "open", callStatus: "pending", attempts: 1, lastError: "HTTP 503 from bureau" });
  t.truthy((slot as { nextAttemptAt: unknown }).nextAttemptAt);
  await runCallAttempt(workerDeps(applied), { callId, runId, attempt: 2 });
  t.like(applied[1].applied.outcome, { ok: true, status: "completed", run: { state: "Manual" } });
  const reqs = seen.filter((s) => s.path === "/v1/score/flaky");
  t.is(reqs.length, 2);
  t.true(reqs.every((r) => r.headers["idempotency-key"] === callId && r.verified));
  const after = await view(runId);
  t.deepEqual(callKinds(after), ["call-started", "call-attempt", "call-attempt", "call-answered"]);
  t.like(after.history.find((h) => h.kind === "call-attempt")!.data, { attempt: 1, status: 503, error: "HTTP 503 from bureau" });
});

test.serial("attempts spent, a final status, a missing parameter: the call fails, the slot is failed and on x.failed runs", async (t) => {
  const cases: [string, string, number | null, number][] = [
    ["down", "HTTP 503 from bureau (2 attempts)", 503, 2],
    ["refuse", "HTTP 422 from bureau", 422, 1],
    ["missing", 'invalid-response: "score"', 200, 1],
  ];
  for (const [mode, error, status, attempts] of cases) {
    const { runId, callId } = await startRun(mode);
    const applied: { cmd: Command; applied: Applied }[] = [];
    for (let attempt = 1; attempt <= attempts; attempt++) await runCallAttempt(workerDeps(applied), { callId, runId, attempt });
    t.like(applied.at(-1)!.applied.outcome, { ok: true, status: "failed", run: { state: "Failed" } }, mode);
    const after = await view(runId);
    const slot = after.slots.find((s) => s.alias === "credit") as Record<string, unknown>;
    t.like(slot, { kind: "call", status: "failed", callStatus: "failed", httpStatus: status, attempts }, mode);
    t.true(String(slot.error).startsWith(error), `${mode}: ${String(slot.error)}`);
    t.is(callKinds(after).at(-1), "call-failed", mode);
    const [row] = await sql(process.env.DATABASE_URL!, "SELECT status, error, claimed_until FROM calls WHERE id = $1", [callId]);
    t.like(row, { status: "failed", claimed_until: null }, mode);
  }
});

test.serial("an answer arriving after the run was cancelled is refused as for a closed slot; the call is recorded cancelled", async (t) => {
  const { runId, callId } = await startRun("good");
  const held: { cmd: Command; applied: Applied }[] = [];
  await runCallAttempt(workerDeps(held, false), { callId, runId, attempt: 1 });
  const cancelled = await applyCommand(deps, { kind: "cancel", commandId: randomUUID(), runId, reason: "test", actor: "operator" });
  t.like(cancelled, { outcome: { ok: true, status: "cancelled" }, cancelledCalls: 1 });
  const late = await applyCommand(deps, held[0].cmd);
  t.like(late.outcome, { ok: false, refusal: { code: "slot-closed" } });
  const [row] = await sql(process.env.DATABASE_URL!, "SELECT status FROM calls WHERE id = $1", [callId]);
  t.is(row.status, "cancelled");
  const after = await view(runId);
  t.like(after.slots.find((s) => s.alias === "credit"), { status: "cancelled", callStatus: "cancelled" });
  t.true(callKinds(after).includes("call-cancelled"));
  t.false(callKinds(after).includes("call-answered"));
});
