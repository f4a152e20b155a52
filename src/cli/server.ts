/**
 * Long-running processes: `serve` (web, workers and sweeper in one process), `web`, `worker`,
 * `sweeper`. Each stops gracefully on SIGINT/SIGTERM (see `onShutdown`).
 *
 * Start-up: `preflight()` (startup.ts: configuration, port, PostgreSQL, Redis — each failing with
 * one line) runs before this module is even loaded; then `serve()` deploys `--deploy DIR`, starts
 * workers and the sweeper, listens, installs the signal handlers and logs `ready`.
 */
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { Worker } from "bullmq";
import { join } from "node:path";
import { RefusalError } from "../engine/refusals.js";
import { ReceiptKeyError } from "../engine/receipts/keys.js";
import { UnsealError } from "../engine/sealing/seal.js";
import type { Config } from "../config.js";
import { installFaultHandlers } from "../process-faults.js";
import { checkRedisPersistence } from "../queue/persistence.js";
import { allShards } from "../queue/shards.js";
import { announceDeploy, createRuntime, loadReceiptKeys, warnDevDefaults, type Runtime } from "../runtime.js";
import type { WebApp } from "../web/app.js";
import { bindClusterMetrics, registry } from "../metrics/metrics.js";
import { StartupError } from "./failure.js";
import type { Roles } from "./startup.js";

/** Closes one part of the process within `timeoutMs`. */
type Closer = (timeoutMs: number) => Promise<unknown>;

/**
 * Graceful shutdown on SIGTERM and SIGINT (issue 9 §4):
 *
 * 1. web: `/readyz` answers 503 and responses close their connections, for SLOTFLOW_SHUTDOWN_DRAIN_MS
 *    (so a load balancer stops sending here first); then the listener closes — nothing new is
 *    accepted — and every request in flight is answered;
 * 2. workers and sweeper: stop taking jobs, finish the ones they are running, and leave the rest in
 *    Redis for the other workers (BullMQ `Worker.close()`);
 * 3. connections to Redis and PostgreSQL close; exit code 0.
 *
 * Bounded by SLOTFLOW_SHUTDOWN_TIMEOUT_MS: past it, requests still open are cut, and jobs still
 * running are abandoned — their locks lapse and another worker retries them (a job applies at most
 * once: apply.ts). A second signal exits at once (code 1), as does a stop stuck past the timeout.
 */
function onShutdown(rt: Runtime, web: WebApp | null, closers: Closer[]): (exitCode: number) => Promise<void> {
  let stopping = false;
  // `exitCode` 1: a drain after an uncaught exception (src/process-faults.ts), same steps.
  const stop = async (signal: NodeJS.Signals | "uncaughtException", exitCode = 0) => {
    if (stopping) {
      rt.log.warn({ signal }, "second signal: exiting without waiting");
      process.exit(1);
    }
    stopping = true;
    const { shutdownDrainMs: drainMs, shutdownTimeoutMs: timeoutMs } = rt.config;
    rt.log.info({ signal, drainMs, timeoutMs }, "shutting down");
    setTimeout(() => {
      rt.log.warn({ timeoutMs }, "shutdown took too long; exiting");
      process.exit(1);
    }, drainMs + timeoutMs + 3000).unref();
    if (web) {
      web.beginDrain();
      if (drainMs > 0) await new Promise((r) => setTimeout(r, drainMs));
    }
    // The timeout counts from the end of the drain: in-flight requests and running jobs share it.
    const deadline = Date.now() + timeoutMs;
    const left = () => Math.max(0, deadline - Date.now());
    if (web) {
      await web.close(left()).catch((err: unknown) => rt.log.warn({ err: String(err) }, "web close failed"));
      rt.log.info("web stopped: no longer accepting, every request answered");
    }
    await Promise.all(closers.map((close) => close(left()).catch((err: unknown) => rt.log.warn({ err: String(err) }, "close failed"))));
    await rt.close().catch(() => undefined);
    rt.log.info("stopped");
    process.exit(exitCode);
  };
  // Node passes the signal's number as a second argument: never let it become the exit code.
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
  return (exitCode) => stop("uncaughtException", exitCode);
}

/** A BullMQ worker's closer: finish the running jobs within the time left, else abandon them (they are retried elsewhere). */
function workerCloser(rt: Runtime, name: string, worker: Worker): Closer {
  return async (timeoutMs) => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), timeoutMs);
    });
    const outcome = await Promise.race([worker.close().then(() => "closed" as const), late]);
    clearTimeout(timer);
    if (outcome === "late") {
      rt.log.warn({ worker: name, timeoutMs }, "jobs still running at the shutdown timeout; abandoning them (another worker will retry them)");
      await worker.close(true);
    } else {
      rt.log.info({ worker: name }, "worker stopped: current jobs finished, the rest left in the queue");
    }
  };
}

/**
 * `GET /metrics` on its own port (SLOTFLOW_METRICS_PORT), for every process when set — web
 * processes too (issue 16 item 5: in production the public port answers /metrics only with the
 * admin token, so this private port is where Prometheus scrapes).
 */
async function serveMetrics(rt: Runtime, port: number): Promise<Closer> {
  bindClusterMetrics(rt.db, rt.queues, rt.config.retentionMs);
  const server = createServer((req, res) => {
    if (req.method !== "GET" || req.url !== "/metrics") {
      res.writeHead(404).end();
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { "content-type": registry.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(port, () => resolve()));
  rt.log.info({ port }, "metrics served");
  return async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
}

/** Deploys every `.flow` file of `dir`; logs each result. */
export async function deployDirectory(rt: Runtime, dir: string): Promise<void> {
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".flow")).sort()) {
    const path = join(dir, file);
    try {
      const { deploy } = await import("../engine/versions/deploy.js"); // the compiler: loaded only to deploy
      const r = await deploy(rt.db, readFileSync(path, "utf8"), path, {
        maxSourceBytes: rt.config.limits.maxSourceBytes,
        upgrade: { sealer: rt.sealer, baseUrl: rt.config.baseUrl, limits: rt.config.limits },
        refuseTaskCalls: rt.config.nodeEnv === "production" && rt.config.workerTokens.length === 0,
      });
      await announceDeploy(rt, r.name);
      rt.log.info({ file: path, workflow: r.name, version: r.version, created: r.created }, "deployed");
    } catch (err) {
      if (err instanceof RefusalError) rt.log.error({ file: path, code: err.code, detail: err.message, ...err.extra }, "deploy refused");
      else throw err;
    }
  }
}

export interface ServeOptions extends Roles {
  deployDir?: string;
  /** The queue shards a worker consumes (`slotflow worker --shards`; default every shard, issue 17). */
  shards?: number[];
}

/**
 * A receipt key the process cannot read is a configuration fault, told in one line like every other
 * (issue 38 defect 5; cli/failure.ts): a development key in `receipt_keys` sealed under a key
 * SLOTFLOW_SEAL_KEY does not hold (another environment's database, a rotation that dropped the old
 * key) used to end the start with an UnsealError's stack trace. Other errors pass unchanged.
 */
export function receiptKeyFault(err: unknown): unknown {
  if (err instanceof UnsealError) {
    return new StartupError(
      "SLOTFLOW_SEAL_KEY cannot open the development receipt key stored in the database (table receipt_keys): it was sealed under another key — " +
        "another environment's, or one a rotation dropped. Put that key back in SLOTFLOW_SEAL_KEY (docs/operations.md, \"Rotating the seal key\"), " +
        "or set SLOTFLOW_RECEIPT_KEYS",
    );
  }
  if (err instanceof ReceiptKeyError) return new StartupError(`the receipt keys cannot be read: ${err.message}`);
  return err;
}

/** Starts the roles with a configuration `preflight()` checked; rejects with StartupError when the port was taken meanwhile. */
export async function serve(opts: ServeOptions, config: Config): Promise<Runtime> {
  const rt = createRuntime({ config });
  const faults = installFaultHandlers(rt.log); // issue 8 item 10: log, keep serving or drain and exit
  warnDevDefaults(rt);
  await loadReceiptKeys(rt).catch(async (err) => Promise.reject(await rt.close().then(() => receiptKeyFault(err), () => receiptKeyFault(err))));
  await checkRedisPersistence(rt.config, rt.log).catch(async (err) => Promise.reject(await rt.close().then(() => err, () => err)));
  const closers: Closer[] = [];
  let web: WebApp | null = null;
  if (opts.deployDir) await deployDirectory(rt, opts.deployDir);
  // The built-in workflows of the MCP tools (issue 33 item 2): deployed where HTTP (so POST /mcp) is served, skipped unchanged.
  if (opts.web) await (await import("../mcp/builtins.js")).deployBuiltins(rt).catch((err: unknown) => rt.log.error({ err }, "deploying the built-in workflows failed"));
  // Each role's modules are loaded only when the process runs that role (issue 22 item 3): a worker
  // does not hold the web app, the console's graph layout and highlighter or the compiler in
  // memory, nor a web the workers' (docs/performance.md "Memory").
  if (opts.worker) {
    const [{ mailPump, startCommandWorker }, { startMailWorker }, { startDeliveryWorker }, { startCallWorker }] = await Promise.all([
      import("../../workers/commands.js"),
      import("../../workers/mail.js"),
      import("../../workers/deliveries.js"),
      import("../../workers/calls.js"),
    ]);
    // One command and one mail worker per shard consumed; the process's SLOTFLOW_WORKER_CONCURRENCY
    // is shared among its command shards (at least 1 each).
    const shards = opts.shards ?? allShards(rt.config);
    const concurrency = Math.max(1, Math.ceil(rt.config.workerConcurrency / shards.length));
    // The process's mail pump takes the first attempt of the mail its command workers' steps queue
    // (src/outbox/mail-pump.ts); it closes after them, once the sends it took are marked.
    const pump = mailPump(rt);
    const commandClosers: Closer[] = [];
    for (const shard of shards) {
      const suffix = shards.length > 1 || shard > 0 ? `[${shard}]` : "";
      commandClosers.push(workerCloser(rt, `commands${suffix}`, startCommandWorker(rt, pump, shard, concurrency)));
      closers.push(workerCloser(rt, `mail${suffix}`, startMailWorker(rt, shard)));
    }
    closers.push(async (timeoutMs) => {
      await Promise.all(commandClosers.map((close) => close(timeoutMs)));
      await pump.close();
    });
    // deliveries through endpoints (issue 18): one worker per process, on shard 0's prefix
    closers.push(workerCloser(rt, "deliveries", startDeliveryWorker(rt)));
    // attempts of calls (v0.5): one worker per process, on shard 0's prefix
    closers.push(workerCloser(rt, "calls", startCallWorker(rt)));
  }
  if (opts.sweeper) {
    const { startSweeper } = await import("../../workers/sweeper.js");
    closers.push(workerCloser(rt, "sweep", await startSweeper(rt)));
  }
  if (rt.config.metricsPort !== null) closers.push(await serveMetrics(rt, rt.config.metricsPort));
  if (opts.web) {
    const { createWebApp } = await import("../web/app.js");
    web = createWebApp(rt);
    const server = await web.listen(rt.config.port).catch((err: NodeJS.ErrnoException) =>
      Promise.reject(err.code === "EADDRINUSE" ? new StartupError(`port ${rt.config.port} is already in use (PORT)`) : err),
    );
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : rt.config.port;
    rt.log.info({ port, baseUrl: rt.config.baseUrl }, "listening");
  }
  faults.setDrain(onShutdown(rt, web, closers));
  rt.log.info({ web: opts.web, worker: opts.worker, sweeper: opts.sweeper }, "ready");
  return rt;
}

/** Where people inside the company answer (v0.4): the inbox, through the issuer or the development sign-in (SLOTFLOW_DEV_SIGN_IN=1 only). */
function inboxHint(rt: Runtime): string {
  const base = rt.config.baseUrl;
  if (rt.config.oidc) return `People inside the company answer from ${base}/inbox, signed in through ${rt.config.oidc.issuer}.\n`;
  if (!rt.config.devSignIn) return "";
  return `Or answer as finance from ${base}/inbox (the development sign-in, on because npm start sets SLOTFLOW_DEV_SIGN_IN=1: any user id, roles "finance"; never in production).\n`;
}

/** What `npm start` prints once the server is up. */
export function nextSteps(rt: Runtime): string {
  const base = rt.config.baseUrl;
  const auth = rt.config.devDefaults.includes("SLOTFLOW_ADMIN_TOKEN") ? rt.config.adminToken : "$SLOTFLOW_ADMIN_TOKEN";
  return `
slotflow is running on ${base} (web, worker and sweeper in one process).

Try the vendor-approval example (README.md walks through it):
  curl -s -X POST ${base}/api/workflows/VendorApproval/runs \\
    -H 'Authorization: Bearer ${auth}' -H 'Content-Type: application/json' \\
    -d '{"vendor": {"name": "Acme", "contactEmail": "ap@acme.example"}, "amount": 1200}'
Then open the link from the email printed below in a browser and answer, or POST {"ok": true, "note": "..."} to it.
${inboxHint(rt)}`;
}
