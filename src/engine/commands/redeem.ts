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
import { isEmailAddress } from "../../lang/runtime/email-address.js";
import { toJson } from "../../lang/runtime/values.js";
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

type ForwardCommand = Extract<Command, { kind: "forward" }>;
export type PreparedForward = { ok: true; cmd: ForwardCommand } | { ok: false; refusal: Refusal };

/**
 * The checks a forward (`POST …/callback/{token}/forward`, v0.4 "Many responders, forwarding, and
 * receipts") passes before it is queued, in this order, each refusing with nothing changed:
 *   404 link-not-found and 410 link-burned / link-retired / link-dead — exactly as for a deposit;
 *   422 invalid-body — `email` is not one plain email address (lang/runtime/email-address.ts, the rule of
 *       `send email to`), or the body has other members.
 * `body` is `{ email }` as parsed (JSON or the page's form). The worker checks the link again
 * under the run lock, then `Forwardable` and the limit (commands/forward.ts).
 */
export async function prepareForward(db: Db, token: string, body: unknown): Promise<PreparedForward> {
  if (!isTokenShaped(token)) return { ok: false, refusal: NOT_FOUND };
  const link = await lookupLink(db, hashToken(token));
  if (!link) return { ok: false, refusal: NOT_FOUND };
  const ended = refusalForEndedLink({ status: link.status as LinkStatus, endReason: link.endReason as LinkEndReason | null });
  if (ended) return { ok: false, refusal: ended };
  const email = forwardAddress(body);
  if (typeof email !== "string") return { ok: false, refusal: email };
  return { ok: true, cmd: { kind: "forward", commandId: randomUUID(), runId: link.runId, linkId: link.id, email } };
}

/** The address of a forward body, or its 422 refusal. */
function forwardAddress(body: unknown): string | Refusal {
  const expects = { email: "string" };
  const bad = (problem: string, name = "email") =>
    refuse(RefusalCode.InvalidBody, `A forward takes one member, "email": the address to send the link to (${problem}).`, { expects, errors: [{ name, problem }] });
  if (typeof body !== "object" || body === null || Array.isArray(body)) return bad("is required");
  const extra = Object.keys(body).find((k) => k !== "email");
  if (extra !== undefined) return bad("is not a member of a forward body", extra);
  const email = (body as { email?: unknown }).email;
  if (typeof email !== "string" || email.trim() === "") return bad("is required");
  const trimmed = email.trim();
  if (trimmed.length > 320 || !isEmailAddress(trimmed)) return bad("must be one email address, such as name@example.com");
  return trimmed;
}
