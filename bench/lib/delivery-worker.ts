/**
 * The delivering process of bench `delivery` (bench/delivery.ts), spawned with the cluster's
 * environment (DATABASE_URL, REDIS_URL, SLOTFLOW_QUEUE_PREFIX, SLOTFLOW_SEAL_KEY and the counting
 * preload) and driven over the IPC channel, one request at a time:
 *
 *   { cmd: "enqueue", ids }         → each id enqueued as the command worker does after a start's
 *                                     commit (Queues.enqueueMail([id]), 10 at a time) → { ok, ms }
 *   { cmd: "jobs", c, n }           → a BullMQ `mail` worker (workerOptions, concurrency c, not yet
 *                                     running) whose processor is deliverOutbox, as workers/mail.ts;
 *                                     c pool connections opened → { ok }
 *   { cmd: "batch", c, k }          → c connections opened → { ok }
 *   { cmd: "go" }                   → runs what was prepared: the worker until n jobs are done, or
 *                                     c loops of deliverOutboxBatch(k) until a claim finds nothing
 *                                     → { ok, ms, sends, batches }
 *   { cmd: "close" }                → closes the worker → { ok }
 *
 * The runtime is slotflow's own (createRuntime: its Prisma client, Sealer, Queues, logger writing
 * to stdout, which the bench discards) with an in-memory transport that only counts: the bench
 * measures delivery, not SMTP. The pool is sized as createRuntime sizes it for a worker of
 * concurrency 50 (SLOTFLOW_WORKER_CONCURRENCY, set by the bench), so no phase waits for connections.
 */
import { Worker, type Job } from "bullmq";
import { loadConfig } from "../../src/config.js";
import { deliverOutbox, type MailTransport } from "../../src/outbox/mailer.js";
import { QUEUE } from "../../src/queue/queues.js";
import { createRuntime } from "../../src/runtime.js";
import { workerOptions } from "../../workers/options.js";
import { deliverOutboxBatch } from "./outbox-batch.js";

type Request =
  | { cmd: "enqueue"; ids: string[] }
  | { cmd: "jobs"; c: number; n: number }
  | { cmd: "batch"; c: number; k: number }
  | { cmd: "go" }
  | { cmd: "close" };

let sends = 0;
/** The in-memory transport: counts, returns a message id, sends nothing. */
const transport: MailTransport = {
  kind: "smtp",
  async send() {
    return `<bench-${process.pid}-${++sends}@bench.invalid>`;
  },
};

const rt = createRuntime({ config: loadConfig(), transport });
let worker: Worker | null = null;
let prepared: (() => Promise<{ batches: number }>) | null = null;

/** Opens `c` connections of the pool (c statements at once), so a phase does not pay for connecting. */
async function openConnections(c: number): Promise<void> {
  await Promise.all(Array.from({ length: c }, () => rt.db.$queryRaw`SELECT 1 AS one FROM pg_sleep(0.05)`));
}

async function handle(req: Request): Promise<Record<string, unknown>> {
  switch (req.cmd) {
    case "enqueue": {
      const t0 = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: 10 }, async () => {
          while (next < req.ids.length) await rt.queues.enqueueMail([req.ids[next++]!]);
        }),
      );
      return { ms: performance.now() - t0 };
    }
    case "jobs": {
      let done = 0;
      let finish: () => void = () => undefined;
      const finished = new Promise<void>((resolve) => (finish = resolve));
      worker = new Worker(
        QUEUE.mail,
        async (job: Job<{ outboxId: string }>) => {
          const r = await deliverOutbox(rt.db, rt.sealer, rt.transport, String(job.data.outboxId), rt.log);
          if (++done === req.n) finish();
          return r;
        },
        { ...workerOptions(rt.config, req.c), autorun: false },
      );
      worker.on("error", (err) => process.stderr.write(`mail worker error: ${err.message}\n`));
      await worker.waitUntilReady();
      await openConnections(req.c);
      const w = worker;
      prepared = async () => {
        void w.run();
        await finished;
        return { batches: 0 };
      };
      return {};
    }
    case "batch": {
      await openConnections(req.c);
      prepared = async () => {
        let batches = 0;
        await Promise.all(
          Array.from({ length: req.c }, async () => {
            for (;;) {
              const r = await deliverOutboxBatch(rt.db, rt.sealer, rt.transport, req.k, rt.log);
              if (r.claimed === 0) return;
              batches++;
            }
          }),
        );
        return { batches };
      };
      return {};
    }
    case "go": {
      if (!prepared) throw new Error("go: nothing prepared");
      const run = prepared;
      prepared = null;
      const sends0 = sends;
      const t0 = performance.now();
      const { batches } = await run();
      return { ms: performance.now() - t0, sends: sends - sends0, batches };
    }
    case "close": {
      await worker?.close();
      worker = null;
      return {};
    }
  }
}

// One request at a time, in order.
let chain = Promise.resolve();
process.on("message", (req: Request) => {
  chain = chain.then(async () => {
    try {
      process.send!({ ok: true, ...(await handle(req)) });
    } catch (err) {
      process.send!({ ok: false, error: err instanceof Error ? err.stack : String(err) });
    }
  });
});
process.on("disconnect", () => {
  void (async () => {
    await worker?.close().catch(() => undefined);
    await rt.close().catch(() => undefined);
    process.exit(0);
  })();
});
process.send!({ ok: true, ready: true });
