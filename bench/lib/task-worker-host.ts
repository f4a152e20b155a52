/**
 * The task-worker process of bench `calls` (bench/calls.ts): the user's own process as
 * `slotflow/worker` runs in it — one `TaskWorker` (src/sdk/worker.ts) serving task type
 * `bench.score` with a handler that answers at once (`{score: 720, band: "A"}`), so the figures are
 * the protocol's and the engine's, not a handler's. Spawned with BENCH_URL, BENCH_WORKER_TOKEN and
 * BENCH_CONCURRENCY (tasks held at once); prints `ready` on stdout once its first poll is out and
 * runs until SIGTERM, when it stops gracefully (`stop()`: no new poll, held tasks finish).
 */
import { TaskWorker } from "../../src/sdk/worker.js";

const worker = new TaskWorker({
  url: process.env.BENCH_URL!,
  token: process.env.BENCH_WORKER_TOKEN!,
  concurrency: Number(process.env.BENCH_CONCURRENCY ?? 1),
  waitSeconds: 20,
  tasks: { "bench.score": async () => ({ score: 720, band: "A" }) },
  onError: (err) => process.stderr.write(`task worker: ${err.message}\n`),
});
const running = worker.run();
process.stdout.write("ready\n");
process.once("SIGTERM", () => void worker.stop());
await running;
