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

/**
 * One log line per processed command, saying what happened (issue 9 §5 "Logs say what happened"):
 * `command applied` (status started/completed/expired), `command skipped` (an expiry that found
 * nothing to do), `command refused` (with the refusal code; nothing changed).
 */
export function logOutcome(rt: Pick<Runtime, "log">, kind: string, runId: string, outcome: Outcome): void {
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
      const { outcome, queuedMail } = await applyCommand(rt.engine, cmd);
      await rt.queues.enqueueMail(queuedMail).catch((err: unknown) => {
        // The sweeper re-enqueues pending mail; the step itself has committed.
        rt.log.warn({ err: String(err) }, "could not enqueue mail delivery; the sweeper will retry");
      });
      logOutcome(rt, cmd.kind, cmd.runId, outcome);
      return outcome;
    },
    { connection: connection as ConnectionOptions, prefix: rt.config.queuePrefix, concurrency: rt.config.workerConcurrency },
  );
  worker.on("failed", (job, err) => rt.log.error({ jobId: job?.id, attempts: job?.attemptsMade, err: err.message }, "command failed"));
  worker.on("error", (err) => rt.log.error({ err: err.message }, "command worker error"));
  return worker;
}
