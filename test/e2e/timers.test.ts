/**
 * Timers over real web, worker and sweeper processes, PostgreSQL and Redis (issue 19 item 1):
 * the sweeper fires a due timer through the deadline machinery, the run view shows the timers
 * (`GET /api/runs/{id}`: `timers[{ index, schedule, next }]`), and a worker killed in the middle of
 * a firing — its step holding the run lock, its write waiting — leaves the firing applied exactly
 * once, by the worker that takes the job over.
 */
import test from "ava";
import pg from "pg";
import { deployFixture, showRun, startRun, uniqueTitle } from "../helpers/callback.js";
import { dropDatabase } from "../helpers/db.js";
import { kill } from "../helpers/faults.js";
import { eventually, startCluster, type Cluster } from "../helpers/server.js";

const clusters: Cluster[] = [];
test.after.always(async () => {
  for (const c of clusters) {
    await c.stop();
    await dropDatabase(c.databaseUrl).catch(() => undefined);
  }
});

type Timers = { index: number; schedule: string; next: string }[];
const firings = (run: Awaited<ReturnType<typeof showRun>>) => run.history.filter((h) => h.kind === "timer-fired");

test.serial("the sweeper fires a due timer; the run view shows the timers and their next firing", async (t) => {
  t.timeout(150_000);
  const c = await startCluster("timers", { roles: ["web", "worker", "sweeper"] });
  clusters.push(c);
  await deployFixture(c.baseUrl, "timers.flow");
  const started = Date.now();
  const runId = await startRun(c.baseUrl, "Timed", { job: { title: uniqueTitle("t"), fired: 0, escalated: false } });
  const answered = Date.now();
  const first = (await showRun(c.baseUrl, runId)) as unknown as { timers: Timers; slots: { alias: string }[] };
  t.deepEqual(first.timers.map((x) => [x.index, x.schedule]), [[0, "every 1h after 5s"], [1, "after 1d"]]);
  // 5 s after the state was entered, which happened between the request and its answer (no tolerance to outlast on a busy machine)
  const firstDue = new Date(first.timers[0].next).getTime();
  t.true(firstDue >= started + 5000 && firstDue <= answered + 5000, `first firing ${firstDue - started} ms after the start request`);
  t.deepEqual(first.slots.map((s) => s.alias), ["answer"], "timers are not slots in the view");

  const fired = await eventually(async () => {
    const r = await showRun(c.baseUrl, runId);
    return r.entities.job.fired === 1 ? r : null;
  }, 60_000); // ends as soon as the firing is recorded; long only for a busy machine
  const timers = (fired as unknown as { timers: Timers }).timers;
  t.is(new Date(timers[0].next).getTime() - firstDue, 3_600_000, "the next reminder is one period after the first's due time");
  t.is(firings(fired).length, 1);
});

test.serial("a worker killed mid-firing: the firing is applied exactly once, by the next worker", async (t) => {
  t.timeout(240_000);
  const c = await startCluster("timerkill", { roles: ["web", "sweeper"] });
  clusters.push(c);
  const worker = await c.spawn("worker");
  await deployFixture(c.baseUrl, "timers.flow");
  // Starting needs a worker; then the test holds the run's tracked row, so the firing's write
  // (which updates that row) waits in the middle of its transaction, the run lock held.
  const runId = await startRun(c.baseUrl, "Timed", { job: { title: uniqueTitle("k"), fired: 0, escalated: false } });
  const blocker = new pg.Client({ connectionString: c.databaseUrl });
  await blocker.connect();
  t.teardown(() => blocker.end().catch(() => undefined));
  await blocker.query("BEGIN");
  await blocker.query("SELECT 1 FROM entity_rows WHERE run_id = $1 FOR UPDATE", [runId]);
  await eventually(async () => {
    const r = await blocker.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()",
    );
    return r.rows[0].n > 0;
  }, 60_000).catch(async (err: unknown) => {
    const r = await blocker.query("SELECT state, wait_event_type, left(query, 80) AS q FROM pg_stat_activity WHERE datname = current_database()");
    t.log(r.rows, worker.output.slice(-10));
    throw err;
  });
  await kill(worker);
  await blocker.query("ROLLBACK");
  const shownBefore = await showRun(c.baseUrl, runId);
  t.is(shownBefore.entities.job.fired, 0, "nothing of the killed worker's firing was kept");
  t.is(firings(shownBefore).length, 0);

  await c.spawn("worker");
  const after = await eventually(async () => {
    const r = await showRun(c.baseUrl, runId);
    return r.entities.job.fired === 1 ? r : null;
  }, 120_000);
  // Let the sweeper look again a few times: the firing is not applied twice.
  await new Promise((r) => setTimeout(r, 2000));
  const settled = await showRun(c.baseUrl, runId);
  t.is(settled.entities.job.fired, 1);
  t.is(firings(settled).length, 1);
  t.is(after.state, "Waiting");
});
