/**
 * Reads of stored receipts (v0.4 "Many responders, forwarding, and receipts"): `slots.receipt`,
 * written with the completion by the step's write. Each statement names one run (`run_id` first,
 * docs/scaling.md).
 */
import type { Db, Tx } from "../../db.js";

/** The receipt of the slot a link belongs to (null: none, or no such link). One statement. */
export async function receiptOfLinkSlot(db: Db | Tx, runId: string, linkId: string): Promise<string | null> {
  const rows = await db.$queryRaw<{ receipt: string | null }[]>`SELECT s.receipt FROM links l
    JOIN slots s ON s.run_id = l.run_id AND s.id = l.slot_id
    WHERE l.run_id = ${runId}::uuid AND l.id = ${linkId}::uuid`;
  return rows[0]?.receipt ?? null;
}

/** One receipt of a run, as `GET /api/runs/{id}/receipts` lists it. */
export interface StoredReceipt {
  alias: string;
  element: number | null;
  state: string;
  visit: number;
  completedAt: Date | null;
  answeredBy: unknown;
  receipt: string;
}

/** Every receipt of run `runId`, oldest completion first (at most `limit`). One statement. */
export async function receiptsOfRun(db: Db, runId: string, limit: number): Promise<StoredReceipt[]> {
  const rows = await db.$queryRaw<{ alias: string; element: number | null; state: string; visit: number; closed_at: Date | null; answered_by: unknown; receipt: string }[]>`
    SELECT alias, element, state, visit, closed_at, answered_by, receipt FROM slots
     WHERE run_id = ${runId}::uuid AND receipt IS NOT NULL
     ORDER BY closed_at, visit, alias, element LIMIT ${limit}`;
  return rows.map((r) => ({ alias: r.alias, element: r.element, state: r.state, visit: r.visit, completedAt: r.closed_at, answeredBy: r.answered_by ?? null, receipt: r.receipt }));
}
