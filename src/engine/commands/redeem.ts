/**
 * The checks a callback deposit passes before it is queued, shared by the HTTP endpoint and the
 * testing kit's `Workflow.Redeem` so both refuse exactly alike (callback-links spec §4 rules 2–3,
 * §7):
 *
 *   404 link-not-found — no link has this token (any string: malformed ones never reach the database);
 *   a burned link whose burning request had this request's Idempotency-Key: `cmd: null` (already
 *       completed — answer 200 again) or 422 idempotency-key-reused (another body); idempotency.ts;
 *   410 link-burned / link-retired / link-dead — the link has ended (re-checked under the run lock);
 *   422 invalid-body — the body does not match the slot's event as it was at the minting version.
 *
 * Returns the `deposit` command to apply (or `null` when this very request already completed the
 * slot); it names the link by id and never carries the token.
 * Database work: one statement (sql/link-lookup.ts); the compiled version comes from a cache.
 */
import { randomUUID } from "node:crypto";
import type { Db } from "../../db.js";
import { checkBody } from "../values/body.js";
import type { Command } from "./types.js";
import { replay, type IdempotencyFingerprint } from "../values/idempotency.js";
import { hashToken, isTokenShaped, refusalForEndedLink, type LinkStatus } from "../lifecycles/link.js";
import { RefusalCode, refuse, type LinkEndReason, type Refusal } from "../refusals.js";
import { lookupLink } from "../sql/link-lookup.js";
import { receiptOfLinkSlot } from "../sql/receipts.js";
import { toJson } from "../values/values.js";
import { loadVersion } from "../versions/workflows.js";

type DepositCommand = Extract<Command, { kind: "deposit" }>;
export type PreparedDeposit = { ok: true; cmd: DepositCommand } | { ok: false; refusal: Refusal };
/**
 * With an Idempotency-Key, `cmd: null` means this very request already completed the slot;
 * `receipt` is then the receipt it was given (null when none was signed).
 */
export type PreparedKeyedDeposit = { ok: true; cmd: DepositCommand; receipt?: undefined } | { ok: true; cmd: null; receipt: string | null } | { ok: false; refusal: Refusal };

const NOT_FOUND = refuse(RefusalCode.LinkNotFound, "No link matches this URL. Check that it was copied whole.");

/**
 * `body` is the parsed JSON, or undefined when the request had none; `idempotency` the hashes of
 * the request's Idempotency-Key and body (idempotency.ts `fingerprint`), when it had a key.
 */
export async function prepareDeposit(db: Db, token: string, body: unknown): Promise<PreparedDeposit>;
export async function prepareDeposit(db: Db, token: string, body: unknown, idempotency: IdempotencyFingerprint | null): Promise<PreparedKeyedDeposit>;
export async function prepareDeposit(db: Db, token: string, body: unknown, idempotency: IdempotencyFingerprint | null = null): Promise<PreparedKeyedDeposit> {
  if (!isTokenShaped(token)) return { ok: false, refusal: NOT_FOUND };
  const link = await lookupLink(db, hashToken(token));
  if (!link) return { ok: false, refusal: NOT_FOUND };
  const again = link.status === "burned" ? replay(link, idempotency) : null;
  if (again === "completed") return { ok: true, cmd: null, receipt: await receiptOfLinkSlot(db, link.runId, link.id) };
  if (again) return { ok: false, refusal: again };
  const ended = refusalForEndedLink({ status: link.status as LinkStatus, endReason: link.endReason as LinkEndReason | null });
  if (ended) return { ok: false, refusal: ended };
  const wf = await loadVersion(db, link.workflowName, link.mintedVersion);
  const decl = wf.states[link.state]?.slots.find((s) => s.alias === link.alias);
  const event = decl ? wf.events[decl.event] : undefined;
  if (!event) return { ok: false, refusal: NOT_FOUND };
  const checked = checkBody(body, event.params);
  if (!checked.ok) {
    return { ok: false, refusal: refuse(RefusalCode.InvalidBody, checked.detail, { expects: checked.expects, errors: checked.problems }) };
  }
  const args = Object.fromEntries(Object.entries(checked.args).map(([k, v]) => [k, toJson(v)]));
  return { ok: true, cmd: { kind: "deposit", commandId: randomUUID(), runId: link.runId, linkId: link.id, args, idempotency } };
}
