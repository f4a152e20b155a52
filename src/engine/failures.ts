/**
 * A command whose job ended for good (issue 8 item 8): it failed deterministically — the same
 * command would fail the same way however often it was retried (a value PostgreSQL cannot store,
 * a malformed job, a programming error). Nothing of it was applied (its transaction rolled back);
 * the run gets an incident, code `command-failed`, so an operator sees it in `GET /api/runs/{id}`.
 *
 * A `start` whose run was never created has no run to carry the incident: the worker's error log
 * line is its only record. Throws (and the job is retried) when the database cannot be reached.
 */
import type { Db } from "../db.js";
import type { Command } from "./commands/types.js";
import { redactTokens } from "./seal.js";

export const COMMAND_FAILED = "command-failed";

/** Records the incident; returns false when there is no run to record it on. */
export async function recordCommandFailure(db: Db, cmd: Pick<Command, "kind" | "runId">, message: string): Promise<boolean> {
  const run = await db.run.findUnique({ where: { id: cmd.runId }, select: { id: true } });
  if (!run) return false;
  await db.incident.create({
    data: {
      runId: run.id,
      command: cmd.kind,
      code: COMMAND_FAILED,
      message: redactTokens(`The ${cmd.kind} command failed and will not be retried; nothing of it was applied. ${message}`).slice(0, 2000),
    },
  });
  return true;
}
