/**
 * The delivery worker (issue 18): one `attempt` job per attempt of a `send webhook` / `send
 * message` delivery (src/outbox/deliveries.ts). A failed attempt enqueues the next one, delayed to
 * its time on the retry schedule; a database or Redis outage is retried by BullMQ (retry.ts) and
 * the sweeper re-enqueues an attempt whose job was lost.
 */
import { Worker, type Job } from "bullmq";
import { redactTokens } from "../src/engine/sealing/seal.js";
import { attemptDelivery } from "../src/outbox/deliveries.js";
import { deliveryJobOf, readJobData } from "../src/queue/outbox-jobs.js";
import { QUEUE } from "../src/queue/queues.js";
import type { Runtime } from "../src/runtime.js";
import { deliveryMetrics, metrics } from "../src/metrics/metrics.js";
import { workerOptions } from "./options.js";

export function startDeliveryWorker(rt: Runtime): Worker {
  const deps = {
    db: rt.db,
    sealer: rt.sealer,
    log: rt.log,
    allowPrivate: rt.config.endpointsAllowPrivate,
    retryMs: rt.config.deliveryRetryMs,
    slackApiUrl: rt.config.slackApiUrl,
    onOutcome: (kind: string, outcome: string) => deliveryMetrics.attempts.inc({ kind, outcome }),
  };
  const worker = new Worker(
    QUEUE.deliveries,
    async (job: Job<unknown>) => {
      // `{ deliveryId, runId }`, or `{ deliveryId }` as the previous release queued it (src/queue/outbox-jobs.ts)
      const ref = readJobData(() => deliveryJobOf(job.data));
      const result = await attemptDelivery(deps, ref);
      // the next attempt carries the run id, read from the row (also for a job that had none)
      if (result.kind === "retry") await rt.queues.enqueueDeliveries([{ deliveryId: ref.deliveryId, runId: result.runId, attempt: result.attempt, delayMs: result.delayMs }]);
      return result.kind;
    },
    workerOptions(rt.config, 4),
  );
  worker.on("error", (err) => rt.log.error({ err: redactTokens(err.message) }, "delivery worker error"));
  worker.on("stalled", (jobId) => {
    metrics.stalled.inc({ queue: QUEUE.deliveries });
    rt.log.warn({ jobId, queue: QUEUE.deliveries }, "job stalled; taken back");
  });
  return worker;
}
