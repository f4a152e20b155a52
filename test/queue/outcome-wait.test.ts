/**
 * Waiting for a command's outcome (src/queue/queues.ts `Queues.submit`), against real Redis
 * servers started for this file, with a real BullMQ worker:
 *
 * - issue 8 item 13: many concurrent waits add no listener per wait (BullMQ's
 *   Job.waitUntilFinished added a 'closing' listener to the Queue per wait, and the eleventh
 *   printed `MaxListenersExceededWarning: 11 closing listeners added to [Queue]`);
 * - issue 8 item 10 (first half): Redis killed while commands are being submitted and waited for
 *   leaks no rejection (BullMQ rejected inside a Promise executor: an unhandled rejection, which
 *   ends the process); every submit settles — an outcome, "accepted", or an error its caller
 *   handles.
 */
import test from "ava";
import { randomUUID } from "node:crypto";
import { Worker, type ConnectionOptions } from "bullmq";
import type { Command, Outcome } from "../../src/engine/commands/types.js";
import { QUEUE, Queues, redisConnection } from "../../src/queue/queues.js";
import { startRedisServer } from "../helpers/redis-server.js";

function depositCommand(): Command {
  return { kind: "deposit", commandId: randomUUID(), runId: randomUUID(), linkId: randomUUID(), args: {} };
}

const OUTCOME: Outcome = { ok: true, status: "completed", run: { id: "r", workflow: "W", version: 1, state: "S", status: "running" } };

test.serial("fifty concurrent waits for outcomes add no listener per wait and all receive their outcome", async (t) => {
  const redis = await startRedisServer();
  const config = { redisUrl: redis.url, queuePrefix: `sft-wait-${randomUUID().slice(0, 8)}`, depositWaitMs: 10_000, sealKeys: ["test-seal-key"] };
  const queues = new Queues(config);
  // BullMQ never closes a connection it was handed: the test does, or the process cannot exit.
  const workerConnection = redisConnection(config, true);
  const worker = new Worker(QUEUE.commands, async () => OUTCOME, {
    connection: workerConnection as ConnectionOptions,
    prefix: config.queuePrefix,
    concurrency: 8,
  });
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
  process.on("warning", onWarning);
  try {
    await queues.ready();
    const outcomes = await Promise.all(Array.from({ length: 50 }, () => queues.submit(depositCommand())));
    t.deepEqual(outcomes, outcomes.map(() => OUTCOME));
    t.is(queues.commands.listenerCount("closing"), 0);
    t.is(queues.pendingWaits, 0);
    await new Promise((r) => setImmediate(r));
    t.deepEqual(warnings.filter((w) => w.includes("MaxListenersExceeded")), []);
  } finally {
    process.off("warning", onWarning);
    await worker.close();
    workerConnection.disconnect();
    await queues.close();
    // The server stays up until the process exits (the helper kills it then), so clients that
    // are still closing under a loaded machine finish against a live Redis.
  }
});

test.serial("Redis killed while commands are submitted and waited for: no rejection leaks and every submit settles", async (t) => {
  const redis = await startRedisServer();
  const config = { redisUrl: redis.url, queuePrefix: `sft-wait-${randomUUID().slice(0, 8)}`, depositWaitMs: 1500, sealKeys: ["test-seal-key"] };
  const queues = new Queues(config);
  const leaked: unknown[] = [];
  const onRejection = (reason: unknown) => leaked.push(reason);
  process.on("unhandledRejection", onRejection);
  try {
    await queues.ready();
    // No worker: every wait is still pending when Redis dies. Keep submitting across the kill, so
    // some adds land just before it and their waits begin against a dying connection.
    const settled: Promise<string>[] = [];
    const submitting = (async () => {
      for (let i = 0; i < 60; i++) {
        settled.push(queues.submit(depositCommand()).then((r) => (r === "accepted" ? "accepted" : "outcome"), () => "refused"));
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    await new Promise((r) => setTimeout(r, 120));
    await redis.kill();
    await submitting;
    const results = await Promise.all(settled);
    t.is(results.length, 60);
    t.true(results.includes("accepted"), results.join(","));
    t.true(results.every((r) => r === "accepted" || r === "refused"), results.join(","));
    await new Promise((r) => setTimeout(r, 200));
    t.deepEqual(leaked.map(String), []);
    t.is(queues.pendingWaits, 0);
  } finally {
    process.off("unhandledRejection", onRejection);
    await redis.restart(); // Redis comes back, as after a restart: the clients reconnect and close cleanly
    await queues.close();
  }
});
