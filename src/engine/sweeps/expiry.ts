/**
 * Finding slots whose deadline has passed, and timers that are due (timer.ts: a timer is a row of
 * `slots` whose deadline is its next firing). The sweeper turns each into an `expire` command on the
 * queue; the testing kit applies them in process (`Workflow.sweep()`).
 */
import type { Db } from "../../db.js";
import type { Command } from "../commands/types.js";
import { isTimerAlias } from "../lifecycles/timer.js";

/**
 * `expire` commands for up to `limit` open slots whose deadline is at or before `now`, oldest
 * first; only those of run `runId` when given (the testing kit's `run.advanceTime`).
 */
export async function dueExpiries(db: Db, now: Date, limit = 500, runId?: string): Promise<Extract<Command, { kind: "expire" }>[]> {
  const due = await db.slot.findMany({
    where: { status: "open", deadline: { lte: now }, ...(runId === undefined ? {} : { runId }) },
    select: { id: true, runId: true, alias: true, deadline: true },
    orderBy: { deadline: "asc" },
    take: limit,
  });
  // The command id is derived from the slot: a slot expires at most once, however many sweepers
  // see it, and a repeated command is answered from `applied_commands`. A timer row (timer.ts)
  // fires once per due time, so its id names the firing too (issue 19).
  return due.map((s) => ({
    kind: "expire",
    commandId: isTimerAlias(s.alias) ? `expire-${s.id}-${s.deadline!.getTime()}` : `expire-${s.id}`,
    runId: s.runId,
    slotId: s.id,
  }));
}
