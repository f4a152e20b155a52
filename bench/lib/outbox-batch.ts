/**
 * Batch mail delivery by `FOR UPDATE SKIP LOCKED`, for measurement only (bench `delivery`, issue 22
 * item 2, which names this way): what the outbox delivery would cost if worker loops claimed the
 * oldest pending messages in one statement and marked them in one more, instead of one BullMQ job
 * per message through `deliverOutbox` (src/outbox/mailer.ts). Not an engine feature: the engine
 * batches differently — its mail pump (src/outbox/mail-pump.ts) claims the rows it was handed by
 * key, `(run_id, id)`, with no scan of pending rows; the bench measures both.
 *
 * Per batch of up to K messages, 2 SQL round trips and no Redis:
 *
 *   claim: UPDATE outbox SET claimed_until = now() + claim
 *           WHERE (run_id, id) IN (SELECT run_id, id FROM outbox
 *                                   WHERE status = 'pending' AND (claimed_until IS NULL OR claimed_until < now())
 *                                   ORDER BY created_at LIMIT K FOR UPDATE SKIP LOCKED)
 *          RETURNING …                       (index outbox_status_created_at_idx, migration 20261121000000_init)
 *   send:  each message, as deliverOutbox and the pump do (openClaimed: sealer.openText, the isEmailAddress checks; transport.send), concurrently
 *   mark:  UPDATE outbox … FROM unnest(run ids, ids, message ids, attempts) WHERE (run_id, id) match   (one for the sent;
 *          one more only when some failed)
 *
 * The claim is the same `claimed_until` lease as deliverOutbox's (MAIL_CLAIM_MS), so both paths
 * can run side by side without sending a message twice: SKIP LOCKED passes over rows another
 * claim is locking, and a row another claim committed meanwhile fails the re-checked WHERE
 * (PostgreSQL re-evaluates it on the newest version under READ COMMITTED). What a real batch
 * worker would still need and this does not have: a wake-up (a poll interval, or a signal after
 * commit) and a backoff between attempts of a failing message.
 */
import type { Db } from "../../src/db.js";
import type { Logger } from "../../src/log.js";
import { Prisma } from "../../src/generated/prisma/client.js";
import { redactTokens, type Sealer } from "../../src/engine/sealing/seal.js";
import { CLAIMED_COLUMNS, MAIL_CLAIM_MS, MAX_DELIVERY_ATTEMPTS, logSent, openClaimed, type ClaimedRow, type MailTransport } from "../../src/outbox/mailer.js";

/**
 * Claims up to `limit` pending, unclaimed messages (oldest first) for `claimMs` (default
 * MAIL_CLAIM_MS) in one statement; returns them (empty when none is left). One SQL round trip.
 */
export async function claimOutboxBatch(db: Db, limit: number, claimMs = MAIL_CLAIM_MS): Promise<ClaimedRow[]> {
  return db.$queryRaw<ClaimedRow[]>`
    UPDATE outbox SET claimed_until = now() + make_interval(secs => ${claimMs / 1000})
     WHERE (run_id, id) IN (SELECT run_id, id FROM outbox
                             WHERE status = 'pending' AND (claimed_until IS NULL OR claimed_until < now())
                             ORDER BY created_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)
    RETURNING ${Prisma.raw(CLAIMED_COLUMNS)}`;
}

/** One sent message: its row and the transport's message id; `attempts` counts this one. */
export interface SentMail {
  runId: string;
  id: string;
  messageId: string;
  attempts: number;
}

/**
 * Marks every message of `sent` as sent in one statement (body dropped, as deliverOutbox's mark:
 * it may carry a link). Returns the rows updated. One SQL round trip; none when `sent` is empty.
 */
export async function markOutboxSent(db: Db, sent: SentMail[]): Promise<number> {
  if (sent.length === 0) return 0;
  return db.$executeRaw`
    UPDATE outbox o SET status = 'sent', body = NULL, message_id = m.message_id, delivered_at = now(), attempts = m.attempts, claimed_until = NULL
      FROM unnest(${sent.map((s) => s.runId)}::uuid[], ${sent.map((s) => s.id)}::uuid[], ${sent.map((s) => s.messageId)}::text[], ${sent.map((s) => s.attempts)}::int[])
           AS m(run_id, id, message_id, attempts)
     WHERE o.run_id = m.run_id AND o.id = m.id`;
}

/** One failed attempt: `final` gives the message up (status failed, body dropped); otherwise it is pending again. */
export interface FailedMail {
  runId: string;
  id: string;
  attempts: number;
  error: string;
  final: boolean;
}

/**
 * Records failed attempts in one statement, with deliverOutbox's rules: the error is stored with
 * tokens redacted (the caller passes it so), the claim is released, and a `final` failure sets
 * `failed` and drops the body. One SQL round trip; none when `failed` is empty.
 */
export async function markOutboxFailed(db: Db, failed: FailedMail[]): Promise<number> {
  if (failed.length === 0) return 0;
  return db.$executeRaw`
    UPDATE outbox o SET attempts = m.attempts, last_error = m.error, claimed_until = NULL,
                        status = CASE WHEN m.final THEN 'failed' ELSE o.status END,
                        body = CASE WHEN m.final THEN NULL ELSE o.body END
      FROM unnest(${failed.map((f) => f.runId)}::uuid[], ${failed.map((f) => f.id)}::uuid[], ${failed.map((f) => f.attempts)}::int[],
                  ${failed.map((f) => f.error)}::text[], ${failed.map((f) => f.final)}::bool[])
           AS m(run_id, id, attempts, error, final)
     WHERE o.run_id = m.run_id AND o.id = m.id`;
}

/** What one batch did: claimed rows, and of them sent, given up, and left pending for another attempt. */
export interface BatchResult {
  claimed: number;
  sent: number;
  failed: number;
  retry: number;
}

/**
 * One batch: claims up to `limit` messages, sends each (concurrently) with deliverOutbox's per-message
 * work — open the sealed fields and refuse a recipient, cc or reply-to that is not exactly one
 * address (openClaimed: failed at once, issue 8 item 18), send — then marks the sent in one
 * statement and the failures in one more. `claimed: 0` means nothing was pending. Logs one line per
 * message as deliverOutbox does (logSent; never the body).
 */
export async function deliverOutboxBatch(db: Db, sealer: Sealer, transport: MailTransport, limit: number, log?: Logger): Promise<BatchResult> {
  const rows = await claimOutboxBatch(db, limit);
  if (rows.length === 0) return { claimed: 0, sent: 0, failed: 0, retry: 0 };
  const sent: SentMail[] = [];
  const failed: FailedMail[] = [];
  await Promise.all(
    rows.map(async (row) => {
      const attempts = row.attempts + 1;
      const mail = openClaimed(sealer, row);
      if (!mail) {
        failed.push({ runId: row.run_id, id: row.id, attempts, error: "the recipient is not exactly one email address", final: true });
        return;
      }
      try {
        sent.push({ runId: row.run_id, id: row.id, messageId: await transport.send(mail), attempts });
      } catch (err) {
        const final = attempts >= MAX_DELIVERY_ATTEMPTS;
        failed.push({ runId: row.run_id, id: row.id, attempts, error: redactTokens(err instanceof Error ? err.message : String(err)).slice(0, 500), final });
        log?.warn({ outboxId: row.id, attempts, failed: final }, "email delivery failed");
      }
    }),
  );
  await Promise.all([markOutboxSent(db, sent), markOutboxFailed(db, failed)]);
  for (const s of sent) logSent(transport, s.id, log);
  const given = failed.filter((f) => f.final).length;
  return { claimed: rows.length, sent: sent.length, failed: given, retry: failed.length - given };
}
