/**
 * A benchmark cluster: its own redis-server (a free port, no persistence, so `INFO commandstats`
 * and its CPU are this run's alone), a fresh migrated database on the local PostgreSQL, and real
 * `slotflow web` and `slotflow worker` processes (test/helpers/server.ts) with the counting preload
 * (count-preload.mjs). Offers: seeding N live runs with known tokens in one statement, and a meter
 * of CPU ms (web, worker, PostgreSQL backends of the database, redis-server), SQL statements and
 * Redis commands, read from outside the processes.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import pg from "pg";
import { dropDatabase } from "../../test/helpers/db.js";
import { startPgBouncer, type PgBouncer } from "../../test/helpers/pgbouncer.js";
import { ADMIN_TOKEN, freePort, printedLinks, request, ROOT, startCluster, type Cluster } from "../../test/helpers/server.js";
import { CpuMeter, machineCpu, memoryKb, resetPeakKb } from "./proc.js";

export interface RedisServer {
  url: string;
  port: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts a throwaway redis-server on a free port. */
export async function startRedis(): Promise<RedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "slotflow-bench-redis-"));
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir, "--maxmemory-policy", "noeviction"], {
    stdio: "ignore",
  });
  // A bench that dies on an uncaught error never reaches its stop(): the server must not outlive it.
  const orphanGuard = () => child.kill("SIGKILL");
  process.once("exit", orphanGuard);
  child.once("exit", () => process.off("exit", orphanGuard));
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    r.on("error", () => undefined);
    try {
      await r.connect();
      await r.ping();
      r.disconnect();
      break;
    } catch {
      r.disconnect();
      await new Promise((res) => setTimeout(res, 50));
    }
  }
  return {
    url,
    port,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        });
        child.kill("SIGTERM");
      }),
  };
}

export interface Counts {
  sql: number;
  redis: number;
  sqlByVerb: Record<string, number>;
  redisByName: Record<string, number>;
}

/** A measurement window over the whole cluster. */
export interface Window {
  cpuMs: Record<string, number>;
  counts: Counts;
  /** Commands Redis executed (INFO commandstats), scripts' inner commands included. */
  redisServerCalls: number;
  /**
   * Main-thread pauses of web and worker inside the window, by process (`web0`, `worker1`):
   * major-GC pauses over 2 ms (count, longest ms; one mark-compact cycle may pause more than once:
   * its incremental steps, its finalisation, weak callbacks), event-loop delays over 10 ms (count of 100 ms
   * intervals with one, longest ms), and
   * the time spent in minor GCs (ms). From the preload's pause log.
   */
  pauses: Record<string, { majorGc: number; longestMajorGcMs: number; stalls: number; longestStallMs: number; minorGcMs: number }>;
}

export interface BenchCluster {
  cluster: Cluster;
  /** The PgBouncer web and worker reach PostgreSQL through (with `pgbouncer: true`), else null. */
  bouncer: PgBouncer | null;
  redis: RedisServer;
  pool: pg.Pool;
  /** Deploys a .flow file through the API. */
  deploy(path: string): Promise<void>;
  /**
   * Starts one run of `workflow` through the API, then clones it `n` times in SQL (runs, slots,
   * tracked rows and the live link, each clone with its own token): returns the callback URLs of
   * clones `from`..`from+n-1` (tokens derive from `seed` and the index, so big seeds need no arrays).
   * Ids derive from the index i too (run `aaaaaaaa-0000-4000-8000-<i, 12 digits>`, slot k
   * `b<k>bbbbbb-…`, link `dddddddd-…`), so pgbench can name clone i without a lookup.
   */
  seedRuns(workflow: string, input: unknown, n: number, seed: string, opts?: { from?: number; returnUrls?: boolean }): Promise<string[]>;
  /** Starts measuring; `stop()` returns the deltas. */
  measure(): Promise<{ stop(): Promise<Window> }>;
  memory(): Record<string, { peakKb: number; rssKb: number }>;
  /** Resets each process's peak RSS to its current RSS (proc.ts resetPeakKb): later peaks are those under load. */
  resetPeakMemory(): void;
  /** The raw per-process counts written by the preload so far (pid, argv, sql.byText, redis.byName). */
  rawCounts(): unknown[];
  /** Starts (first call) or stops and writes (second call) every process's CPU profile (with SLOTFLOW_BENCH_CPU_PROF_DIR). */
  toggleProfiles(): Promise<void>;
  stop(): Promise<void>;
}

/** The token of clone `i` of `seed`: base64url of SHA-256("seed:i") — 43 characters, like a real one. */
export function benchToken(seed: string, i: number): string {
  return createHash("sha256").update(`${seed}:${i}`).digest("base64url");
}

const COUNT_PRELOAD = join(ROOT, "bench/lib/count-preload.mjs");

/**
 * Starts the bench cluster. `pgbouncer: true` puts a PgBouncer in transaction mode (20 server
 * connections) between the slotflow processes and PostgreSQL (issue 17); its CPU is metered as
 * `pgbouncer`. The bench's own seeding and metering connect directly.
 */
export async function startBenchCluster(label: string, opts: { env?: NodeJS.ProcessEnv; roles?: ("web" | "worker" | "serve" | "sweeper")[]; pgbouncer?: boolean } = {}): Promise<BenchCluster> {
  const redis = await startRedis();
  const countDir = mkdtempSync(join(tmpdir(), "slotflow-bench-counts-"));
  const roles = opts.roles ?? ["web", "worker"];
  const cluster = await startCluster(label, {
    roles: opts.pgbouncer ? [] : roles,
    env: {
      REDIS_URL: redis.url,
      SLOTFLOW_RATE_LIMIT_PER_MINUTE: "100000000",
      // The sweep cadence; set SLOTFLOW_SWEEP_INTERVAL_MS for the bench to try another.
      SLOTFLOW_SWEEP_INTERVAL_MS: process.env.SLOTFLOW_SWEEP_INTERVAL_MS ?? "1000",
      SLOTFLOW_BENCH_COUNT_DIR: countDir,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import=${COUNT_PRELOAD}`.trim(),
      ...opts.env,
    },
  });
  let bouncer: PgBouncer | null = null;
  if (opts.pgbouncer) {
    bouncer = await startPgBouncer({ targetPort: Number(new URL(cluster.databaseUrl).port || 5432), mode: "transaction", poolSize: 20 });
    const via = bouncer.url(new URL(cluster.databaseUrl).pathname.slice(1));
    for (const role of roles) await cluster.spawn(role, { env: { DATABASE_URL: via } });
  }
  const pool = new pg.Pool({ connectionString: cluster.databaseUrl, max: 2 });
  const admin = new pg.Pool({ connectionString: new URL("/postgres", cluster.databaseUrl).toString(), max: 1 });
  const dbName = new URL(cluster.databaseUrl).pathname.slice(1);
  // Write out what earlier runs left dirty now, not during this run's measurements (a previous
  // 1M-row seed kept the checkpointer busy through the next benchmark).
  await admin.query("CHECKPOINT");
  const redisClient = new Redis(redis.url);

  let pgPids: number[] = [];
  let vacuumPids: number[] = [];
  const refreshPgPids = async () => {
    const rows = await admin.query<{ pid: number; backend_type: string }>("SELECT pid, backend_type FROM pg_stat_activity WHERE datname = $1", [dbName]);
    pgPids = rows.rows.filter((r) => r.backend_type !== "autovacuum worker").map((r) => r.pid);
    vacuumPids = rows.rows.filter((r) => r.backend_type === "autovacuum worker").map((r) => r.pid);
  };
  const groups = () => ({
    ...Object.fromEntries(cluster.processes.map((p, i) => [`${p.role}${cluster.processes.filter((q) => q.role === p.role).length > 1 ? i : ""}`, [p.child.pid!]])),
    postgres: pgPids,
    // Autovacuum workers cleaning this database's tables (dead rows of applied steps): part of
    // the cost of a deposit, shown apart from the backends that run its statements.
    autovacuum: vacuumPids,
    redis: [redis.child.pid!],
    ...(bouncer ? { pgbouncer: [bouncer.pid()] } : {}),
  });
  const readCounts = (): Counts => {
    const out: Counts = { sql: 0, redis: 0, sqlByVerb: {}, redisByName: {} };
    for (const f of readdirSync(countDir).filter((f) => f.endsWith(".json"))) {
      try {
        const c = JSON.parse(readFileSync(join(countDir, f), "utf8"));
        out.sql += c.sql.total;
        out.redis += c.redis.total;
        for (const [k, v] of Object.entries(c.sql.byVerb as Record<string, number>)) out.sqlByVerb[k] = (out.sqlByVerb[k] ?? 0) + v;
        for (const [k, v] of Object.entries(c.redis.byName as Record<string, number>)) out.redisByName[k] = (out.redisByName[k] ?? 0) + v;
      } catch {
        // being rewritten; the next read gets it
      }
    }
    return out;
  };
  const serverCalls = async () => {
    const info = await redisClient.info("commandstats");
    return [...info.matchAll(/calls=(\d+)/g)].reduce((s, m) => s + Number(m[1]), 0);
  };
  const settle = () => new Promise((r) => setTimeout(r, 250));

  const bench: BenchCluster = {
    cluster,
    bouncer,
    redis,
    pool,
    async deploy(path) {
      const res = await request(cluster.baseUrl, "POST", "/api/workflows", { token: ADMIN_TOKEN, text: readFileSync(join(ROOT, path), "utf8") });
      if (res.status !== 201 && res.status !== 200) throw new Error(`deploy ${path}: ${res.status} ${res.text}`);
    },
    async seedRuns(workflow, input, n, seed, o = {}) {
      const started = await request(cluster.baseUrl, "POST", `/api/workflows/${workflow}/runs`, { token: ADMIN_TOKEN, json: input });
      // 202 when the web waits less than the worker takes (SLOTFLOW_DEPOSIT_WAIT_MS=1, to measure the 202 path).
      if (started.status !== 201 && started.status !== 202) throw new Error(`start ${workflow}: ${started.status} ${started.text}`);
      const template = started.body.id as string;
      // Wait for the template's run and link (minted in its start step).
      for (let i = 0; started.status === 202 && (await pool.query("SELECT 1 FROM runs WHERE id = $1", [template])).rowCount === 0; i++) {
        if (i > 200) throw new Error(`start ${workflow}: run ${template} not applied within 10 s`);
        await new Promise((r) => setTimeout(r, 50));
      }
      await new Promise((r) => setTimeout(r, 50));
      const from = o.from ?? 0;
      const CHUNK = 50_000;
      for (let at = 0; at < n; at += CHUNK) {
        const count = Math.min(CHUNK, n - at);
        // One statement per chunk: tokens are base64url(SHA-256("seed:i")), hashed again for the row.
        await pool.query(
          `WITH n AS (
             SELECT ('aaaaaaaa-0000-4000-8000-' || lpad(i::text, 12, '0'))::uuid AS run_id, lpad(i::text, 12, '0') AS tail,
                    rtrim(translate(encode(sha256(convert_to($2 || ':' || i, 'UTF8')), 'base64'), '+/', '-_'), '=') AS token
               FROM generate_series($3::bigint, $3::bigint + $4::bigint - 1) AS i),
           ts AS (SELECT t.*, row_number() OVER (ORDER BY t.alias, t.element) AS k FROM slots t WHERE t.run_id = $1::uuid),
           r AS (INSERT INTO runs (id, workflow_name, version, state, status, visit, input, milestones)
                 SELECT n.run_id, t.workflow_name, t.version, t.state, t.status, t.visit, t.input, t.milestones
                   FROM n, runs t WHERE t.id = $1::uuid),
           e AS (INSERT INTO entity_rows (run_id, name, entity, data)
                 SELECT n.run_id, t.name, t.entity, t.data FROM n, entity_rows t WHERE t.run_id = $1::uuid),
           s AS (INSERT INTO slots (id, run_id, state, visit, alias, element, element_value, event, status, opened_at, deadline, closed_at, args)
                 SELECT ('b' || ts.k || 'bbbbbb-0000-4000-8000-' || n.tail)::uuid, n.run_id, ts.state, ts.visit, ts.alias, ts.element, ts.element_value, ts.event, ts.status, ts.opened_at, ts.deadline, ts.closed_at, ts.args
                   FROM n, ts),
           k AS (INSERT INTO links (id, token_sha256, run_id, slot_id, minted_version, status)
                 SELECT ('dddddddd-0000-4000-8000-' || n.tail)::uuid, encode(sha256(convert_to(n.token, 'UTF8')), 'hex'), n.run_id,
                        ('b' || ts.k || 'bbbbbb-0000-4000-8000-' || n.tail)::uuid, l.minted_version, 'live'
                   FROM n, links l JOIN ts ON ts.id = l.slot_id
                  WHERE l.run_id = $1::uuid AND l.status = 'live'
                 RETURNING token_sha256, run_id, id)
           INSERT INTO link_tokens (token_sha256, run_id, link_id) SELECT token_sha256, run_id, id FROM k`,
          [template, seed, from + at, count],
        );
      }
      // VACUUM, not only ANALYZE: the clones' hint bits and visibility map are set now, and
      // autovacuum does not start on the new rows during the measurement (at 1M clones it did:
      // PostgreSQL's CPU per deposit doubled, counted from its autovacuum workers).
      for (const table of ["runs", "slots", "links", "link_tokens", "entity_rows"]) await pool.query(`VACUUM (ANALYZE) ${table}`);
      if (o.returnUrls === false) return [];
      return Array.from({ length: n }, (_, i) => `${cluster.baseUrl}/api/workflow/callback/${benchToken(seed, from + i)}`);
    },
    async measure() {
      await settle();
      await refreshPgPids();
      const meter = new CpuMeter(groups);
      const counts0 = readCounts();
      const calls0 = await serverCalls();
      const raw0 = bench.rawCounts() as PauseLog[];
      const t0 = Date.now();
      meter.begin();
      void machineCpu;
      return {
        async stop() {
          const t1 = Date.now();
          await settle();
          await refreshPgPids();
          const cpu = meter.end();
          const counts1 = readCounts();
          const calls1 = await serverCalls();
          const diff = (a: Record<string, number>, b: Record<string, number>) =>
            Object.fromEntries(Object.keys(b).map((k) => [k, (b[k] ?? 0) - (a[k] ?? 0)]).filter(([, v]) => (v as number) > 0));
          return {
            cpuMs: cpu,
            counts: { sql: counts1.sql - counts0.sql, redis: counts1.redis - counts0.redis, sqlByVerb: diff(counts0.sqlByVerb, counts1.sqlByVerb), redisByName: diff(counts0.redisByName, counts1.redisByName) },
            redisServerCalls: calls1 - calls0 - 2, // minus the two INFO calls of the meter itself
            pauses: pausesBetween(cluster, raw0, bench.rawCounts() as PauseLog[], t0, t1),
          };
        },
      };
    },
    rawCounts() {
      return readdirSync(countDir)
        .filter((f) => f.endsWith(".json"))
        .map((f) => {
          try {
            return JSON.parse(readFileSync(join(countDir, f), "utf8"));
          } catch {
            return null;
          }
        })
        .filter(Boolean);
    },
    memory() {
      return Object.fromEntries(cluster.processes.map((p, i) => [`${p.role}${i}`, memoryKb(p.child.pid!)]));
    },
    resetPeakMemory() {
      for (const p of cluster.processes) resetPeakKb(p.child.pid!);
    },
    async toggleProfiles() {
      for (const p of cluster.processes) p.child.kill("SIGUSR2");
      await new Promise((r) => setTimeout(r, 1500));
    },
    async stop() {
      redisClient.disconnect();
      await cluster.stop();
      // BENCH_KEEP_LOGS=1: each process's output (JSON log lines, with each apply's `ms`) for
      // reading a latency tail afterwards; bench/results/ is ignored by git.
      if (process.env.BENCH_KEEP_LOGS) {
        const dir = join(ROOT, "bench/results");
        mkdirSync(dir, { recursive: true });
        cluster.processes.forEach((p, i) => writeFileSync(join(dir, `${label}-${p.role}${i}.log`), p.output.join("\n") + "\n"));
      }
      await pool.end();
      await admin.end();
      await bouncer?.destroy();
      await dropDatabase(cluster.databaseUrl);
      await redis.stop();
      rmSync(countDir, { recursive: true, force: true });
    },
  };
  return bench;
}

interface PauseLog {
  pid: number;
  pauses?: [number, string, number][];
  minorGcMs?: number;
}

/** Window.pauses: each web/worker process's pauses with a timestamp in [t0, t1] (epoch ms). */
function pausesBetween(cluster: Cluster, before: PauseLog[], after: PauseLog[], t0: number, t1: number): Window["pauses"] {
  const out: Window["pauses"] = {};
  cluster.processes.forEach((p, i) => {
    const a = after.find((c) => c.pid === p.child.pid);
    if (!a) return;
    const inside = (a.pauses ?? []).filter(([at]) => at >= t0 && at <= t1);
    const major = inside.filter(([, kind]) => kind === "major-gc").map(([, , ms]) => ms);
    const stalls = inside.filter(([, kind]) => kind === "stall").map(([, , ms]) => ms);
    const minorBefore = before.find((c) => c.pid === p.child.pid)?.minorGcMs ?? 0;
    out[`${p.role}${i}`] = {
      majorGc: major.length,
      longestMajorGcMs: Math.max(0, ...major),
      stalls: stalls.length,
      longestStallMs: Math.max(0, ...stalls),
      minorGcMs: Math.round(((a.minorGcMs ?? 0) - minorBefore) * 10) / 10,
    };
  });
  return out;
}

export { printedLinks };
