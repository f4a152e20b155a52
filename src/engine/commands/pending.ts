/**
 * Commands answered 202, recorded in PostgreSQL (issue 34 item 3, "A 202 that survives a Redis that
 * keeps nothing"; docs/operations.md "Redis failover: what a 202 survives").
 *
 * A 202 promises "will be applied whatever fails in between". Between the answer and the worker
 * the command is a BullMQ job in Redis, and a Redis without persistence (or a flush, or a failover
 * that lost the job) forgets it. So before a web process answers 202 it records the command in
 * `pending_commands` (`recordPending`, one INSERT; a 200 already waited for the commit and records
 * nothing). Then:
 *
 * - the worker drops the row of a command it refused or that failed for good (`forgetPending`: a
 *   judged command is never queued again); an applied one is dropped by the sweeper, which finds
 *   its id in `applied_commands` (the worker's hot path is unchanged);
 * - each sweep (`reconcilePending`) reads the rows older than `PENDING_GRACE_MS`, oldest first:
 *   a row whose command id is in `applied_commands` is deleted (applied); otherwise its job is
 *   looked up in Redis — finished (completed or failed: the command was judged) → deleted; still
 *   waiting, delayed or active → left; **gone** → the command is queued again with the same job
 *   id (through `Queues.enqueueMany`, as every command is). Applying is exactly once by command id
 *   (`applied_commands`), so a copy queued while another still runs does no harm.
 *
 * The row holds the command as stored JSON (`Sealer.sealJson`: every string carrying a callback
 * link sealed; a command never carries a token of its own — commands/types.ts), keyed
 * `(run_id, command_id)`: a run table distributed by `run_id` (docs/scaling.md). Its statements:
 * the record and the worker's delete name one `(run_id, command_id)` (router statements); the
 * sweeper's scan reads every shard (multi-shard by nature, like the stale-mail scan).
 *
 * One case is judged twice, by design: a command the worker refused just before the web recorded
 * it (the worker's delete came first), whose job then vanished from Redis before a sweep saw it
 * finished. It is queued again and judged again — a refused command changed nothing, so this is
 * the retry the Idempotency-Key contract already allows (idempotency.ts: "a refused deposit ... is
 * simply judged again").
 */
import type { Db } from "../../db.js";
import type { Logger } from "../../log.js";
import { validateCommand, type Command } from "./types.js";
import { redactTokens, type Sealer } from "../sealing/seal.js";
import { prepared } from "../sql/prepared.js";

/**
 * How old a recorded row must be before a sweep looks at its job, ms. The row is written after the
 * web's wait ran out (its job was added before), so a fresh row's job is almost always still
 * waiting; 5 s spares Redis a look at each of them while keeping a lost 202 at most ~5 s plus one
 * sweep interval from being queued again.
 */
export const PENDING_GRACE_MS = 5000;

/** Rows read per statement of a sweep's scan. */
export const PENDING_BATCH = 500;

/** The record, as sent: $1 run id, $2 command id, $3 kind, $4 the command as stored JSON. A repeat is a no-op. */
export const RECORD_PENDING_SQL = prepared(
  "slotflow_record_pending",
  "INSERT INTO pending_commands (run_id, command_id, kind, data) VALUES ($1::uuid, $2, $3, $4::jsonb) ON CONFLICT DO NOTHING",
);

/** The worker's delete of one row: $1 run id, $2 command id. */
export const FORGET_PENDING_SQL = prepared("slotflow_forget_pending", "DELETE FROM pending_commands WHERE run_id = $1::uuid AND command_id = $2");

/** The sweeper's scan: rows created at or before $1, after the keyset ($2, $3, $4), oldest first, at most $5. */
const OVERDUE_SQL = `SELECT run_id::text AS run_id, command_id, created_at FROM pending_commands
  WHERE created_at <= $1 AND (created_at, run_id, command_id) > ($2::timestamptz, $3::uuid, $4::text)
  ORDER BY created_at, run_id, command_id LIMIT $5`;
/** Which of the ids $1 (text[]) were applied. */
const APPLIED_SQL = "SELECT id FROM applied_commands WHERE id = ANY($1::text[])";
/** Deletes the rows named by the pairs ($1 uuid[], $2 text[]). */
const FORGET_MANY_SQL = `DELETE FROM pending_commands p USING unnest($1::uuid[], $2::text[]) AS u(run_id, command_id)
  WHERE p.run_id = u.run_id AND p.command_id = u.command_id`;
/** The commands of the rows named by the pairs ($1 uuid[], $2 text[]). */
const DATA_SQL = `SELECT p.command_id, p.data FROM pending_commands p JOIN unnest($1::uuid[], $2::text[]) AS u(run_id, command_id)
  ON p.run_id = u.run_id AND p.command_id = u.command_id`;

/**
 * Records `cmd` before its 202 (see the module header). One round trip. Throws what the database
 * throws; the caller then answers 503 "not known to have been applied", never the 202.
 */
export async function recordPending(db: Db, sealer: Sealer, cmd: Command): Promise<void> {
  await db.$executeRawUnsafe(RECORD_PENDING_SQL, cmd.runId, cmd.commandId, cmd.kind, JSON.stringify(sealer.sealJson(cmd)));
}

/** Drops the row of `cmd`, if any (the worker, after a refusal or a failure for good). One round trip. */
export async function forgetPending(db: Db, cmd: Pick<Command, "runId" | "commandId">): Promise<void> {
  await db.$executeRawUnsafe(FORGET_PENDING_SQL, cmd.runId, cmd.commandId);
}

/** A job's state as BullMQ's `getJobState` names it; `unknown` = no such job. */
export type JobState = "completed" | "failed" | "active" | "delayed" | "prioritized" | "waiting" | "waiting-children" | "unknown";

/** What `reconcilePending` needs of the queues (src/queue/queues.ts `Queues`). */
export interface PendingQueues {
  /** The state of each command's job on its run's shard, in order. */
  commandJobStates(cmds: Pick<Command, "runId" | "commandId">[]): Promise<JobState[]>;
  /** Queues the commands (job id = command id; a job that exists is left as it is). */
  enqueueMany(cmds: Command[]): Promise<void>;
}

/** What one sweep's reconciliation did. */
export interface PendingSweep {
  /** Rows looked at. */
  checked: number;
  /** Rows dropped: applied, or judged (job finished). */
  dropped: number;
  /** Commands queued again (their job was gone). */
  requeued: number;
  /** Rows whose command could not be read back (a seal key gone from the ring, a malformed command): left, and logged. */
  unreadable: number;
}

/**
 * One sweep's pass over the recorded commands older than `PENDING_GRACE_MS` (before `now`), batch
 * by batch, oldest first, until none is left or `budgetMs` (ms, at least one batch) is spent; see
 * the module header for what happens to each. Throws when PostgreSQL or Redis fails (the sweep is
 * retried at the next tick; nothing is half done that a repeat would not finish).
 */
export async function reconcilePending(
  deps: { db: Db; sealer: Sealer; queues: PendingQueues; log?: Logger },
  now: Date,
  budgetMs: number,
): Promise<PendingSweep> {
  const until = Date.now() + budgetMs;
  const cutoff = new Date(now.getTime() - PENDING_GRACE_MS);
  const result: PendingSweep = { checked: 0, dropped: 0, requeued: 0, unreadable: 0 };
  let after: [Date, string, string] = [new Date(0), "00000000-0000-0000-0000-000000000000", ""];
  for (;;) {
    const rows = await deps.db.$queryRawUnsafe<{ run_id: string; command_id: string; created_at: Date }[]>(OVERDUE_SQL, cutoff, ...after, PENDING_BATCH);
    if (rows.length === 0) break;
    const last = rows[rows.length - 1]!;
    after = [last.created_at, last.run_id, last.command_id];
    result.checked += rows.length;

    const applied = new Set(
      (await deps.db.$queryRawUnsafe<{ id: string }[]>(APPLIED_SQL, rows.map((r) => r.command_id))).map((r) => r.id),
    );
    const open = rows.filter((r) => !applied.has(r.command_id));
    const states = await deps.queues.commandJobStates(open.map((r) => ({ runId: r.run_id, commandId: r.command_id })));
    const judged = open.filter((_, i) => states[i] === "completed" || states[i] === "failed");
    const lost = open.filter((_, i) => states[i] === "unknown");
    const drop = [...rows.filter((r) => applied.has(r.command_id)), ...judged];
    if (drop.length > 0) {
      await deps.db.$executeRawUnsafe(FORGET_MANY_SQL, drop.map((r) => r.run_id), drop.map((r) => r.command_id));
      result.dropped += drop.length;
    }
    if (lost.length > 0) {
      const data = await deps.db.$queryRawUnsafe<{ command_id: string; data: unknown }[]>(DATA_SQL, lost.map((r) => r.run_id), lost.map((r) => r.command_id));
      const cmds: Command[] = [];
      for (const row of data) {
        try {
          cmds.push(validateCommand(deps.sealer.unsealJson(row.data)));
        } catch (err) {
          result.unreadable++;
          const message = redactTokens(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
          deps.log?.error({ commandId: row.command_id, err: message }, "a recorded 202 command cannot be read back; left in pending_commands");
        }
      }
      await deps.queues.enqueueMany(cmds);
      result.requeued += cmds.length;
      if (cmds.length > 0) {
        const first = cmds.slice(0, 10).map((c) => ({ kind: c.kind, runId: c.runId, commandId: c.commandId }));
        deps.log?.warn({ count: cmds.length, first }, "queued again: commands answered 202 whose jobs were gone from Redis");
      }
    }
    if (rows.length < PENDING_BATCH || Date.now() > until) break;
  }
  return result;
}
