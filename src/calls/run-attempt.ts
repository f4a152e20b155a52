/**
 * One job of the `calls` queue (v0.5, issue 40; workers/calls.ts): claims attempt `attempt` of a
 * call, makes it (http/attempt.ts), and hands its outcome to the engine as a `call` command
 * (engine/commands/call.ts) — never touching the run itself, never under the run lock.
 *
 * The claim is one statement: `attempts` becomes `attempt` and `claimed_until` now + the attempt's
 * timeout + 30 s, only while the call is pending and this attempt is the next one (or the same
 * attempt, claimed by a worker that died: its claim has run out). The step that applies the
 * outcome releases the claim. So:
 * - a job repeated after its outcome was applied finds nothing to do (`skipped`);
 * - a job whose attempt is under way elsewhere (a stalled job taken back while its first worker
 *   lives) throws `AttemptUnderWay`, and BullMQ tries it again later;
 * - a worker killed mid-attempt: once its claim runs out, the job (taken back by BullMQ, or queued
 *   again by the sweeper) makes the attempt again, with the same `Idempotency-Key`; both outcomes
 *   carry the same command id, so one is applied.
 * A call past its Deadline is skipped (the sweeper expires its slot). An endpoint that does not
 * exist, is not of kind `http` or is disabled fails the call without a request.
 */
import type { Db } from "../db.js";
import { openEndpointRow } from "../endpoints/endpoints.js";
import { callCommandId } from "../engine/commands/call.js";
import type { CallAttemptResult, Command } from "../engine/commands/types.js";
import type { Sealer } from "../engine/sealing/seal.js";
import type { Resolver } from "../outbox/address-guard.js";
import { attemptHttpCall, HTTP_METHODS, type HttpMethod } from "./http/attempt.js";

/** How long past its timeout an attempt holds its claim, ms. */
export const CLAIM_GRACE_MS = 30_000;

export interface CallJobData {
  callId: string;
  runId: string;
  attempt: number;
}

export interface CallAttemptDeps {
  db: Db;
  sealer: Sealer;
  allowPrivate: boolean;
  maxDepth: number;
  /** Enqueues the outcome's command (Queues.enqueue: signed). */
  enqueue(cmd: Command): Promise<unknown>;
  /**
   * Makes the attempt instead of an HTTP request (the testing kit's `Workflow.mockHttp`): handed
   * the endpoint's name and the request as the callee would see it; no endpoint row is needed.
   */
  send?(request: MockedRequest): Promise<CallAttemptResult>;
  /** Runs `fn` within the per-endpoint bound (workers/calls.ts); runs it at once when absent. */
  limit?<T>(endpoint: string, fn: () => Promise<T>): Promise<T>;
  resolve?: Resolver;
}

/** What a stand-in callee is handed (the testing kit): the request as it would go out. */
export interface MockedRequest {
  endpoint: string;
  method: HttpMethod;
  path: string | null;
  /** The JSON body (null for GET and DELETE). */
  body: Record<string, unknown> | null;
  callId: string;
  attempt: number;
}

/** A claimed attempt is under way in another worker: BullMQ tries this job again later. */
export class AttemptUnderWay extends Error {
  override name = "AttemptUnderWay";
}

interface Claimed {
  id: string;
  run_id: string;
  slot_id: string;
  type: string;
  endpoint: string | null;
  method: string | null;
  request: string;
  timeout_ms: number;
  attempts: number;
  deadline: Date | null;
  endpoint_row: Parameters<typeof openEndpointRow>[1] & { previousSecretUntil: Date | null } | null;
}

export type CallAttemptReport =
  | { kind: "skipped"; why: string }
  | { kind: "attempted"; type: string; endpoint: string | null; result: CallAttemptResult; command: Command };

/** Claims and makes one attempt; see the module header. Database and Redis faults propagate (the job is retried). */
export async function runCallAttempt(deps: CallAttemptDeps, job: CallJobData): Promise<CallAttemptReport> {
  const rows = await deps.db.$queryRawUnsafe<Claimed[]>(
    `UPDATE calls c SET attempts = $3, claimed_until = now() + make_interval(secs => (c.timeout_ms + ${CLAIM_GRACE_MS}) / 1000.0)
      WHERE c.run_id = $1::uuid AND c.id = $2::uuid AND c.status = 'pending'
        AND (c.deadline IS NULL OR c.deadline > now())
        AND ((c.attempts = $3 - 1 AND (c.claimed_until IS NULL OR c.claimed_until < now()))
          OR (c.attempts = $3 AND c.claimed_until IS NOT NULL AND c.claimed_until < now()))
      RETURNING c.id, c.run_id, c.slot_id, c.type, c.endpoint, c.method, c.request, c.timeout_ms, c.attempts, c.deadline,
        (SELECT json_build_object('name', e.name, 'kind', e.kind, 'url', e.url, 'secret', e.secret, 'previousSecret', e.previous_secret,
                'previousSecretUntil', e.previous_secret_until, 'disabledAt', e.disabled_at, 'disabledReason', e.disabled_reason, 'headers', e.headers)
           FROM endpoints e WHERE e.name = c.endpoint) AS endpoint_row`,
    job.runId,
    job.callId,
    job.attempt,
  );
  const call = rows[0];
  if (!call) {
    const held = await deps.db.$queryRawUnsafe<{ n: number }[]>(
      `SELECT 1 AS n FROM calls WHERE run_id = $1::uuid AND id = $2::uuid AND status = 'pending' AND attempts = $3 AND claimed_until > now()`,
      job.runId,
      job.callId,
      job.attempt,
    );
    if (held.length > 0) throw new AttemptUnderWay(`attempt ${job.attempt} of call ${job.callId} is under way in another worker`);
    return { kind: "skipped", why: "not pending, past its Deadline, or this attempt was made" };
  }
  const result = await attempt(deps, call, job.attempt);
  const command: Command = { kind: "call", commandId: callCommandId(call.id, job.attempt), runId: call.run_id, callId: call.id, slotId: call.slot_id, attempt: job.attempt, result };
  await deps.enqueue(command);
  return { kind: "attempted", type: call.type, endpoint: call.endpoint, result, command };
}

async function attempt(deps: CallAttemptDeps, call: Claimed, attemptNo: number): Promise<CallAttemptResult> {
  const failNow = (error: string): CallAttemptResult => ({ kind: "fail", status: null, ms: 0, error });
  const row = call.endpoint_row;
  if (call.type !== "http" || !call.endpoint) return failNow(`call ${call.type} is not available in this version of slotflow`);
  const method = (HTTP_METHODS as readonly string[]).includes(call.method ?? "") ? (call.method as HttpMethod) : "POST";
  if (deps.send) {
    const req = JSON.parse(deps.sealer.openText(call.request)) as { path: string | null; input: Record<string, unknown> };
    const body = method === "GET" || method === "DELETE" ? null : req.input;
    return deps.send({ endpoint: call.endpoint, method, path: req.path, body, callId: call.id, attempt: attemptNo });
  }
  if (!row || row.kind !== "http") return failNow(`no http endpoint named "${call.endpoint}"`);
  const endpoint = openEndpointRow(deps.sealer, { ...row, previousSecretUntil: row.previousSecretUntil ? new Date(row.previousSecretUntil) : null, disabledAt: row.disabledAt ? new Date(row.disabledAt as unknown as string) : null });
  if (endpoint.disabledReason) return failNow(`endpoint "${call.endpoint}" is disabled (${endpoint.disabledReason})`);
  const request = JSON.parse(deps.sealer.openText(call.request)) as { path: string | null; input: Record<string, unknown> };
  const run = () =>
    attemptHttpCall({
      endpoint: { name: endpoint.name, url: endpoint.url, headers: endpoint.headers ?? {}, secrets: endpoint.secrets },
      method,
      path: request.path,
      input: request.input,
      timeoutMs: call.timeout_ms,
      callId: call.id,
      attempt: attemptNo,
      allowPrivate: deps.allowPrivate,
      maxDepth: deps.maxDepth,
      resolve: deps.resolve,
    });
  const out = await (deps.limit ? deps.limit(call.endpoint, run) : run());
  if (out.kind === "answer") return { kind: "answer", status: out.status, ms: out.ms, body: out.body };
  if (out.kind === "retry") return { kind: "retry", status: out.status, ms: out.ms, error: out.error, retryAfterMs: out.retryAfterMs };
  return { kind: "fail", status: out.status, ms: out.ms, error: out.error };
}
