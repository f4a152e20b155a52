/**
 * The mail worker: delivers outbox messages (src/outbox/mailer.ts), one `deliver` job each.
 * A database or Redis outage is retried until the delivery is made (src/queue/retry.ts); SMTP
 * refusals are counted on the outbox row, which gives up after its own attempt limit.
 */
import { Worker, type Job } from "bullmq";
import { redactTokens } from "../src/engine/sealing/seal.js";
import { deliverOutbox } from "../src/outbox/mailer.js";
import { mailJobOf, readJobData } from "../src/queue/outbox-jobs.js";
import { QUEUE } from "../src/queue/queues.js";
import type { Runtime } from "../src/runtime.js";
import { metrics } from "../src/metrics/metrics.js";
import { workerOptions } from "./options.js";

/**
 * Starts the worker of the mail queue of shard `shard` (src/queue/shards.ts; default 0). A job is
 * `{ outboxId, runId }`, or `{ outboxId }` as the previous release queued it (src/queue/outbox-jobs.ts);
 * data naming no row fails the job for good.
 */
export function startMailWorker(rt: Runtime, shard = 0): Worker {
  const worker = new Worker(
    QUEUE.mail,
    async (job: Job<unknown>) => deliverOutbox(rt.db, rt.sealer, rt.transport, readJobData(() => mailJobOf(job.data)), rt.log),
    workerOptions(rt.config, 4, undefined, shard),
  );
  worker.on("error", (err) => rt.log.error({ err: redactTokens(err.message) }, "mail worker error"));
  worker.on("stalled", (jobId) => {
    metrics.stalled.inc({ queue: QUEUE.mail });
    rt.log.warn({ jobId, queue: QUEUE.mail }, "job stalled; taken back");
  });
  return worker;
}
