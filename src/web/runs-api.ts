/**
 * Runs for operators over HTTP (issue 23; interfaces.md "Runs for operators"), admin bearer token:
 *
 *   GET  /api/runs?workflow=&version=&status=&state=&waiting=&parent=&createdAfter=&createdBefore=&limit=&cursor=
 *        200 `{runs: [{id, workflow, version, state, status, createdAt, updatedAt, endedAt,
 *        waiting: [{alias, element, status, openedAt, deadline, link}]}], nextCursor}`
 *        (operators/runs-list.ts; `openedAt`: since when an open slot waits, null while waiting);
 *        400 invalid-query naming the parameter.
 *   POST /api/runs/{id}/cancel  body `{"reason": "…"}` (1–500 characters)
 *        200 `{id, status: "cancelled"}`, applied before answering by a worker under the run lock
 *        (engine/commands/cancel.ts); 422 invalid-body without a reason, or with a member other
 *        than `reason` (named in `errors`, as every admin body refuses undeclared members); 404 not-found; 409
 *        run-finished when the run already ended; 202 `{id, status: "accepted"}` when the worker
 *        did not answer in time (it will be applied; `GET /api/runs/{id}` shows it).
 *
 * The cancel itself is `submitCancel`, shared with the console (web/console), which passes its
 * own actor.
 */
import { randomUUID } from "node:crypto";
import Router from "@koa/router";
import type { Context } from "koa";
import { CANCEL_REASON_MAX, type Outcome } from "../engine/commands/types.js";
import { RefusalCode, RefusalError, refuse } from "../engine/refusals.js";
import { listRuns, parseRunsQuery } from "../operators/runs-list.js";
import type { Runtime } from "../runtime.js";
import { requireAdmin } from "./auth.js";
import { dependency } from "../engine-client/dependency.js";
import { readBody } from "./request-body.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A problem with one member of a body, as `errors` lists it (docs/http-api.md). */
interface BodyProblem {
  name: string;
  problem: string;
}

const REASON_RULE = `a string of 1 to ${CANCEL_REASON_MAX} characters`;
const showMember = (k: string) => `"${k.length > 64 ? `${k.slice(0, 61)}…` : k}"`;

/** The reason if `value` is one (a string of 1–500 characters after trimming, no U+0000), else null. */
function reasonOf(value: unknown): string | null {
  const reason = typeof value === "string" ? value.trim() : "";
  return !reason || reason.length > CANCEL_REASON_MAX || reason.includes("\u0000") ? null : reason;
}

/**
 * Checks an operator's reason: a string of 1–500 characters after trimming; throws 422
 * invalid-body otherwise (interfaces.md "Runs for operators").
 */
export function checkReason(value: unknown): string {
  const reason = reasonOf(value);
  if (reason === null) throw invalidCancel(`Give a reason: ${REASON_RULE}.`, [reasonProblem(value)]);
  return reason;
}

/**
 * Checks a `POST /api/runs/{id}/cancel` body `{"reason": "…"}` and returns the reason. Refuses
 * 422 invalid-body, with `expects` and `errors` (`{name, problem}` for each member at fault), when
 * the body is not an object, the reason is missing or not a string of 1–500 characters
 * (interfaces.md "Runs for operators"), or the body has a member other than `reason` — as every
 * admin body refuses undeclared members (a run's input, an endpoint's `{kind, url}`;
 * docs/http-api.md "Request bodies"), `__proto__` included.
 */
export function checkCancelBody(body: unknown): string {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return checkReason(undefined);
  const unknown = Object.keys(body).filter((k) => k !== "reason");
  if (unknown.length === 0) return checkReason((body as { reason?: unknown }).reason);
  const value = (body as { reason?: unknown }).reason;
  const problems = unknown.map((name) => ({ name, problem: 'is not a member of a cancel body (it takes "reason" only)' }));
  if (reasonOf(value) === null) problems.push(reasonProblem(value));
  const members = `${unknown.length === 1 ? "member" : "members"} ${unknown.map(showMember).join(", ")}`;
  throw invalidCancel(`Unknown ${members}: a cancel takes only "reason" (${REASON_RULE}).`, problems);
}

function reasonProblem(value: unknown): BodyProblem {
  return { name: "reason", problem: value === undefined ? `is required: ${REASON_RULE}` : `must be ${REASON_RULE} (after trimming)` };
}

function invalidCancel(detail: string, errors: BodyProblem[]): RefusalError {
  return new RefusalError(refuse(RefusalCode.InvalidBody, detail, { expects: { reason: "string" }, errors }));
}

/** Submits the cancel command and waits for its outcome ("accepted" when the worker is late). */
export async function submitCancel(rt: Runtime, runId: string, reason: string, actor: string): Promise<Outcome | "accepted"> {
  if (!UUID.test(runId)) throw new RefusalError(refuse(RefusalCode.NotFound, "No run has this id."));
  const cmd = { kind: "cancel" as const, commandId: randomUUID(), runId: runId.toLowerCase(), reason, actor };
  const outcome = await dependency(rt.log, "redis", () => rt.queues.submit(cmd));
  if (outcome !== "accepted" && outcome.ok) rt.log.info({ runId: cmd.runId, actor }, "run cancelled");
  return outcome;
}

export function runsApiRouter(rt: Runtime): Router {
  const router = new Router({ prefix: "/api", sensitive: true, strict: true });
  const admin = async (ctx: Context, next: () => Promise<unknown>) => {
    requireAdmin(ctx, rt.config.adminToken);
    await next();
  };

  router.get("/runs", admin, async (ctx) => {
    const filter = parseRunsQuery(ctx.query);
    const page = await dependency(rt.log, "database", () => listRuns(rt.db, filter));
    ctx.body = page;
  });

  router.post("/runs/:id/cancel", admin, async (ctx) => {
    const body = await readBody(ctx, "json", 16 * 1024, rt.config.limits.maxInputDepth);
    const reason = checkCancelBody(body);
    const outcome = await submitCancel(rt, ctx.params.id, reason, "admin-token (api)");
    if (outcome === "accepted") {
      ctx.status = 202;
      ctx.body = { id: ctx.params.id.toLowerCase(), status: "accepted" };
      return;
    }
    if (!outcome.ok) throw new RefusalError(outcome.refusal);
    ctx.body = { id: outcome.run.id, status: "cancelled" };
  });

  return router;
}
