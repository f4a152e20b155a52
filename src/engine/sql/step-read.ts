/**
 * The read of a step: one round trip that locks the run row and returns everything a command
 * needs — the recorded outcome of this command id (idempotency), the run, the slots of its
 * current visit, its tracked rows, the live links of those slots, (for a deposit) the link named
 * by the command, and whether the run has pending webhook/chat deliveries (issue 18 item 4).
 *
 *   SELECT slotflow_step_read($run, $commandId, $linkId)      -- one JSON document, a prepared statement
 *
 * The function lives in prisma/migrations/20261122010000_step_read_function (last rewritten by
 * 20261125080000_distributable_keys: every run table reached by `run_id`): it takes the lock
 * with `SELECT … FOR UPDATE`, then reads with a snapshot taken after the lock (a single plain
 * statement could not: its snapshot predates the wait, so after another step commits it would
 * read that step's slots and links as they were before). Returns null fields when the run does
 * not exist.
 *
 * Trade-off, measured on the 2-core development machine (bench `deposits`): this replaced six
 * round trips (lock, applied check, slots, tracked rows, link, plus Prisma's per-query mapping)
 * with one; the document costs one JSON.parse in the worker. Rows come back whole
 * (`row_to_json`), so columns added by later migrations reach the engine without a new function.
 */
import type { Tx } from "../../db.js";
import { prepared } from "./prepared.js";

/** A row as PostgreSQL renders it in JSON: snake_case names, timestamps as ISO strings. */
export type JsonRow = Record<string, unknown>;

export interface StepRead {
  /** The outcome recorded for this command id, if it was applied before. */
  prior: unknown | null;
  run: JsonRow | null;
  slots: JsonRow[];
  entities: JsonRow[];
  liveLinks: { id: string; slot_id: string }[];
  link: JsonRow | null;
  /** Whether the run has webhook/chat deliveries still pending (migration 20261125070000; issue 18 item 4). */
  pendingDeliveries?: boolean;
}

/** The read, as sent: a prepared statement (sql/prepared.ts). */
export const STEP_READ_SQL = prepared("slotflow_step_read", "SELECT slotflow_step_read($1::uuid, $2, $3::uuid) AS step");

/** Locks run `runId` (waiting for a step that holds it) and reads the step's world. */
export async function readStep(tx: Tx, runId: string, commandId: string, linkId: string | null): Promise<StepRead> {
  const rows = await tx.$queryRawUnsafe<{ step: StepRead | string }[]>(STEP_READ_SQL, runId, commandId, linkId);
  const step = rows[0].step;
  return typeof step === "string" ? (JSON.parse(step) as StepRead) : step;
}

/** A timestamp column of a JSON row (null stays null). */
export function jsonDate(v: unknown): Date | null {
  return v === null || v === undefined ? null : new Date(v as string);
}

/**
 * The same world read without the lock, for read-only views that evaluate workflow expressions
 * (the responder page's Title and Intro): one plain statement, one snapshot; `prior` and `link`
 * are null.
 */
export async function readStepUnlocked(db: Tx, runId: string): Promise<StepRead> {
  const rows = await db.$queryRaw<{ step: StepRead | string }[]>`
    SELECT json_build_object(
      'prior', NULL,
      'run', (SELECT row_to_json(r) FROM runs r WHERE r.id = ${runId}::uuid),
      'slots', (SELECT coalesce(json_agg(s ORDER BY s.alias, s.element), '[]'::json)
                  FROM slots s JOIN runs r ON r.id = s.run_id AND r.visit = s.visit WHERE s.run_id = ${runId}::uuid),
      'entities', (SELECT coalesce(json_agg(e), '[]'::json) FROM entity_rows e WHERE e.run_id = ${runId}::uuid),
      'liveLinks', (SELECT coalesce(json_agg(json_build_object('id', l.id, 'slot_id', l.slot_id)), '[]'::json)
                      FROM slots s JOIN runs r ON r.id = s.run_id AND r.visit = s.visit
                      JOIN links l ON l.run_id = s.run_id AND l.slot_id = s.id AND l.status = 'live'
                     WHERE s.run_id = ${runId}::uuid),
      'link', NULL) AS step`;
  const step = rows[0].step;
  return typeof step === "string" ? (JSON.parse(step) as StepRead) : step;
}
