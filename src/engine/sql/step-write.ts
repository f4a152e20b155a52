/**
 * The write of a step: every change one applied command makes, as ONE statement of
 * data-modifying CTEs fed by one JSON document ($1), ending with the `applied_commands` record.
 *
 *   WITH d AS (SELECT $1::jsonb AS j),
 *        run    AS (UPDATE runs … FROM d WHERE id = …)            -- or INSERT for a new run
 *        slot_i AS (INSERT INTO slots SELECT … jsonb_to_recordset(j->'slotsNew'))
 *        slot_u AS (UPDATE slots … FROM jsonb_to_recordset(j->'slotsChanged') WHERE id = x.id)
 *        link_e AS (UPDATE links … FROM jsonb_to_recordset(j->'linksEnded') WHERE id = x.id)
 *        link_i AS (INSERT INTO links … j->'linksMinted')
 *        ent    AS (UPDATE entity_rows … / INSERT for a new run)
 *        mail   AS (INSERT INTO outbox … j->'outbox')
 *        hist   AS (INSERT INTO history … j->'history')
 *   INSERT INTO applied_commands (id, run_id, kind, outcome) SELECT … FROM d
 *
 * Only the parts the step needs are included, and every row is named by its key: no write that
 * cannot match (link ends are decided in memory from the live links the read returned — see
 * link.ts `settleLinks`), no RETURNING. All CTEs see the same snapshot and none touches a row
 * another one touches (the burned link is among `linksEnded`; minted links are inserted with
 * their final status), which is what makes one statement safe.
 *
 * Measured on the 2-core development machine (bench `deposits`, VendorApproval deposit: run
 * update, 2 slot updates, 1 link end, 1 tracked row, 6 history rows, the outcome): 10 statements
 * through Prisma's query builder became 1 raw statement; the worker's CPU per deposit fell from
 * ~9 ms to ~3 ms (figures in docs/performance.md). The cost left is PostgreSQL planning the CTE
 * text each time (~0.2 ms) — cheaper than a prepared statement per shape would be to manage.
 */
import type { Tx } from "../../db.js";

export interface SlotWriteRow {
  id: string;
  run_id: string;
  state: string;
  visit: number;
  alias: string;
  element: number | null;
  element_value: unknown;
  event: string;
  status: string;
  opened_at: string | null;
  deadline: string | null;
  closed_at: string | null;
  args: unknown;
}

export interface LinkEndRow {
  id: string;
  status: "burned" | "retired" | "dead";
  end_reason: string | null;
  /** Set on the burned link only: the hashes of its deposit's Idempotency-Key and body. */
  idempotency_key_sha256: string | null;
  idempotency_body_sha256: string | null;
}

export interface LinkMintRow {
  id: string;
  token_sha256: string;
  slot_id: string;
  minted_version: number;
  status: string;
  end_reason: string | null;
}

export interface StepWrite {
  now: string;
  newRun: boolean;
  run: {
    id: string;
    workflow_name: string;
    version: number;
    state: string;
    status: string;
    visit: number;
    /** Sealed input JSON; written only for a new run. */
    input: unknown;
    milestones: string[];
    finished_at: string | null;
  };
  slotsNew: SlotWriteRow[];
  slotsChanged: SlotWriteRow[];
  linksEnded: LinkEndRow[];
  linksMinted: LinkMintRow[];
  entities: { name: string; entity: string; data: unknown }[];
  outbox: { id: string; created_at: string; to: string; subject: string; body: string }[];
  history: { kind: string; data: unknown }[];
  applied: { id: string; kind: string; outcome: unknown };
}

const SLOT_COLUMNS = `id uuid, run_id uuid, state text, visit int, alias text, element int, element_value jsonb, event text, status text,
  opened_at timestamptz, deadline timestamptz, closed_at timestamptz, args jsonb`;

/** The statement text for the parts `w` needs (exported for the benchmark's pgbench script). */
export function stepWriteSql(w: StepWrite): string {
  const parts: string[] = ["d AS (SELECT $1::jsonb AS j)"];
  if (w.newRun) {
    parts.push(`run AS (INSERT INTO runs (id, workflow_name, version, state, status, visit, input, milestones, finished_at, created_at, updated_at)
      SELECT x.id, x.workflow_name, x.version, x.state, x.status, x.visit, x.input, x.milestones, x.finished_at, (d.j->>'now')::timestamptz, (d.j->>'now')::timestamptz
        FROM d, jsonb_to_record(d.j->'run') AS x(id uuid, workflow_name text, version int, state text, status text, visit int, input jsonb, milestones text[], finished_at timestamptz))`);
  } else {
    parts.push(`run AS (UPDATE runs SET state = x.state, status = x.status, visit = x.visit, milestones = x.milestones, finished_at = x.finished_at,
        version = x.version, updated_at = (d.j->>'now')::timestamptz
        FROM d, jsonb_to_record(d.j->'run') AS x(id uuid, version int, state text, status text, visit int, milestones text[], finished_at timestamptz)
       WHERE runs.id = x.id)`);
  }
  if (w.slotsNew.length > 0) {
    parts.push(`slot_i AS (INSERT INTO slots (id, run_id, state, visit, alias, element, element_value, event, status, opened_at, deadline, closed_at, args)
      SELECT x.* FROM d, jsonb_to_recordset(d.j->'slotsNew') AS x(${SLOT_COLUMNS}))`);
  }
  if (w.slotsChanged.length > 0) {
    parts.push(`slot_u AS (UPDATE slots SET status = x.status, opened_at = x.opened_at, deadline = x.deadline, closed_at = x.closed_at, args = x.args
        FROM d, jsonb_to_recordset(d.j->'slotsChanged') AS x(${SLOT_COLUMNS})
       WHERE slots.id = x.id)`);
  }
  if (w.linksEnded.length > 0) {
    parts.push(`link_e AS (UPDATE links SET status = x.status, end_reason = x.end_reason, ended_at = (d.j->>'now')::timestamptz,
        idempotency_key_sha256 = x.idempotency_key_sha256, idempotency_body_sha256 = x.idempotency_body_sha256
        FROM d, jsonb_to_recordset(d.j->'linksEnded') AS x(id uuid, status text, end_reason text, idempotency_key_sha256 text, idempotency_body_sha256 text)
       WHERE links.id = x.id)`);
  }
  if (w.linksMinted.length > 0) {
    parts.push(`link_i AS (INSERT INTO links (id, token_sha256, run_id, slot_id, minted_version, status, end_reason, created_at, ended_at)
      SELECT x.id, x.token_sha256, (d.j->'run'->>'id')::uuid, x.slot_id, x.minted_version, x.status, x.end_reason, (d.j->>'now')::timestamptz,
             CASE WHEN x.status = 'live' THEN NULL ELSE (d.j->>'now')::timestamptz END
        FROM d, jsonb_to_recordset(d.j->'linksMinted') AS x(id uuid, token_sha256 text, slot_id uuid, minted_version int, status text, end_reason text))`);
  }
  if (w.entities.length > 0) {
    parts.push(
      w.newRun
        ? `ent AS (INSERT INTO entity_rows (run_id, name, entity, data)
      SELECT (d.j->'run'->>'id')::uuid, x.name, x.entity, x.data FROM d, jsonb_to_recordset(d.j->'entities') AS x(name text, entity text, data jsonb))`
        : `ent AS (UPDATE entity_rows SET data = x.data
        FROM d, jsonb_to_recordset(d.j->'entities') AS x(name text, data jsonb)
       WHERE entity_rows.run_id = (d.j->'run'->>'id')::uuid AND entity_rows.name = x.name)`,
    );
  }
  if (w.outbox.length > 0) {
    parts.push(`mail AS (INSERT INTO outbox (id, run_id, "to", subject, body, status, created_at)
      SELECT x.id, (d.j->'run'->>'id')::uuid, x."to", x.subject, x.body, 'pending', x.created_at
        FROM d, jsonb_to_recordset(d.j->'outbox') AS x(id uuid, "to" text, subject text, body text, created_at timestamptz))`);
  }
  if (w.history.length > 0) {
    parts.push(`hist AS (INSERT INTO history (run_id, at, kind, data)
      SELECT (d.j->'run'->>'id')::uuid, (d.j->>'now')::timestamptz, x.kind, x.data
        FROM d, jsonb_array_elements(d.j->'history') WITH ORDINALITY AS h(v, n), jsonb_to_record(h.v) AS x(kind text, data jsonb) ORDER BY h.n)`);
  }
  return `WITH ${parts.join(",\n")}
INSERT INTO applied_commands (id, run_id, kind, outcome, applied_at)
SELECT d.j->'applied'->>'id', (d.j->'run'->>'id')::uuid, d.j->'applied'->>'kind', d.j->'applied'->'outcome', (d.j->>'now')::timestamptz FROM d`;
}

/** Writes the step in one statement. */
export async function writeStep(tx: Tx, w: StepWrite): Promise<void> {
  await tx.$executeRawUnsafe(stepWriteSql(w), JSON.stringify(w));
}
