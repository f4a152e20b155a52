/**
 * Retention: deleting runs that ended long ago with every row they own (issue 20 items 1 and 3;
 * interfaces.md "Running on production infrastructure", `SLOTFLOW_RETENTION`).
 *
 * This module owns the end of a run's life in the database. A run that ended (finished or
 * cancelled: `runs.finished_at` is set) more than the retention ago is deleted with its slots
 * (timers included), links, tracked entity rows, history, incidents, outbox messages, webhook/chat
 * deliveries and their attempts, and its `applied_commands` records — in batches of at most
 * `PURGE_BATCH` runs, each batch one short transaction of two statements:
 *
 *   SELECT id FROM runs WHERE finished_at <= $cutoff ORDER BY finished_at LIMIT $batch
 *      FOR UPDATE SKIP LOCKED                                       -- the doomed runs
 *   WITH <one DELETE … WHERE run_id = ANY($ids) RETURNING 1 per table>, <the token rows by key>
 *   SELECT <the count of each>
 *
 * The ids travel as one array parameter, so each delete reaches only the doomed runs' partitions
 * (shards, once distributed); the scan reads all of `runs` (issue 20 item 2, docs/scaling.md).
 *
 * It never blocks the hot path: it reads only ended runs (an index range scan on
 * `runs_ended_finished_at_idx`, which holds no running run), skips a run whose row a worker holds
 * (`SKIP LOCKED`), and a worker that asks for a purged run's row waits at most one batch. Every
 * foreign key to `runs` cascades (migration 20261125060000_retention) as a backstop; the purge
 * still names each table, so it can count what went (`slotflow_purged_rows_total{table}`).
 *
 * The Idempotency-Key promise (24 h, spec "Idempotency") bounds the retention from below:
 * `loadConfig` refuses a retention shorter than `IDEMPOTENCY_WINDOW_MS`. A link whose run was
 * purged has no row left, so it answers 404 `link-not-found`.
 *
 * `applied_commands` rows not tied to a run (`run_id` NULL) expire after `IDEMPOTENCY_WINDOW_MS`.
 * Today every recorded command names its run (sql/step-write.ts); the rule keeps the table bounded
 * whatever a later command kind records.
 */
import type { Db } from "../../db.js";

/** How long an Idempotency-Key's outcome is kept, ms: 24 h (spec "Idempotency"); the floor of the retention. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;

/** Runs deleted by one purge statement. */
export const PURGE_BATCH = 500;

/** The tables a purge deletes from, in the order the counts are reported. */
export const PURGED_TABLES = [
  "runs",
  "slots",
  "links",
  "link_tokens",
  "entity_rows",
  "history",
  "incidents",
  "outbox",
  "deliveries",
  "delivery_attempts",
  "applied_commands",
] as const;
export type PurgedTable = (typeof PURGED_TABLES)[number];

/** Rows per table (deleted by a purge, or that a dry run would delete). */
export type PurgeCounts = Record<PurgedTable, number>;

/** All zero. */
export function emptyCounts(): PurgeCounts {
  return Object.fromEntries(PURGED_TABLES.map((t) => [t, 0])) as PurgeCounts;
}

/** Adds `b` into `a`, table by table; returns `a`. */
export function addCounts(a: PurgeCounts, b: PurgeCounts): PurgeCounts {
  for (const t of PURGED_TABLES) a[t] += b[t];
  return a;
}

/** The child tables deleted by run id (runs and link_tokens are handled apart). */
const BY_RUN: readonly PurgedTable[] = ["slots", "links", "entity_rows", "history", "incidents", "outbox", "deliveries", "delivery_attempts", "applied_commands"];

/**
 * The token rows of the doomed runs' links (the dry run's count), by their key: the token table is
 * distributed by the token's hash, not by run (issue 20 item 2). The purge takes the hashes from
 * the links it deletes (`d_links … RETURNING token_sha256`).
 */
const DOOMED_TOKENS = "SELECT token_sha256 FROM links WHERE run_id IN (SELECT id FROM doomed)";

/**
 * A purge batch's first statement, the scan for ended runs: $1 the cutoff (timestamptz), $2 the
 * batch size. It locks the runs it returns until the batch commits. It reads every partition
 * (shard) of `runs`: a multi-shard read by nature (docs/scaling.md).
 */
export const DOOMED_SQL = `SELECT id FROM runs
   WHERE finished_at <= $1 AND status IN ('finished', 'cancelled')
   ORDER BY finished_at
   LIMIT $2
   FOR UPDATE SKIP LOCKED`;

/**
 * A purge batch's second statement, the deletes: $1 the doomed runs' ids (uuid[]). The ids are one
 * array parameter of an unnamed statement, planned for its values, so each table's delete reaches
 * only the partitions (shards) of those runs (issue 20 item 2). Token rows go by their key, the
 * hashes of the links deleted here.
 */
export const PURGE_SQL = `
WITH ${BY_RUN.map((t) => `d_${t} AS (DELETE FROM ${t} WHERE run_id = ANY($1::uuid[]) RETURNING ${t === "links" ? "token_sha256" : "1"}),`).join("\n")}
d_link_tokens AS (DELETE FROM link_tokens WHERE token_sha256 = ANY(ARRAY(SELECT token_sha256 FROM d_links)) RETURNING 1),
d_runs AS (DELETE FROM runs WHERE id = ANY($1::uuid[]) RETURNING 1)
SELECT ${PURGED_TABLES.map((t) => `(SELECT count(*) FROM d_${t})::int AS ${t}`).join(", ")}`;

/** What a dry run counts: the same runs as the purge (every one past the cutoff, not one batch). */
const DRY_RUN_SQL = `
WITH doomed AS MATERIALIZED (
  SELECT id FROM runs WHERE finished_at <= $1 AND status IN ('finished', 'cancelled')
)
SELECT (SELECT count(*) FROM doomed)::int AS runs,
       (SELECT count(*) FROM link_tokens WHERE token_sha256 IN (${DOOMED_TOKENS}))::int AS link_tokens,
       ${BY_RUN.map((t) => `(SELECT count(*) FROM ${t} WHERE run_id IN (SELECT id FROM doomed))::int AS ${t}`).join(",\n       ")},
       (SELECT count(*) FROM applied_commands WHERE run_id IS NULL AND applied_at <= $2)::int AS orphan_commands`;

/** One batch of `applied_commands` not tied to a run and older than the idempotency window. */
const ORPHAN_COMMANDS_SQL = `
WITH gone AS (
  DELETE FROM applied_commands WHERE id IN (
    SELECT id FROM applied_commands WHERE run_id IS NULL AND applied_at <= $1
     ORDER BY applied_at LIMIT $2 FOR UPDATE SKIP LOCKED)
  RETURNING 1
)
SELECT count(*)::int AS n FROM gone`;

/** The newest end time a run may have and be purged at `now` under `retentionMs`. */
export function purgeCutoff(now: Date, retentionMs: number): Date {
  return new Date(now.getTime() - retentionMs);
}

/**
 * Deletes ONE batch (at most `batch` runs, ended at or before `now - retentionMs`, oldest first)
 * with every row they own, in one transaction of two statements (the scan, then the deletes);
 * returns the rows deleted per table. A run a worker holds locked is skipped (the next batch takes it).
 */
export async function purgeBatch(db: Db, now: Date, retentionMs: number, batch = PURGE_BATCH): Promise<PurgeCounts> {
  const rows = await db.$transaction(
    async (tx) => {
      const doomed = await tx.$queryRawUnsafe<{ id: string }[]>(DOOMED_SQL, purgeCutoff(now, retentionMs), batch);
      if (doomed.length === 0) return [];
      return tx.$queryRawUnsafe<PurgeCounts[]>(PURGE_SQL, doomed.map((r) => r.id));
    },
    { maxWait: 10_000, timeout: 60_000 },
  );
  const counts = emptyCounts();
  for (const t of PURGED_TABLES) counts[t] = Number(rows[0]?.[t] ?? 0);
  return counts;
}

/**
 * Deletes ONE batch of `applied_commands` rows that name no run and were recorded more than
 * `IDEMPOTENCY_WINDOW_MS` before `now`; returns how many.
 */
export async function purgeOrphanCommands(db: Db, now: Date, batch = PURGE_BATCH): Promise<number> {
  const rows = await db.$queryRawUnsafe<{ n: number }[]>(ORPHAN_COMMANDS_SQL, new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS), batch);
  return Number(rows[0]?.n ?? 0);
}

/** What one `purge` call did. */
export interface PurgeResult {
  counts: PurgeCounts;
  /** Statements (batches) run. */
  batches: number;
  /** True when it stopped at its time budget with more still due. */
  more: boolean;
}

/**
 * Purges batch after batch while batches come back full, for at most `budgetMs` (ms; the sweeper
 * passes a fraction of its interval so expiries are never held up), then the orphan commands.
 * `onBatch` is told each batch's counts as it commits (the sweeper's metric).
 */
export async function purge(
  db: Db,
  now: Date,
  retentionMs: number,
  opts: { budgetMs?: number; batch?: number; onBatch?: (c: PurgeCounts) => void } = {},
): Promise<PurgeResult> {
  const batch = opts.batch ?? PURGE_BATCH;
  const until = Date.now() + (opts.budgetMs ?? Number.POSITIVE_INFINITY);
  const total = emptyCounts();
  let batches = 0;
  let more = false;
  for (;;) {
    const counts = await purgeBatch(db, now, retentionMs, batch);
    batches++;
    opts.onBatch?.(counts);
    addCounts(total, counts);
    if (counts.runs < batch) break;
    if (Date.now() >= until) {
      more = true;
      break;
    }
  }
  for (;;) {
    const n = await purgeOrphanCommands(db, now, batch);
    batches++;
    if (n > 0) {
      const c = emptyCounts();
      c.applied_commands = n;
      opts.onBatch?.(c);
      total.applied_commands += n;
    }
    if (n < batch) break;
    if (Date.now() >= until) {
      more = true;
      break;
    }
  }
  return { counts: total, batches, more };
}

/**
 * What a purge at `now` would delete (`slotflow purge --dry-run`): rows per table, changing
 * nothing. `applied_commands` counts the ended runs' records plus those naming no run that are past
 * the idempotency window.
 */
export async function purgeDryRun(db: Db, now: Date, retentionMs: number): Promise<PurgeCounts> {
  const rows = await db.$queryRawUnsafe<(PurgeCounts & { orphan_commands: number })[]>(
    DRY_RUN_SQL,
    purgeCutoff(now, retentionMs),
    new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS),
  );
  const counts = emptyCounts();
  for (const t of PURGED_TABLES) counts[t] = Number(rows[0]?.[t] ?? 0);
  counts.applied_commands += Number(rows[0]?.orphan_commands ?? 0);
  return counts;
}

/**
 * The purge lag, seconds: how long past its retention the oldest ended run still present is
 * (0 when none is due) — the metric `slotflow_purge_lag_seconds`; alert when it stays above a few
 * minutes (the sweeper purges a run within a minute of its passing the retention).
 */
export async function purgeLagSeconds(db: Db, now: Date, retentionMs: number): Promise<number> {
  const rows = await db.$queryRawUnsafe<{ oldest: Date | null }[]>(
    "SELECT min(finished_at) AS oldest FROM runs WHERE finished_at IS NOT NULL",
  );
  const oldest = rows[0]?.oldest;
  if (!oldest) return 0;
  return Math.max(0, (now.getTime() - retentionMs - new Date(oldest).getTime()) / 1000);
}

/**
 * Parses a retention (`SLOTFLOW_RETENTION`): a whole number with a unit — `s`, `m`, `h` or `d` —
 * (`30d`, `36h`), or `off` (keep forever: null). Returns the length in ms, or an Error saying what
 * was expected. The 24 h floor is checked by `loadConfig`, which names the variable.
 */
export function parseRetention(text: string): number | null | Error {
  const t = text.trim();
  if (t === "off") return null;
  const m = /^(\d{1,6})(s|m|h|d)$/.exec(t);
  if (!m) return new Error(`expected a duration such as "30d" or "36h" (a whole number and s, m, h or d), or "off", got "${text}"`);
  const unit = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as "s" | "m" | "h" | "d"];
  return Number(m[1]) * unit;
}
