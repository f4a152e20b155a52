/**
 * Load driving and reporting shared by the benchmarks: C concurrent clients over a list of
 * requests, latency percentiles, and a JSON result file in bench/results/.
 */
import { mkdirSync, writeFileSync } from "node:fs";
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

/** POSTs a deposit body to a callback URL; returns the status. */
export async function postDeposit(url: string, body = '{"ok":true,"note":"bench"}'): Promise<number> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
  await res.arrayBuffer();
  return res.status;
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
