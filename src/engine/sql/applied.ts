/**
 * The recorded outcome of a command id, for a `start` (which has no run to lock yet): one
 * primary-key probe of `applied_commands`.
 *
 *   SELECT outcome FROM applied_commands WHERE id = $1
 *
 * A start costs BEGIN, this read, the step's write and COMMIT: four round trips (bench `mint`).
 */
import type { Tx } from "../../db.js";

export async function priorOutcome(tx: Tx, commandId: string): Promise<unknown | null> {
  const rows = await tx.$queryRaw<{ outcome: unknown }[]>`SELECT outcome FROM applied_commands WHERE id = ${commandId}`;
  return rows[0]?.outcome ?? null;
}
