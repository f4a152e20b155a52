/**
 * slotflow through a connection pooler (issue 17 "Poolers"; interfaces.md "Running on production
 * infrastructure": `DATABASE_URL` may point at PgBouncer 1.18 in transaction mode with no setting).
 *
 * A real PgBouncer (Debian's, test/helpers/pgbouncer.ts) on a free port in front of the machine's
 * PostgreSQL, in transaction mode with 4 server connections, so every client's transactions land
 * on whichever server connection is free. The database is migrated through it (`slotflow
 * migrate`), a web and a worker run with `DATABASE_URL` pointing at it, and the start and deposit
 * paths run at 20 concurrent requests: every answer is a promise kept (201/202 for a start,
 * 200/202 for a deposit and a same-key retry learns "completed"), and every row is there once.
 * Before issue 17 the hot statements were named prepared statements and this failed with
 * `prepared statement "slotflow_prior_outcome" already exists` (42P05) on the first burst.
 * The same paths run once more in session mode (a smaller burst).
 */
import test, { type ExecutionContext } from "ava";
import { randomBytes, randomUUID } from "node:crypto";
import { listMigrations, migrate } from "../../src/migrate.js";
import { deployFixture, showRun } from "../helpers/callback.js";
import { dropDatabase, sql } from "../helpers/db.js";
import { linkIn, parseEmails } from "../helpers/mail.js";
import { startPgBouncer, type PgBouncer } from "../helpers/pgbouncer.js";
import { ADMIN_TOKEN, request, startCluster, type Cluster } from "../helpers/server.js";

const SERVER = new URL(process.env.DATABASE_URL || "postgresql://postgres@127.0.0.1:5432/slotflow");
const CONCURRENCY = 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `fn` over `items` with at most `limit` in flight. */
async function pool<T, R>(items: T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!, i);
      }
    }),
  );
  return out;
}

interface Setup {
  bouncer: PgBouncer;
  cluster: Cluster;
  /** The database, reached directly (for reading rows back and dropping it). */
  directUrl: string;
}

/** A database migrated through a fresh PgBouncer in `mode`, and a web and a worker using it through the pooler. */
async function setUp(mode: "transaction" | "session", poolSize: number): Promise<Setup> {
  const bouncer = await startPgBouncer({ targetPort: Number(SERVER.port || 5432), mode, poolSize });
  const name = `${process.env.SLOTFLOW_TEST_DB_PREFIX || "slotflow_t"}_pooler_${randomBytes(4).toString("hex")}`;
  const directUrl = new URL(SERVER.toString());
  directUrl.pathname = `/${name}`;
  let cluster: Cluster | undefined;
  try {
    await migrate(bouncer.url(name));
    // startCluster makes a database of its own on the default server (dropped at the end); the
    // processes use ours, through the pooler.
    cluster = await startCluster(`pooler_${mode}`, {
      roles: [],
      env: { DATABASE_URL: bouncer.url(name), SLOTFLOW_RATE_LIMIT_PER_MINUTE: "1000000", SLOTFLOW_WORKER_CONCURRENCY: "8" },
    });
    await cluster.spawn("web");
    await cluster.spawn("worker");
    return { bouncer, cluster, directUrl: directUrl.toString() };
  } catch (err) {
    await cluster?.stop();
    if (cluster) await dropDatabase(cluster.databaseUrl).catch(() => undefined);
    await bouncer.destroy();
    await dropDatabase(directUrl.toString()).catch(() => undefined);
    throw err;
  }
}

async function tearDown(s: Setup | undefined): Promise<void> {
  if (!s) return;
  await s.cluster.stop();
  await dropDatabase(s.cluster.databaseUrl).catch(() => undefined);
  await s.bouncer.destroy();
  await dropDatabase(s.directUrl).catch(() => undefined);
}

/** Starts `n` runs and deposits once on each, `CONCURRENCY` at a time, through the pooler; asserts every answer and every row. */
async function startsAndDeposits(t: ExecutionContext, s: Setup, n: number): Promise<void> {
  const base = s.cluster.baseUrl;
  await deployFixture(base, "faults.flow");
  const prefix = `pool-${randomBytes(3).toString("hex")}`;

  // The start path: every answer 201 (applied) or 202 (queued, will be applied).
  const starts = await pool(Array.from({ length: n }, (_, i) => i), CONCURRENCY, async (i) => {
    const title = `${prefix}-${i}`;
    const res = await request(base, "POST", "/api/workflows/Faults/runs", { token: ADMIN_TOKEN, json: { job: { title, contact: `${title}@example.test`, handled: 0 } } });
    return { status: res.status, id: res.body?.id as string | undefined, title, text: res.text };
  });
  t.deepEqual(starts.filter((r) => r.status !== 201 && r.status !== 202).map((r) => `${r.status} ${r.text}`), [], "every start answered 201 or 202");

  // Every run's link, from its email.
  const urls = new Map<string, string>();
  const until = Date.now() + 60_000;
  while (urls.size < n && Date.now() < until) {
    for (const mail of parseEmails(s.cluster.output())) if (mail.subject.startsWith(`answer ${prefix}-`)) urls.set(mail.subject.slice("answer ".length), linkIn(mail));
    await sleep(200);
  }
  t.is(urls.size, n, "every started run mailed its link");

  // The deposit path: 200 completed, or 202 and a same-key retry learns "completed".
  const deposits = await pool(starts, CONCURRENCY, async (r) => {
    const url = urls.get(r.title)!;
    const key = randomUUID();
    const post = () => request(base, "POST", new URL(url).pathname, { json: { note: `n-${r.title}` }, headers: { "idempotency-key": key } });
    const first = await post();
    let last = first;
    for (let i = 0; last.status === 202 && i < 100; i++) {
      await sleep(200);
      last = await post();
    }
    return { first: first.status, last: last.status, code: last.body?.status as string | undefined, text: last.text };
  });
  t.deepEqual(deposits.filter((d) => d.first !== 200 && d.first !== 202).map((d) => `${d.first} ${d.text}`), [], "every deposit answered 200 or 202");
  t.deepEqual(deposits.filter((d) => d.last !== 200 || d.code !== "completed").map((d) => `${d.last} ${d.text}`), [], "every deposit completed");

  // Every row, read through the API (through the pooler) and directly.
  const ids = starts.map((r) => r.id!);
  // A read answered 503 (the database could not start its snapshot in time: 20 readers share 4
  // server connections) is an honest answer; the client asks again.
  const views = await pool(ids, CONCURRENCY, async (id) => {
    for (let i = 0; ; i++) {
      const res = await request(base, "GET", `/api/runs/${id}`, { token: ADMIN_TOKEN });
      if (res.status === 200) return res.body as Awaited<ReturnType<typeof showRun>>;
      if (res.status !== 503 || i >= 20) throw new Error(`GET /api/runs/${id} answered ${res.status}: ${res.text}`);
      await sleep(250);
    }
  });
  const wrong = views.filter((v, i) => {
    const events = v.history.filter((h) => h.kind === "event" && h.data?.alias === "answer").length;
    return v.entities.job.handled !== 1 || v.entities.job.note !== `n-${starts[i]!.title}` || events !== 1;
  });
  t.deepEqual(wrong.map((v) => v.id), [], "every deposit applied exactly once, with its own note");
  const [runs] = await sql<{ runs: string; burned: string; live: string }>(
    s.directUrl,
    `SELECT (SELECT count(*) FROM runs WHERE workflow_name = 'Faults') AS runs,
            (SELECT count(*) FROM links WHERE status = 'burned') AS burned,
            (SELECT count(*) FROM links WHERE status = 'live') AS live`,
  );
  t.deepEqual({ runs: Number(runs!.runs), burned: Number(runs!.burned), live: Number(runs!.live) }, { runs: n, burned: n, live: 0 }, "one run per start, every link burned once");
  const errors = s.cluster.output().filter((l) => /"level":(50|60)|42P05|26000|prepared statement/.test(l));
  t.deepEqual(errors, [], "no error logged");
}

test.serial("transaction mode (PgBouncer 1.18, no setting): starts and deposits at 20 concurrent, every answer and every row", async (t) => {
  t.timeout(300_000);
  let s: Setup | undefined;
  try {
    s = await setUp("transaction", 4);
    await startsAndDeposits(t, s, 120);
    const mode = (await s.bouncer.admin("SHOW CONFIG")).find((r) => r.key === "pool_mode");
    t.is(mode?.value, "transaction", "the burst ran through a pooler in transaction mode");
  } finally {
    await tearDown(s);
  }
});

test.serial("session mode: starts and deposits at 20 concurrent, every answer and every row", async (t) => {
  t.timeout(300_000);
  let s: Setup | undefined;
  try {
    // Session mode holds a server connection per client connection: enough for web's and worker's pools.
    s = await setUp("session", 60);
    await startsAndDeposits(t, s, 40);
  } finally {
    await tearDown(s);
  }
});

test.serial("two releases migrating at once through a transaction-mode pooler apply each migration once", async (t) => {
  const bouncer = await startPgBouncer({ targetPort: Number(SERVER.port || 5432), mode: "transaction", poolSize: 4 });
  const name = `${process.env.SLOTFLOW_TEST_DB_PREFIX || "slotflow_t"}_poolmig_${randomBytes(4).toString("hex")}`;
  const direct = new URL(SERVER.toString());
  direct.pathname = `/${name}`;
  try {
    await sql(SERVER.toString().replace(/\/[^/]*$/, "/postgres"), `CREATE DATABASE "${name}"`);
    const [a, b] = await Promise.all([migrate(bouncer.url(name)), migrate(bouncer.url(name))]);
    t.deepEqual([...a.applied, ...b.applied].sort(), listMigrations(), "each migration applied by exactly one of them");
    const rows = await sql<{ migration_name: string; n: string }>(direct.toString(), `SELECT migration_name, count(*) AS n FROM "_prisma_migrations" WHERE finished_at IS NOT NULL GROUP BY 1 ORDER BY 1`);
    t.deepEqual(rows.map((r) => [r.migration_name, Number(r.n)]), listMigrations().map((m) => [m, 1]));
    const again = await migrate(bouncer.url(name));
    t.deepEqual(again.applied, []);
  } finally {
    await bouncer.destroy();
    await dropDatabase(direct.toString()).catch(() => undefined);
  }
});
