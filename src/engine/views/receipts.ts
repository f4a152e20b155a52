/**
 * The receipts of a run, as `GET /api/runs/{id}/receipts` lists them (v0.4 "Many responders,
 * forwarding, and receipts"; docs/receipts.md): every completed slot that has a receipt, oldest
 * completion first, at most `limit`. Null when no run has this id.
 */
import type { Db } from "../../db.js";
import { receiptsOfRun, type StoredReceipt } from "../sql/receipts.js";

export type { StoredReceipt };

export async function runReceipts(db: Db, runId: string, limit: number): Promise<StoredReceipt[] | null> {
  const run = await db.run.findUnique({ where: { id: runId }, select: { id: true } });
  if (!run) return null;
  return receiptsOfRun(db, runId, limit);
}
