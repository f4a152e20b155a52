/**
 * Retention (issue 20 items 1 and 3; src/engine/sweeps/retention.ts) on real PostgreSQL: a run that ended
 * longer ago than the retention goes with every row it owns — slots and timers, links, tracked
 * rows, history, incidents, outbox, deliveries and their attempts, applied_commands — while running
 * runs and runs that ended recently are never touched; a purged link answers `link-not-found`; a
 * dry run counts exactly what a purge deletes and changes nothing; a run a worker holds locked is
 * skipped, not waited for; the purge lag says how late the oldest due run is.
 */
import test from "ava";
import pg from "pg";
import { createDb, type Db } from "../../src/db.js";
import {
  IDEMPOTENCY_WINDOW_MS,
  PURGED_TABLES,
  purge,
  purgeBatch,
  purgeDryRun,
  purgeLagSeconds,
  type PurgeCounts,
} from "../../src/engine/sweeps/retention.js";
import { RefusalError, Workflow, type TestRun } from "../../src/testing/index.js";
import { sql } from "../helpers/db.js";
import { useKitDatabase } from "../helpers/kit.js";

useKitDatabase(test, "retention");

const DAY_MS = 86_400_000;
const RETENTION_MS = 30 * DAY_MS;

const SOURCE = `workflow Keep(doc: Doc)
entity Doc { url: string? @maxLength(400) }
event Answer(ok: bool)
initial state Waiting {
  subscribe Answer(ok) as answer
  enter {
    doc.url = answer.CallbackUrl()
    send email to "boss@example.com" { subject: "Answer", body: doc.url }
    send webhook to "portal" { type: "keep.created", url: doc.url }
  }
  every 1d {
    send email to "boss@example.com" { subject: "Reminder", body: "still waiting" }
  }
  on answer(ok) -> Done
}
terminal state Done
`;

let db: Db;
let wf: Workflow;

test.serial.before(async () => {
  db = createDb(process.env.DATABASE_URL!, 2);
  wf = await Workflow.deploy(SOURCE);
});

test.after.always(async () => {
  await db?.$disconnect();
});

/** Rows of each table that belong to `runId`. */
async function rowsOf(runId: string): Promise<PurgeCounts> {
  const url = process.env.DATABASE_URL!;
  const [r] = await sql<Record<string, number>>(
    url,
    `SELECT (SELECT count(*) FROM runs WHERE id = $1)::int AS runs,
            ${PURGED_TABLES.filter((t) => t !== "runs" && t !== "delivery_attempts")
              .map((t) => `(SELECT count(*) FROM ${t} WHERE run_id = $1)::int AS ${t}`)
              .join(", ")},
            (SELECT count(*) FROM delivery_attempts a JOIN deliveries d ON a.delivery_id = d.id WHERE d.run_id = $1)::int AS delivery_attempts`,
    [runId],
  );
  return r as PurgeCounts;
}

/** Marks `run` as ended `agoMs` before now (as if it had ended then). */
async function endedAgo(run: TestRun, agoMs: number): Promise<void> {
  await sql(process.env.DATABASE_URL!, "UPDATE runs SET finished_at = now() - $2 * interval '1 millisecond' WHERE id = $1", [run.id, agoMs]);
}

/** A run that answered its link (finished), with one recorded delivery attempt and one incident. */
async function finishedRun(): Promise<{ run: TestRun; url: string }> {
  const run = await wf.start({ doc: { url: null } });
  const url = run.entities.doc!.url as string;
  await Workflow.Redeem(url, { ok: true });
  await run.refresh();
  const url_ = process.env.DATABASE_URL!;
  await sql(url_, "INSERT INTO delivery_attempts (run_id, delivery_id, attempt, error) SELECT run_id, id, 1, 'refused' FROM deliveries WHERE run_id = $1", [run.id]);
  await sql(url_, "INSERT INTO incidents (run_id, command, code, message) VALUES ($1, 'expire', 'handler-failed', 'x')", [run.id]);
  return { run, url };
}

function total(a: PurgeCounts, b: PurgeCounts): PurgeCounts {
  return Object.fromEntries(PURGED_TABLES.map((t) => [t, a[t] + b[t]])) as PurgeCounts;
}

test.serial("ended runs past the retention go with every row; running and recently ended runs are not touched", async (t) => {
  const old = await finishedRun();
  const cancelled = await wf.start({ doc: { url: null } });
  await cancelled.cancel("withdrawn");
  const running = await wf.start({ doc: { url: null } });
  const recent = await finishedRun();
  await endedAgo(old.run, RETENTION_MS + DAY_MS);
  await endedAgo(cancelled, RETENTION_MS + 1000);
  await endedAgo(recent.run, RETENTION_MS - 60_000);

  const before = { old: await rowsOf(old.run.id), cancelled: await rowsOf(cancelled.id), running: await rowsOf(running.id), recent: await rowsOf(recent.run.id) };
  // every kind of row exists for the old run, so the purge is shown deleting each of them
  for (const table of PURGED_TABLES) t.true(before.old[table] > 0, `the finished run has ${table} rows`);
  t.true(before.cancelled.slots >= 2, "the cancelled run has its slot and its timer row");

  // the answered link says so (link-burned) before the purge, and is not found after it
  const dead = await t.throwsAsync(Workflow.Redeem(old.url, { ok: true }), { instanceOf: RefusalError });
  t.is(dead?.code, "link-burned");

  const dry = await purgeDryRun(db, new Date(), RETENTION_MS);
  t.deepEqual(dry, total(before.old, before.cancelled), "the dry run counts the rows of exactly the two runs past the retention");
  t.deepEqual(await rowsOf(old.run.id), before.old, "the dry run changed nothing");

  const result = await purge(db, new Date(), RETENTION_MS);
  t.deepEqual(result.counts, total(before.old, before.cancelled), "the purge deleted what the dry run counted");
  t.false(result.more);
  const zero = Object.fromEntries(PURGED_TABLES.map((x) => [x, 0]));
  t.deepEqual(await rowsOf(old.run.id), zero, "no row of the finished run is left");
  t.deepEqual(await rowsOf(cancelled.id), zero, "no row of the cancelled run is left");
  t.deepEqual(await rowsOf(running.id), before.running, "the running run is untouched");
  t.deepEqual(await rowsOf(recent.run.id), before.recent, "the run that ended within the retention is untouched");

  const gone = await t.throwsAsync(Workflow.Redeem(old.url, { ok: true }), { instanceOf: RefusalError });
  t.is(gone?.code, "link-not-found", "a link whose run was purged is not found");
  const again = await purge(db, new Date(), RETENTION_MS);
  t.is(again.counts.runs, 0, "a second purge finds nothing");
});

test.serial("the Idempotency-Key outcome outlives the shortest retention: a retry within 24 h of the deposit still replays", async (t) => {
  const run = await wf.start({ doc: { url: null } });
  const url = run.entities.doc!.url as string;
  await Workflow.Redeem(url, { ok: true }, { idempotencyKey: "retry-me" });
  // the shortest retention there is: the run ended just now, so it is not due for a day
  await purge(db, new Date(), IDEMPOTENCY_WINDOW_MS);
  t.deepEqual(await Workflow.Redeem(url, { ok: true }, { idempotencyKey: "retry-me" }), { status: "completed" });
  // a day and a minute later it is due
  const later = new Date(Date.now() + IDEMPOTENCY_WINDOW_MS + 60_000);
  const r = await purge(db, later, IDEMPOTENCY_WINDOW_MS);
  t.true(r.counts.runs >= 1);
  t.is((await rowsOf(run.id)).runs, 0);
});

test.serial("batches: one transaction each, oldest ended first, until a batch comes back short", async (t) => {
  const runs: TestRun[] = [];
  for (let i = 0; i < 5; i++) {
    const { run } = await finishedRun();
    await endedAgo(run, RETENTION_MS + (10 - i) * 60_000);
    runs.push(run);
  }
  const first = await purgeBatch(db, new Date(), RETENTION_MS, 2);
  t.is(first.runs, 2);
  t.is((await rowsOf(runs[0]!.id)).runs, 0, "the oldest went first");
  t.is((await rowsOf(runs[1]!.id)).runs, 0);
  t.is((await rowsOf(runs[2]!.id)).runs, 1);
  const rest = await purge(db, new Date(), RETENTION_MS, { batch: 2 });
  t.is(rest.counts.runs, 3);
  t.true(rest.batches >= 2);
  for (const run of runs) t.is((await rowsOf(run.id)).runs, 0);
});

test.serial("a run a worker holds locked is skipped, not waited for, and goes in a later batch", async (t) => {
  const { run } = await finishedRun();
  await endedAgo(run, RETENTION_MS + DAY_MS);
  const holder = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await holder.connect();
  try {
    await holder.query("BEGIN");
    await holder.query("SELECT id FROM runs WHERE id = $1 FOR UPDATE", [run.id]);
    // Did the purge wait for the lock? Not a stopwatch (issue 39 item 4): while it runs, watch
    // PostgreSQL for a session of this database waiting on a lock. A purge that waited would
    // never finish while the lock is held: the watcher then releases it, and the test fails.
    let purging = true;
    let waitedOnLock = false;
    const purge = purgeBatch(db, new Date(), RETENTION_MS).finally(() => (purging = false));
    while (purging && !waitedOnLock) {
      const [w] = await sql<{ n: number }>(process.env.DATABASE_URL!, "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
      waitedOnLock = w!.n > 0;
      if (!waitedOnLock) await new Promise((r) => setTimeout(r, 10));
    }
    if (waitedOnLock) await holder.query("COMMIT");
    const skipped = await purge;
    t.false(waitedOnLock, "the purge waited for the lock");
    t.is(skipped.runs, 0, "the locked run was skipped");
    if (!waitedOnLock) await holder.query("COMMIT");
  } finally {
    await holder.end();
  }
  t.is((await purgeBatch(db, new Date(), RETENTION_MS)).runs, 1);
  t.is((await rowsOf(run.id)).runs, 0);
});

test.serial("applied_commands naming no run expire after 24 h; the purge lag measures how late the oldest due run is", async (t) => {
  const url = process.env.DATABASE_URL!;
  await sql(
    url,
    `INSERT INTO applied_commands (id, run_id, kind, outcome, applied_at) VALUES
       ('orphan-old', NULL, 'test', '{}', now() - interval '25 hours'),
       ('orphan-new', NULL, 'test', '{}', now() - interval '23 hours')`,
  );
  t.is(await purgeLagSeconds(db, new Date(), RETENTION_MS), 0, "nothing is due: no lag");
  const { run } = await finishedRun();
  await endedAgo(run, RETENTION_MS + 3600_000);
  const lag = await purgeLagSeconds(db, new Date(), RETENTION_MS);
  t.true(lag >= 3590 && lag <= 3700, `an hour late, got ${lag} s`);

  const r = await purge(db, new Date(), RETENTION_MS);
  t.is(r.counts.runs, 1);
  const left = await sql<{ id: string }>(url, "SELECT id FROM applied_commands WHERE run_id IS NULL ORDER BY id");
  t.deepEqual(left.map((x) => x.id), ["orphan-new"], "only the record older than 24 h went");
  t.is(await purgeLagSeconds(db, new Date(), RETENTION_MS), 0);
});
