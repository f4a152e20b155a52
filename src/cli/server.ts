/**
 * Long-running processes: `serve` (web, workers and sweeper in one process), `web`, `worker`,
 * `sweeper`. Each stops cleanly on SIGINT/SIGTERM.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { deploy } from "../engine/deploy.js";
import { RefusalError } from "../engine/refusals.js";
import { installFaultHandlers } from "../process-faults.js";
import { checkRedisPersistence } from "../queue/persistence.js";
import { createRuntime, warnDevDefaults, type Runtime } from "../runtime.js";
import { createWebApp } from "../web/app.js";
import { startCommandWorker } from "../../workers/commands.js";
import { startMailWorker } from "../../workers/mail.js";
import { startSweeper } from "../../workers/sweeper.js";

type Closer = () => Promise<unknown>;

/** How long a graceful stop may take before the process exits anyway (an unreachable Redis can stall it). */
const SHUTDOWN_GRACE_MS = 5000;

function onShutdown(rt: Runtime, closers: Closer[]): (exitCode?: number) => Promise<void> {
  let stopping = false;
  const stop = async (exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    rt.log.info("shutting down");
    setTimeout(() => {
      rt.log.warn({ graceMs: SHUTDOWN_GRACE_MS }, "shutdown took too long; exiting");
      process.exit(1);
    }, SHUTDOWN_GRACE_MS).unref();
    for (const close of closers) await close().catch(() => undefined);
    await rt.close();
    process.exit(exitCode);
  };
  process.on("SIGINT", () => void stop());
  process.on("SIGTERM", () => void stop());
  return stop;
}

/** Deploys every `.flow` file of `dir`; logs each result. */
export async function deployDirectory(rt: Runtime, dir: string): Promise<void> {
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".flow")).sort()) {
    const path = join(dir, file);
    try {
      const r = await deploy(rt.db, readFileSync(path, "utf8"), path);
      rt.log.info({ file: path, workflow: r.name, version: r.version, created: r.created }, "deployed");
    } catch (err) {
      if (err instanceof RefusalError) rt.log.error({ file: path, code: err.code, detail: err.message, ...err.extra }, "deploy refused");
      else throw err;
    }
  }
}

export interface ServeOptions {
  web: boolean;
  worker: boolean;
  sweeper: boolean;
  deployDir?: string;
}

export async function serve(opts: ServeOptions): Promise<Runtime> {
  const rt = createRuntime();
  const faults = installFaultHandlers(rt.log); // issue 8 item 10: log, keep serving or drain and exit
  warnDevDefaults(rt);
  await checkRedisPersistence(rt.config, rt.log).catch(async (err) => Promise.reject(await rt.close().then(() => err, () => err)));
  const closers: Closer[] = [];
  if (opts.deployDir) await deployDirectory(rt, opts.deployDir);
  if (opts.worker) {
    const commands = startCommandWorker(rt);
    const mail = startMailWorker(rt);
    closers.push(() => commands.close(), () => mail.close());
  }
  if (opts.sweeper) {
    const sweeper = await startSweeper(rt);
    closers.push(() => sweeper.close());
  }
  if (opts.web) {
    const web = createWebApp(rt);
    const server = await web.listen(rt.config.port);
    closers.unshift(() => web.close());
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : rt.config.port;
    rt.log.info({ port, baseUrl: rt.config.baseUrl }, "listening");
  }
  faults.setDrain(onShutdown(rt, closers));
  rt.log.info({ web: opts.web, worker: opts.worker, sweeper: opts.sweeper }, "ready");
  return rt;
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
Then copy the link from the email printed below and POST {"ok": true, "note": "..."} to it.
`;
}
