/**
 * The command worker: applies `commands` jobs to runs (src/engine/apply.ts) and hands the mail each
 * step queued to the `mail` queue once the step has committed. Run as many copies as you like;
 * per-run order comes from the run row lock, not from the queue.
 *
 * Failures (src/queue/retry.ts): an infrastructure error (PostgreSQL or Redis unreachable, a reset
 * connection, a lock timeout…) is re-thrown and retried with capped backoff until the command is
 * applied, however long the outage; a deterministic failure ends the job at once
 * (`UnrecoverableError`) after recording a `command-failed` incident on the run
 * (src/engine/failures.ts). Lock, stall and backoff settings: workers/options.ts.
 */
import { UnrecoverableError, Worker, type Job } from "bullmq";
import { applyCommand } from "../src/engine/apply.js";
import { validateCommand, type Command, type Outcome } from "../src/engine/commands/types.js";
import { recordCommandFailure } from "../src/engine/failures.js";
import { redactTokens } from "../src/engine/seal.js";
import { QUEUE } from "../src/queue/queues.js";
import { classifyFailure, decideRetry } from "../src/queue/retry.js";
import type { Runtime } from "../src/runtime.js";
import { workerOptions } from "./options.js";

const messageOf = (err: unknown) => redactTokens(err instanceof Error ? err.message : String(err));

export function startCommandWorker(rt: Runtime): Worker {
  const worker = new Worker(
    QUEUE.commands,
    async (job: Job): Promise<Outcome> => {
      let cmd: Command;
      try {
        cmd = validateCommand(job.data);
      } catch (err) {
        throw new UnrecoverableError(`malformed command job: ${messageOf(err)}`);
      }
      let applied;
      try {
        applied = await applyCommand(rt.engine, cmd);
      } catch (err) {
        if (decideRetry(err, job.attemptsMade) === "retry") throw err;
        const message = messageOf(err);
        const recorded = await recordCommandFailure(rt.db, cmd, message);
        rt.log.error({ command: cmd.kind, runId: cmd.runId, jobId: job.id, attempts: job.attemptsMade + 1, incident: recorded, err: message }, "command failed deterministically; not retried");
        throw new UnrecoverableError(message);
      }
      const { outcome, queuedMail } = applied;
      await rt.queues.enqueueMail(queuedMail).catch((err: unknown) => {
        // The sweeper re-enqueues pending mail; the step itself has committed.
        rt.log.warn({ err: String(err) }, "could not enqueue mail delivery; the sweeper will retry");
      });
      rt.log.info({ command: cmd.kind, runId: cmd.runId, ok: outcome.ok, code: outcome.ok ? outcome.status : outcome.refusal.code }, "command applied");
      return outcome;
    },
    workerOptions(rt.config, rt.config.workerConcurrency),
  );
  worker.on("failed", (job, err) => {
    const final = err instanceof UnrecoverableError || err.name === "UnrecoverableError";
    const fields = { jobId: job?.id, attempts: job?.attemptsMade, kind: classifyFailure(err), err: redactTokens(err.message) };
    if (final) rt.log.error(fields, "command failed for good");
    else rt.log.warn(fields, "command failed; will retry");
  });
  worker.on("error", (err) => rt.log.error({ err: redactTokens(err.message) }, "command worker error"));
  return worker;
}
