/**
 * The write of a step: every change one applied command makes, in ONE round trip, from one JSON
 * document, ending with the `applied_commands` record:
 *
 *   SELECT slotflow_step_write($1::jsonb)        -- a prepared statement (sql/prepared.ts)
 *
 * The PL/pgSQL function lives in prisma/migrations/20261123000000_step_write_function (last
 * rewritten by 20261126000000_responders, which adds the slot's candidates, answer, receipt and
 * forwards and keeps `inbox_entries`). It inserts or updates the run,
 * inserts new slots, links (each with its row in the token table `link_tokens`), tracked rows (new
 * run), outbox mail and history, and updates each changed slot, ended link and tracked row by its
 * primary key, which leads with `run_id`. Every row is named
 * by its key: no write that cannot match (link ends are decided in memory from the live links
 * the read returned — see link.ts `settleLinks`), no result that nobody reads.
 *
 * Trade-offs, measured on the 2-core development machine (bench `deposits`, VendorApproval
 * deposit: run update, 2 slot updates, 1 link end, 1 tracked row, 6 history rows, the outcome;
 * figures in docs/performance.md):
 * - 10 statements through Prisma's query builder → 1 raw statement of data-modifying CTEs (the
 *   previous version of this module): the worker's CPU per deposit fell from ~9 ms to ~3 ms.
 * - That statement's text (~3 KB) was sent, parsed and planned on every deposit, and the planner,
 *   which estimates 100 rows for any `jsonb_to_recordset`, hash-joined the 1–3 changed slots and
 *   links against a sequential scan of the whole `slots` and `links` tables while those held up to
 *   some thousands of rows: `auto_explain` showed 1–4.7 ms of the write's 6 ms in those scans.
 *   The function's statements are planned once per connection and reach every row by its key;
 *   PostgreSQL's CPU per deposit fell from 3.7 ms (see docs/performance.md for the after figure).
 * - Row-at-a-time UPDATEs inside the function (a step changes 1–5 rows of a table) cost a few
 *   microseconds each, against a set-based join the planner cannot be told the size of.
 */
import type { Tx } from "../../db.js";
import { prepared } from "./prepared.js";

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
  /** Candidates (v0.4 inbox): set on creation; in slotsChanged, absent keeps the stored value. */
  candidate_users?: string[] | null;
  candidate_roles?: string[] | null;
  /** Who answered (AnsweredBy), its receipt, its forward count: absent keeps the stored value. */
  answered_by?: unknown;
  receipt?: string | null;
  forwards?: number;
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

/** The write, as sent: one prepared statement whose one parameter is the StepWrite as JSON text. */
export const STEP_WRITE_SQL = prepared("slotflow_step_write", "SELECT slotflow_step_write($1::jsonb)");

/** Writes the step in one round trip; a failure (constraint, lost connection) rolls the caller's transaction back. */
export async function writeStep(tx: Tx, w: StepWrite): Promise<void> {
  await tx.$executeRawUnsafe(STEP_WRITE_SQL, JSON.stringify(w));
}
