/**
 * The mail worker: delivers outbox messages (src/outbox/mailer.ts), one `deliver` job each.
 */
import { Worker, type ConnectionOptions, type Job } from "bullmq";
import { deliverOutbox } from "../src/outbox/mailer.js";
import { QUEUE, redisConnection } from "../src/queue/queues.js";
import type { Runtime } from "../src/runtime.js";
import { metrics } from "../src/web/metrics.js";

export function startMailWorker(rt: Runtime): Worker {
  const connection = redisConnection(rt.config, true);
  const worker = new Worker(
    QUEUE.mail,
    async (job: Job<{ outboxId: string }>) => deliverOutbox(rt.db, rt.sealer, rt.transport, String(job.data.outboxId), rt.log),
    { connection: connection as ConnectionOptions, prefix: rt.config.queuePrefix, concurrency: 4 },
  );
  worker.on("error", (err) => rt.log.error({ err: err.message }, "mail worker error"));
  worker.on("stalled", (jobId) => {
    metrics.stalled.inc({ queue: QUEUE.mail });
    rt.log.warn({ jobId, queue: QUEUE.mail }, "job stalled; taken back");
  });
  return worker;
}
