/**
 * The sweep drains a mass expiry (docs/architecture.md "sweeper"), over real web and worker
 * processes, PostgreSQL and Redis, with no sweeper process: the test runs one sweep itself.
 *
 * - One sweep that finds more than a batch of due slots goes on reading batches as the worker
 *   takes them, until none is left: every due slot expires from that one sweep (before, a sweep
 *   enqueued one batch of 500 and the rest waited for the next ticks).
 * - Meanwhile the expiries waiting in the queue never exceed one batch plus the refill mark, so
 *   deposits are never buried behind a mass expiry.
 */
import test from "ava";
import { loadConfig } from "../../src/config.js";
import { createRuntime, type Runtime } from "../../src/runtime.js";
import { SWEEP_BATCH, SWEEP_REFILL_AT, sweepOnce } from "../../workers/sweeper.js";
import { deployFixture, startRun, uniqueTitle } from "../helpers/callback.js";
import { dropDatabase, sql } from "../helpers/db.js";
import { eventually, startCluster, type Cluster } from "../helpers/server.js";

let cluster: Cluster;
let rt: Runtime;

test.before(async () => {
  cluster = await startCluster("sweepdrain", { roles: ["web", "worker"] });
  rt = createRuntime({ config: loadConfig({ ...cluster.env, LOG_LEVEL: "silent" }) });
});

test.after.always(async () => {
  await rt?.close();
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl).catch(() => undefined);
});

test.serial("one sweep expires every due slot, more than two batches, never holding more than a batch and the refill mark in the queue", async (t) => {
  t.timeout(180_000);
  const runs = 2 * SWEEP_BATCH + 100;
  await deployFixture(cluster.baseUrl, "callback-deadline.flow");
  const prefix = uniqueTitle("drain");
  for (let i = 0; i < runs; i += 25) {
    await Promise.all(
      Array.from({ length: Math.min(25, runs - i) }, (_, k) =>
        startRun(cluster.baseUrl, "CbDeadline", { job: { title: `${prefix}-${i + k}`, contact: `${prefix}-${i + k}@example.test` } }),
      ),
    );
  }
  // Every run's `slow` slot (deadline 1 h) falls due now; `quick` (1 s) may expire by itself.
  const openSlow = async () => Number((await sql<{ n: string }>(cluster.databaseUrl, "SELECT count(*) AS n FROM slots WHERE alias = 'slow' AND status = 'open'"))[0]!.n);
  t.is(await openSlow(), runs);
  await sql(cluster.databaseUrl, "UPDATE slots SET deadline = now() - interval '1 minute' WHERE alias IN ('slow', 'quick') AND status = 'open'");

  let deepest = 0;
  let sweeping = true;
  const watch = (async () => {
    while (sweeping) {
      deepest = Math.max(deepest, await rt.queues.commands.getWaitingCount());
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  const swept = await sweepOnce(rt, new Date(), 120_000);
  sweeping = false;
  await watch;

  t.true(swept.expiries >= runs, `one sweep enqueued ${swept.expiries} expiries for ${runs} due slow slots (and the quick ones)`);
  t.true(deepest <= SWEEP_BATCH + SWEEP_REFILL_AT, `at most ${SWEEP_BATCH + SWEEP_REFILL_AT} commands waited at once (saw ${deepest})`);
  // No sweeper runs: only that one sweep can have expired them.
  await eventually(async () => (await openSlow()) === 0, 60_000);
  const handled = await sql<{ n: string }>(cluster.databaseUrl, "SELECT count(*) AS n FROM slots WHERE alias = 'slow' AND status = 'expired'");
  t.is(Number(handled[0]!.n), runs);
});
