/**
 * Load driving and reporting shared by the benchmarks: C concurrent clients over a list of
 * requests, latency percentiles, and a JSON result file in bench/results/.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import http from "node:http";
import { join } from "node:path";
import { ROOT } from "../../test/helpers/server.js";

/**
 * Requests sent before anything is measured, so that web and worker run JIT-compiled code as a
 * long-lived process does. Measured on the development machine (bench `deposits`, C=10): after
 * 200 warm-up deposits CPU per deposit was 8.9–9.3 ms, after 4,000 it was 6.2 ms — V8 was still
 * compiling (12 % of the worker's CPU on its compiler threads in `perf`). `--warm=N` overrides.
 */
export const WARM_UP = Number(process.argv.find((a) => a.startsWith("--warm="))?.slice(7) ?? 3000);

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export interface LoadResult {
  clients: number;
  ops: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  statuses: Record<string, number>;
}

/** Runs `items` through `op` with `clients` concurrent clients; `op` returns an HTTP status. */
export async function drive<T>(items: T[], clients: number, op: (item: T) => Promise<number>): Promise<LoadResult> {
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < items.length) {
        const item = items[next++];
        const s = performance.now();
        const status = await op(item);
        latencies.push(performance.now() - s);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  return { clients, ops: items.length, seconds, perSecond: items.length / seconds, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99), statuses };
}

/**
 * The load generator's HTTP client: node:http with a keep-alive agent. It stands for responders on
 * other machines, so what it costs is not counted; but it runs on the same two cores as the
 * processes measured. Measured (bench `deposits`, C=10): `fetch` (undici) took 0.91 ms of this
 * process's CPU per request, this 0.59 ms — 4 % more deposits/s for the same server.
 */
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

/**
 * POSTs `body` (JSON text) to `url` with optional extra headers; resolves with the status once the
 * answer is read. A kept-alive socket that the server closed when idle (its keep-alive timeout,
 * between phases) resets the request written on it before the server read it: that one is sent
 * again on a new socket, once (Node's documented pattern: `req.reusedSocket` and ECONNRESET).
 */
export function post(url: string, body: string, headers: Record<string, string> = {}, retried = false): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: "POST", agent, headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), ...headers } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
      res.on("error", reject);
    });
    req.on("error", (err: NodeJS.ErrnoException) => {
      if (!retried && req.reusedSocket && err.code === "ECONNRESET") resolve(post(url, body, headers, true));
      else reject(err);
    });
    req.end(body);
  });
}

/** POSTs a deposit body to a callback URL; returns the status. */
export function postDeposit(url: string, body = '{"ok":true,"note":"bench"}'): Promise<number> {
  return post(url, body);
}

/**
 * Open-loop load: starts one request every 1000/`perSecond` ms whatever the answers (new arrivals
 * do not wait for slow ones, as with real responders), then waits for all. Latency is counted from
 * each request's scheduled start, so a backlog shows in it.
 */
export async function drivePaced<T>(items: T[], perSecond: number, op: (item: T) => Promise<number>): Promise<LoadResult> {
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const interval = 1000 / perSecond;
  const t0 = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < items.length; i++) {
    const due = t0 + i * interval;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    pending.push(
      op(items[i]).then((status) => {
        latencies.push(performance.now() - due);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }),
    );
  }
  await Promise.all(pending);
  const seconds = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  return { clients: 0, ops: items.length, seconds, perSecond: items.length / seconds, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99), statuses };
}

export function fmt(n: number, digits = 1): string {
  return Number.isFinite(n) ? n.toFixed(digits) : "–";
}

/** Writes `bench/results/<name>-<timestamp>.json` and `bench/results/<name>-latest.json`; returns the path. */
export function writeResult(name: string, data: unknown): string {
  const dir = join(ROOT, "bench/results");
  mkdirSync(dir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const path = join(dir, `${name}-${stamp}.json`);
  const text = JSON.stringify({ name, at: new Date().toISOString(), ...(data as object) }, null, 2);
  writeFileSync(path, text);
  writeFileSync(join(dir, `${name}-latest.json`), text);
  return path;
}
