/**
 * Withdrawal of a run's unsent messages when an operator cancels the run (issue 23;
 * engine/commands/cancel.ts). Beside the mailer, this module writes `outbox.status` for one
 * transition only:
 *
 *   pending --the run is cancelled--> withdrawn   (the body is dropped: it may carry a link)
 *
 * Called inside the cancel's transaction, with the run row locked, so it commits with the cancel
 * or not at all. A message the mailer is sending at that moment (claimed, mailer.ts; issue 22) is
 * withdrawn too: if its send succeeds the mailer's mark records it `sent` — it has left, and the
 * row says so — and if the send fails the row stays `withdrawn` (the failure only counts the
 * attempt), so no retry sends it. The mailer claims only `pending` rows, so a withdrawn message is
 * never sent afterwards.
 */
import type { Tx } from "../db.js";

/** Marks every pending message of `runId` withdrawn; returns how many. */
export async function withdrawPendingMessages(tx: Tx, runId: string): Promise<number> {
  return tx.$executeRaw`UPDATE outbox SET status = 'withdrawn', body = NULL, last_error = 'withdrawn: the run was cancelled'
                          WHERE run_id = ${runId}::uuid AND status = 'pending'`;
}
