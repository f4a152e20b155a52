/**
 * The queue-hop ceiling's consumer: a BullMQ worker on the `commands` queue with slotflow's own
 * connection and concurrency settings whose processor does nothing. Prints "ready" once running.
 *   node --import=tsx bench/lib/noop-worker.ts <redisUrl> <prefix> <concurrency>
 */
import { Worker, type ConnectionOptions } from "bullmq";
import { QUEUE, redisConnection } from "../../src/queue/queues.js";

const [redisUrl, prefix, concurrency] = process.argv.slice(2);
const worker = new Worker(QUEUE.commands, async () => ({ ok: true }), {
  connection: redisConnection({ redisUrl }, true) as ConnectionOptions,
  prefix,
  concurrency: Number(concurrency),
});
await worker.waitUntilReady();
process.stdout.write("ready\n");
process.on("SIGTERM", () => void worker.close().then(() => process.exit(0)));
