/**
 * The calls worker (v0.5, issue 40): one `attempt` job per attempt of a `call http`
 * (src/calls/run-attempt.ts). It claims the attempt, makes the request off the run lock and
 * outside any transaction, and enqueues the outcome as a `call` command, which a command worker
 * applies to the run like a deposit. At most SLOTFLOW_CALL_CONCURRENCY attempts at once per
 * process, and at most SLOTFLOW_CALL_ENDPOINT_CONCURRENCY of them to one endpoint, so a slow
 * callee holds a bounded share of one queue and never a command worker: deposits never wait on it.
 * A database or Redis outage is retried by BullMQ (queue/retry.ts); an attempt under way in
 * another worker is tried again later (AttemptUnderWay).
 */
import { Worker, type Job } from "bullmq";
import { runCallAttempt, type CallJobData } from "../src/calls/run-attempt.js";
import { redactTokens } from "../src/engine/sealing/seal.js";
import { QUEUE } from "../src/queue/queues.js";
import type { Runtime } from "../src/runtime.js";
import { callMetrics, metrics } from "../src/metrics/metrics.js";
import { workerOptions } from "./options.js";

/** Runs at most `max` functions at once per key (a FIFO line per key). */
export function keyedLimiter(max: number): <T>(key: string, fn: () => Promise<T>) => Promise<T> {
  const running = new Map<string, number>();
  const waiting = new Map<string, (() => void)[]>();
  return async <T>(key: string, fn: () => Promise<T>): Promise<T> => {
    if ((running.get(key) ?? 0) >= max) await new Promise<void>((resolve) => waiting.set(key, [...(waiting.get(key) ?? []), resolve]));
    running.set(key, (running.get(key) ?? 0) + 1);
    try {
      return await fn();
    } finally {
      const left = (running.get(key) ?? 1) - 1;
      if (left === 0) running.delete(key);
      else running.set(key, left);
      const next = waiting.get(key)?.shift();
      if (waiting.get(key)?.length === 0) waiting.delete(key);
      next?.();
    }
  };
}

function callJobOf(data: unknown): CallJobData {
  const d = data as Partial<CallJobData> | null;
  if (!d || typeof d.callId !== "string" || typeof d.runId !== "string" || typeof d.attempt !== "number") throw new Error("a calls job names {callId, runId, attempt}");
  return { callId: d.callId, runId: d.runId, attempt: d.attempt };
}

export function startCallWorker(rt: Runtime): Worker {
  const deps = {
    db: rt.db,
    sealer: rt.sealer,
    allowPrivate: rt.config.endpointsAllowPrivate,
    maxDepth: rt.config.limits.maxInputDepth,
    enqueue: (cmd: Parameters<typeof rt.queues.enqueue>[0]) => rt.queues.enqueue(cmd),
    limit: keyedLimiter(rt.config.callEndpointConcurrency),
  };
  const worker = new Worker(
    QUEUE.calls,
    async (job: Job<unknown>) => {
      const ref = callJobOf(job.data);
      const report = await runCallAttempt(deps, ref);
      if (report.kind === "skipped") {
        rt.log.info({ callId: ref.callId, runId: ref.runId, attempt: ref.attempt, why: report.why }, "call attempt skipped");
        return "skipped";
      }
      const r = report.result;
      callMetrics.duration.observe({ type: report.type }, r.ms / 1000);
      // never a header value, a body or the URL: the endpoint's name, the status, the error words
      rt.log.info({ callId: ref.callId, runId: ref.runId, attempt: ref.attempt, endpoint: report.endpoint, outcome: r.kind, status: r.status, ms: r.ms, ...(r.kind !== "answer" ? { err: redactTokens(r.error) } : {}) }, "call attempt made");
      return r.kind;
    },
    workerOptions(rt.config, rt.config.callConcurrency),
  );
  worker.on("error", (err) => rt.log.error({ err: redactTokens(err.message) }, "call worker error"));
  worker.on("stalled", (jobId) => {
    metrics.stalled.inc({ queue: QUEUE.calls });
    rt.log.warn({ jobId, queue: QUEUE.calls }, "job stalled; taken back");
  });
  return worker;
}
