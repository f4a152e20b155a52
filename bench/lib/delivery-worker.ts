/**
 * The delivering process of bench `delivery` (bench/delivery.ts), spawned with the cluster's
 * environment (DATABASE_URL, REDIS_URL, SLOTFLOW_QUEUE_PREFIX, SLOTFLOW_SEAL_KEY and the counting
 * preload) and driven over the IPC channel, one request at a time:
 *
 *   { cmd: "enqueue", items }       → each `{ outboxId, runId }` enqueued as a `mail` job, one
 *                                     Queues.enqueueMail([item]) each, 10 at a time (the command
 *                                     worker's fallback when its mail pump does not take a step's
 *                                     mail, and a retry's shape) → { ok, ms }
 *   { cmd: "jobs", c, n }           → a BullMQ `mail` worker (workerOptions, concurrency c, not yet
 *                                     running) whose processor is deliverOutbox on mailJobOf(job.data),
 *                                     as workers/mail.ts; c pool connections opened → { ok }
 *   { cmd: "pump", c, items, window } → a fresh MailPump (src/outbox/mail-pump.ts) with the runtime's
 *                                     db, sealer and transport, as workers/commands.ts mailPump makes
 *                                     it; c pool connections opened → { ok }
 *   { cmd: "batch", c, k }          → c connections opened → { ok }
 *   { cmd: "go" }                   → runs what was prepared: the worker until n jobs are done; or c
 *                                     feeders handing the pump one item at a time until all are
 *                                     handed over, then pump.close(); or c loops of
 *                                     deliverOutboxBatch(k) until a claim finds nothing
 *                                     → { ok, ms, sends, batches, claimedRows, handedOver }
 *   { cmd: "close" }                → closes the worker → { ok }
 *
 * The pump's feeders stand for c command jobs each committing a step with one mail and calling
 * `await pump.deliver([item])` (workers/commands.ts). `deliver` returns at once, so a feeder with
 * no step to commit would hand over all n messages in one event-loop turn and the pump would pass
 * all but MAX_BACKLOG (1000) to the `mail` queue; here a feeder waits while `window` messages
 * (default MAX_BACKLOG) are handed over and not yet sent, which keeps the pump's backlog below its
 * limit and the pump busy — its capacity, as the other two ways drain a backlog of n. Whatever the
 * pump hands to the `mail` queue is counted (`handedOver`, nothing is enqueued: no worker would
 * take it) and fails the phase in the bench.
 *
 * The runtime is slotflow's own (createRuntime: its Prisma client, Sealer, Queues, logger writing
 * to stdout, which the bench discards) with an in-memory transport that only counts: the bench
 * measures delivery, not SMTP. The pool is sized as createRuntime sizes it for a worker of
 * concurrency 50 (SLOTFLOW_WORKER_CONCURRENCY, set by the bench), so no phase waits for connections.
 */
import { Worker, type Job } from "bullmq";
import { loadConfig } from "../../src/config.js";
import type { Db } from "../../src/db.js";
import { MailPump } from "../../src/outbox/mail-pump.js";
import { deliverOutbox, type MailTransport } from "../../src/outbox/mailer.js";
import { mailJobOf, readJobData, type MailJob } from "../../src/queue/outbox-jobs.js";
import { QUEUE } from "../../src/queue/queues.js";
import { createRuntime } from "../../src/runtime.js";
import { workerOptions } from "../../workers/options.js";
import { deliverOutboxBatch } from "./outbox-batch.js";

type Request =
  | { cmd: "enqueue"; items: MailJob[] }
  | { cmd: "jobs"; c: number; n: number }
  | { cmd: "pump"; c: number; items: MailJob[]; window: number }
  | { cmd: "batch"; c: number; k: number }
  | { cmd: "go" }
  | { cmd: "close" };

let sends = 0;
/** Feeders waiting for a send (the pump's window), woken after each one. */
let sendWaiters: (() => void)[] = [];
/** The in-memory transport: counts, returns a message id, sends nothing. */
const transport: MailTransport = {
  kind: "smtp",
  async send() {
    const id = `<bench-${process.pid}-${++sends}@bench.invalid>`;
    if (sendWaiters.length > 0) {
      const woken = sendWaiters;
      sendWaiters = [];
      for (const wake of woken) wake();
    }
    return id;
  },
};

const rt = createRuntime({ config: loadConfig(), transport });
let worker: Worker | null = null;
let prepared: (() => Promise<{ batches: number; claimedRows?: number; handedOver?: number }>) | null = null;

/**
 * The runtime's client with its `$queryRawUnsafe` calls counted: the pump's only such call is its
 * claim by key (src/outbox/mail-pump.ts claimByKey), so this counts its batches and the rows they got.
 */
function countingClaims(db: Db, counts: { claims: number; rows: number }): Db {
  return new Proxy(db, {
    get(target, prop) {
      if (prop !== "$queryRawUnsafe") {
        const value: unknown = Reflect.get(target, prop);
        return typeof value === "function" ? value.bind(target) : value; // the client's own `this`
      }
      return async (...args: Parameters<Db["$queryRawUnsafe"]>) => {
        const rows: unknown = await target.$queryRawUnsafe(...args);
        counts.claims++;
        counts.rows += Array.isArray(rows) ? rows.length : 0;
        return rows;
      };
    },
  });
}

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
          while (next < req.items.length) await rt.queues.enqueueMail([req.items[next++]!]);
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
        async (job: Job<unknown>) => {
          const r = await deliverOutbox(rt.db, rt.sealer, rt.transport, readJobData(() => mailJobOf(job.data)), rt.log);
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
    case "pump": {
      const counts = { claims: 0, rows: 0 };
      let handedOver = 0;
      const pump = new MailPump({
        db: countingClaims(rt.db, counts),
        sealer: rt.sealer,
        transport: rt.transport,
        log: rt.log,
        enqueue: async (items) => {
          handedOver += items.length; // counted, not enqueued: the bench fails the phase
        },
      });
      await openConnections(req.c);
      prepared = async () => {
        const sends0 = sends;
        let next = 0;
        await Promise.all(
          Array.from({ length: req.c }, async () => {
            while (next < req.items.length) {
              while (next - (sends - sends0) >= req.window) await new Promise<void>((resolve) => sendWaiters.push(resolve));
              if (next >= req.items.length) return;
              await pump.deliver([req.items[next++]!]);
            }
          }),
        );
        await pump.close();
        return { batches: counts.claims, claimedRows: counts.rows, handedOver };
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
      const { batches, claimedRows = 0, handedOver = 0 } = await run();
      return { ms: performance.now() - t0, sends: sends - sends0, batches, claimedRows, handedOver };
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
