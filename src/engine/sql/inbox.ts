/**
 * The inbox's reads (v0.4 "People inside the company", "The inbox stays fast"): one page of the
 * open and waiting slots listed for a principal, and its counts, from `inbox_entries` (one row per
 * live slot and candidate principal `user:<id>` / `role:<name>`, kept by `slotflow_step_write`,
 * migration 20261126000000_responders).
 *
 * A signed-in principal is several entry principals (its id and each of its roles). The page is
 * ONE statement: for each of them a LATERAL subquery that walks its own index range in page order
 * and stops after `limit + 1` rows (an index range scan of at most that many rows, however many
 * tasks the principal has and however many other principals' rows the table holds); the few
 * rows they return are merged, a slot listed under both the id and a role is kept once (DISTINCT
 * ON the page key), and the first `limit + 1` are joined to their slot and run by primary key.
 *
 * Orders (each matching one index of the migration):
 *   newest   — listed_at DESC, run_id, slot_id       (inbox_entries_newest_idx, or
 *              inbox_entries_workflow_newest_idx with a workflow filter);
 *   deadline — deadline ASC, run_id, slot_id; slots without a deadline after all those with one
 *              (inbox_entries_deadline_idx: its ascending NULLS LAST order). Each principal's
 *              subquery is two index ranges: `deadline IS NOT NULL` past the cursor, then
 *              `deadline IS NULL` past the cursor — so the keyset condition stays a range bound.
 *              With a workflow filter the deadline order filters the principal's range by
 *              workflow (no index leads with principal, workflow, deadline).
 * Keyset cursors: the page key of the last row returned. A page costs the same at any depth.
 *
 * An entry lives exactly as long as its slot is open or waiting, and a run that ends closes its
 * slots in the same step, so the counts need not read the runs; the page still checks both.
 * Counts walk at most COUNT_CAP + 1 entries per principal (index-only on the newest index) and
 * join them to their slots: exact up to COUNT_CAP tasks per principal, else reported as capped
 * (InboxCounts).
 */
import type { Db } from "../../db.js";
import type { StepRead } from "./step-read.js";

export type InboxOrder = "newest" | "deadline";

/** The page key of a row: where the next page starts (exclusive). */
export interface InboxKey {
  listedAt: Date;
  deadline: Date | null;
  runId: string;
  slotId: string;
}

export interface InboxQuery {
  /** The entry principals: `user:<id>` and `role:<name>` for each role. */
  principals: string[];
  workflow: string | null;
  order: InboxOrder;
  /** Rows to return; the statement reads `limit + 1` to know whether another page follows. */
  limit: number;
  after: InboxKey | null;
}

/** A row of the page: the entry's key, its slot, its run (`run_status` checked by the caller, as `status`). */
export interface InboxRow {
  run_id: string;
  slot_id: string;
  listed_at: Date;
  deadline: Date | null;
  state: string;
  alias: string;
  element: number | null;
  event: string;
  /** The slot's status: open or waiting, unless it closed after the entry was read (the caller drops it). */
  status: string;
  opened_at: Date | null;
  workflow_name: string;
  version: number;
  run_state: string;
  run_status: string;
}

/** Entries walked per principal when counting (the counts are exact up to this many tasks). */
export const COUNT_CAP = 100;

const COLUMNS = "i.run_id, i.slot_id, i.listed_at, i.deadline";

/**
 * The page statement and its parameters. Parameter $1 is the principals array, $2 the row count
 * (limit + 1); then the workflow and the cursor's values as present. Exported for the bench's
 * EXPLAIN and the tests.
 */
export function inboxPageSql(q: InboxQuery): { text: string; values: unknown[] } {
  const values: unknown[] = [q.principals, q.limit + 1];
  const param = (v: unknown, cast: string) => {
    values.push(v);
    return `$${values.length}::${cast}`;
  };
  const wf = q.workflow === null ? "" : ` AND i.workflow_name = ${param(q.workflow, "text")}`;
  let lateral: string;
  let outerOrder: string;
  if (q.order === "newest") {
    let keyset = "";
    if (q.after) {
      const at = param(q.after.listedAt, "timestamptz");
      keyset = ` AND i.listed_at <= ${at} AND (i.listed_at < ${at} OR (i.run_id, i.slot_id) > (${param(q.after.runId, "uuid")}, ${param(q.after.slotId, "uuid")}))`;
    }
    lateral = `SELECT ${COLUMNS} FROM inbox_entries i
        WHERE i.principal = p.principal${wf}${keyset}
        ORDER BY i.listed_at DESC, i.run_id, i.slot_id LIMIT $2`;
    outerOrder = "listed_at DESC, run_id, slot_id";
  } else {
    const branches: string[] = [];
    const a = q.after;
    if (!a || a.deadline !== null) {
      const keyset = a ? ` AND (i.deadline, i.run_id, i.slot_id) > (${param(a.deadline, "timestamptz")}, ${param(a.runId, "uuid")}, ${param(a.slotId, "uuid")})` : "";
      branches.push(`(SELECT ${COLUMNS} FROM inbox_entries i
        WHERE i.principal = p.principal AND i.deadline IS NOT NULL${wf}${keyset}
        ORDER BY i.deadline, i.run_id, i.slot_id LIMIT $2)`);
    }
    const keyset = a && a.deadline === null ? ` AND (i.run_id, i.slot_id) > (${param(a.runId, "uuid")}, ${param(a.slotId, "uuid")})` : "";
    // ordered by the index's own columns (deadline is NULL throughout) so the planner walks the index in order
    branches.push(`(SELECT ${COLUMNS} FROM inbox_entries i
        WHERE i.principal = p.principal AND i.deadline IS NULL${wf}${keyset}
        ORDER BY i.deadline, i.run_id, i.slot_id LIMIT $2)`);
    lateral = `SELECT * FROM (${branches.join(" UNION ALL ")}) b ORDER BY b.deadline NULLS LAST, b.run_id, b.slot_id LIMIT $2`;
    outerOrder = "deadline NULLS LAST, run_id, slot_id";
  }
  const distinctOn = q.order === "newest" ? "listed_at, run_id, slot_id" : "deadline, run_id, slot_id";
  // The slot and run of each of the page's rows by primary key: LATERAL … LIMIT 1 keeps the planner
  // from joining them any other way (it once hashed a scan of every run against a 26-row page).
  const text = `SELECT k.run_id, k.slot_id, k.listed_at, k.deadline,
       s.state, s.alias, s.element, s.event, s.status, s.opened_at,
       r.workflow_name, r.version, r.state AS run_state, r.status AS run_status
  FROM (SELECT DISTINCT ON (${distinctOn}) e.*
          FROM unnest($1::text[]) AS p(principal)
         CROSS JOIN LATERAL (${lateral}) e
         ORDER BY ${outerOrder}
         LIMIT $2) k
  CROSS JOIN LATERAL (SELECT s.state, s.alias, s.element, s.event, s.status, s.opened_at FROM slots s
                       WHERE s.run_id = k.run_id AND s.id = k.slot_id LIMIT 1) s
  CROSS JOIN LATERAL (SELECT r.workflow_name, r.version, r.state, r.status FROM runs r WHERE r.id = k.run_id LIMIT 1) r
 ORDER BY ${outerOrder.replaceAll(/(listed_at|deadline|run_id|slot_id)/g, "k.$1")}`;
  return { text, values };
}

/** One page: up to `limit + 1` rows in page order (the caller cuts the extra one off). */
export async function readInboxPage(db: Db, q: InboxQuery): Promise<InboxRow[]> {
  const { text, values } = inboxPageSql(q);
  return db.$queryRawUnsafe<InboxRow[]>(text, ...values);
}

/** The counts statement: $1 the principals, $2 the cap + 1, $3 the workflow when filtered. */
export function inboxCountsSql(principals: string[], workflow: string | null): { text: string; values: unknown[] } {
  const values: unknown[] = [principals, COUNT_CAP + 1];
  const wf = workflow === null ? "" : " AND i.workflow_name = $3::text";
  if (workflow !== null) values.push(workflow);
  const text = `WITH e AS MATERIALIZED (
  SELECT p.principal, x.run_id, x.slot_id
    FROM unnest($1::text[]) AS p(principal)
   CROSS JOIN LATERAL (SELECT i.run_id, i.slot_id FROM inbox_entries i
                        WHERE i.principal = p.principal${wf}
                        ORDER BY i.listed_at DESC, i.run_id, i.slot_id LIMIT $2) x)
SELECT count(*) FILTER (WHERE s.status = 'open')::int AS open,
       count(*) FILTER (WHERE s.status = 'waiting')::int AS waiting,
       count(*)::int AS total,
       (SELECT count(*) FROM e GROUP BY e.principal ORDER BY 1 DESC LIMIT 1)::int AS walked
  FROM (SELECT DISTINCT e.run_id, e.slot_id FROM e) k
  CROSS JOIN LATERAL (SELECT s.status FROM slots s WHERE s.run_id = k.run_id AND s.id = k.slot_id LIMIT 1) s
 WHERE s.status IN ('open', 'waiting')`;
  return { text, values };
}

/**
 * A principal's task counts. Exact when `capped` is false. When some entry principal lists more
 * than COUNT_CAP tasks, `capped` is true, `total` is COUNT_CAP ("more than that") and `open` and
 * `waiting` are null (not counted: counting every task would read every one of them).
 */
export interface InboxCounts {
  open: number | null;
  waiting: number | null;
  total: number;
  capped: boolean;
}

/** The counts of the principal's tasks (see the module header). */
export async function readInboxCounts(db: Db, principals: string[], workflow: string | null): Promise<InboxCounts> {
  const { text, values } = inboxCountsSql(principals, workflow);
  const [row] = await db.$queryRawUnsafe<{ open: number; waiting: number; total: number; walked: number | null }[]>(text, ...values);
  if ((row.walked ?? 0) > COUNT_CAP) return { open: null, waiting: null, total: COUNT_CAP, capped: true };
  return { open: row.open, waiting: row.waiting, total: row.total, capped: false };
}

/**
 * The worlds of `runIds` read without locks, as `readStepUnlocked` reads one (the run, the slots
 * of its current visit, its tracked rows), in ONE statement for a whole page: for evaluating
 * titles and `After` read-only. `liveLinks` is empty (nothing here mints or ends a link).
 */
export async function readInboxWorlds(db: Db, runIds: string[]): Promise<StepRead[]> {
  const rows = await db.$queryRawUnsafe<{ step: StepRead | string }[]>(
    `SELECT json_build_object(
       'prior', NULL,
       'run', row_to_json(r),
       'slots', (SELECT coalesce(json_agg(s ORDER BY s.alias, s.element), '[]'::json) FROM slots s WHERE s.run_id = r.id AND s.visit = r.visit),
       'entities', (SELECT coalesce(json_agg(e), '[]'::json) FROM entity_rows e WHERE e.run_id = r.id),
       'liveLinks', '[]'::json,
       'link', NULL) AS step
       FROM runs r WHERE r.id = ANY($1::uuid[])`,
    runIds,
  );
  return rows.map((row) => (typeof row.step === "string" ? (JSON.parse(row.step) as StepRead) : row.step));
}

/** Where a page of the done view starts (exclusive): its last row's answer time and keys. */
export interface InboxDoneKey {
  closedAt: Date;
  runId: string;
  slotId: string;
}

export interface InboxDoneQuery {
  /** The principal's id (`answered_by ->> 'id'` of a `via: principal` answer). */
  principalId: string;
  workflow: string | null;
  /** Answers at or after this instant (now − 30 days). */
  since: Date;
  /** Rows to return; the statement reads `limit + 1`. */
  limit: number;
  after: InboxDoneKey | null;
}

/** A row of the done view: the slot as answered, and its run. */
export interface InboxDoneRow {
  run_id: string;
  slot_id: string;
  closed_at: Date;
  state: string;
  alias: string;
  element: number | null;
  event: string;
  args: Record<string, unknown> | null;
  workflow_name: string;
  version: number;
  run_state: string;
  run_status: string;
}

/**
 * The done view's statement (issue 43 item 4): the completed slots `principalId` answered since
 * `since`, newest first (closed_at, run_id, slot_id descending), past the cursor — one range scan
 * of slots_answered_by_principal_idx (migration 20261128071500_inbox_done), each row joined to
 * its run by primary key (checked with EXPLAIN ANALYZE on 200 000 slots: an Index Scan whose
 * Index Cond holds the principal, the 30 days and the keyset row, no sort). A `workflow` filter is
 * applied to the joined run (no index leads with principal and workflow): rows of other workflows
 * within the principal's 30 days are read and dropped. Exported for the tests' EXPLAIN.
 */
export function inboxDoneSql(q: InboxDoneQuery): { text: string; values: unknown[] } {
  const values: unknown[] = [q.principalId, q.since, q.limit + 1];
  const param = (v: unknown, cast: string) => {
    values.push(v);
    return `$${values.length}::${cast}`;
  };
  const wf = q.workflow === null ? "" : ` AND r.workflow_name = ${param(q.workflow, "text")}`;
  const keyset = q.after ? ` AND (s.closed_at, s.run_id, s.id) < (${param(q.after.closedAt, "timestamptz")}, ${param(q.after.runId, "uuid")}, ${param(q.after.slotId, "uuid")})` : "";
  const text = `SELECT s.run_id, s.id AS slot_id, s.closed_at, s.state, s.alias, s.element, s.event, s.args,
       r.workflow_name, r.version, r.state AS run_state, r.status AS run_status
  FROM slots s
  CROSS JOIN LATERAL (SELECT r.workflow_name, r.version, r.state, r.status FROM runs r WHERE r.id = s.run_id LIMIT 1) r
 WHERE (s.answered_by ->> 'id') = $1::text AND s.status = 'completed' AND (s.answered_by ->> 'via') = 'principal'
   AND s.closed_at >= $2::timestamptz${keyset}${wf}
 ORDER BY s.closed_at DESC, s.run_id DESC, s.id DESC
 LIMIT $3`;
  return { text, values };
}

/** One page of the done view: up to `limit + 1` rows, newest first (the caller cuts the extra one off). */
export async function readInboxDone(db: Db, q: InboxDoneQuery): Promise<InboxDoneRow[]> {
  const { text, values } = inboxDoneSql(q);
  return db.$queryRawUnsafe<InboxDoneRow[]>(text, ...values);
}
