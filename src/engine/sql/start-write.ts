/**
 * The write of a run start (issue 22 item 1): ONE statement, outside any interactive transaction,
 * so a start costs one SQL round trip (it was four: BEGIN, the applied-command probe, the write,
 * COMMIT).
 *
 *   SELECT slotflow_start_write($1::jsonb) AS prior     -- migration 20261125090000
 *
 * A single statement is its own transaction: the new run with its slots, minted links, tracked
 * rows, outbox mail (with reply_to / cc), history, webhook/chat deliveries and the outcome record
 * are written all or none. A start has nothing to lock (its run is new); a repeated start of the
 * same command id waits on an advisory lock for the first to commit and gets its recorded outcome
 * back (`prior`), writing nothing.
 */
import type { Tx } from "../../db.js";
import type { DeliveryWriteRow, MailExtraRow } from "./deliveries-write.js";
import { prepared } from "./prepared.js";
import type { StepWrite } from "./step-write.js";

export interface StartWrite extends StepWrite {
  /** `send email … { replyTo, cc }` (issue 19): set on the mail rows the write inserted. */
  mailExtra: MailExtraRow[];
  deliveries: DeliveryWriteRow[];
}

/** The write, as sent (unnamed; sql/prepared.ts). */
export const START_WRITE_SQL = prepared("slotflow_start_write", "SELECT slotflow_start_write($1::jsonb) AS prior");

/**
 * Writes the start; resolves null when it did, or the outcome recorded by an earlier application
 * of the same command id (then nothing was written). Constraint violations and lost connections reject.
 */
export async function writeStart(db: Pick<Tx, "$queryRawUnsafe">, w: StartWrite): Promise<unknown | null> {
  const rows = await db.$queryRawUnsafe<{ prior: unknown }[]>(START_WRITE_SQL, JSON.stringify(w));
  const prior = rows[0]?.prior ?? null;
  return typeof prior === "string" ? JSON.parse(prior) : prior;
}
