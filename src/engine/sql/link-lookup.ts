/**
 * The web process's lookup of a callback token: one probe of the token table `link_tokens` by its
 * key (the token's SHA-256, hex), then the link joined to its slot and run by `run_id` for what the
 * body check needs — so each statement reads one shard once distributed (issue 20 item 2,
 * migration 20261125080000_distributable_keys, docs/scaling.md). It runs inside the
 * PL/pgSQL function `slotflow_link_lookup` (migration 20261125020000, issue 17), which keeps the
 * join's plan per server connection: the statement itself is sent unnamed (sql/prepared.ts), so a
 * pooler in transaction mode works, and only the function call is parsed per deposit.
 *
 *   SELECT run_id, link_id FROM link_tokens WHERE token_sha256 = $1::bpchar   -- CHAR(64): a text
 *                                                       -- parameter would skip the index
 *   SELECT l.id, l.run_id, l.minted_version, l.status, l.end_reason, l.idempotency_key_sha256,
 *          l.idempotency_body_sha256, s.state, s.alias, r.workflow_name
 *     FROM links l JOIN slots s ON s.run_id = l.run_id AND s.id = l.slot_id JOIN runs r ON r.id = l.run_id
 *    WHERE l.run_id = $run AND l.id = $link
 *
 * Measured (bench `deposits`): Prisma's `findUnique` with two nested selects sent three
 * statements; this is one, and saved ~2.7 ms of web CPU per deposit in the profile.
 * Backend CPU per lookup (bench `statements`): the join sent unnamed ~176 µs, named ~32 µs, the
 * function call unnamed — what is sent — in docs/performance.md "Behind a pooler".
 * With 1M live links the probe stays one B-tree descent (bench `scale`).
 */
import type { Db } from "../../db.js";
import { prepared } from "./prepared.js";

export interface LinkLookup {
  id: string;
  runId: string;
  mintedVersion: number;
  status: string;
  endReason: string | null;
  /** Hashes of the Idempotency-Key and body of the deposit that burned the link (idempotency.ts). */
  idempotencyKeySha256: string | null;
  idempotencyBodySha256: string | null;
  state: string;
  alias: string;
  workflowName: string;
}

interface LookupRow {
  id: string;
  run_id: string;
  minted_version: number;
  status: string;
  end_reason: string | null;
  idempotency_key_sha256: string | null;
  idempotency_body_sha256: string | null;
  state: string;
  alias: string;
  workflow_name: string;
}

/** The lookup, as sent (unnamed; sql/prepared.ts): a call of the function. */
export const LINK_LOOKUP_SQL = prepared("slotflow_link_lookup", "SELECT * FROM slotflow_link_lookup($1)");

/** The join the function runs, as a plain statement: bench `statements` compares their costs. */
export const LINK_LOOKUP_JOIN_SQL = `SELECT l.id, l.run_id, l.minted_version, l.status, l.end_reason, l.idempotency_key_sha256, l.idempotency_body_sha256, s.state, s.alias, r.workflow_name
     FROM link_tokens t JOIN links l ON l.run_id = t.run_id AND l.id = t.link_id
     JOIN slots s ON s.run_id = l.run_id AND s.id = l.slot_id JOIN runs r ON r.id = l.run_id
    WHERE t.token_sha256 = $1::bpchar`;

/** The link whose token hashes to `tokenSha256` (hex), or null. */
export async function lookupLink(db: Db, tokenSha256: string): Promise<LinkLookup | null> {
  const rows = await db.$queryRawUnsafe<LookupRow[]>(LINK_LOOKUP_SQL, tokenSha256);
  const r = rows[0];
  if (!r) return null;
  return { id: r.id, runId: r.run_id, mintedVersion: r.minted_version, status: r.status, endReason: r.end_reason,
    idempotencyKeySha256: r.idempotency_key_sha256,
    idempotencyBodySha256: r.idempotency_body_sha256,
    state: r.state, alias: r.alias, workflowName: r.workflow_name };
}
