/**
 * The outbox rows of `send webhook` / `send message` queued by a step (issue 18), inserted in the
 * step's own transaction right after its write (step-write.ts), so a delivery exists only if the
 * step commits. One statement for all of a step's deliveries; none when it queued none, so steps
 * without deliveries (the hot path) send nothing more.
 *
 *   SELECT slotflow_write_deliveries($1::jsonb)          -- INSERT … FROM jsonb_to_recordset($1)
 *   SELECT slotflow_set_mail_extra($1::uuid, $2::jsonb)  -- reply_to / cc of the step's mail, if any
 *
 * Both are SQL functions (migration 20261125090000) that a start's one statement
 * (start-write.ts) calls too, so the two paths write these rows the same way.
 */
import type { Tx } from "../../db.js";

/**
 * A mail row the step queued, by key: what the step hands out once it committed (issue 39 item 2,
 * the engine imports no channel). The worker gives it to the mail pump or enqueues a `mail` job
 * (src/queue/outbox-jobs.ts MailJob is this shape).
 */
export interface MailKey {
  outboxId: string;
  runId: string;
}

/** A delivery row the step queued, by key: enqueued as a `deliveries` job after commit (src/queue/outbox-jobs.ts DeliveryJob). */
export interface DeliveryKey {
  deliveryId: string;
  runId: string;
}

export interface DeliveryWriteRow {
  id: string;
  run_id: string;
  endpoint: string;
  /** `webhook` or `message`: the statement that queued it. */
  statement: string;
  /** The Standard Webhooks `webhook-id`, fixed here for every retry and redelivery. */
  webhook_id: string;
  /** The sealed JSON text of what is sent (Sealer.seal). */
  payload: string;
  /** SHA-256 (hex) of each callback token the payload carries. */
  link_sha256: string[];
  created_at: string;
}

/** Inserts the step's deliveries (status pending, first attempt due at once): `slotflow_write_deliveries`, the statement a start's write uses too (migration 20261125090000). */
export async function writeDeliveries(tx: Tx, rows: DeliveryWriteRow[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.$executeRawUnsafe("SELECT slotflow_write_deliveries($1::jsonb)", JSON.stringify(rows));
}

/** `send email … { replyTo, cc }` (issue 19) on a step's mail rows: [{ id, reply_to, cc }], by (run_id, id). */
export interface MailExtraRow {
  id: string;
  reply_to: string | null;
  cc: string | null;
}

/** Sets reply_to / cc on the step's mail that has them, in one statement (`slotflow_set_mail_extra`); none: no round trip. */
export async function writeMailExtra(tx: Tx, runId: string, rows: MailExtraRow[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.$executeRawUnsafe("SELECT slotflow_set_mail_extra($1::uuid, $2::jsonb)", runId, JSON.stringify(rows));
}
