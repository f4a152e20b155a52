/**
 * The command worker: applies `commands` jobs to runs (src/engine/commands/apply.ts) and hands the mail each
 * step queued to the process's mail pump once the step has committed (src/outbox/mail-pump.ts:
 * first attempts, batched; retries go to the `mail` queue). Run as many copies as you like;
 * per-run order comes from the run row lock, not from the queue.
 *
 * Failures (src/queue/retry.ts): an infrastructure error (PostgreSQL or Redis unreachable, a reset
 * connection, a lock timeout…) is re-thrown and retried with capped backoff until the command is
 * applied, however long the outage; a deterministic failure ends the job at once
 * (`UnrecoverableError`) after recording a `command-failed` incident on the run
 * (src/engine/failures.ts). Lock, stall and backoff settings: workers/options.ts.
 *
 * Before anything else, a job must carry slotflow's signature (src/queue/signature.ts, added by
 * Queues.enqueue/enqueueMany): one that does not — added through the queue dashboard, straight
 * into Redis, or by a release before signed commands — is refused at once, never retried
 * (`UnrecoverableError`), logged (`command job refused: not signed by slotflow`, without its data)
 * and recorded as a `command-unsigned` incident on the run it names when that run exists
 * (issue 28 item 1).
 */
import { announceTasks } from "../src/calls/task/waiters.js";
import { UnrecoverableError, Worker, type Job } from "bullmq";
import { applyCommand, type Applied } from "../src/engine/commands/apply.js";
import { validateCommand, type Command, type Outcome } from "../src/engine/commands/types.js";
import { failureMessage, recordCommandFailure, recordUnsignedCommand } from "../src/engine/failures.js";
import { redactTokens } from "../src/engine/sealing/seal.js";
import { forgetPending } from "../src/engine/commands/pending.js";
import { MailPump } from "../src/outbox/mail-pump.js";
import { QUEUE } from "../src/queue/queues.js";
import { UnsignedJobError } from "../src/queue/signature.js";
import { UNKNOWN_FAILURE_LIMIT, classifyFailure, decideRetry } from "../src/queue/retry.js";
import type { Runtime } from "../src/runtime.js";
import { callMetrics, metrics } from "../src/metrics/metrics.js";
import { workerOptions } from "./options.js";

const messageOf = (err: unknown) => redactTokens(err instanceof Error ? err.message : String(err));

/**
 * One log line per processed command, saying what happened (issue 9 §5 "Logs say what happened"):
 * `command applied` (status started/completed/expired), `command skipped` (an expiry that found
 * nothing to do), `command refused` (with the refusal code; nothing changed). `ms` is the time the
 * apply took (its transaction, lock wait included), to one decimal; `queuedMs` the time the job
 * waited in the queue, from its enqueue to a worker taking it (whole ms, from the two processes'
 * clocks).
 */
export function logOutcome(rt: Pick<Runtime, "log">, kind: string, runId: string, outcome: Outcome, ms: number, queuedMs: number): void {
  metrics.commands.inc({ command: kind, result: !outcome.ok ? "refused" : outcome.status === "skipped" ? "skipped" : "applied" });
  ms = Math.round(ms * 10) / 10;
  if (!outcome.ok) rt.log.info({ command: kind, runId, code: outcome.refusal.code, ms, queuedMs }, "command refused");
  else if (outcome.status === "skipped") rt.log.info({ command: kind, runId, status: outcome.status, ms, queuedMs }, "command skipped");
  else rt.log.info({ command: kind, runId, status: outcome.status, ms, queuedMs }, "command applied");
}

/**
 * slotflow_calls_total (v0.5): each call's end or retry counted once, when the step deciding it
 * committed — a `call` command answered, failed or retried it; any step may cancel calls.
 */
function countCalls(cmd: Command, outcome: Outcome, applied: Pick<Applied, "cancelledCalls" | "cancelledChildCalls" | "callType">): void {
  const children = applied.cancelledChildCalls ?? 0;
  const http = (applied.cancelledCalls ?? 0) - children;
  if (http > 0) callMetrics.calls.inc({ type: "http", outcome: "cancelled" }, http);
  if (children > 0) callMetrics.calls.inc({ type: "workflow", outcome: "cancelled" }, children);
  if (cmd.kind !== "call" || !outcome.ok) return;
  const what = outcome.status === "completed" ? "answered" : outcome.status === "failed" ? "failed" : outcome.status === "retried" ? "retried" : null;
  // `type` is the call's: "http", "task" (issue 41 item 3) or "workflow" (child runs)
  if (what) callMetrics.calls.inc({ type: applied.callType ?? "http", outcome: what });
}

/**
 * Drops the PostgreSQL record of a command answered 202 once the worker has judged it (refused, or
 * failed for good), so the sweeper never queues it again (src/engine/commands/pending.ts, issue 34 item 3).
 * One round trip, on those paths only. A failure is logged, not thrown: the outcome stands, and a
 * sweep drops the row when it finds the job finished.
 */
async function forget(rt: Runtime, cmd: Command): Promise<void> {
  await forgetPending(rt.db, cmd).catch((err: unknown) => {
    rt.log.warn({ command: cmd.kind, runId: cmd.runId, err: messageOf(err) }, "could not drop the record of a judged 202 command; the sweeper will");
  });
}

/** The mail pump of a worker process (src/outbox/mail-pump.ts), handing over to `rt.queues`' mail queue. */
export function mailPump(rt: Runtime): MailPump {
  return new MailPump({ db: rt.db, sealer: rt.sealer, transport: rt.transport, log: rt.log, enqueue: (ids, delayMs) => rt.queues.enqueueMail(ids, delayMs) });
}

/**
 * Starts the worker of the command queue of shard `shard` (src/queue/shards.ts; default 0, the
 * only one with SLOTFLOW_QUEUE_SHARDS=1) taking up to `concurrency` jobs at once; the mail of each
 * committed step goes to `mail`, the process's pump, which the caller closes after the worker.
 */
export function startCommandWorker(rt: Runtime, mail: MailPump, shard = 0, concurrency = rt.config.workerConcurrency): Worker {
  const worker = new Worker(
    QUEUE.commands,
    async (job: Job): Promise<Outcome> => {
      let data: Record<string, unknown>;
      try {
        data = rt.queues.signer.verify(job.data, job.id);
      } catch (err) {
        if (!(err instanceof UnsignedJobError)) throw err;
        // Recording may fail on a PostgreSQL outage: then the job is retried, and refused again.
        const recorded = await recordUnsignedCommand(rt.db, job.data, job.id, err.message);
        const claimed = job.data as { kind?: unknown; runId?: unknown } | null;
        rt.log.error(
          {
            jobId: redactTokens(String(job.id)).slice(0, 100),
            name: redactTokens(job.name).slice(0, 100),
            command: typeof claimed?.kind === "string" ? redactTokens(claimed.kind).slice(0, 32) : undefined,
            runId: typeof claimed?.runId === "string" ? redactTokens(claimed.runId).slice(0, 36) : undefined,
            reason: err.message,
            incident: recorded,
          },
          "command job refused: not signed by slotflow",
        );
        throw new UnrecoverableError(`command job refused: ${err.message}`);
      }
      let cmd: Command;
      try {
        cmd = validateCommand(data);
      } catch (err) {
        // Job data this worker cannot read: of unknown kind, not deterministic — during a rolling
        // deploy it may be a newer version's command. Retried a few times (bounded by the job's
        // attempts and by UNKNOWN_FAILURE_LIMIT), then failed; there is no trusted run to record on.
        if (job.attemptsMade + 1 >= UNKNOWN_FAILURE_LIMIT) throw new UnrecoverableError(`malformed command job: ${messageOf(err)}`);
        throw new Error(`malformed command job: ${messageOf(err)}`);
      }
      const endTimer = metrics.applySeconds.startTimer({ command: cmd.kind });
      const t0 = performance.now();
      let applied;
      try {
        applied = await applyCommand(rt.engine, cmd);
        endTimer();
      } catch (err) {
        if (decideRetry(err, job.attemptsMade) === "retry") throw err;
        const message = failureMessage(err, messageOf(err));
        const recorded = await recordCommandFailure(rt.db, cmd, message);
        await forget(rt, cmd);
        rt.log.error({ command: cmd.kind, runId: cmd.runId, jobId: job.id, attempts: job.attemptsMade + 1, incident: recorded, err: message }, "command failed deterministically; not retried");
        throw new UnrecoverableError(message);
      }
      const { outcome, queuedMail } = applied;
      // A refused command answered 202 is judged: its record goes (issue 34 item 3). An applied
      // one's record is dropped by the sweeper (applied_commands), sparing the hot path.
      if (!outcome.ok) await forget(rt, cmd);
      // First attempts by this process's mail pump, batched; it falls back to `mail` jobs, and the
      // sweeper re-enqueues what neither took. The step itself has committed.
      await mail.deliver(queuedMail);
      const deliveries = (applied.queuedDeliveries ?? []).map((d) => ({ ...d, attempt: 0 }));
      await rt.queues.enqueueDeliveries(deliveries).catch((err: unknown) => {
        // The sweeper re-enqueues overdue deliveries (issue 18); the step itself has committed.
        rt.log.warn({ err: String(err) }, "could not enqueue deliveries; the sweeper will retry");
      });
      // calls (v0.5): attempts the step opened or scheduled go to the calls queue once it committed;
      // the sweeper re-enqueues a pending call whose job was lost
      // a `call task` (issue 41 item 3) has no job: the polls waiting for its type are woken
      // (src/calls/task/waiters.ts); a lost message costs a poll's wait, never the task
      const queuedCalls = applied.queuedCalls ?? [];
      const offered = queuedCalls.flatMap((c) => (c.task === undefined ? [] : [c.task]));
      if (offered.length > 0) await announceTasks(rt.queues.connection, rt.config.queuePrefix, offered);
      await rt.queues.enqueueCalls(queuedCalls.filter((c) => c.task === undefined)).catch((err: unknown) => {
        rt.log.warn({ err: String(err) }, "could not enqueue calls; the sweeper will retry");
      });
      // child runs (v0.5): commands for other runs the step caused (a child's end answering its
      // parent, a closed `call workflow` slot cancelling its child), recorded in pending_commands in
      // the step's transaction — the sweeper queues one again if this enqueue is lost
      await rt.queues.enqueueMany(applied.queuedCommands ?? []).catch((err: unknown) => {
        rt.log.warn({ err: String(err) }, "could not enqueue commands for other runs; the sweeper will retry");
      });
      countCalls(cmd, outcome, applied);
      logOutcome(rt, cmd.kind, cmd.runId, outcome, performance.now() - t0, Math.max(0, (job.processedOn ?? job.timestamp) - job.timestamp));
      return outcome;
    },
    workerOptions(rt.config, concurrency, undefined, shard),
  );
  worker.on("failed", (job, err) => {
    const command = typeof job?.data?.kind === "string" ? job.data.kind : "unknown";
    const unrecoverable = err instanceof UnrecoverableError || err.name === "UnrecoverableError";
    const willRetry = job !== undefined && !unrecoverable && job.attemptsMade < (job.opts.attempts ?? 1);
    (willRetry ? metrics.retried : metrics.failed).inc({ command });
    const fields = { jobId: job?.id, command, attempts: job?.attemptsMade, willRetry, kind: classifyFailure(err), err: redactTokens(err.message) };
    if (willRetry) rt.log.warn(fields, "command attempt failed; will retry");
    else rt.log.error(fields, "command failed");
  });
  worker.on("stalled", (jobId) => {
    metrics.stalled.inc({ queue: QUEUE.commands });
    rt.log.warn({ jobId, queue: QUEUE.commands, shard }, "job stalled; taken back");
  });
  worker.on("error", (err) => rt.log.error({ shard, err: redactTokens(err.message) }, "command worker error"));
  return worker;
}
