/**
 * Benchmark `inbox` (v0.4 "The inbox stays fast"): the first inbox page of a principal with
 * 10,000 open tasks among 1,000,000 open slots of other principals, next to a principal with 10.
 *
 * The rows are bulk-loaded with `generate_series` straight into PostgreSQL (test/helpers/inbox-load.ts:
 * InboxDemo runs of test/fixtures/inbox.flow, 10 fanned-out `sign` slots per run, one inbox entry
 * each; other principals hold ~10 tasks each), then ANALYZEd. Measured, each N times at C=1 after
 * a warm-up:
 *   sql   — the page statement (src/engine/sql/inbox.ts `inboxPageSql`, newest first, 25 rows) and
 *           the counts statement, through a pg pool: ms per statement;
 *   http  — `GET /api/inbox` (newest first, also cut to 10 tasks, and by deadline) with the
 *           principal's bearer JWT, after 200 requests warming the web process, the principals'
 *           requests interleaved: ms per page and SQL statements per page (each one round trip;
 *           from the preload's counts, averaged over the pair);
 * and the plan of the many-task page (EXPLAIN ANALYZE, BUFFERS). Writes bench/results/inbox-*.json.
 *
 *   npm run bench -- inbox [slots=1000000] [--many=10000] [--few=10] [--n=200]
 */
import { startBenchCluster } from "./lib/cluster.js";
import { loadNote, machineCpu } from "./lib/proc.js";
import { fmt, percentile, writeResult } from "./lib/report.js";
import { principalJwt } from "../test/helpers/callback.js";
import { loadInbox } from "../test/helpers/inbox-load.js";
import { request } from "../test/helpers/server.js";
import { inboxCountsSql, inboxPageSql } from "../src/engine/sql/inbox.js";

const arg = (name: string, dflt: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt);
const SLOTS = Number(process.argv.slice(2).find((a) => !a.startsWith("--")) ?? 1_000_000);
const MANY = arg("many", 10_000);
const FEW = arg("few", 10);
const N = arg("n", 200);
const WARM = 30;

interface Timing {
  p50Ms: number;
  p95Ms: number;
}

function timing(ms: number[]): Timing {
  const s = [...ms].sort((a, b) => a - b);
  return { p50Ms: percentile(s, 50), p95Ms: percentile(s, 95) };
}

async function main() {
  const load0 = machineCpu();
  const bench = await startBenchCluster("binbox", { roles: ["web", "worker"] });
  try {
    await bench.deploy("test/fixtures/inbox.flow");
    const t0 = performance.now();
    const others = Math.max(0, SLOTS - MANY - FEW);
    await loadInbox(bench.cluster.databaseUrl, {
      workflow: "InboxDemo",
      version: 1,
      tag: "bench",
      groups: [
        { principal: "many", count: MANY },
        { principal: "few", count: FEW },
      ],
      others,
      otherPrincipals: Math.max(1, Math.floor(others / 10)),
    });
    const dbMiB = Number((await bench.pool.query("SELECT pg_database_size(current_database()) AS b")).rows[0].b) / 2 ** 20;
    process.stdout.write(`loaded ${SLOTS} open slots (${MANY} for user:many, ${FEW} for user:few) in ${fmt((performance.now() - t0) / 1000)} s; database ${fmt(dbMiB, 0)} MiB\n`);

    const results: Record<string, unknown> = { slots: SLOTS, many: MANY, few: FEW, n: N, databaseMiB: dbMiB };
    const sql: Record<string, Record<string, Timing>> = { many: {}, few: {} };
    // a principal with its id and two roles, as a signed-in person usually is
    const principalsOf = (who: string) => [`user:${who}`, "role:finance", "role:staff"];
    const statements = {
      pageNewest: (who: string) => inboxPageSql({ principals: principalsOf(who), workflow: null, order: "newest", limit: 25, after: null }),
      pageDeadline: (who: string) => inboxPageSql({ principals: principalsOf(who), workflow: null, order: "deadline", limit: 25, after: null }),
      counts: (who: string) => inboxCountsSql(principalsOf(who), null),
    };
    for (const [name, make] of Object.entries(statements)) {
      // many and few interleaved, so both see the same load
      const q = { many: make("many"), few: make("few") };
      const ms: Record<string, number[]> = { many: [], few: [] };
      for (let i = 0; i < WARM + N; i++) {
        for (const who of ["many", "few"] as const) {
          const t0 = performance.now();
          await bench.pool.query(q[who].text, q[who].values);
          if (i >= WARM) ms[who].push(performance.now() - t0);
        }
      }
      sql.many[name] = timing(ms.many);
      sql.few[name] = timing(ms.few);
    }
    results.sql = sql;
    const explain = inboxPageSql({ principals: ["user:many", "role:finance", "role:staff"], workflow: null, order: "newest", limit: 25, after: null });
    const plan = (await bench.pool.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${explain.text}`, explain.values)).rows.map((r) => r["QUERY PLAN"] as string);
    results.planManyNewest = plan;

    const http: Record<string, unknown> = {};
    // the web process's first requests compile the inbox's code: warm it on both principals first
    const tokens = { many: await principalJwt("many", ["finance", "staff"]), few: await principalJwt("few", ["finance", "staff"]) };
    for (let i = 0; i < 200; i++) await request(bench.cluster.baseUrl, "GET", `/api/inbox${i % 2 ? "?order=deadline" : ""}`, { token: i % 4 < 2 ? tokens.many : tokens.few });
    // Each phase pair is measured interleaved (one request of each in turn), so both see the same
    // load of the shared machine. `many-newest-10`: the many-task page cut to the few-task one's 10 tasks.
    const pairs = [
      [["few", "newest", ""], ["many", "newest", ""], ["many", "newest-10", "?limit=10"]],
      [["few", "deadline", "?order=deadline"], ["many", "deadline", "?order=deadline"]],
    ] as const;
    for (const pair of pairs) {
      const ms: number[][] = pair.map(() => []);
      const tasks: number[] = pair.map(() => 0);
      const m = await bench.measure();
      for (let i = 0; i < N; i++) {
        for (const [k, [who, , query]] of pair.entries()) {
          const t0 = performance.now();
          const res = await request(bench.cluster.baseUrl, "GET", `/api/inbox${query}`, { token: tokens[who] });
          ms[k].push(performance.now() - t0);
          if (res.status !== 200) throw new Error(`GET /api/inbox${query}: ${res.status} ${res.text}`);
          tasks[k] = res.body.tasks.length;
        }
      }
      const window = await m.stop();
      const sqlPerPage = window.counts.sql / (N * pair.length);
      for (const [k, [who, name]] of pair.entries()) http[`${who}-${name}`] = { ...timing(ms[k]), sqlPerPage, tasks: tasks[k] };
    }
    results.http = http;

    const s = sql;
    const h = http as Record<string, Timing & { sqlPerPage: number; tasks: number }>;
    process.stdout.write("SQL, ms per statement (p50 / p95):\n");
    for (const who of ["many", "few"]) {
      process.stdout.write(`  ${who.padEnd(4)} page newest ${fmt(s[who].pageNewest.p50Ms, 2)} / ${fmt(s[who].pageNewest.p95Ms, 2)}, page deadline ${fmt(s[who].pageDeadline.p50Ms, 2)} / ${fmt(s[who].pageDeadline.p95Ms, 2)}, counts ${fmt(s[who].counts.p50Ms, 2)} / ${fmt(s[who].counts.p95Ms, 2)}\n`);
    }
    process.stdout.write("GET /api/inbox, ms per page (p50 / p95), SQL statements per page:\n");
    for (const [k, v] of Object.entries(h)) process.stdout.write(`  ${k.padEnd(16)} ${fmt(v.p50Ms, 2)} / ${fmt(v.p95Ms, 2)}, ${fmt(v.sqlPerPage, 2)} statements, ${v.tasks} tasks\n`);
    process.stdout.write(`plan (many, newest):\n  ${plan.join("\n  ")}\n`);
    const note = loadNote(load0);
    process.stdout.write(`${note}\nwrote ${writeResult("inbox", { note, ...results })}\n`);
  } finally {
    await bench.stop();
  }
}

await main();
