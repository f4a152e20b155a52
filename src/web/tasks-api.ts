/**
 * The task workers' API (v0.5 SDK, issue 41 item 3; interfaces.md "The TypeScript SDK"; docs/sdk.md
 * "Task workers"). Bearer SLOTFLOW_WORKER_TOKEN (any of its comma-separated tokens; outside
 * production, the admin token when none is set). Bodies are JSON objects; undeclared members are refused (422 invalid-body).
 *
 *   POST /api/tasks/poll {types: [string, 1–50], max?: 1–100 (1), waitSeconds?: 0–60 (0)}
 *        200 {tasks: [{id, type, runId, input, attempt, lockToken, lockExpiresAt}]} — claimed, each
 *        held by this caller alone until lockExpiresAt (the call's Timeout); empty when the wait ran
 *        out. Waits on Redis, not PostgreSQL (src/calls/task/waiters.ts).
 *   POST /api/tasks/{id}/heartbeat {lockToken}
 *        200 {lockExpiresAt} — the lease runs the call's Timeout from now
 *   POST /api/tasks/{id}/complete {lockToken, answer}
 *        the answer is checked against the call's `returns` event as a link's body is (422
 *        invalid-body naming what is wrong; nothing changed, the lease runs on), then applied by a
 *        command worker under the run lock: 200 {status: "completed", run}; 202 {status: "accepted"}
 *        when the worker took longer than SLOTFLOW_DEPOSIT_WAIT_MS (it will be applied)
 *   POST /api/tasks/{id}/fail {lockToken, error: string, retry?: boolean}
 *        a failed attempt: 200 {status: "retried" | "failed", run} (retried while attempts remain
 *        and `retry` is not false; then the call fails: `on x.failed`)
 *
 * A process shutting down answers polls 503 unavailable (Retry-After) without claiming; its waiting
 * polls answer an empty list at once.
 *
 * 409 task-lock-lost: the token does not hold the task now — its lease ran out (the task is offered
 * again as the next attempt), it was withdrawn (its slot closed), or this attempt's outcome was
 * already given (a second completion). 401 without a worker token; 503 unavailable when
 * PostgreSQL or Redis cannot be reached. The lock token is a secret: never logged, never echoed.
 */
import Router from "@koa/router";
import type { Context } from "koa";
import { MAX_TASK_ERROR } from "../calls/task/lease.js";
import { claimTasks, extendLease } from "../calls/task/store.js";
import type { TaskWaiters } from "../calls/task/waiters.js";
import { engineClient, lockLost } from "../engine-client/client.js";
import type { Submitted } from "../engine-client/result.js";
import { RefusalCode, RefusalError, refuse } from "../engine/refusals.js";
import type { Runtime } from "../runtime.js";
import { requireWorker } from "../auth/tokens.js";
import { dependency } from "../engine-client/dependency.js";
import { readBody } from "../http/request-body.js";

/** Longest poll wait, seconds (interfaces.md). */
export const MAX_TASK_WAIT_SECONDS = 60;
/** Most tasks one poll may claim. */
export const MAX_TASKS_PER_POLL = 100;
/** Bounds of the bodies (bytes): a completion carries an answer (as an HTTP call's answer: 1 MiB); the rest are small. */
export const ANSWER_BODY_LIMIT = 1024 * 1024;
const SMALL_BODY_LIMIT = 16 * 1024;

const lockLostError = () => new RefusalError(lockLost());

const invalid = (errors: { name: string; problem: string }[]) =>
  new RefusalError(refuse(RefusalCode.InvalidBody, `The body is not as this endpoint takes it: ${errors.map((e) => `${e.name} ${e.problem}`).join("; ")}.`, { errors }));

/** The body as an object with only `allowed` members; 422 naming each problem otherwise. */
function objectBody(body: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw invalid([{ name: "(body)", problem: "must be a JSON object" }]);
  const extra = Object.keys(body).filter((k) => !allowed.includes(k));
  if (extra.length > 0) throw invalid(extra.map((k) => ({ name: k.slice(0, 64), problem: "is not a member of this body" })));
  return body as Record<string, unknown>;
}

function lockTokenOf(body: Record<string, unknown>): string {
  const t = body.lockToken;
  if (typeof t !== "string" || t.length === 0 || t.length > 200) throw invalid([{ name: "lockToken", problem: "is required: the lockToken the poll gave" }]);
  return t;
}

/** `{types, max, waitSeconds}` of a poll, checked. */
export function parsePoll(body: unknown): { types: string[]; max: number; waitSeconds: number } {
  const b = objectBody(body ?? {}, ["types", "max", "waitSeconds"]);
  const errors: { name: string; problem: string }[] = [];
  const types = b.types;
  if (!Array.isArray(types) || types.length === 0 || types.length > 50 || !types.every((t) => typeof t === "string" && t.length > 0 && t.length <= 200)) {
    errors.push({ name: "types", problem: "must be a list of 1 to 50 task types (non-empty strings)" });
  }
  const int = (name: string, v: unknown, min: number, max: number, dflt: number): number => {
    if (v === undefined) return dflt;
    if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max) {
      errors.push({ name, problem: `must be an integer from ${min} to ${max}` });
      return dflt;
    }
    return v;
  };
  const max = int("max", b.max, 1, MAX_TASKS_PER_POLL, 1);
  const waitSeconds = int("waitSeconds", b.waitSeconds, 0, MAX_TASK_WAIT_SECONDS, 0);
  if (errors.length > 0) throw invalid(errors);
  return { types: [...new Set(types as string[])], max, waitSeconds };
}

/** A task attempt's result (the engine client's completeTask / failTask) as the worker's answer. */
function answerResult(ctx: Context, result: Submitted): void {
  if (result.kind === "refused") throw new RefusalError(result.refusal);
  if (result.kind === "accepted") {
    ctx.status = 202;
    ctx.body = { status: "accepted" };
    return;
  }
  ctx.body = { status: result.status, run: result.run };
}

export function tasksRouter(rt: Runtime, waiters: TaskWaiters, isDraining: () => boolean = () => false): Router {
  const router = new Router({ prefix: "/api/tasks", sensitive: true, strict: true });
  const worker = async (ctx: Context, next: () => Promise<unknown>) => {
    requireWorker(ctx, rt.config.workerTokens, rt.config.adminToken, rt.config.nodeEnv === "production");
    await next();
  };
  const client = engineClient(rt);

  router.post("/poll", worker, async (ctx) => {
    const poll = parsePoll(await readBody(ctx, "json", SMALL_BODY_LIMIT, rt.config.limits.maxInputDepth));
    // a process shutting down takes no task: 503 with Retry-After sends the worker elsewhere (or back later)
    if (isDraining()) throw new RefusalError(refuse(RefusalCode.Unavailable, "This process is shutting down; poll again (another process, or this one after it restarts)."));
    // a client that goes away stops the wait (a task it claimed meanwhile comes back when its lease runs out)
    const gone = new AbortController();
    ctx.res.once("close", () => gone.abort());
    const claimed = await waiters.poll(poll.types, poll.waitSeconds * 1000, () => dependency(rt.log, "database", () => claimTasks(rt.db, poll.types, poll.max)), gone.signal);
    ctx.body = {
      tasks: claimed.map((t) => {
        let input: Record<string, unknown> = {};
        try {
          input = (JSON.parse(rt.sealer.openText(t.request)) as { input?: Record<string, unknown> }).input ?? {};
        } catch {
          input = {};
        }
        return { id: t.id, type: t.type, runId: t.runId, input, attempt: t.attempt, lockToken: t.lockToken, lockExpiresAt: t.lockExpiresAt.toISOString() };
      }),
    };
  });

  router.post("/:id/heartbeat", worker, async (ctx) => {
    const body = objectBody(await readBody(ctx, "json", SMALL_BODY_LIMIT, rt.config.limits.maxInputDepth), ["lockToken"]);
    const token = lockTokenOf(body);
    const until = await dependency(rt.log, "database", () => extendLease(rt.db, String(ctx.params.id), token));
    if (!until) throw lockLostError();
    ctx.body = { lockExpiresAt: until.toISOString() };
  });

  router.post("/:id/complete", worker, async (ctx) => {
    const body = objectBody(await readBody(ctx, "json", ANSWER_BODY_LIMIT, rt.config.limits.maxInputDepth), ["lockToken", "answer"]);
    const token = lockTokenOf(body);
    answerResult(ctx, await client.completeTask(String(ctx.params.id), token, body.answer ?? {}));
  });

  router.post("/:id/fail", worker, async (ctx) => {
    const body = objectBody(await readBody(ctx, "json", SMALL_BODY_LIMIT, rt.config.limits.maxInputDepth), ["lockToken", "error", "retry"]);
    const token = lockTokenOf(body);
    const errors: { name: string; problem: string }[] = [];
    if (typeof body.error !== "string" || body.error.length === 0) errors.push({ name: "error", problem: `is required: why the attempt failed (a string; the first ${MAX_TASK_ERROR} characters are kept)` });
    if (body.retry !== undefined && typeof body.retry !== "boolean") errors.push({ name: "retry", problem: "must be true or false" });
    if (errors.length > 0) throw invalid(errors);
    answerResult(ctx, await client.failTask(String(ctx.params.id), token, body.error as string, body.retry !== false));
  });

  return router;
}
