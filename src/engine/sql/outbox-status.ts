/**
 * The one writer of `outbox.status` (issue 39 item 2: "`outbox.status` has four writers"): every
 * statement that sets a mail row's status is here, whoever sends it — the step (a message withdrawn
 * at commit), the cancel command, and the outbox's lifecycle (outbox/mailer.ts, mail-pump.ts).
 * A row is inserted `pending` by the step's write (deliveries-write.ts, start-write.ts: the SQL
 * functions of migration 20261125090000); from there:
 *
 *   (insert) --a link it carries is dead at commit--> withdrawn   insertWithdrawnMail (dead-at-commit.ts)
 *   pending --the run is cancelled (issue 23)--> withdrawn        withdrawPendingMessages
 *   pending --delivered--> sent                                    markMailSent, markMailSentBatch
 *   pending --send failed, attempts remain--> pending              markMailAttemptFailed (failed = false)
 *   pending --attempts exhausted--> failed                         markMailAttemptFailed (failed = true)
 *   pending --recipient not one plain address--> failed            markMailUndeliverable
 *
 * `sent` and `failed` drop the body (it may carry a link); so does `withdrawn`. A message the
 * mailer is sending when the run is cancelled is withdrawn too: if its send succeeds the mark
 * records it `sent` (it has left, and the row says so) — the marks name the row by `(run_id, id)`
 * without a status guard — and if the send fails the row stays `withdrawn` (markMailAttemptFailed
 * keeps the status unless the attempts ran out). The claim (`claimed_until`) is the lifecycle's, not
 * a status: outbox/mailer.ts, mail-pump.ts.
 */
import type { Db, Tx } from "../../db.js";

/** A mail row by key. */
export interface MailRowKey {
  run_id: string;
  id: string;
}

/** A withdrawn mail row (sealed fields as the step holds them). */
export interface WithdrawnMail {
  id: string;
  to: string;
  subject: string;
  replyTo?: string;
  cc?: string;
  createdAt: Date;
  reason: string;
}

/** Inserts the step's mail withdrawn at commit (none: no round trip), in the step's transaction. */
export async function insertWithdrawnMail(tx: Pick<Tx, "outboxMessage">, runId: string, mail: WithdrawnMail[]): Promise<void> {
  if (mail.length === 0) return;
  await tx.outboxMessage.createMany({
    data: mail.map((m) => ({
      id: m.id,
      runId,
      to: m.to,
      subject: m.subject,
      body: null,
      replyTo: m.replyTo ?? null,
      cc: m.cc ?? null,
      status: "withdrawn",
      lastError: m.reason,
      createdAt: m.createdAt,
    })),
  });
}

/**
 * Marks every pending message of `runId` withdrawn (an operator cancelled the run, issue 23;
 * engine/commands/cancel.ts, inside the cancel's transaction with the run row locked); returns how
 * many. The mailer claims only `pending` rows, so a withdrawn message is never sent afterwards.
 */
export async function withdrawPendingMessages(tx: Pick<Tx, "$executeRaw">, runId: string): Promise<number> {
  return tx.$executeRaw`UPDATE outbox SET status = 'withdrawn', body = NULL, last_error = 'withdrawn: the run was cancelled'
                          WHERE run_id = ${runId}::uuid AND status = 'pending'`;
}

/** Fails a claimed row at once: its recipient is not one plain address. `attempts`: the row's count after this one. */
export async function markMailUndeliverable(db: Pick<Db, "$executeRaw">, row: MailRowKey, attempts: number): Promise<void> {
  await db.$executeRaw`UPDATE outbox SET status = 'failed', body = NULL, attempts = ${attempts}, claimed_until = NULL,
                              last_error = 'the recipient is not exactly one email address' WHERE run_id = ${row.run_id}::uuid AND id = ${row.id}::uuid`;
}

/**
 * Records a failed send of a claimed row: `attempts` (after this one), `error` (already redacted and
 * cut), the claim released; `failed`: the row fails for good and its body is dropped.
 */
export async function markMailAttemptFailed(db: Pick<Db, "$executeRaw">, row: MailRowKey, attempts: number, error: string, failed: boolean): Promise<void> {
  await db.$executeRaw`UPDATE outbox SET attempts = ${attempts}, last_error = ${error}, claimed_until = NULL,
                              status = CASE WHEN ${failed} THEN 'failed' ELSE status END,
                              body = CASE WHEN ${failed} THEN NULL ELSE body END
                        WHERE run_id = ${row.run_id}::uuid AND id = ${row.id}::uuid`;
}

/** Marks one row sent: body dropped, Message-ID kept, `attempts` (after this one), claim released. */
export async function markMailSent(db: Pick<Db, "$executeRaw">, row: MailRowKey, messageId: string, attempts: number): Promise<void> {
  await db.$executeRaw`UPDATE outbox SET status = 'sent', body = NULL, message_id = ${messageId}, delivered_at = now(), attempts = ${attempts}, claimed_until = NULL
                        WHERE run_id = ${row.run_id}::uuid AND id = ${row.id}::uuid`;
}

/** Marks the sent rows of a batch in one statement (mail-pump.ts): as markMailSent, each row's attempts + 1. */
export async function markMailSentBatch(db: Pick<Db, "$executeRawUnsafe">, sent: { row: MailRowKey; messageId: string }[]): Promise<void> {
  await db.$executeRawUnsafe(
    `UPDATE outbox o SET status = 'sent', body = NULL, message_id = k.message_id, delivered_at = now(), attempts = o.attempts + 1, claimed_until = NULL
       FROM unnest($1::uuid[], $2::uuid[], $3::text[]) AS k(run_id, id, message_id)
      WHERE o.run_id = k.run_id AND o.id = k.id`,
    sent.map((s) => s.row.run_id),
    sent.map((s) => s.row.id),
    sent.map((s) => s.messageId),
  );
}
