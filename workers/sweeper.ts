/**
 * The sweeper: a BullMQ job scheduler fires a `sweep` job every SLOTFLOW_SWEEP_INTERVAL_MS; the
 * sweep enqueues an `expire` command for each open slot past its deadline (the command worker
 * applies it under the run lock, and skips it if the slot closed meanwhile) and re-enqueues
 * outbox messages left pending for more than 30 s, and commands answered 202 whose jobs Redis lost
 * (src/engine/commands/pending.ts, issue 34 item 3). Any number of sweepers may run: the scheduler
 * fires each tick once, and job ids (`expire-<slot>`; a timer's `expire-<row>-<due ms>`, one per
 * firing — issue 19; the outbox id) de-duplicate.
 *
 * The sweeper only makes expiry prompt; correctness does not depend on it, since deposits and
 * raises check the deadline themselves.
 *
 * Retention (issue 20, SLOTFLOW_RETENTION): at most every PURGE_EVERY_MS a sweep also deletes runs
 * that ended longer ago than the retention, with all their rows (src/engine/sweeps/retention.ts), batch
 * by batch for at most a tenth of a sweep interval (PURGE_SHARE), so a run is gone within a minute of passing it.
 */
import { Worker } from "bullmq";
import { dueExpiries } from "../src/engine/sweeps/expiry.js";
import { syncSlackMessages } from "../src/channels/slack/replace.js";
import { reconcilePending } from "../src/engine/commands/pending.js";
import { purge, PURGED_TABLES, type PurgeResult } from "../src/engine/sweeps/retention.js";
import { overdueDeliveries } from "../src/outbox/deliveries.js";
import { overdueCalls } from "../src/calls/overdue.js";
import { lapsedLeases } from "../src/calls/task/store.js";
import { lapsedCommands } from "../src/calls/task/lease.js";
import { QUEUE, redisConnection } from "../src/queue/queues.js";
import type { Runtime } from "../src/runtime.js";
import { retentionMetrics, sweeperMetrics } from "../src/metrics/metrics.js";
import { workerOptions } from "./options.js";

/** Due slots read and enqueued at a time: one statement, one `addBulk`. */
export const SWEEP_BATCH = 500;
/**
 * While draining, the next batch is read once fewer than this many commands wait in the queue:
 * expiries never stand more than about SWEEP_BATCH + SWEEP_REFILL_AT deep ahead of deposits.
 */
export const SWEEP_REFILL_AT = 100;
/** How often a draining sweep looks at the queue's depth, ms. */
const REFILL_POLL_MS = 20;
const MAIL_GRACE_MS = 30_000;
/** How often a sweeper process purges (retention), ms; a purge that stopped at its budget goes on at the next sweep. */
export const PURGE_EVERY_MS = 10_000;
/**
 * A purge takes at most 1/PURGE_SHARE of a sweep interval (and at least one batch). Measured (bench
 * `purge`, 2 cores): purging for half of each interval cost deposits 10× their p50 and 2.9× their
 * p99 (PostgreSQL's CPU), while one batch of 500 per 1 s sweep still deletes ~500 runs/s — 43M
 * a day, far above any steady rate of ended runs — so a backlog drains without crowding deposits.
 */
export const PURGE_SHARE = 10;
/** When each runtime last purged (epoch ms), and whether it stopped with more due. */
const lastPurge = new WeakMap<Runtime, { at: number; more: boolean }>();

/**
 * One sweep; returns how many expiry commands (repeats included) and mail deliveries it enqueued.
 *
 * Expiries: it reads the oldest due open slots, SWEEP_BATCH at a time (one statement per batch:
 * an index range scan on `slots (status, deadline)`, so the cost follows the expired, not the
 * open — bench `sweep`), and enqueues each batch with one Redis call. A full batch means more are
 * due: the sweep then waits until the worker has taken all but SWEEP_REFILL_AT of the commands
 * waiting, and reads the next batch — for at most `drainMs` (default: the sweep interval), after
 * which the next scheduled sweep carries on. So a mass expiry drains as fast as the workers apply
 * it, not at one batch per interval, without burying deposits behind it. A slot whose expiry is
 * still waiting or being applied is read again; its command id (`expire-<slot>`) makes the repeat
 * a no-op (the queue de-duplicates the job; a finished command is answered from
 * `applied_commands`).
 */
export async function sweepOnce(
  rt: Runtime,
  now = new Date(),
  drainMs = rt.config.sweepIntervalMs,
): Promise<{ expiries: number; mail: number; deliveries?: number; requeued?: number; slackReplaced?: number; purgedRuns?: number }> {
  const until = Date.now() + drainMs;
  let expiries = 0;
  for (;;) {
    const due = await dueExpiries(rt.db, now, SWEEP_BATCH);
    await rt.queues.enqueueMany(due, { removeOnComplete: true });
    expiries += due.length;
    if (due.length < SWEEP_BATCH || !(await queueBelow(rt, SWEEP_REFILL_AT, until))) break;
  }
  const stale = await rt.db.outboxMessage.findMany({
    where: { status: "pending", createdAt: { lte: new Date(now.getTime() - MAIL_GRACE_MS) } },
    select: { id: true, runId: true },
    take: SWEEP_BATCH,
  });
  await rt.queues.enqueueMail(stale.map((m) => ({ outboxId: m.id, runId: m.runId })));
  // deliveries whose due attempt no worker took (issue 18); the job id names the attempt, so a
  // job still waiting makes this a no-op
  const overdue = await overdueDeliveries(rt.db, now, MAIL_GRACE_MS, SWEEP_BATCH);
  await rt.queues.enqueueDeliveries(overdue.map((d) => ({ deliveryId: d.id, runId: d.runId, attempt: d.attempts })));
  // calls (v0.5) whose due attempt no worker took, or whose attempt's worker died (src/calls/overdue.ts)
  await rt.queues.enqueueCalls(await overdueCalls(rt.db, now, MAIL_GRACE_MS, SWEEP_BATCH));
  // task leases that ran out (issue 41 item 3): the attempt failed — a `call` command, as an
  // attempt's outcome; its id names the attempt, so a repeat is a no-op (src/calls/task/lease.ts)
  await rt.queues.enqueueMany(lapsedCommands(await lapsedLeases(rt.db, now, SWEEP_BATCH)), { removeOnComplete: true });
  // commands answered 202 whose jobs Redis lost (issue 34 item 3; src/engine/commands/pending.ts)
  const pending = await reconcilePending({ db: rt.db, sealer: rt.sealer, queues: rt.queues, log: rt.log }, now, Math.max(50, drainMs / PURGE_SHARE));
  // v0.4 "Answers inside Slack": questions whose slot closed some other way lose their controls
  const slackReplaced = await syncSlackMessages({ db: rt.db, sealer: rt.sealer, apiBase: rt.config.slackApiUrl, log: rt.log }).catch((err: unknown) => {
    rt.log.warn({ err: err instanceof Error ? err.message : String(err) }, "could not sync Slack messages; the next sweep tries again");
    return 0;
  });
  const purged = await purgeIfDue(rt, now, drainMs);
  return {
    expiries,
    mail: stale.length,
    ...(overdue.length > 0 ? { deliveries: overdue.length } : {}),
    ...(pending.requeued > 0 ? { requeued: pending.requeued } : {}),
    ...(slackReplaced > 0 ? { slackReplaced } : {}),
    ...(purged && purged.counts.runs + purged.counts.applied_commands > 0 ? { purgedRuns: purged.counts.runs } : {}),
  };
}

/**
 * Retention's share of a sweep (issue 20): when SLOTFLOW_RETENTION is not `off` and this process
 * has not purged for PURGE_EVERY_MS (or its last purge stopped with more due), purges batch by
 * batch for at most `drainMs` / PURGE_SHARE (one batch at least); counts each committed batch in `slotflow_purged_rows_total`.
 * Returns what it did, or null when it was not due.
 */
export async function purgeIfDue(rt: Runtime, now: Date, drainMs: number): Promise<PurgeResult | null> {
  const retentionMs = rt.config.retentionMs;
  if (retentionMs === null) return null;
  const last = lastPurge.get(rt);
  if (last && !last.more && Date.now() - last.at < PURGE_EVERY_MS) return null;
  const result = await purge(rt.db, now, retentionMs, {
    budgetMs: Math.max(50, drainMs / PURGE_SHARE),
    onBatch: (c) => {
      for (const table of PURGED_TABLES) if (c[table] > 0) retentionMetrics.purged.inc({ table }, c[table]);
    },
  });
  lastPurge.set(rt, { at: Date.now(), more: result.more });
  if (result.counts.runs > 0 || result.counts.applied_commands > 0) rt.log.info({ purged: result.counts, more: result.more }, "retention purge");
  return result;
}

/** Resolves true once fewer than `depth` commands wait in the queue (all shards together), false if `until` (epoch ms) comes first. */
async function queueBelow(rt: Runtime, depth: number, until: number): Promise<boolean> {
  for (;;) {
    if ((await rt.queues.waitingCount()) < depth) return true;
    if (Date.now() + REFILL_POLL_MS > until) return false;
    await new Promise((r) => setTimeout(r, REFILL_POLL_MS));
  }
}

export const SWEEP_SCHEDULER_ID = "sweep-deadlines";

/**
 * Makes sure the `sweep` job scheduler exists in Redis, creating it when it is missing (a Redis
 * restarted without persistence, a FLUSHDB). Returns true when it had to be created. Throws when
 * Redis cannot be reached.
 */
export async function assertSweepScheduler(rt: Runtime): Promise<boolean> {
  const existing = await rt.queues.sweep.getJobScheduler(SWEEP_SCHEDULER_ID);
  if (existing && existing.every === rt.config.sweepIntervalMs) return false;
  await rt.queues.sweep.upsertJobScheduler(
    SWEEP_SCHEDULER_ID,
    { every: rt.config.sweepIntervalMs },
    // The last completed sweeps are kept: the newest one's finish time is the metric
    // slotflow_sweep_last_success_timestamp_seconds (src/metrics/metrics.ts).
    { name: "sweep", data: {}, opts: { removeOnComplete: { count: 10 }, removeOnFail: 100 } },
  );
  return true;
}

/** How often the sweeper checks its scheduler between sweeps, ms: 5 sweep intervals, within [1 s, 30 s]. */
export function schedulerCheckMs(sweepIntervalMs: number): number {
  return Math.min(30_000, Math.max(1000, sweepIntervalMs * 5));
}

/**
 * Starts the sweeper (issue 8 item 12). Its scheduler is re-asserted at start, at the start of every
 * sweep, whenever its Redis connection is (re)established, and every `schedulerCheckMs` — the
 * last because a Redis that lost the scheduler never fires another sweep. A failed sweep (or a
 * failed re-assertion) is logged and counted in `slotflow_sweep_failures_total`; the sweeper keeps
 * running and the next tick tries again.
 */
export async function startSweeper(rt: Runtime): Promise<Worker> {
  let first = true;
  const reassert = async (when: string) => {
    try {
      const created = await assertSweepScheduler(rt);
      if (created && !first) {
        sweeperMetrics.schedulerRestored.inc();
        rt.log.warn({ scheduler: SWEEP_SCHEDULER_ID, when }, "sweep scheduler was missing from Redis; re-created it");
      }
      first = false;
    } catch (err) {
      sweeperMetrics.failures.inc({ stage: "scheduler" });
      rt.log.error({ when, err: err instanceof Error ? err.message : String(err) }, "could not assert the sweep scheduler; will try again");
    }
  };
  await reassert("start");
  const connection = redisConnection(rt.config, true);
  const worker = new Worker(
    QUEUE.sweep,
    async () => {
      await reassert("sweep");
      const swept = await sweepOnce(rt);
      if (swept.expiries || swept.mail || swept.purgedRuns || swept.requeued) rt.log.info(swept, "sweep");
      return swept;
    },
    { ...workerOptions(rt.config, 1, connection), maxStalledCount: 1 },
  );
  worker.on("failed", (_job, err) => {
    sweeperMetrics.failures.inc({ stage: "sweep" });
    rt.log.error({ err: err.message }, "sweep failed");
  });
  worker.on("error", (err) => rt.log.error({ err: err.message }, "sweeper error"));
  let connected = true;
  connection.on("close", () => (connected = false));
  connection.on("ready", () => {
    if (connected) return;
    connected = true;
    void reassert("reconnect");
  });
  const timer = setInterval(() => void reassert("check"), schedulerCheckMs(rt.config.sweepIntervalMs));
  timer.unref();
  worker.on("closing", () => clearInterval(timer));
  return worker;
}
