/**
 * The rows of calls (v0.5, issue 40; migration 20261128011000_calls): one per call slot opened.
 * Written and changed in the step's own transaction, after its write (step-write.ts), so a call
 * exists — and is attempted — only if the step that opened its slot commits. Steps of runs whose
 * state declares no call send none of these statements.
 *
 *   writeCalls   INSERT … FROM jsonb_to_recordset($1)               (a step that opened call slots)
 *   changeCalls  UPDATE … FROM jsonb_to_recordset($2) by (run_id, id) (a step that answered, retried, failed or cancelled calls)
 *   readCalls    the calls of a run's current slots (apply.ts, when the run's state declares a call)
 *
 * `call task` (v0.5 SDK, issue 41 item 3; migration 20261128050000_tasks): a task call's row keeps
 * its task type in `endpoint`, and has a `tasks` row (its lease) written with it by `writeCalls`
 * and changed with it by `changeCalls` — a pending task call is offered again (`ready` from its
 * next attempt's time), an ended one is `done`; either way its lock is dropped. Steps that touch no
 * task call send no statement on `tasks`.
 *
 * The calls worker (workers/calls.ts) is the only other writer: `claimCall` takes an attempt
 * (`attempts` + 1, `claimed_until`), outside the run lock; the step never writes those two columns
 * except to release the claim. The task claim (src/calls/task/store.ts) counts a task's attempt in
 * `attempts` the same way.
 */
import type { Db, Tx } from "../../db.js";

export interface CallWriteRow {
  id: string;
  run_id: string;
  slot_id: string;
  alias: string;
  element: number | null;
  type: string;
  endpoint: string | null;
  method: string | null;
  /** The sealed JSON text of {path, input}. */
  request: string;
  timeout_ms: number;
  max_attempts: number;
  deadline: string | null;
  created_at: string;
}

export interface CallChangeRow {
  id: string;
  /** The call's type ("http", "task"): a task's lease row changes with it. */
  type?: string;
  status: string;
  next_attempt_at: string | null;
  last_status: number | null;
  last_error: string | null;
  error: string | null;
  ended_at: string | null;
}

export interface CallRow {
  id: string;
  slot_id: string;
  alias: string;
  element: number | null;
  type: string;
  endpoint: string | null;
  method: string | null;
  status: string;
  attempts: number;
  max_attempts: number;
  timeout_ms: number;
  deadline: Date | null;
  next_attempt_at: Date | null;
  last_status: number | null;
  last_error: string | null;
  error: string | null;
  ended_at: Date | null;
  /** v0.5 child runs: the run a \`call workflow\` started (migration 20261128060000_child_runs); null otherwise. */
  child_run_id: string | null;
}

/** Inserts the calls a step opened (status pending, the first attempt due at once). */
export async function writeCalls(tx: Tx, rows: CallWriteRow[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.$executeRawUnsafe(
    `INSERT INTO calls (id, run_id, slot_id, alias, element, type, endpoint, method, request, timeout_ms, max_attempts, deadline, created_at, next_attempt_at)
     SELECT x.id, x.run_id, x.slot_id, x.alias, x.element, x.type, x.endpoint, x.method, x.request, x.timeout_ms, x.max_attempts, x.deadline, x.created_at,
            -- a \`call workflow\` has no attempts for the calls worker or the sweeper (its child run answers it)
            CASE WHEN x.type = 'workflow' THEN NULL ELSE x.created_at END
       FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, run_id uuid, slot_id uuid, alias text, element int, type text, endpoint text, method text,
                                                request text, timeout_ms int, max_attempts int, deadline timestamptz, created_at timestamptz)`,
    JSON.stringify(rows),
  );
  const tasks = rows.filter((r) => r.type === "task");
  if (tasks.length > 0) {
    await tx.$executeRawUnsafe(
      `INSERT INTO tasks (run_id, id, type, timeout_ms, available_at, created_at)
       SELECT x.run_id, x.id, x.endpoint, x.timeout_ms, x.created_at, x.created_at
         FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, run_id uuid, endpoint text, timeout_ms int, created_at timestamptz)`,
      JSON.stringify(tasks.map((t) => ({ id: t.id, run_id: t.run_id, endpoint: t.endpoint, timeout_ms: t.timeout_ms, created_at: t.created_at }))),
    );
  }
}

/**
 * Records what a step decided for calls of `runId`; the attempt whose outcome it applied releases its
 * claim. A task's lease row is changed FIRST, then the call: the task claim (src/calls/task/store.ts)
 * locks in that same order (the task, then its call), so the two never deadlock.
 */
export async function changeCalls(tx: Tx, runId: string, rows: CallChangeRow[]): Promise<void> {
  if (rows.length === 0) return;
  const tasks = rows.filter((r) => r.type === "task");
  if (tasks.length > 0) {
    // a pending task call was given its next attempt (offered from then); an ended one is done
    await tx.$executeRawUnsafe(
      `UPDATE tasks t SET status = CASE WHEN x.status = 'pending' THEN 'ready' ELSE 'done' END,
                          available_at = CASE WHEN x.status = 'pending' THEN x.next_attempt_at ELSE NULL END,
                          lock_sha256 = NULL, claimed_at = NULL, lock_expires_at = NULL
         FROM jsonb_to_recordset($2::jsonb) AS x(id uuid, status text, next_attempt_at timestamptz)
        WHERE t.run_id = $1::uuid AND t.id = x.id`,
      runId,
      JSON.stringify(tasks.map((t) => ({ id: t.id, status: t.status, next_attempt_at: t.next_attempt_at }))),
    );
  }
  await tx.$executeRawUnsafe(
    `UPDATE calls c SET status = x.status, next_attempt_at = x.next_attempt_at, last_status = x.last_status, last_error = x.last_error,
                        error = x.error, ended_at = x.ended_at, claimed_until = NULL
       FROM jsonb_to_recordset($2::jsonb) AS x(id uuid, status text, next_attempt_at timestamptz, last_status int, last_error text, error text, ended_at timestamptz)
      WHERE c.run_id = $1::uuid AND c.id = x.id`,
    runId,
    JSON.stringify(rows.map(({ type: _type, ...r }) => r)),
  );
}

const COLUMNS = `id, slot_id, alias, element, type, endpoint, method, status, attempts, max_attempts, timeout_ms, deadline, next_attempt_at, last_status, last_error, error, ended_at, child_run_id::text AS child_run_id`;

/** The calls of `slotIds` of run `runId` (under the run lock when read by a step). */
export async function readCalls(tx: Tx | Db, runId: string, slotIds: string[]): Promise<CallRow[]> {
  if (slotIds.length === 0) return [];
  return tx.$queryRawUnsafe<CallRow[]>(`SELECT ${COLUMNS} FROM calls WHERE run_id = $1::uuid AND slot_id = ANY($2::uuid[])`, runId, slotIds);
}

/** Every call of a run (the run view). */
export async function readRunCalls(db: Tx | Db, runId: string): Promise<CallRow[]> {
  return db.$queryRawUnsafe<CallRow[]>(`SELECT ${COLUMNS} FROM calls WHERE run_id = $1::uuid`, runId);
}

/**
 * Records on the parent's call the child run it started (v0.5 child runs, commands/child.ts): in
 * the transaction of the step that opened the call, after the child's start was written.
 */
export async function setCallChild(tx: Tx, runId: string, callId: string, childRunId: string): Promise<void> {
  await tx.$executeRawUnsafe(`UPDATE calls SET child_run_id = $3::uuid WHERE run_id = $1::uuid AND id = $2::uuid`, runId, callId, childRunId);
}
