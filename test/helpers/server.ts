/**
 * A real slotflow server for end-to-end tests: `slotflow serve` (or `web` / `worker`) in a child
 * process, on a free port, with its own fresh database and its own BullMQ key prefix, its output
 * captured line by line so tests can read (and scan) every log line.
 *
 * Warnings (issue 16 item 6): test/preload/fail-on-warning.mjs fails the ava processes on a
 * process warning, but a spawned server's warnings went only into its captured output. Every line
 * that is one — Node's own `(node:PID) [DEP…] DeprecationWarning: …` on stderr, or a pino line
 * logging a `…Warning` — is kept in `ServerProcess.warnings`, and `stop()` (so `Cluster.stop()`,
 * which every test calls in its `after.always`) throws naming them once the process has exited:
 * the test file that spawned it fails.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { recordCost } from "./costs.js";
import { freshDatabase } from "./db.js";
import { cliEntry } from "./cli-entry.js";

import { pollPause } from "./poll.js";
import { ROOT } from "./root.js";

export { ROOT, pollPause };
export const ADMIN_TOKEN = "test-admin-token";
export const JWT_SECRET = "test-jwt-secret";

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface ServerProcess {
  child: ChildProcess;
  role: string;
  /** Every line written to stdout and stderr so far. */
  output: string[];
  /** The lines of `output` that are process warnings (`isWarningLine`). */
  warnings: string[];
  /** Stops the process (SIGTERM, SIGKILL after 5 s); then throws if it printed a warning. */
  stop(): Promise<void>;
}

/** Node's default warning output: `(node:1234) Warning: …`, `(node:1234) [DEP0040] DeprecationWarning: …`. */
const NODE_WARNING = /^\(node:\d+\) (?:\[[A-Z]+\d+\] )?[A-Za-z]*Warning: /;
/** A pino line logging a warning object (`{"err":{"type":"DeprecationWarning",…}}`, `"name":"MaxListenersExceededWarning"`). */
const PINO_WARNING = /"(?:type|name)":"[A-Za-z]*Warning"/;

/** True when a line of a spawned process's output reports a process warning (issue 16 item 6). */
export function isWarningLine(line: string): boolean {
  return NODE_WARNING.test(line) || (line.startsWith("{") && PINO_WARNING.test(line));
}

/** The error `stop()` throws for a process that printed warnings. */
function warningsError(procs: ServerProcess[]): Error | null {
  const found = procs.flatMap((p) => p.warnings.map((w) => `slotflow ${p.role} (pid ${p.child.pid}): ${w}`));
  if (found.length === 0) return null;
  return new Error(`A spawned slotflow process printed a process warning, which fails the test (test/helpers/server.ts, issue 16 item 6):\n${found.join("\n")}`);
}

export interface Cluster {
  baseUrl: string;
  databaseUrl: string;
  env: NodeJS.ProcessEnv;
  processes: ServerProcess[];
  /** All captured output of all processes. */
  output(): string[];
  /** Starts one more process of `role` sharing this cluster's database and queues. */
  spawn(role: "serve" | "web" | "worker" | "sweeper", opts?: { port?: number; args?: string[]; env?: NodeJS.ProcessEnv }): Promise<ServerProcess>;
  stop(): Promise<void>;
}

function startProcess(role: string, args: string[], env: NodeJS.ProcessEnv, readyWhen: RegExp): Promise<ServerProcess> {
  // SLOTFLOW_RUN_BUILT=1 (benches): run the built package (bin/slotflow.js → dist/, `npm run build`
  // first) as production does, instead of the TypeScript sources through tsx (issue 22: tsx's own
  // memory is not slotflow's).
  const entry = env.SLOTFLOW_RUN_BUILT === "1" ? ["bin/slotflow.js"] : cliEntry();
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, [...entry, role, ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  const output: string[] = [];
  const warnings: string[] = [];
  // Every line has been read once the pipes close ("exit" may come first); at most 2 s after exit.
  const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const exited = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
      setTimeout(() => child.kill("SIGKILL"), 5000).unref();
    });
  const proc: ServerProcess = {
    child,
    role,
    output,
    warnings,
    async stop() {
      await exited();
      await Promise.race([closed, new Promise((r) => setTimeout(r, 2000).unref())]);
      const err = warningsError([proc]);
      if (err) throw err;
    },
  };
  let ready = false;
  return new Promise((resolve, reject) => {
    // One buffer per stream, so a line split across chunks is never spliced with the other stream's.
    const reader = () => {
      let buffered = "";
      return (chunk: Buffer) => {
        buffered += chunk.toString("utf8");
        const lines = buffered.split("\n");
        buffered = lines.pop() ?? "";
        for (const line of lines) {
          output.push(line);
          if (isWarningLine(line)) warnings.push(line);
          if (readyWhen.test(line)) {
            if (!ready) recordCost("process", performance.now() - spawnedAt);
            ready = true;
            resolve(proc);
          }
        }
      };
    };
    child.stdout!.on("data", reader());
    child.stderr!.on("data", reader());
    child.once("exit", (code) => reject(new Error(`slotflow ${role} exited with ${code} before it was ready:\n${output.join("\n")}`)));
    // A process that never became ready is killed, so no test run leaves it behind.
    // SLOTFLOW_TEST_READY_MS widens the bound on a loaded machine (the faults suite sets 120 s).
    const readyMs = Number(process.env.SLOTFLOW_TEST_READY_MS) || 30_000;
    setTimeout(() => {
      if (ready) return;
      reject(new Error(`slotflow ${role} was not ready in ${readyMs / 1000} s:\n${output.join("\n")}`));
      child.kill("SIGKILL");
    }, readyMs).unref();
  });
}

/**
 * Starts `roles` (default: one `serve`) against a fresh database — as after `slotflow migrate`,
 * the built-in workflows deployed, unless `builtins: false` (test/helpers/db.ts).
 */
export async function startCluster(
  label: string,
  opts: { roles?: ("serve" | "web" | "worker" | "sweeper")[]; env?: NodeJS.ProcessEnv; args?: string[]; builtins?: boolean } = {},
): Promise<Cluster> {
  const databaseUrl = await freshDatabase(label, { builtins: opts.builtins ?? true });
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    REDIS_URL: process.env.REDIS_URL || "redis://127.0.0.1:6379",
    PORT: String(port),
    BASE_URL: baseUrl,
    SLOTFLOW_ADMIN_TOKEN: ADMIN_TOKEN,
    SLOTFLOW_JWT_SECRET: JWT_SECRET,
    SLOTFLOW_SEAL_KEY: "test-seal-key",
    SLOTFLOW_QUEUE_PREFIX: `sft-${randomBytes(4).toString("hex")}`,
    // a deadline is swept at most 1 s late, as in production. Each sweep is ~7 statements and a
    // BullMQ job: an idle serve used 0.44 s of CPU per 10 s at 500 ms and 0.22 s at 2 s (0.13 s
    // without sweeps), beside its PostgreSQL backends — on ~150 processes per npm test
    // (docs/testing.md, "Round five")
    SLOTFLOW_SWEEP_INTERVAL_MS: "1000",
    LOG_LEVEL: "info",
    SMTP_URL: "",
    ...opts.env,
  };
  const processes: ServerProcess[] = [];
  const cluster: Cluster = {
    baseUrl,
    databaseUrl,
    env,
    processes,
    output: () => processes.flatMap((p) => p.output),
    async spawn(role, spawnOpts = {}) {
      const e = { ...env, PORT: String(spawnOpts.port ?? port), ...spawnOpts.env };
      const proc = await startProcess(role, spawnOpts.args ?? [], e, /"msg":"ready"/);
      processes.push(proc);
      return proc;
    },
    async stop() {
      // stop every process before reporting any warning, so none is left running
      const results = await Promise.allSettled(processes.map((p) => p.stop()));
      const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
      if (failed) throw warningsError(processes) ?? failed.reason;
    },
  };
  for (const role of opts.roles ?? ["serve"]) await cluster.spawn(role, { args: opts.args });
  return cluster;
}

/** A JSON request to the cluster. */
export async function request(
  baseUrl: string,
  method: string,
  path: string,
  opts: { token?: string; json?: unknown; text?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined = opts.body;
  if (opts.json !== undefined) {
    headers["content-type"] ??= "application/json";
    body = JSON.stringify(opts.json);
  } else if (opts.text !== undefined) {
    headers["content-type"] ??= "text/plain";
    body = opts.text;
  }
  const res = await fetch(new URL(path, baseUrl), { method, headers, body });
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/**
 * A page request as a signed-in principal would make it from the page itself: a GET, or with
 * `form` a same-origin form POST (`Origin` and `Sec-Fetch-Site` as a browser sends them), with
 * the principal's bearer JWT; redirects are not followed (a 303 is the answer to read).
 */
export async function pageAs(
  baseUrl: string,
  method: string,
  path: string,
  jwt: string,
  form?: Record<string, string>,
): Promise<{ status: number; headers: Headers; text: string }> {
  const headers: Record<string, string> = { accept: "text/html", authorization: `Bearer ${jwt}` };
  let body: string | undefined;
  if (form) {
    Object.assign(headers, { "content-type": "application/x-www-form-urlencoded", origin: baseUrl, "sec-fetch-site": "same-origin" });
    body = new URLSearchParams(form).toString();
  }
  const res = await fetch(new URL(path, baseUrl), { method, headers, body, redirect: "manual" });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** Links printed by the terminal mail transport, in order. */
export function printedLinks(output: string[]): string[] {
  return output.flatMap((l) => [...l.matchAll(/https?:\/\/[^\s"]+\/api\/workflow\/callback\/(?:sfl_[A-Za-z0-9_-]{49}|[A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])/g)].map((m) => m[0]));
}

/** Waits until `predicate` holds (polling with pollPause: 25 ms rising to 200 ms), or fails after `ms`. */
export async function eventually<T>(fn: () => Promise<T | undefined | null | false>, ms = 10_000): Promise<T> {
  const until = Date.now() + ms;
  for (let attempt = 0; ; attempt++) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error("condition did not hold in time");
    await new Promise((r) => setTimeout(r, pollPause(attempt)));
  }
}
