/**
 * The outbox rows of `send webhook` / `send message` queued by a step (issue 18), inserted in the
 * step's own transaction right after its write (step-write.ts), so a delivery exists only if the
 * step commits. One statement for all of a step's deliveries; none when it queued none, so steps
 * without deliveries (the hot path) send nothing more.
 *
 *   INSERT INTO deliveries (…) SELECT … FROM jsonb_to_recordset($1::jsonb)
 */
import type { Tx } from "../../db.js";

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

/** Inserts the step's deliveries (status pending, first attempt due at once). */
export async function writeDeliveries(tx: Tx, rows: DeliveryWriteRow[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.$executeRawUnsafe(
    `INSERT INTO deliveries (id, run_id, endpoint, statement, webhook_id, payload, link_sha256, status, next_attempt_at, created_at)
     SELECT r.id, r.run_id, r.endpoint, r.statement, r.webhook_id, r.payload,
            ARRAY(SELECT jsonb_array_elements_text(r.link_sha256)), 'pending', r.created_at, r.created_at
     FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, run_id uuid, endpoint text, statement text, webhook_id text,
                                             payload text, link_sha256 jsonb, created_at timestamptz)`,
    JSON.stringify(rows),
  );
}
