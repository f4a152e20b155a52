/**
 * Delivery of the transactional outbox (`send email`): its lifecycle (claim, attempt, retry). The
 * statements that write `outbox.status` are engine/sql/outbox-status.ts's (its one writer).
 * Recipient, subject and body are stored sealed when they carry a link; the mailer opens them to
 * send, and the stored error of a failed attempt has tokens redacted.
 *
 *   pending --delivered--> sent       (the body is dropped: it may carry a link)
 *   pending --attempts exhausted--> failed (the body is dropped too)
 *   pending --recipient not one plain address--> failed (at once; see lang/runtime/email-address.ts)
 *
 * A message row is written in the same transaction as the step that queued it, so it exists only
 * if the step committed. After commit the worker enqueues a `deliver` job; the sweeper re-enqueues
 * rows left pending (a worker that died between commit and enqueue). Delivery is at least once:
 * a crash between sending and marking `sent` sends again.
 *
 * The email channel's send (the transport: SMTP through nodemailer, or the terminal) lives in
 * src/channels/email/transport.ts (issue 39 item 2); this module is the outbox's lifecycle —
 * claim, attempt, retry — and its status writes are engine/sql/outbox-status.ts's statements.
 * Log lines never contain the body.
 */
import type { Db } from "../db.js";
import { Prisma } from "../generated/prisma/client.js";
import type { Logger } from "../log.js";
import { isEmailAddress } from "../lang/runtime/email-address.js";
import { redactTokens, type Sealer } from "../engine/sealing/seal.js";
import type { Mail, MailTransport } from "../channels/email/transport.js";
import { markMailAttemptFailed, markMailSent, markMailUndeliverable } from "../engine/sql/outbox-status.js";

export const MAX_DELIVERY_ATTEMPTS = 5;

export type { Mail, MailTransport };

/**
 * How long a delivery holds its claimed row, ms (issue 22): longer than any send can take
 * (nodemailer's connection, greeting and socket timeouts), so a second job for the same row —
 * the sweeper's re-enqueue, a stalled job taken back — finds it claimed and skips it. A worker that
 * dies mid-send leaves the claim to lapse; the row is then delivered again (at least once).
 */
export const MAIL_CLAIM_MS = 15 * 60_000;

/** A claimed outbox row as both delivery paths read it (recipient, subject, body sealed as stored). */
export type ClaimedRow = { id: string; run_id: string; to: string; subject: string; body: string | null; reply_to: string | null; cc: string | null; attempts: number };

/** The columns a claim returns, for `RETURNING` (ClaimedRow's shape). */
export const CLAIMED_COLUMNS = `id, run_id, "to", subject, body, reply_to, cc, attempts`;

/**
 * The message of a claimed row, opened (recipient, subject and body are stored sealed when they
 * carry a link: Sealer.sealText), or null when its recipient, cc or reply-to is not exactly one
 * plain address. `send email` queues only single plain addresses; a row that holds anything else
 * (queued before that rule) fails at once rather than waiting out its attempts (issue 8 item 18).
 */
export function openClaimed(sealer: Sealer, row: ClaimedRow): Mail | null {
  const mail: Mail = { to: sealer.openText(row.to), subject: sealer.openText(row.subject), body: row.body === null ? "" : sealer.openText(row.body) };
  if (row.reply_to !== null) mail.replyTo = sealer.openText(row.reply_to);
  if (row.cc !== null) mail.cc = sealer.openText(row.cc);
  if (!isEmailAddress(mail.to) || (mail.cc !== undefined && !isEmailAddress(mail.cc)) || (mail.replyTo !== undefined && !isEmailAddress(mail.replyTo))) return null;
  return mail;
}

/** Marks a claimed row failed at once: its recipient is not one plain address (openClaimed). */
export async function markUndeliverable(db: Db, row: ClaimedRow): Promise<void> {
  await markMailUndeliverable(db, row, row.attempts + 1);
}

/**
 * Records a failed send of a claimed row: attempts + 1, the error (tokens redacted, ≤ 500
 * characters), the claim released; at MAX_DELIVERY_ATTEMPTS the row fails and its body is dropped.
 * Returns whether the row failed for good.
 */
export async function markSendFailed(db: Db, row: ClaimedRow, err: unknown, log?: Logger): Promise<boolean> {
  const attempts = row.attempts + 1;
  const failed = attempts >= MAX_DELIVERY_ATTEMPTS;
  const message = redactTokens(err instanceof Error ? err.message : String(err)).slice(0, 500);
  await markMailAttemptFailed(db, row, attempts, message, failed);
  log?.warn({ outboxId: row.id, attempts, failed }, "email delivery failed");
  return failed;
}

/** The log line of one sent message: `email printed` (terminal transport) or `email delivered`. */
export function logSent(transport: MailTransport, outboxId: string, log?: Logger): void {
  if (transport.kind === "terminal") log?.info({ outboxId }, "email printed (SMTP_URL is not set)");
  else log?.info({ outboxId }, "email delivered");
}

/**
 * What a `mail` job names (src/queue/queues.ts): the outbox row, and its run. `runId` is absent
 * only in jobs queued by a release before it (they named the row by id alone) and in a test's call.
 */
export interface OutboxRef {
  outboxId: string;
  runId?: string;
}

/**
 * Delivers one outbox message if it is still pending and not claimed. Throws when sending fails and
 * attempts remain (the job retries). Round trips (issue 22 item 2): claim, send, mark — two SQL
 * statements, each its own transaction; no row lock is held while sending.
 *
 *   claim: UPDATE outbox SET claimed_until = now() + MAIL_CLAIM_MS
 *            WHERE run_id = $run AND id = $1 AND status = 'pending'
 *            AND (claimed_until IS NULL OR claimed_until < now()) RETURNING …
 *   mark:  UPDATE outbox SET status = 'sent' | attempts, last_error …, claimed_until = NULL
 *            WHERE run_id = $run AND id = $1
 *
 * With the job's run id every statement names `(run_id, id)`: a router statement under a
 * distributed PostgreSQL (docs/scaling.md). A job without a run id (queued by the previous
 * release) is claimed by `id` alone — a multi-shard lookup of one row — and delivered the same
 * way, once. A run id that is not the row's claims nothing ("skipped").
 *
 * Two workers claiming the same row: PostgreSQL re-checks the WHERE of the second UPDATE after the
 * first commits, so exactly one gets the row (test `engine/start-and-delivery`).
 */
export async function deliverOutbox(db: Db, sealer: Sealer, transport: MailTransport, ref: OutboxRef, log?: Logger): Promise<"sent" | "skipped" | "failed"> {
  const { outboxId } = ref;
  const which = ref.runId === undefined ? Prisma.sql`id = ${outboxId}::uuid` : Prisma.sql`run_id = ${ref.runId}::uuid AND id = ${outboxId}::uuid`;
  const rows = await db.$queryRaw<ClaimedRow[]>`
    UPDATE outbox SET claimed_until = now() + make_interval(secs => ${MAIL_CLAIM_MS / 1000})
     WHERE ${which} AND status = 'pending' AND (claimed_until IS NULL OR claimed_until < now())
    RETURNING ${Prisma.raw(CLAIMED_COLUMNS)}`;
  const row = rows[0];
  if (!row) return "skipped";
  const mail = openClaimed(sealer, row);
  if (!mail) {
    await markUndeliverable(db, row);
    return "failed";
  }
  let messageId: string;
  try {
    messageId = await transport.send(mail);
  } catch (err) {
    if (await markSendFailed(db, row, err, log)) return "failed";
    throw err;
  }
  await markMailSent(db, row, messageId, row.attempts + 1);
  logSent(transport, outboxId, log);
  return "sent";
}
