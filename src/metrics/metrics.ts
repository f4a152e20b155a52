/**
 * Prometheus metrics, shared by the web process and the workers (issue 39 item 1: they live outside
 * src/web/, which the workers never import; the web's deposit counter is web/deposit-metrics.ts)
 * (`GET /metrics` on the web port; on SLOTFLOW_METRICS_PORT for a process
 * without the web role). Labels are bounded sets — route templates, never raw paths, command
 * kinds, queue names and outcome codes — so no token can become a label value.
 *
 * Two kinds (issue 9 §5 "Metrics a pager can use"; docs/operations.md says what to alert on):
 *
 * - Counted in the process where it happens (sum them over processes):
 *   `slotflow_callback_deposits_total{outcome}` (web: every POST to a callback link, by outcome —
 *   `completed`, `accepted`, `replayed` (an Idempotency-Key retry of the completing request), or
 *   the refusal code), `slotflow_commands_total{command,result}`
 *   (worker: applied / refused / skipped), `slotflow_command_apply_duration_seconds{command}`
 *   (worker: one command's transaction, lock wait included), `slotflow_commands_retried_total`
 *   and `slotflow_commands_failed_total` (worker: an attempt failed and will run again / the last
 *   attempt failed), `slotflow_jobs_stalled_total{queue}` (worker: a job whose worker stopped
 *   renewing its lock was taken back).
 * - Read from PostgreSQL and Redis when scraped, the same on every process (take one, e.g. `max`):
 *   `slotflow_queue_jobs{queue,state}`, `slotflow_queue_oldest_waiting_job_age_seconds{queue}`,
 *   `slotflow_outbox_messages{status}` (pending, failed), `slotflow_outbox_oldest_pending_age_seconds`,
 *   `slotflow_sweep_last_success_timestamp_seconds`, `slotflow_purge_lag_seconds`. A dependency that does not answer leaves its
 *   series out of that scrape (alert on `absent(...)` too).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { Db } from "../db.js";
import type { Queues } from "../queue/queues.js";
import { purgeLagSeconds } from "../engine/sweeps/retention.js";

export const registry = new Registry();
collectDefaultMetrics({ register: registry });

// --- counted where it happens ----------------------------------------------------------------

export const metrics = {
  deposits: new Counter({
    name: "slotflow_callback_deposits_total",
    help: "POSTs to callback links, by outcome: completed, accepted (202), replayed (Idempotency-Key retry), or the refusal code",
    labelNames: ["outcome"] as const,
    registers: [registry],
  }),
  http: new Histogram({
    name: "slotflow_http_request_duration_seconds",
    help: "HTTP request duration by route template and status",
    labelNames: ["method", "route", "status"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  }),
  commands: new Counter({
    name: "slotflow_commands_total",
    help: "Commands processed by this worker, by kind and result (applied, refused, skipped)",
    labelNames: ["command", "result"] as const,
    registers: [registry],
  }),
  applySeconds: new Histogram({
    name: "slotflow_command_apply_duration_seconds",
    help: "Time to apply one command (its transaction under the run lock, lock wait included)",
    labelNames: ["command"] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  }),
  retried: new Counter({
    name: "slotflow_commands_retried_total",
    help: "Command attempts that failed (database or Redis fault) and will be retried",
    labelNames: ["command"] as const,
    registers: [registry],
  }),
  failed: new Counter({
    name: "slotflow_commands_failed_total",
    help: "Commands whose last attempt failed: left in the commands queue's failed set",
    labelNames: ["command"] as const,
    registers: [registry],
  }),
  stalled: new Counter({
    name: "slotflow_jobs_stalled_total",
    help: "Jobs taken back from a worker that stopped renewing their lock (crashed or blocked)",
    labelNames: ["queue"] as const,
    registers: [registry],
  }),
};

// --- durability (issue 8 item 12): the sweeper's own counters ------------------------------------

export const sweeperMetrics = {
  failures: new Counter({
    name: "slotflow_sweep_failures_total",
    help: "Sweeps that failed (stage=sweep) and failed checks of the sweep job scheduler (stage=scheduler)",
    labelNames: ["stage"] as const,
    registers: [registry],
  }),
  schedulerRestored: new Counter({
    name: "slotflow_sweep_scheduler_restored_total",
    help: "Times the sweeper found its job scheduler missing from Redis and re-created it",
    registers: [registry],
  }),
};

// --- read from PostgreSQL and Redis when scraped ---------------------------------------------

/** What the scrape-time gauges read; set once per process by `bindClusterMetrics`. */
let source: { db: Db; queues: Queues; retentionMs: number | null } | null = null;

/** Points the scrape-time gauges at this process's database and queues (and SLOTFLOW_RETENTION, for the purge lag). */
export function bindClusterMetrics(db: Db, queues: Queues, retentionMs: number | null = null): void {
  source = { db, queues, retentionMs };
}

const QUEUE_STATES = ["waiting", "active", "delayed", "failed", "prioritized", "waiting-children"] as const;

/** How long one gauge may wait for PostgreSQL or Redis during a scrape. */
const SCRAPE_READ_TIMEOUT_MS = 5000;

/**
 * Runs `fn` on the bound source; when it fails or takes longer than SCRAPE_READ_TIMEOUT_MS, resets
 * `gauge` so the scrape leaves its series out (a scrape never hangs on a dependency that is down).
 */
async function fill(gauge: Gauge<string>, fn: (s: NonNullable<typeof source>) => Promise<void>): Promise<void> {
  gauge.reset();
  if (!source) return;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("scrape read timed out")), SCRAPE_READ_TIMEOUT_MS);
  });
  try {
    await Promise.race([fn(source), late]);
  } catch {
    gauge.reset();
  } finally {
    clearTimeout(timer);
  }
}

new Gauge({
  name: "slotflow_queue_jobs",
  help: "Jobs in each BullMQ queue by state",
  labelNames: ["queue", "state"] as const,
  registers: [registry],
  async collect() {
    await fill(this, async ({ queues }) => {
      // Shards of one queue (SLOTFLOW_QUEUE_SHARDS, issue 17) are summed under its name.
      const sums = new Map<string, Record<string, number>>();
      for (const q of queues.all()) {
        const counts = await q.getJobCounts(...QUEUE_STATES);
        const sum = sums.get(q.name) ?? {};
        for (const state of QUEUE_STATES) sum[state] = (sum[state] ?? 0) + (counts[state] ?? 0);
        sums.set(q.name, sum);
      }
      for (const [queue, sum] of sums) for (const state of QUEUE_STATES) this.set({ queue, state }, sum[state] ?? 0);
    });
  },
});

new Gauge({
  name: "slotflow_queue_oldest_waiting_job_age_seconds",
  help: "Age of the oldest job waiting for a worker (0 when none waits), by queue",
  labelNames: ["queue"] as const,
  registers: [registry],
  async collect() {
    await fill(this, async ({ queues }) => {
      // The oldest over every shard of the queue (issue 17).
      const oldestOf = new Map<string, number>();
      for (const q of [...queues.commandShards, ...queues.mailShards]) {
        const [oldest] = await q.getJobs(["wait"], 0, 0, true);
        const age = oldest ? Math.max(0, (Date.now() - oldest.timestamp) / 1000) : 0;
        oldestOf.set(q.name, Math.max(oldestOf.get(q.name) ?? 0, age));
      }
      for (const [queue, age] of oldestOf) this.set({ queue }, age);
    });
  },
});

new Gauge({
  name: "slotflow_outbox_messages",
  help: "Outbox messages pending delivery, and those whose delivery failed for good",
  labelNames: ["status"] as const,
  registers: [registry],
  async collect() {
    await fill(this, async ({ db }) => {
      const rows = await db.outboxMessage.groupBy({ by: ["status"], where: { status: { in: ["pending", "failed"] } }, _count: { _all: true } });
      for (const status of ["pending", "failed"]) this.set({ status }, rows.find((r) => r.status === status)?._count._all ?? 0);
    });
  },
});

new Gauge({
  name: "slotflow_outbox_oldest_pending_age_seconds",
  help: "Age of the oldest outbox message still pending (0 when none)",
  registers: [registry],
  async collect() {
    await fill(this, async ({ db }) => {
      const oldest = await db.outboxMessage.findFirst({ where: { status: "pending" }, orderBy: { createdAt: "asc" }, select: { createdAt: true } });
      this.set(oldest ? Math.max(0, (Date.now() - oldest.createdAt.getTime()) / 1000) : 0);
    });
  },
});

new Gauge({
  name: "slotflow_sweep_last_success_timestamp_seconds",
  help: "Unix time at which the last successful sweep finished (absent until one has)",
  registers: [registry],
  async collect() {
    await fill(this, async ({ queues }) => {
      const [last] = await queues.sweep.getJobs(["completed"], 0, 0, false);
      if (last?.finishedOn) this.set(last.finishedOn / 1000);
    });
  },
});

// --- retention (issue 20) ---------------------------------------------------------------------

/**
 * `slotflow_purged_rows_total{table}` (sweeper: rows deleted by retention, by table — runs, slots,
 * links, …, engine/sweeps/retention.ts) and `slotflow_purge_lag_seconds` (read when scraped: how long
 * past its retention the oldest ended run still present is; 0 when none is due; absent when
 * retention is off).
 */
export const retentionMetrics = {
  purged: new Counter({
    name: "slotflow_purged_rows_total",
    help: "Rows deleted by retention (SLOTFLOW_RETENTION), by table",
    labelNames: ["table"] as const,
    registers: [registry],
  }),
};

new Gauge({
  name: "slotflow_purge_lag_seconds",
  help: "How long past its retention the oldest ended run still present is (0 when none is due; absent when SLOTFLOW_RETENTION=off)",
  registers: [registry],
  async collect() {
    await fill(this, async ({ db, retentionMs }) => {
      if (retentionMs === null) return;
      this.set(await purgeLagSeconds(db, new Date(), retentionMs));
    });
  },
});

// --- deliveries through endpoints (issue 18) ---------------------------------------------------

/**
 * `slotflow_delivery_attempts_total{kind,outcome}` (worker: each attempt of a `send webhook` /
 * `send message`, by endpoint kind — webhook, slack, teams, unknown — and outcome: sent, retry,
 * failed); `slotflow_deliveries{status}` and `slotflow_delivery_retry_backlog` (read when scraped:
 * deliveries by status, and pending deliveries that have failed at least once). Labels never
 * carry an endpoint's name, URL or secret.
 */
/** Calls (v0.5, issue 40; interfaces.md "Calls"): workers/calls.ts and workers/commands.ts count them. */
export const callMetrics = {
  calls: new Counter({
    name: "slotflow_calls_total",
    help: "Call attempts and ends, by callee type and outcome (answered, failed, retried, cancelled)",
    labelNames: ["type", "outcome"] as const,
    registers: [registry],
  }),
  duration: new Histogram({
    name: "slotflow_call_duration_seconds",
    help: "Duration of one call attempt (request to the whole answer read), by callee type",
    labelNames: ["type"] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  }),
};

export const deliveryMetrics = {
  attempts: new Counter({
    name: "slotflow_delivery_attempts_total",
    help: "Delivery attempts of send webhook / send message, by endpoint kind and outcome (sent, retry, failed)",
    labelNames: ["kind", "outcome"] as const,
    registers: [registry],
  }),
};

new Gauge({
  name: "slotflow_deliveries",
  help: "Deliveries of send webhook / send message by status (pending, sent, failed)",
  labelNames: ["status"] as const,
  registers: [registry],
  async collect() {
    await fill(this, async ({ db }) => {
      const rows = await db.delivery.groupBy({ by: ["status"], _count: { _all: true } });
      for (const status of ["pending", "sent", "failed"]) this.set({ status }, rows.find((r) => r.status === status)?._count._all ?? 0);
    });
  },
});

new Gauge({
  name: "slotflow_delivery_retry_backlog",
  help: "Deliveries waiting for a retry (pending after at least one failed attempt)",
  registers: [registry],
  async collect() {
    await fill(this, async ({ db }) => {
      this.set(await db.delivery.count({ where: { status: "pending", attempts: { gt: 0 } } }));
    });
  },
});
