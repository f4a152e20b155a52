/**
 * The one writer of `deliveries.status` (issue 39 item 2, "one writer per status"): every statement
 * that sets a delivery's status is here, whoever sends it — the step and the cancel command (in
 * their transactions), and the delivery lifecycle (outbox/deliveries.ts: the attempt, redelivery).
 * A row is inserted `pending` by the step's write (deliveries-write.ts) or `failed` at commit
 * (dead-at-commit.ts → insertWithdrawnDeliveries); from there (outbox/deliveries.ts's header has
 * the whole lifecycle with its reasons):
 *
 *   pending --ended without an attempt (dead link, no/disabled endpoint, unfit, withdrawn)--> failed   endUnattempted
 *   pending --attempt: 2xx--> sent; failed--> pending (next attempt) | failed (gave up, 410, disabled)  markAttempt
 *   pending --an operator cancels the run (issue 23)--> failed ("withdrawn: the run was cancelled")     withdrawPendingDeliveries
 *   pending --a `send message` whose every link is no longer live--> failed ("link burned" …)          endDeliveriesOfDeadLinks
 *   sent|failed --redeliver--> pending                                                                  reopenForRedelivery
 */
import type { Db, Tx } from "../../db.js";

/** A withdrawn `send message` delivery row, written `failed` at commit (dead-at-commit.ts). */
export interface WithdrawnDelivery {
  id: string;
  endpoint: string;
  statement: string;
  webhookId: string;
  linkSha256: string[];
  createdAt: Date;
  reason: string;
}

/** Inserts the step's deliveries withdrawn at commit (none: no round trip), in the step's transaction. */
export async function insertWithdrawnDeliveries(tx: Pick<Tx, "delivery">, runId: string, deliveries: WithdrawnDelivery[]): Promise<void> {
  if (deliveries.length === 0) return;
  await tx.delivery.createMany({
    data: deliveries.map((d) => ({
      id: d.id,
      runId,
      endpoint: d.endpoint,
      statement: d.statement,
      webhookId: d.webhookId,
      payload: null,
      linkSha256: d.linkSha256,
      status: "failed",
      endReason: d.reason,
      nextAttemptAt: null,
      createdAt: d.createdAt,
    })),
  });
}

/** A delivery row by key. */
export interface DeliveryRowKey {
  run_id: string;
  id: string;
}

/** Ends a claimed delivery without an attempt (nothing was sent), unless something ended it meanwhile; `dropPayload` drops its sealed payload. */
export async function endUnattempted(db: Pick<Db, "$executeRaw">, row: DeliveryRowKey, reason: string, dropPayload: boolean): Promise<void> {
  await db.$executeRaw`UPDATE deliveries SET status = 'failed', end_reason = ${reason}, next_attempt_at = NULL,
                                payload = CASE WHEN ${dropPayload} THEN NULL ELSE payload END
                          WHERE run_id = ${row.run_id}::uuid AND id = ${row.id}::uuid AND status = 'pending'`;
}

/** What one attempt's mark records (outbox/deliveries.ts attemptDelivery computes it). */
export interface AttemptMark {
  runId: string;
  id: string;
  endpoint: string;
  /** 1-based number of this attempt. */
  attempt: number;
  /** When the attempt started. */
  at: Date;
  statusCode: number | null;
  latencyMs: number;
  /** Redacted, ≤ 300 characters; null when delivered. */
  lastError: string | null;
  outcome: "ok" | "gone" | "failed";
  /** When the next attempt is due; null: none (the schedule is exhausted, or not failed). */
  nextAttemptAt: Date | null;
  markedAt: Date;
  /** An endpoint failing since before this is disabled (markedAt − FAILING_DISABLES_MS). */
  failingCutoff: Date;
}

/**
 * One statement of data-modifying CTEs (issue 22 item 2): the attempt's log row, the endpoint's
 * state (a 2xx clears `failing_since`, a failure sets it and disables the endpoint past
 * `failingCutoff`, a 410 disables it) and the delivery's outcome, which depends on whether this
 * mark disabled the endpoint. A delivery ended meanwhile stays ended unless this attempt was
 * delivered: then it says `sent`. Resolves the reason the endpoint was disabled by this mark, or null.
 */
export async function markAttempt(db: Pick<Db, "$queryRaw">, m: AttemptMark): Promise<string | null> {
  const marked = await db.$queryRaw<{ disabled: string | null }[]>`
    WITH a AS (
      INSERT INTO delivery_attempts (run_id, delivery_id, attempt, at, status_code, latency_ms, error)
      VALUES (${m.runId}::uuid, ${m.id}::uuid, ${m.attempt}::int, ${m.at}::timestamptz, ${m.statusCode}::int, ${m.latencyMs}::int, ${m.lastError})),
    old AS (SELECT failing_since, disabled_at FROM endpoints WHERE name = ${m.endpoint} FOR UPDATE),
    e AS (
      UPDATE endpoints SET
        failing_since = CASE WHEN ${m.outcome} = 'ok' THEN NULL WHEN ${m.outcome} = 'failed' THEN coalesce(endpoints.failing_since, ${m.markedAt}::timestamptz) ELSE endpoints.failing_since END,
        disabled_at = ${m.markedAt}::timestamptz, disabled_reason = CASE WHEN ${m.outcome} = 'gone' THEN 'the endpoint answered 410 Gone' ELSE 'failing for 5 days' END
       FROM old
      WHERE endpoints.name = ${m.endpoint} AND old.disabled_at IS NULL
        AND (${m.outcome} = 'gone' OR (${m.outcome} = 'failed' AND coalesce(old.failing_since, ${m.markedAt}::timestamptz) <= ${m.failingCutoff}::timestamptz))
      RETURNING endpoints.disabled_reason),
    f AS (
      UPDATE endpoints SET failing_since = CASE WHEN ${m.outcome} = 'ok' THEN NULL ELSE ${m.markedAt}::timestamptz END
      WHERE name = ${m.endpoint} AND NOT EXISTS (SELECT 1 FROM e)
        AND ((${m.outcome} = 'ok' AND failing_since IS NOT NULL) OR (${m.outcome} = 'failed' AND failing_since IS NULL))),
    d AS (
      UPDATE deliveries SET attempts = ${m.attempt}::int, last_status_code = ${m.statusCode}::int, last_latency_ms = ${m.latencyMs}::int, last_error = ${m.lastError},
        status = CASE WHEN ${m.outcome} = 'ok' THEN 'sent'
                      WHEN ${m.outcome} = 'gone' OR ${m.nextAttemptAt}::timestamptz IS NULL OR EXISTS (SELECT 1 FROM e) THEN 'failed'
                      ELSE 'pending' END,
        end_reason = CASE WHEN ${m.outcome} = 'ok' THEN NULL
                          WHEN ${m.outcome} = 'gone' THEN 'the endpoint answered 410 Gone (endpoint disabled)'
                          WHEN EXISTS (SELECT 1 FROM e) THEN 'endpoint disabled: ' || (SELECT disabled_reason FROM e)
                          WHEN ${m.nextAttemptAt}::timestamptz IS NULL THEN ${`gave up after ${m.attempt} attempts`}
                          ELSE NULL END,
        next_attempt_at = CASE WHEN ${m.outcome} = 'failed' AND NOT EXISTS (SELECT 1 FROM e) THEN ${m.nextAttemptAt}::timestamptz ELSE NULL END,
        delivered_at = CASE WHEN ${m.outcome} = 'ok' THEN ${m.markedAt}::timestamptz ELSE delivered_at END
      WHERE run_id = ${m.runId}::uuid AND id = ${m.id}::uuid AND (status = 'pending' OR ${m.outcome} = 'ok'))
    SELECT (SELECT disabled_reason FROM e) AS disabled`;
  return marked[0]?.disabled ?? null;
}

/** Puts a delivered or failed delivery back to pending (redeliver, issue 18 item 4): attempts counted afresh, due at once. */
export async function reopenForRedelivery(tx: Pick<Tx, "delivery">, row: DeliveryRowKey): Promise<void> {
  await tx.delivery.update({ where: { runId_id: { runId: row.run_id, id: row.id } }, data: { status: "pending", attempts: 0, nextAttemptAt: new Date(), endReason: null, deliveredAt: null } });
}

/**
 * Ends every pending delivery of `runId` because an operator cancelled the run (issue 23;
 * engine/commands/cancel.ts, inside the cancel's transaction with the run locked). An attempt in
 * flight (claimed, issue 22) is ended too: if it is delivered its mark records it `sent` (it has
 * left), and if it fails the delivery stays ended. Resolves how many were withdrawn.
 */
export async function withdrawPendingDeliveries(tx: Tx, runId: string): Promise<number> {
  return tx.$executeRaw`UPDATE deliveries SET status = 'failed', end_reason = 'withdrawn: the run was cancelled',
                               payload = NULL, next_attempt_at = NULL
                         WHERE run_id = ${runId}::uuid AND status = 'pending'`;
}

/**
 * Ends, at once, every pending `send message` delivery of `runId` that carries links none of which
 * is live any more (issue 18 item 4: "stops being retried the moment that link is no longer live
 * and records why"; a `send webhook` is data and is never ended here, issue 38): status `failed`, `end_reason` e.g. "link burned" or "link dead (revoked)" — the words of
 * `deadLinkReason` — payload dropped, no further attempt. Called by a step that ended a link of a
 * run with pending deliveries, inside its transaction (engine/step.ts flush), so it commits with
 * the step. A delivery whose attempt is under way (claimed by `attemptDelivery`, issue 22) is
 * ended too; if that attempt is delivered its mark records it `sent`. Returns how many deliveries it ended.
 */
export async function endDeliveriesOfDeadLinks(tx: Tx, runId: string): Promise<number> {
  return tx.$executeRaw`
    UPDATE deliveries d
       SET status = 'failed', payload = NULL, next_attempt_at = NULL,
           end_reason = (SELECT 'link ' || l.status || coalesce(' (' || l.end_reason || ')', '')
                           FROM links l WHERE l.run_id = d.run_id AND l.token_sha256 = ANY(d.link_sha256) LIMIT 1)
     WHERE d.run_id = ${runId}::uuid AND d.id IN (SELECT p.id FROM deliveries p
                     WHERE p.run_id = ${runId}::uuid AND p.status = 'pending' AND p.statement <> 'webhook' AND cardinality(p.link_sha256) > 0
                       AND EXISTS (SELECT 1 FROM links l WHERE l.run_id = p.run_id AND l.token_sha256 = ANY(p.link_sha256))
                       AND NOT EXISTS (SELECT 1 FROM links l WHERE l.run_id = p.run_id AND l.token_sha256 = ANY(p.link_sha256) AND l.status = 'live')
                       FOR UPDATE SKIP LOCKED)`;
}
