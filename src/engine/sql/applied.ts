/**
 * The recorded outcome of a command id, for a `start` (which has no run to lock yet): one
 * primary-key probe of `applied_commands`.
 *
 *   SELECT outcome FROM applied_commands WHERE id = $1
 *
 * Since issue 22 a start is one statement that checks this itself (sql/start-write.ts); the probe
 * runs only when a start was refused or its handler failed (engine/commands/apply.ts `applyStart`).
 */
import type { Tx } from "../../db.js";
import { prepared } from "./prepared.js";

/** The probe, as sent: a prepared statement (sql/prepared.ts). */
export const PRIOR_OUTCOME_SQL = prepared("slotflow_prior_outcome", "SELECT outcome FROM applied_commands WHERE id = $1");

/** The outcome recorded for `commandId`, or null when it was never applied. */
export async function priorOutcome(tx: Tx, commandId: string): Promise<unknown | null> {
  const rows = await tx.$queryRawUnsafe<{ outcome: unknown }[]>(PRIOR_OUTCOME_SQL, commandId);
  return rows[0]?.outcome ?? null;
}
