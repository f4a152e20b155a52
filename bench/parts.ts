/**
 * Benchmark `parts`: what the parts of one deposit's apply cost on their own, to show where the
 * floor of this design is (docs/performance.md "Where the floor is"). In this process, no web or
 * worker:
 *
 * 1. The driver stack: client CPU µs and wall µs per operation of a one-statement round trip and
 *    of a BEGIN / statement / COMMIT transaction, through Prisma (`$queryRawUnsafe`,
 *    `$transaction`) and through the `pg` driver underneath. The difference is Prisma's own cost.
 * 2. One apply (`applyCommand`, a VendorApproval deposit on a seeded run) end to end, and the wall
 *    time of each of its round trips: BEGIN, the step read, the step write, COMMIT (which waits
 *    for the WAL flush).
 *
 *   npm run bench -- parts [n=3000]
 *
 * Writes bench/results/parts-*.json.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { createDb } from "../src/db.js";
import { applyCommand } from "../src/engine/commands/apply.js";
import { Sealer } from "../src/engine/sealing/seal.js";
import { startBenchCluster } from "./lib/cluster.js";
import { cpuMs, loadNote, machineCpu } from "./lib/proc.js";
import { fmt, percentile, writeResult } from "./lib/report.js";

const n = Number(process.argv[2] ?? 3000);

/** Client CPU µs and wall µs per call of `op`, after n/2 calls of warm-up. */
async function perOp(op: () => Promise<unknown>): Promise<{ cpuUs: number; wallUs: number }> {
  for (let i = 0; i < n / 2; i++) await op();
  const c0 = cpuMs(process.pid)!;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await op();
  return { cpuUs: (1000 * (cpuMs(process.pid)! - c0)) / n, wallUs: (1000 * (performance.now() - t0)) / n };
}

/** Wraps pg's Client.query to record the wall time of each statement, by its first words. */
function statementTimer(): { times: Map<string, number[]>; reset(): void } {
  const times = new Map<string, number[]>();
  const query = pg.Client.prototype.query as (...a: unknown[]) => unknown;
  (pg.Client.prototype as unknown as { query: unknown }).query = function (this: pg.Client, ...args: unknown[]) {
    const config = args[0] as string | { text?: string };
    const text = (typeof config === "string" ? config : (config?.text ?? "")).replace(/\(.*$/s, "").slice(0, 40);
    const t0 = performance.now();
    const p = query.apply(this, args) as Promise<unknown> | undefined;
    p?.then?.(
      () => times.set(text, [...(times.get(text) ?? []), performance.now() - t0]),
      () => undefined,
    );
    return p;
  };
  return { times, reset: () => times.clear() };
}

async function main() {
  const load0 = machineCpu();
  const timer = statementTimer();
  const bench = await startBenchCluster("bparts");
  const out: Record<string, unknown> = {};
  try {
    const url = bench.cluster.databaseUrl;
    const db = createDb(url, 1);
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    const stack: Record<string, { cpuUs: number; wallUs: number }> = {
      "Prisma $queryRawUnsafe (1 round trip)": await perOp(() => db.$queryRawUnsafe("SELECT $1::int AS x", 1)),
      "pg pool.query (1 round trip)": await perOp(() => pool.query("SELECT $1::int AS x", [1])),
      "Prisma $transaction, 1 statement (3 round trips)": await perOp(() => db.$transaction((tx) => tx.$queryRawUnsafe("SELECT $1::int AS x", 1))),
      "pg BEGIN, 1 statement, COMMIT (3 round trips)": await perOp(async () => {
        const c = await pool.connect();
        try {
          await c.query("BEGIN");
          await c.query("SELECT $1::int AS x", [1]);
          await c.query("COMMIT");
        } finally {
          c.release();
        }
      }),
    };
    for (const [k, v] of Object.entries(stack)) process.stdout.write(`${k.padEnd(52)} client CPU ${fmt(v.cpuUs)} µs, wall ${fmt(v.wallUs)} µs\n`);
    out.driverStack = stack;
    await pool.end();

    await bench.deploy("examples/vendor-approval.flow");
    await bench.seedRuns("VendorApproval", { vendor: { name: "Bench", contactEmail: "bench@example.com" }, amount: 10 }, n, "parts", { returnUrls: false });
    const deps = { db, sealer: new Sealer(bench.cluster.env.SLOTFLOW_SEAL_KEY!), baseUrl: bench.cluster.baseUrl };
    const applies: number[] = [];
    // The pool has one connection: its backend serves every statement of every apply.
    const backend = (await db.$queryRawUnsafe<{ pid: number }[]>("SELECT pg_backend_pid() AS pid"))[0].pid;
    const b0 = cpuMs(backend)!;
    const c0 = cpuMs(process.pid)!;
    for (let i = 0; i < n; i++) {
      if (i === n / 2) timer.reset();
      const tail = String(i).padStart(12, "0");
      const t0 = performance.now();
      const a = await applyCommand(deps, { kind: "deposit", commandId: randomUUID(), runId: `aaaaaaaa-0000-4000-8000-${tail}`, linkId: `dddddddd-0000-4000-8000-${tail}`, args: { ok: true, note: "bench" } });
      if (!a.outcome.ok) throw new Error(`deposit ${i} refused: ${JSON.stringify(a.outcome)}`);
      if (i >= n / 2) applies.push(performance.now() - t0);
    }
    const cpuPerApplyMs = (cpuMs(process.pid)! - c0) / n;
    const backendCpuPerApplyMs = (cpuMs(backend)! - b0) / n;
    const stat = (a: number[]) => {
      const s = [...a].sort((x, y) => x - y);
      return { n: s.length, p50Ms: percentile(s, 50), p90Ms: percentile(s, 90) };
    };
    const statements = Object.fromEntries([...timer.times].map(([k, v]) => [k, stat(v)]));
    out.apply = { ...stat(applies), clientCpuMsPerApply: cpuPerApplyMs, backendCpuMsPerApply: backendCpuPerApplyMs, statements };
    process.stdout.write(
      `applyCommand (deposit, in process, C=1): p50 ${fmt(stat(applies).p50Ms, 2)} ms, p90 ${fmt(stat(applies).p90Ms, 2)} ms; ` +
        `CPU per apply: this process ${fmt(cpuPerApplyMs, 2)} ms, its PostgreSQL backend ${fmt(backendCpuPerApplyMs, 2)} ms\n`,
    );
    for (const [k, v] of Object.entries(statements)) process.stdout.write(`  ${k.padEnd(40)} p50 ${fmt(v.p50Ms, 2)} ms, p90 ${fmt(v.p90Ms, 2)} ms\n`);
    await db.$disconnect();
    const note = loadNote(load0);
    process.stdout.write(`${note}\nwrote ${writeResult("parts", { note, ...out })}\n`);
  } finally {
    await bench.stop();
  }
}

await main();
