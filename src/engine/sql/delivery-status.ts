/**
 * The engine's writes of `deliveries.status` (issue 39 item 2: every statement a step sends lives in
 * engine/sql/; the engine imports no channel or outbox code). Two transitions, both in the
 * transaction of the step or command that causes them (moved from outbox/deliveries.ts, whose
 * header lists the whole lifecycle):
 *
 *   pending --an operator cancels the run (issue 23)--> failed ("withdrawn: the run was cancelled")
 *   pending --a `send message` whose every link is no longer live--> failed ("link burned" …)
 */
import type { Tx } from "../../db.js";

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
