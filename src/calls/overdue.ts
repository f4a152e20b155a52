/**
 * Pending calls whose attempt no worker took (v0.5, issue 40): the sweeper queues them again
 * (workers/sweeper.ts), as it does for deliveries. A call is overdue when its next attempt was due
 * more than `graceMs` ago and no attempt holds it, or when the attempt that held it ran past its
 * claim (a worker killed mid-attempt, and its job lost with Redis): then that same attempt is made
 * again (same `Idempotency-Key`, same command id). The job id names the attempt, so a job still
 * waiting makes the re-queue a no-op. A `call task` is not attempted by the calls worker: its
 * workers poll for it (src/calls/task/), and a lease that ran out is `lapsedLeases`' (task/store.ts).
 */
import type { Db } from "../db.js";

export async function overdueCalls(db: Db, now: Date, graceMs: number, take: number): Promise<{ callId: string; runId: string; attempt: number }[]> {
  const rows = await db.$queryRawUnsafe<{ id: string; run_id: string; attempts: number; claimed: boolean }[]>(
    `SELECT id, run_id, attempts, claimed_until IS NOT NULL AS claimed FROM calls
      WHERE status = 'pending' AND type <> 'task' AND next_attempt_at IS NOT NULL AND next_attempt_at <= $1::timestamptz
        AND (claimed_until IS NULL OR claimed_until < $2::timestamptz)
      ORDER BY next_attempt_at LIMIT $3`,
    new Date(now.getTime() - graceMs).toISOString(),
    now.toISOString(),
    take,
  );
  return rows.map((r) => ({ callId: r.id, runId: r.run_id, attempt: r.claimed ? r.attempts : r.attempts + 1 }));
}
