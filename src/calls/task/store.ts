/**
 * The statements of the task protocol (v0.5 SDK, issue 41 item 3; docs/sdk.md "Task workers";
 * migration 20261128050000_tasks). A `call task "type"` has a row in `calls` (its status and
 * attempts, owned by the engine's steps) and one in `tasks` (its lease). The step that opens the
 * call writes the task `ready`; the steps that apply an attempt's outcome offer it again or end it
 * (engine/sql/calls.ts). Outside the run lock, only these statements touch it:
 *
 *   claimTasks      a poll: the oldest ready tasks of some types become `held` — the next attempt
 *                   (counted on the call too, as an HTTP attempt is), a lease of the call's
 *                   Timeout, a fresh lock token per task — in ONE statement (`FOR UPDATE SKIP
 *                   LOCKED`: concurrent polls never take the same task)
 *   extendLease     a heartbeat: the lease runs the call's Timeout from now, while it is still held
 *                   by this token and has not run out
 *   heldTask        a completion or a failure: the task held by this token with a live lease,
 *                   with what the engine's `call` command needs
 *   lapsedLeases    the sweeper: held tasks whose lease ran out (a crashed or stalled worker)
 *
 * Lock tokens: `<run id>.<secret: 32 random bytes, base64url>` — the run id makes every statement
 * on one task a router statement of the partitioned schema (docs/scaling.md). The secret never
 * reaches PostgreSQL, not even as a statement's parameter: the claim is handed its SHA-256, and
 * stores `sha256("<task id>:" + sha256(secret))` (`lockSha256`), so a token is useless for another
 * task and is never written anywhere (not in the database, a log, Redis or an error).
 */
import { createHash, randomBytes } from "node:crypto";
import type { Db } from "../../db.js";
import { LOWER_UUID as UUID, UUID_PATTERN } from "../../json/uuid.js";

/** A lock token: the run id, a dot, 32 random bytes base64url. */
const LOCK_TOKEN = new RegExp(`^(${UUID_PATTERN})\\.[A-Za-z0-9_-]{43}$`);

/** A task a poll claimed: as the wire protocol shows it, plus the sealed request to open. */
export interface ClaimedTask {
  id: string;
  type: string;
  runId: string;
  attempt: number;
  lockToken: string;
  lockExpiresAt: Date;
  /** The sealed JSON text of {path, input} (the call's `request`). */
  request: string;
}

const sha256hex = (s: string) => createHash("sha256").update(s).digest("hex");

/** The hex SHA-256 stored for `token` on task `id` (see the module header). */
export function lockSha256(taskId: string, token: string): string {
  const secret = token.slice(token.indexOf(".") + 1);
  return sha256hex(`${taskId.toLowerCase()}:${sha256hex(secret)}`);
}

/** The run id a lock token begins with, or null when `token` is not shaped like one. */
export function lockTokenRunId(token: string): string | null {
  const m = LOCK_TOKEN.exec(token);
  return m ? m[1]! : null;
}

/**
 * Claims up to `max` ready tasks of `types` (one statement): each becomes held by a new token for
 * its Timeout, as its next attempt. Also answers `nextAt`: when the soonest task of these types
 * that is ready but not yet due (a retry's backoff) becomes due — null when none — so a poll can
 * sleep until then instead of asking again.
 */
export async function claimTasks(db: Db, types: string[], max: number): Promise<{ tasks: ClaimedTask[]; nextAt: Date | null }> {
  const secrets = Array.from({ length: max }, () => randomBytes(32).toString("base64url"));
  const hashed = secrets.map(sha256hex);
  const rows = await db.$queryRawUnsafe<{ tasks: { id: string; run_id: string; type: string; attempt: number; lock_expires_at: string; n: number; request: string }[]; next_at: Date | null }[]>(
    `WITH picked AS (
       SELECT s.run_id, s.id, row_number() OVER () AS n FROM (
         SELECT run_id, id FROM tasks
          WHERE status = 'ready' AND type = ANY($1::text[]) AND available_at <= now()
          ORDER BY available_at LIMIT $2 FOR UPDATE SKIP LOCKED) s
     ), claimed AS (
       UPDATE tasks t SET status = 'held', attempt = t.attempt + 1, claimed_at = now(),
              lock_sha256 = encode(sha256(convert_to(t.id::text || ':' || ($3::text[])[p.n], 'UTF8')), 'hex'),
              lock_expires_at = now() + make_interval(secs => t.timeout_ms / 1000.0)
         FROM picked p WHERE t.run_id = p.run_id AND t.id = p.id
       RETURNING t.id, t.run_id, t.type, t.attempt, t.lock_expires_at, p.n,
                 (SELECT c.request FROM calls c WHERE c.run_id = t.run_id AND c.id = t.id) AS request
     ), counted AS (
       -- the call's attempts, as the calls worker's claim counts an HTTP attempt (x.attempts, the run view)
       UPDATE calls c SET attempts = cl.attempt FROM claimed cl WHERE c.run_id = cl.run_id AND c.id = cl.id
     )
     SELECT COALESCE((SELECT json_agg(claimed) FROM claimed), '[]'::json) AS tasks,
            (SELECT min(available_at) FROM tasks WHERE status = 'ready' AND type = ANY($1::text[]) AND available_at > now()) AS next_at`,
    types,
    max,
    hashed,
  );
  const row = rows[0];
  const tasks = (row?.tasks ?? []).map((t) => ({
    id: t.id,
    type: t.type,
    runId: t.run_id,
    attempt: t.attempt,
    lockToken: `${t.run_id}.${secrets[t.n - 1]}`,
    lockExpiresAt: new Date(t.lock_expires_at),
    request: t.request,
  }));
  return { tasks, nextAt: row?.next_at ? new Date(row.next_at) : null };
}

/** Extends the lease of task `id` held by `token` by its Timeout from now; null when it is not held by it, or its lease ran out. */
export async function extendLease(db: Db, id: string, token: string): Promise<Date | null> {
  const runId = lockTokenRunId(token);
  if (!runId || !UUID.test(id)) return null;
  const rows = await db.$queryRawUnsafe<{ lock_expires_at: Date }[]>(
    `UPDATE tasks SET lock_expires_at = now() + make_interval(secs => timeout_ms / 1000.0)
      WHERE run_id = $1::uuid AND id = $2::uuid AND status = 'held' AND lock_sha256 = $3 AND lock_expires_at > now()
      RETURNING lock_expires_at`,
    runId,
    id,
    lockSha256(id, token),
  );
  return rows[0]?.lock_expires_at ?? null;
}

/** A task held by a token with a live lease, and where its answer goes. */
export interface HeldTask {
  id: string;
  runId: string;
  slotId: string;
  attempt: number;
  /** ms since the attempt was claimed. */
  ms: number;
  workflow: string;
  version: number;
  state: string;
  alias: string;
}

/** Task `id` as held by `token`, when its lease has not run out; else null (409 task-lock-lost). */
export async function heldTask(db: Db, id: string, token: string): Promise<HeldTask | null> {
  const runId = lockTokenRunId(token);
  if (!runId || !UUID.test(id)) return null;
  const rows = await db.$queryRawUnsafe<{ run_id: string; slot_id: string; attempt: number; ms: number; workflow_name: string; version: number; state: string; alias: string }[]>(
    `SELECT t.run_id, c.slot_id, t.attempt, (extract(epoch FROM now() - t.claimed_at) * 1000)::int AS ms,
            r.workflow_name, r.version, s.state, s.alias
       FROM tasks t
       JOIN calls c ON c.run_id = t.run_id AND c.id = t.id
       JOIN slots s ON s.run_id = c.run_id AND s.id = c.slot_id
       JOIN runs r ON r.id = t.run_id
      WHERE t.run_id = $1::uuid AND t.id = $2::uuid AND t.status = 'held' AND t.lock_sha256 = $3 AND t.lock_expires_at > now()`,
    runId,
    id,
    lockSha256(id, token),
  );
  const r = rows[0];
  if (!r) return null;
  return { id, runId: r.run_id, slotId: r.slot_id, attempt: r.attempt, ms: Math.max(0, r.ms), workflow: r.workflow_name, version: r.version, state: r.state, alias: r.alias };
}

/** A held task whose lease ran out: its attempt failed (a crashed or stalled worker). */
export interface LapsedLease {
  id: string;
  runId: string;
  slotId: string;
  attempt: number;
  timeoutMs: number;
}

/** Up to `take` held tasks whose lease ran out before `now` (the sweeper turns each into a failed attempt). */
export async function lapsedLeases(db: Db, now: Date, take: number): Promise<LapsedLease[]> {
  const rows = await db.$queryRawUnsafe<{ id: string; run_id: string; slot_id: string; attempt: number; timeout_ms: number }[]>(
    `SELECT t.id, t.run_id, c.slot_id, t.attempt, t.timeout_ms
       FROM tasks t JOIN calls c ON c.run_id = t.run_id AND c.id = t.id
      WHERE t.status = 'held' AND t.lock_expires_at < $1::timestamptz
      ORDER BY t.lock_expires_at LIMIT $2`,
    now.toISOString(),
    take,
  );
  return rows.map((r) => ({ id: r.id, runId: r.run_id, slotId: r.slot_id, attempt: r.attempt, timeoutMs: r.timeout_ms }));
}
