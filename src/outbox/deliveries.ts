/**
 * Delivery of `send webhook` / `send message` (issue 18 items 3–5): the one delivery lifecycle —
 * claim, attempt, retry, withdraw — for every channel (issue 39 item 2). The attempt is sent by the
 * channel of the endpoint's kind (src/channels/registry.ts); this module records it. It writes
 * `delivery_attempts`, and `deliveries.status` at the attempt and on redelivery; the step's and the
 * cancel's transitions are engine/sql/delivery-status.ts's (withdraw, dead links) and
 * engine/sql/dead-at-commit.ts's (written failed at commit).
 *
 *   pending --2xx--> sent
 *   pending --non-2xx, network error, refused address--> pending (next attempt on the schedule)
 *   pending --last attempt failed--> failed ("gave up after N attempts")
 *   pending --a `send message` whose every link is no longer live--> failed ("link burned" …;
 *            never retried), at once by the step that ended the link (engine/sql/delivery-status.ts endDeliveriesOfDeadLinks),
 *            else at the attempt
 *   pending --no such endpoint / endpoint disabled / statement does not fit the endpoint--> failed
 *   pending --410 Gone--> failed, and the endpoint is disabled (endpoints.ts)
 *   pending --an operator cancels the run (issue 23)--> failed ("withdrawn: the run was cancelled";
 *            payload dropped, so a redelivery is refused with 409)
 *   sent|failed --redeliver (a message: while its link is live)--> pending (same sealed payload,
 *            same webhook-id)
 *
 * A `send webhook` is data (v0.5 "Answers people can trust", issue 38): it is delivered, retried
 * and redeliverable whatever the state of any link it carries — the link rules above apply to
 * `send message` only (and `send email`, engine/sql/dead-at-commit.ts), whose text hands a person a
 * link to follow.
 *
 * A delivery row is written in the step's transaction (engine/sql/deliveries-write.ts), so it
 * exists only if the step committed; the worker enqueues its first attempt after commit, and the
 * sweeper re-enqueues any whose due attempt was not taken (a worker that died). An attempt claims
 * the row (issue 22: one UPDATE moves `next_attempt_at` past the attempt; `attemptDelivery`), so two
 * jobs never send one attempt, and no row lock is held while it sends.
 * Delivery is at least once: a crash between the endpoint's 2xx and the mark sends again, once the
 * claim lapsed, with the same `webhook-id` (receivers de-duplicate on it).
 *
 * Retries (SLOTFLOW_DELIVERY_RETRY_MS; the Standard Webhooks example schedule by default) with
 * ±10 % jitter; a 429 or 503 with `Retry-After` waits at least that long. No redirect is followed
 * (a 3xx is a failure). Only 2xx succeeds.
 *
 * Never leaks: the payload is sealed; the API and logs see endpoint name, attempt, status code,
 * latency and the next attempt; errors are stored with tokens redacted and never include the URL.
 */
import type { Db } from "../db.js";
import { Prisma } from "../generated/prisma/client.js";
import type { Logger } from "../log.js";
import { FAILING_DISABLES_MS, openEndpointRow } from "../endpoints/endpoints.js";
import { redactTokens } from "../engine/sealing/seal.js";
import type { ChannelDeps, Payload } from "../channels/channel.js";
import { ATTEMPT_TIMEOUT_MS } from "../channels/http-post.js";
import { channelFor, unfitReason } from "../channels/registry.js";
import { endUnattempted, markAttempt, reopenForRedelivery } from "../engine/sql/delivery-status.js";

/** What the lifecycle uses: what every channel may use (channel.ts ChannelDeps), and its own. */
export interface DeliveryDeps extends ChannelDeps {
  log?: Logger;
  /** Delay before each attempt, ms (SLOTFLOW_DELIVERY_RETRY_MS). */
  retryMs: number[];
  /** Counts each attempt's outcome (metrics). */
  onOutcome?: (kind: string, outcome: string) => void;
}

/**
 * What a `deliveries` job names (src/queue/queues.ts): the delivery row, and its run. `runId` is
 * absent only in jobs queued by a release before it (they named the row by id alone) and in a
 * test's call.
 */
export interface DeliveryRef {
  deliveryId: string;
  runId?: string;
}

/**
 * What one attempt decided. `retry`: enqueue attempt `attempt` after `delayMs`, for the delivery's
 * run `runId` (read from its row, so a retry of a job without a run id carries it).
 */
export type AttemptResult =
  | { kind: "skipped" }
  | { kind: "sent" }
  | { kind: "failed"; reason: string }
  | { kind: "retry"; attempt: number; delayMs: number; runId: string };

/** Jitter: each delay is scaled by a random factor in [1 - JITTER, 1 + JITTER]. */
const JITTER = 0.1;

/** Delay before attempt `attempt` (0-based) on `schedule`, with jitter; null when the schedule is exhausted. */
export function retryDelayMs(schedule: number[], attempt: number, random = Math.random): number | null {
  if (attempt >= schedule.length) return null;
  return Math.round(schedule[attempt] * (1 - JITTER + 2 * JITTER * random()));
}

interface Row {
  id: string;
  run_id: string;
  endpoint: string;
  statement: string;
  webhook_id: string;
  payload: string | null;
  link_sha256: string[];
  status: string;
  attempts: number;
}

/**
 * Why the links a delivery carries no longer make it worth sending: null while one of them is live
 * (or it carries none this engine minted); else e.g. "link burned", "link dead (revoked)".
 */
export async function deadLinkReason(db: Pick<Db, "$queryRaw">, runId: string, hashes: string[]): Promise<string | null> {
  if (hashes.length === 0) return null;
  // the links of the delivery's own run (links_run_id_token_sha256_idx; issue 20 item 2)
  const links = await db.$queryRaw<{ status: string; end_reason: string | null }[]>`
    SELECT status, end_reason FROM links WHERE run_id = ${runId}::uuid AND token_sha256 = ANY(${hashes}::text[])`;
  if (links.length === 0 || links.some((l) => l.status === "live")) return null;
  const l = links[0];
  return `link ${l.status}${l.end_reason ? ` (${l.end_reason})` : ""}`;
}

/**
 * How long an attempt holds its claimed delivery, ms (issue 22): longer than an attempt can take
 * (ATTEMPT_TIMEOUT_MS), so a second job for the same delivery finds it claimed and skips it; an
 * attempt whose worker died leaves the claim to lapse, then the sweeper's re-enqueue retries it.
 */
export const DELIVERY_CLAIM_MS = ATTEMPT_TIMEOUT_MS + 50_000;
/** A job may run this early before its attempt is due (clocks of worker, Redis and PostgreSQL), ms. */
const DUE_SLACK_MS = 5_000;

interface ClaimedRow extends Row {
  /** Why its links make it not worth sending (deadLinkReason's words), or null. */
  dead: string | null;
  e_name: string | null;
  e_kind: string;
  e_url: string;
  e_secret: string | null;
  e_previous_secret: string | null;
  e_previous_secret_until: Date | null;
  e_disabled_at: Date | null;
  e_disabled_reason: string | null;
  e_slack: unknown;
}

/**
 * Attempts one delivery if it is pending and due; see the module header. Round trips (issue 22
 * item 2): claim, send, mark — two SQL statements, each its own transaction, no row lock held while
 * sending:
 *
 * - claim: one UPDATE moves `next_attempt_at` past the attempt (DELIVERY_CLAIM_MS) where the row is
 *   pending and due, returning the row, whether its links are still live (deadLinkReason's rule;
 *   never asked of a `send webhook`) and its endpoint's row. A second job for the same delivery re-checks the WHERE after the first
 *   commits and finds it claimed: one attempt is sent once (test `engine/deliveries`).
 *   With the job's run id the claim names `(run_id, id)` and reads the links of that run id: a
 *   router statement under a distributed PostgreSQL (docs/scaling.md; `endpoints` is a reference
 *   table). A job without a run id (queued by the previous release) is claimed by `id` alone — a
 *   multi-shard lookup of one row — and attempted the same way; its retry carries the run id.
 *   A run id that is not the row's claims nothing (`skipped`).
 * - mark: one statement of data-modifying CTEs writes the attempt's log row, the endpoint's state
 *   (recordEndpointOutcome's rules: a 2xx clears `failing_since`, a failure sets it and disables
 *   the endpoint after FAILING_DISABLES_MS, a 410 disables it) and the delivery's outcome, which
 *   depends on whether this mark disabled the endpoint. A delivery ended meanwhile (the run
 *   cancelled, its link dead) stays ended unless this attempt was delivered: then it says `sent`.
 */
export async function attemptDelivery(deps: DeliveryDeps, ref: DeliveryRef): Promise<AttemptResult> {
  const { db, sealer, log } = deps;
  const { deliveryId, runId } = ref;
  const which = runId === undefined ? Prisma.sql`id = ${deliveryId}::uuid` : Prisma.sql`run_id = ${runId}::uuid AND id = ${deliveryId}::uuid`;
  const run = runId === undefined ? Prisma.sql`c.run_id` : Prisma.sql`${runId}::uuid`;
  const rows = await db.$queryRaw<ClaimedRow[]>`
    WITH c AS (
      UPDATE deliveries SET next_attempt_at = now() + make_interval(secs => ${DELIVERY_CLAIM_MS / 1000})
       WHERE ${which} AND status = 'pending'
         AND (next_attempt_at IS NULL OR next_attempt_at <= now() + make_interval(secs => ${DUE_SLACK_MS / 1000}))
      RETURNING id, run_id, endpoint, statement, webhook_id, payload, link_sha256, status, attempts)
    SELECT c.*,
           CASE WHEN cardinality(c.link_sha256) = 0 OR c.statement = 'webhook' THEN NULL
                WHEN EXISTS (SELECT 1 FROM links l WHERE l.run_id = ${run} AND l.token_sha256 = ANY(c.link_sha256) AND l.status = 'live') THEN NULL
                ELSE (SELECT 'link ' || l.status || coalesce(' (' || l.end_reason || ')', '') FROM links l WHERE l.run_id = ${run} AND l.token_sha256 = ANY(c.link_sha256) LIMIT 1)
           END AS dead,
           e.name AS e_name, e.kind AS e_kind, e.url AS e_url, e.secret AS e_secret, e.previous_secret AS e_previous_secret,
           e.previous_secret_until AS e_previous_secret_until, e.disabled_at AS e_disabled_at, e.disabled_reason AS e_disabled_reason,
           e.slack AS e_slack
      FROM c LEFT JOIN endpoints e ON e.name = c.endpoint`;
  const row = rows[0];
  if (!row) return { kind: "skipped" };
  let kind = "unknown";
  const finish = (final: AttemptResult, seen: { statusCode?: number | null; latencyMs?: number; attemptNo?: number; nextAttemptAt?: string; disabled?: string | null } = {}): AttemptResult => {
    deps.onOutcome?.(kind, final.kind);
    const fields = { deliveryId, endpoint: row.endpoint, kind, attempt: seen.attemptNo, statusCode: seen.statusCode ?? null, latencyMs: seen.latencyMs ?? null, nextAttemptAt: seen.nextAttemptAt ?? null };
    if (final.kind === "sent") log?.info(fields, "delivery sent");
    else if (final.kind === "retry") log?.warn(fields, "delivery attempt failed; will retry");
    else if (final.kind === "failed") log?.warn({ ...fields, reason: redactTokens(final.reason) }, "delivery failed");
    if (seen.disabled) log?.warn({ endpoint: row.endpoint, reason: seen.disabled }, "endpoint disabled");
    return final;
  };
  // Ends the delivery without an attempt (nothing was sent), unless something ended it meanwhile.
  const fail = async (reason: string, dropPayload: boolean) => {
    await endUnattempted(db, row, reason, dropPayload);
    return finish({ kind: "failed", reason });
  };
  if (row.dead !== null || row.payload === null) return fail(row.dead ?? (row.statement === "webhook" ? "its stored message was dropped" : "link no longer live"), true);
  if (row.e_name === null) return fail(`no endpoint named "${row.endpoint}"`, false);
  const now = new Date();
  const endpoint = openEndpointRow(
    sealer,
    { name: row.e_name, kind: row.e_kind, url: row.e_url, secret: row.e_secret, previousSecret: row.e_previous_secret, previousSecretUntil: row.e_previous_secret_until, disabledAt: row.e_disabled_at, disabledReason: row.e_disabled_reason, slack: row.e_slack },
    now,
  );
  kind = endpoint.kind;
  if (endpoint.disabledReason) return fail(`endpoint disabled: ${endpoint.disabledReason}`, false);
  const payload = { statement: row.statement, ...(JSON.parse(sealer.openText(row.payload)) as object) } as Payload;
  const attempt = row.attempts + 1;
  // the channel of the endpoint's kind sends (src/channels/registry.ts); the lifecycle records
  const unfit = unfitReason(endpoint.kind, payload.statement);
  if (unfit !== null) return fail(unfit, false);
  const t0 = performance.now();
  const sent = await channelFor(endpoint.kind)!.send(deps, { runId: row.run_id, deliveryId: row.id, endpoint, payload, webhookId: row.webhook_id, now });
  if (sent.kind === "unfit") return fail(sent.reason, false);
  if (sent.kind === "withdrawn") return fail(sent.reason, true);
  const { statusCode, error, retryAfterMs } = sent;
  const latencyMs = Math.round(performance.now() - t0);
  const lastError = error === null ? null : redactTokens(error).slice(0, 300);
  const outcome = error === null ? "ok" : statusCode === 410 ? "gone" : "failed";
  let delay = outcome === "failed" ? retryDelayMs(deps.retryMs, attempt) : null;
  if (delay !== null && retryAfterMs !== null) delay = Math.max(delay, retryAfterMs);
  const markedAt = new Date();
  const nextAttemptAt = delay === null ? null : new Date(markedAt.getTime() + delay);
  const failingCutoff = new Date(markedAt.getTime() - FAILING_DISABLES_MS);
  const disabled = await markAttempt(db, {
    runId: row.run_id, id: row.id, endpoint: row.endpoint, attempt, at: now, statusCode, latencyMs, lastError, outcome, nextAttemptAt, markedAt, failingCutoff,
  });
  const seen = { statusCode, latencyMs, attemptNo: attempt, disabled };
  if (outcome === "ok") return finish({ kind: "sent" }, seen);
  if (outcome === "gone") return finish({ kind: "failed", reason: "410 Gone" }, { ...seen, disabled: "the endpoint answered 410 Gone" });
  if (disabled !== null || delay === null || nextAttemptAt === null) {
    return finish({ kind: "failed", reason: disabled !== null ? `endpoint disabled: ${disabled}` : `gave up after ${attempt} attempts` }, seen);
  }
  return finish({ kind: "retry", attempt, delayMs: delay, runId: row.run_id }, { ...seen, nextAttemptAt: nextAttemptAt.toISOString() });
}


/**
 * `POST /api/runs/{id}/outbox/{messageId}/redeliver` (issue 18 item 4): puts a delivered or failed
 * delivery back to pending — the same sealed payload, the same `webhook-id`, its attempts counted
 * afresh — and returns its id to enqueue. `not-found` when the run has no such delivery;
 * `link-not-live` when a `send message`'s link is no longer live (its payload is then dropped), or
 * when its stored message was dropped already (a cancelled run; a webhook withdrawn by a release
 * before v0.5). A `send webhook` is redelivered whatever its links (issue 38: a webhook is data).
 */
export async function redeliver(db: Db, runId: string, deliveryId: string): Promise<{ ok: true } | { ok: false; code: "not-found" | "link-not-live"; reason: string }> {
  return db.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<Row[]>`
      SELECT id, run_id, endpoint, statement, webhook_id, payload, link_sha256, status, attempts
      FROM deliveries WHERE id = ${deliveryId}::uuid AND run_id = ${runId}::uuid FOR UPDATE`;
    const row = rows[0];
    if (!row) return { ok: false as const, code: "not-found" as const, reason: "This run has no such outbox message." };
    const dead =
      row.payload === null ? (row.statement === "webhook" ? "its stored message was dropped" : "link no longer live")
      : row.statement === "webhook" ? null
      : await deadLinkReason(tx, row.run_id, row.link_sha256);
    if (dead !== null) {
      if (row.payload !== null) await tx.delivery.update({ where: { runId_id: { runId: row.run_id, id: row.id } }, data: { payload: null } });
      return { ok: false as const, code: "link-not-live" as const, reason: dead };
    }
    await reopenForRedelivery(tx, row);
    return { ok: true as const };
  });
}

/** Pending deliveries whose attempt is overdue by `graceMs` (a lost job): the sweeper re-enqueues them. */
export async function overdueDeliveries(db: Db, now: Date, graceMs: number, take: number): Promise<{ id: string; runId: string; attempts: number }[]> {
  return db.delivery.findMany({
    where: { status: "pending", nextAttemptAt: { lte: new Date(now.getTime() - graceMs) } },
    select: { id: true, runId: true, attempts: true },
    orderBy: { nextAttemptAt: "asc" },
    take,
  });
}
