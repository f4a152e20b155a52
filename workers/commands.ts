/**
 * The command worker: applies `commands` jobs to runs (src/engine/apply.ts) and hands the mail each
 * step queued to the `mail` queue once the step has committed. Run as many copies as you like;
 * per-run order comes from the run row lock, not from the queue.
 */
import { Worker, type ConnectionOptions, type Job } from "bullmq";
import { applyCommand } from "../src/engine/apply.js";
import { validateCommand, type Outcome } from "../src/engine/commands/types.js";
import { QUEUE, redisConnection } from "../src/queue/queues.js";
import type { Runtime } from "../src/runtime.js";
import { metrics } from "../src/web/metrics.js";

/**
 * One log line per processed command, saying what happened (issue 9 §5 "Logs say what happened"):
 * `command applied` (status started/completed/expired), `command skipped` (an expiry that found
 * nothing to do), `command refused` (with the refusal code; nothing changed).
 */
export function logOutcome(rt: Pick<Runtime, "log">, kind: string, runId: string, outcome: Outcome): void {
  metrics.commands.inc({ command: kind, result: !outcome.ok ? "refused" : outcome.status === "skipped" ? "skipped" : "applied" });
  if (!outcome.ok) rt.log.info({ command: kind, runId, code: outcome.refusal.code }, "command refused");
  else if (outcome.status === "skipped") rt.log.info({ command: kind, runId, status: outcome.status }, "command skipped");
  else rt.log.info({ command: kind, runId, status: outcome.status }, "command applied");
}

export function startCommandWorker(rt: Runtime): Worker {
  const connection = redisConnection(rt.config, true);
  const worker = new Worker(
    QUEUE.commands,
    async (job: Job): Promise<Outcome> => {
      const cmd = validateCommand(job.data);
      const endTimer = metrics.applySeconds.startTimer({ command: cmd.kind });
      const { outcome, queuedMail } = await applyCommand(rt.engine, cmd);
      endTimer();
      await rt.queues.enqueueMail(queuedMail).catch((err: unknown) => {
        // The sweeper re-enqueues pending mail; the step itself has committed.
        rt.log.warn({ err: String(err) }, "could not enqueue mail delivery; the sweeper will retry");
      });
      logOutcome(rt, cmd.kind, cmd.runId, outcome);
      return outcome;
    },
    { connection: connection as ConnectionOptions, prefix: rt.config.queuePrefix, concurrency: rt.config.workerConcurrency },
  );
  worker.on("failed", (job, err) => {
    const command = typeof job?.data?.kind === "string" ? job.data.kind : "unknown";
    const willRetry = job !== undefined && job.attemptsMade < (job.opts.attempts ?? 1);
    (willRetry ? metrics.retried : metrics.failed).inc({ command });
    rt.log.error({ jobId: job?.id, command, attempts: job?.attemptsMade, willRetry, err: err.message }, willRetry ? "command attempt failed; will retry" : "command failed");
  });
  worker.on("stalled", (jobId) => {
    metrics.stalled.inc({ queue: QUEUE.commands });
    rt.log.warn({ jobId, queue: QUEUE.commands }, "job stalled; taken back");
  });
  worker.on("error", (err) => rt.log.error({ err: err.message }, "command worker error"));
  return worker;
}
