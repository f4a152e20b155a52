/**
 * The sweeper: a BullMQ job scheduler fires a `sweep` job every SLOTFLOW_SWEEP_INTERVAL_MS; the
 * sweep enqueues an `expire` command for each open slot past its deadline (the command worker
 * applies it under the run lock, and skips it if the slot closed meanwhile) and re-enqueues
 * outbox messages left pending for more than 30 s. Any number of sweepers may run: the scheduler
 * fires each tick once, and job ids (`expire-<slot>`, the outbox id) de-duplicate.
 *
 * The sweeper only makes expiry prompt; correctness does not depend on it, since deposits and
 * raises check the deadline themselves.
 */
import { Worker, type ConnectionOptions } from "bullmq";
import { dueExpiries } from "../src/engine/expiry.js";
import { QUEUE, redisConnection } from "../src/queue/queues.js";
import type { Runtime } from "../src/runtime.js";

const BATCH = 500;
const MAIL_GRACE_MS = 30_000;

/** One sweep; returns how many expiries and mail deliveries it enqueued. */
export async function sweepOnce(rt: Runtime, now = new Date()): Promise<{ expiries: number; mail: number }> {
  const due = await dueExpiries(rt.db, now, BATCH);
  // One statement finds the batch (the (status, deadline) index: cost follows the expired, not the
  // open), one Redis call enqueues it (bench `sweep`).
  await rt.queues.enqueueMany(due, { removeOnComplete: true });
  const stale = await rt.db.outboxMessage.findMany({
    where: { status: "pending", createdAt: { lte: new Date(now.getTime() - MAIL_GRACE_MS) } },
    select: { id: true },
    take: BATCH,
  });
  await rt.queues.enqueueMail(stale.map((m) => m.id));
  return { expiries: due.length, mail: stale.length };
}

export async function startSweeper(rt: Runtime): Promise<Worker> {
  await rt.queues.sweep.upsertJobScheduler(
    "sweep-deadlines",
    { every: rt.config.sweepIntervalMs },
    // The last completed sweeps are kept: the newest one's finish time is the metric
    // slotflow_sweep_last_success_timestamp_seconds (src/web/metrics.ts).
    { name: "sweep", data: {}, opts: { removeOnComplete: { count: 10 }, removeOnFail: 100 } },
  );
  const connection = redisConnection(rt.config, true);
  const worker = new Worker(
    QUEUE.sweep,
    async () => {
      const swept = await sweepOnce(rt);
      if (swept.expiries || swept.mail) rt.log.info(swept, "sweep");
      return swept;
    },
    { connection: connection as ConnectionOptions, prefix: rt.config.queuePrefix, concurrency: 1 },
  );
  worker.on("error", (err) => rt.log.error({ err: err.message }, "sweeper error"));
  return worker;
}
