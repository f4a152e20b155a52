/**
 * The runs list for operators (issue 23; interfaces.md "Runs for operators"):
 * `GET /api/runs`, `slotflow runs`, and the console's runs page read it.
 *
 * Order: newest first, by (created_at DESC, id DESC). Pagination is keyset: `nextCursor` encodes
 * the (createdAt, id) of the page's last run, and the next page holds the runs strictly after it in
 * that order — so a run created while an operator pages (it sorts first) never shifts a page nor
 * repeats a run, and a page costs the same at any depth. `nextCursor` is null on the last page.
 *
 * Filters (all optional, combined with AND): `workflow` (name), `version` (with `workflow`
 * or alone), `status` (`running`, `finished`, `cancelled`), `state` (the current state's name),
 * `waiting` (an alias: runs with an open or waiting slot of that alias), `createdAfter` /
 * `createdBefore` (ISO 8601 instants, exclusive), `parent` (a run id: the runs that run started
 * through `call workflow`, v0.5 child runs, issue 40 item 3; index runs_parent_run_id_idx of
 * migration 20261128060000_child_runs), `limit` (1–200, default 50).
 *
 * Indexes (migration 20261125030000_runs_list): runs (created_at, id), (workflow_name, created_at,
 * id), (status, created_at, id), (workflow_name, state, created_at, id), and on slots a partial
 * index (alias, run_id) over open and waiting slots only — small, since closed slots leave it. The
 * `scale` bench measures a filtered page among 1M runs (bench/scale, docs/performance.md).
 *
 * `waiting` of each run: its open and waiting slots (open or waiting slots are always of the run's
 * current state: leaving a state cancels them), each with `link`: `live` when the slot has a live
 * link, else the status of its newest link (`burned`, `retired`, `dead`), or `none` when it never
 * had one. Never a token or a token hash. And `openedAt` (slots.opened_at): since when an open slot
 * waits for its event — null while the slot is `waiting` on its `After` predecessors — so an
 * operator can answer "which runs wait on `decision`, and since when?" (issue 23, "Done when").
 * Refuses (RefusalError, 400 invalid-query) a filter that is not well formed: it names the parameter.
 */
import { TIMER_ALIAS_PREFIX } from "../engine/lifecycles/timer.js";
import type { Db } from "../db.js";
import { Prisma } from "../generated/prisma/client.js";
import { RefusalCode, RefusalError, refuse } from "../engine/refusals.js";
import { UUID } from "../json/uuid.js";

export const RUN_STATUSES = ["running", "finished", "cancelled"] as const;
export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;

export interface RunsFilter {
  workflow?: string;
  version?: number;
  status?: (typeof RUN_STATUSES)[number];
  state?: string;
  waiting?: string;
  /** v0.5 child runs: only the runs run `parent` started (`call workflow`); a lower-case UUID. */
  parent?: string;
  createdAfter?: Date;
  createdBefore?: Date;
  /** Only runs started through MCP (table mcp_runs): what SLOTFLOW_MCP_TOKEN's list_runs sees (issue 38 L5). Not a query parameter. */
  startedThroughMcp?: boolean;
  limit: number;
  cursor?: { createdAt: Date; id: string };
}

export type LinkSummary = "live" | "burned" | "retired" | "dead" | "none";

export interface WaitingSlot {
  alias: string;
  element: number | null;
  status: "open" | "waiting";
  /** When the slot opened (issue 23: "since when?"); null while it is `waiting` on `After`. */
  openedAt: Date | null;
  deadline: Date | null;
  link: LinkSummary;
}

export interface RunListItem {
  id: string;
  workflow: string;
  version: number;
  state: string;
  status: string;
  createdAt: Date;
  updatedAt: Date;
  endedAt: Date | null;
  waiting: WaitingSlot[];
}

const NAME = /^(?:slotflow\.)?[A-Za-z_][A-Za-z0-9_]{0,199}$/; // built-ins: `slotflow.` + an identifier (issue 33 item 2)

const bad = (param: string, detail: string) => new RefusalError(refuse(RefusalCode.InvalidQuery, `?${param}: ${detail}`, { parameter: param }));

/** An opaque cursor: base64url of `createdAt-ISO|id`. */
export function encodeCursor(run: { createdAt: Date; id: string }): string {
  return Buffer.from(`${run.createdAt.toISOString()}|${run.id}`, "utf8").toString("base64url");
}

/** A cursor's instant as encodeCursor writes it: `Date.toISOString()` of a four-digit year (issue 28 item 6). */
const CURSOR_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * A cursor back into its (createdAt, id); 400 invalid-query for anything encodeCursor could not have
 * written — in particular an instant outside years 0001–9999, which PostgreSQL's timestamptz cannot
 * hold (it answered 500: issue 28 item 6).
 */
function decodeCursor(text: string): { createdAt: Date; id: string } {
  const [iso, id, ...rest] = Buffer.from(text, "base64url").toString("utf8").split("|");
  const createdAt = new Date(iso ?? "");
  const year = createdAt.getUTCFullYear();
  if (rest.length || !id || !UUID.test(id) || !CURSOR_INSTANT.test(iso ?? "") || Number.isNaN(createdAt.getTime()) || year < 1 || year > 9999) {
    throw bad("cursor", "not a cursor this server gave (use nextCursor as it is).");
  }
  return { createdAt, id: id.toLowerCase() };
}

function instant(param: string, text: string): Date {
  const d = new Date(text);
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(d.getTime())) throw bad(param, "an ISO 8601 date or instant, e.g. 2026-11-25T10:00:00Z.");
  return d;
}

/**
 * Parses query parameters (strings; a repeated parameter is refused) into a filter. Empty values
 * count as absent, so a form that submits every field empty lists everything.
 */
export function parseRunsQuery(query: Record<string, string | string[] | undefined>): RunsFilter {
  const one = (name: string): string | undefined => {
    const v = query[name];
    if (Array.isArray(v)) throw bad(name, "give it once.");
    return v === undefined || v === "" ? undefined : v;
  };
  const filter: RunsFilter = { limit: DEFAULT_LIMIT };
  const workflow = one("workflow");
  if (workflow !== undefined) {
    if (!NAME.test(workflow)) throw bad("workflow", "a workflow name (an identifier).");
    filter.workflow = workflow;
  }
  const version = one("version");
  if (version !== undefined) {
    const n = Number(version);
    if (!/^\d{1,9}$/.test(version) || n < 1) throw bad("version", "a positive integer.");
    filter.version = n;
  }
  const status = one("status");
  if (status !== undefined) {
    if (!(RUN_STATUSES as readonly string[]).includes(status)) throw bad("status", `one of ${RUN_STATUSES.join(", ")}.`);
    filter.status = status as RunsFilter["status"];
  }
  const state = one("state");
  if (state !== undefined) {
    if (!NAME.test(state)) throw bad("state", "a state name (an identifier).");
    filter.state = state;
  }
  const waiting = one("waiting");
  if (waiting !== undefined) {
    if (!NAME.test(waiting)) throw bad("waiting", "a slot alias (an identifier).");
    filter.waiting = waiting;
  }
  const parent = one("parent");
  if (parent !== undefined) {
    if (!UUID.test(parent)) throw bad("parent", "a run id (a UUID).");
    filter.parent = parent.toLowerCase();
  }
  const after = one("createdAfter");
  if (after !== undefined) filter.createdAfter = instant("createdAfter", after);
  const before = one("createdBefore");
  if (before !== undefined) filter.createdBefore = instant("createdBefore", before);
  const limit = one("limit");
  if (limit !== undefined) {
    const n = Number(limit);
    if (!/^\d{1,4}$/.test(limit) || n < 1 || n > MAX_LIMIT) throw bad("limit", `an integer from 1 to ${MAX_LIMIT}.`);
    filter.limit = n;
  }
  const cursor = one("cursor");
  if (cursor !== undefined) filter.cursor = decodeCursor(cursor);
  return filter;
}

/** The WHERE clause of a filter (without the cursor), on `runs r`. */
function conditions(f: Omit<RunsFilter, "limit" | "cursor">): Prisma.Sql[] {
  const where: Prisma.Sql[] = [];
  if (f.workflow !== undefined) where.push(Prisma.sql`r.workflow_name = ${f.workflow}`);
  if (f.version !== undefined) where.push(Prisma.sql`r.version = ${f.version}`);
  if (f.status !== undefined) where.push(Prisma.sql`r.status = ${f.status}`);
  if (f.state !== undefined) where.push(Prisma.sql`r.state = ${f.state}`);
  if (f.parent !== undefined) where.push(Prisma.sql`r.parent_run_id = ${f.parent}::uuid`);
  if (f.createdAfter !== undefined) where.push(Prisma.sql`r.created_at > ${f.createdAfter}`);
  if (f.createdBefore !== undefined) where.push(Prisma.sql`r.created_at < ${f.createdBefore}`);
  if (f.startedThroughMcp) where.push(Prisma.sql`EXISTS (SELECT 1 FROM mcp_runs m WHERE m.run_id = r.id)`);
  if (f.waiting !== undefined) {
    where.push(Prisma.sql`EXISTS (SELECT 1 FROM slots s WHERE s.run_id = r.id AND s.alias = ${f.waiting} AND s.status IN ('open', 'waiting'))`);
  }
  return where;
}

const whereOf = (parts: Prisma.Sql[]) => (parts.length ? Prisma.sql`WHERE ${Prisma.join(parts, " AND ")}` : Prisma.empty);

/** One page of runs, newest first, and the cursor of the next page (null on the last). */
export async function listRuns(db: Db, filter: RunsFilter): Promise<{ runs: RunListItem[]; nextCursor: string | null }> {
  const where = conditions(filter);
  if (filter.cursor) where.push(Prisma.sql`(r.created_at, r.id) < (${filter.cursor.createdAt}, ${filter.cursor.id}::uuid)`);
  const rows = await db.$queryRaw<{ id: string; workflow_name: string; version: number; state: string; status: string; created_at: Date; updated_at: Date; finished_at: Date | null }[]>`
    SELECT r.id, r.workflow_name, r.version, r.state, r.status, r.created_at, r.updated_at, r.finished_at
      FROM runs r ${whereOf(where)}
     ORDER BY r.created_at DESC, r.id DESC
     LIMIT ${filter.limit + 1}`;
  const page = rows.slice(0, filter.limit);
  const waiting = await waitingOf(db, page.map((r) => r.id));
  const runs = page.map((r) => ({
    id: r.id,
    workflow: r.workflow_name,
    version: r.version,
    state: r.state,
    status: r.status,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    endedAt: r.finished_at,
    waiting: waiting.get(r.id) ?? [],
  }));
  const last = runs[runs.length - 1];
  return { runs, nextCursor: rows.length > filter.limit && last ? encodeCursor(last) : null };
}

/**
 * The open and waiting slots of `runIds` — never a timer row (alias `@timer:N`, engine/lifecycles/timer.ts: a
 * run does not wait on its timers; issues 19 and 23) — with the summary of each slot's link and since when each
 * is open (`openedAt`, null for a slot still waiting; issue 23).
 */
export async function waitingOf(db: Db, runIds: string[]): Promise<Map<string, WaitingSlot[]>> {
  const out = new Map<string, WaitingSlot[]>();
  if (!runIds.length) return out;
  const rows = await db.$queryRaw<{ run_id: string; alias: string; element: number | null; status: "open" | "waiting"; opened_at: Date | null; deadline: Date | null; link: string | null }[]>`
    SELECT s.run_id, s.alias, s.element, s.status, s.opened_at, s.deadline,
           (SELECT l.status FROM links l WHERE l.run_id = s.run_id AND l.slot_id = s.id ORDER BY (l.status = 'live') DESC, l.created_at DESC LIMIT 1) AS link
      FROM slots s
     WHERE s.run_id = ANY(${runIds}::uuid[]) AND s.status IN ('open', 'waiting')
       AND s.alias NOT LIKE ${TIMER_ALIAS_PREFIX + "%"}
     ORDER BY s.run_id, s.alias, s.element NULLS FIRST`;
  for (const r of rows) {
    const list = out.get(r.run_id) ?? [];
    list.push({
      alias: r.alias,
      element: r.element,
      status: r.status,
      openedAt: r.status === "open" ? r.opened_at : null, // a slot waiting on `After` has not opened yet
      deadline: r.deadline,
      link: (r.link ?? "none") as LinkSummary,
    });
    out.set(r.run_id, list);
  }
  return out;
}

/**
 * How many runs match the filter per status: the console's counts. The filter's `status` (and
 * cursor and limit) is ignored even when the caller passes a whole RunsFilter — the counts are
 * those of the other filters (issue 30 item 4: under `?status=cancelled` the running count was 0).
 */
export async function countByStatus(db: Db, filter: Omit<RunsFilter, "limit" | "cursor" | "status">): Promise<Record<string, number>> {
  const rows = await db.$queryRaw<{ status: string; n: bigint }[]>`
    SELECT r.status, count(*) AS n FROM runs r ${whereOf(conditions({ ...filter, status: undefined }))} GROUP BY r.status`;
  const counts: Record<string, number> = Object.fromEntries(RUN_STATUSES.map((s) => [s, 0]));
  for (const r of rows) counts[r.status] = Number(r.n);
  return counts;
}
