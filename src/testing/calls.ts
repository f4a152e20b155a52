/**
 * Calls in the testing kit (v0.5, issue 40; interfaces.md "The testing kit"): the kit runs without
 * the outside services a workflow calls, so `Workflow.mockHttp(endpoint, handler)` stands in for
 * an `http` endpoint. After each command the kit applies, the attempts it queued are made at once
 * through the same claim and the same `call` command as the calls worker (src/calls/run-attempt.ts),
 * with the handler's reply judged as an HTTP reply would be (calls/http/attempt.ts `judgeStatus`);
 * retries wait for `run.advanceTime`, which moves their due times with the deadlines. A call to an
 * endpoint without a stand-in stays pending (`run.calls()` shows it).
 */
import { judgeStatus } from "../calls/http/attempt.js";
import { runCallAttempt, type MockedRequest } from "../calls/run-attempt.js";
import type { Db } from "../db.js";
import { applyCommand, type Applied, type EngineDeps } from "../engine/commands/apply.js";
import type { CallAttemptResult, Command } from "../engine/commands/types.js";
import { forgetPending } from "../engine/commands/pending.js";

/** What a stand-in callee answers: a status (default 200), a JSON body, headers (`retry-after`); or a failure of the connection. */
export type MockHttpReply = { status?: number; body?: unknown; headers?: Record<string, string> } | { error: "timeout" | "connection" };
export type MockHttpHandler = (request: MockedRequest) => MockHttpReply | Promise<MockHttpReply>;

const mocks = new Map<string, MockHttpHandler>();

/** Sets (or, with null, removes) the stand-in of endpoint `name`. */
export function setMock(name: string, handler: MockHttpHandler | null): void {
  if (handler) mocks.set(name, handler);
  else mocks.delete(name);
}

/** The reply of a stand-in as the outcome of an attempt. */
async function mockedAttempt(request: MockedRequest): Promise<CallAttemptResult> {
  const handler = mocks.get(request.endpoint);
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  let reply: MockHttpReply;
  try {
    reply = await handler!(request);
  } catch (err) {
    return { kind: "retry", status: null, ms: ms(), error: `connection error: the stand-in threw (${err instanceof Error ? err.message : String(err)})`, retryAfterMs: null };
  }
  if ("error" in reply) return { kind: "retry", status: null, ms: ms(), error: reply.error === "timeout" ? "timeout (stand-in)" : "connection error (stand-in)", retryAfterMs: null };
  const status = reply.status ?? 200;
  const headers = Object.fromEntries(Object.entries(reply.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  const judged = judgeStatus(status, request.endpoint, headers["retry-after"] ?? null);
  if (judged) return judged.kind === "retry" ? { kind: "retry", status, ms: ms(), error: judged.error, retryAfterMs: judged.retryAfterMs } : { kind: "fail", status, ms: ms(), error: judged.error };
  if (reply.body === undefined || reply.body === null) return { kind: "answer", status, ms: ms(), body: null };
  // as it would cross the wire
  const body = JSON.parse(JSON.stringify(reply.body)) as unknown;
  if (typeof body !== "object" || body === null || Array.isArray(body)) return { kind: "fail", status, ms: ms(), error: "invalid-response: not a JSON object" };
  return { kind: "answer", status, ms: ms(), body: body as Record<string, unknown> };
}

/**
 * Applies `cmd` like the worker, then makes at once the call attempts it queued without delay
 * whose endpoint has a stand-in (each outcome applied the same way, in turn).
 */
export async function applyWithCalls(deps: EngineDeps, cmd: Command): Promise<Applied> {
  const applied = await applyCommand(deps, cmd);
  // a `call task` (issue 41 item 3) is served by task workers, not by a stand-in: it stays pending
  await makeAttempts(deps, (applied.queuedCalls ?? []).filter((c) => c.delayMs === 0 && c.task === undefined));
  // child runs (v0.5): the commands the step caused for other runs (a child's end answering its
  // parent, a parent's closed slot cancelling its child) are applied at once, in turn, as the
  // worker would; child runs started by a kit run are kit runs too
  for (const other of applied.queuedCommands ?? []) {
    await applyWithCalls(deps, other);
    await forgetPending(deps.db, other);
  }
  return applied;
}

/** Makes the given attempts through the claim of the calls worker, with the stand-ins; resolves how many it made. */
export async function makeAttempts(deps: EngineDeps, jobs: { callId: string; runId: string; attempt: number }[]): Promise<number> {
  let made = 0;
  for (const job of jobs) {
    const [row] = await deps.db.$queryRawUnsafe<{ endpoint: string | null }[]>(`SELECT endpoint FROM calls WHERE run_id = $1::uuid AND id = $2::uuid`, job.runId, job.callId);
    if (!row?.endpoint || !mocks.has(row.endpoint)) continue;
    const report = await runCallAttempt(
      { db: deps.db, sealer: deps.sealer, allowPrivate: false, maxDepth: deps.limits?.maxInputDepth ?? 32, send: mockedAttempt, enqueue: (c) => applyWithCalls(deps, c) },
      job,
    );
    if (report.kind === "attempted") made++;
  }
  return made;
}

/**
 * Attempts of `runId`'s pending calls due at `now` (the kit's clock: `advanceTime` moved them).
 * `advanceTime` passes one instant per round to this, to the expiries and to its "what is due
 * next" query, so a due time is either handled in the round or waited for — never neither.
 */
export async function dueAttempts(db: Db, runId: string, now: Date): Promise<{ callId: string; runId: string; attempt: number }[]> {
  const rows = await db.$queryRawUnsafe<{ id: string; attempts: number }[]>(
    `SELECT id, attempts FROM calls WHERE run_id = $1::uuid AND status = 'pending' AND type <> 'task' AND claimed_until IS NULL AND next_attempt_at <= $2 ORDER BY next_attempt_at`,
    runId,
    now,
  );
  return rows.map((r) => ({ callId: r.id, runId, attempt: r.attempts + 1 }));
}

/** One call of a run as `run.calls()` lists it. */
export interface TestCall {
  alias: string;
  element: number | null;
  callId: string;
  type: string;
  endpoint: string | null;
  method: string | null;
  status: string;
  attempts: { attempt: number; status: number | null; ms: number; error: string | null }[];
  error: string | null;
}

/** The calls of `runId` with their attempts (from the history), in the order they started. */
export async function listCalls(db: Db, runId: string): Promise<TestCall[]> {
  const calls = await db.call.findMany({ where: { runId }, orderBy: { createdAt: "asc" } });
  const history = await db.historyEntry.findMany({ where: { runId, kind: "call-attempt" }, orderBy: { id: "asc" } });
  return calls.map((c) => ({
    alias: c.alias,
    element: c.element,
    callId: c.id,
    type: c.type,
    endpoint: c.endpoint,
    method: c.method,
    status: c.status,
    attempts: history
      .map((h) => h.data as { callId?: string; attempt: number; status: number | null; ms: number; error: string | null })
      .filter((d) => d.callId === c.id)
      .map((d) => ({ attempt: d.attempt, status: d.status, ms: d.ms, error: d.error })),
    error: c.error,
  }));
}
