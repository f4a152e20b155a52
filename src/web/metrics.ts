/**
 * Prometheus metrics (`GET /metrics`). Labels are bounded sets — route templates, never raw
 * paths, and outcome codes — so no token can become a label value.
 */
import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";

export const registry = new Registry();
collectDefaultMetrics({ register: registry });

export const metrics = {
  deposits: new Counter({
    name: "slotflow_callback_deposits_total",
    help: "Callback deposits that reached a worker or were answered after queueing, by outcome code",
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
