/**
 * The callback link lifecycle (callback-links spec §3). This module alone writes `links.status`.
 *
 *   (none) --CallbackUrl()--> live
 *   live --CallbackUrl() again for the same slot--> retired        (at most one live link per slot)
 *   live --successful deposit--> burned                             (single use)
 *   live --slot completed/cancelled/expired/dropped, run finished--> dead (end_reason says which)
 *   live --an operator's revoke (`link/revoke`, `slotflow revoke`)--> dead, end_reason "revoked"
 *   live --an operator cancels the run (issue 23)--> dead, end_reason "run-cancelled"
 *
 * Every end of a link is recorded in the run's history at the moment it is decided (issue 9 §5),
 * by link id and slot, never by token: `link-minted`, `link-retired` (a newer link replaced it),
 * `link-burned` (a deposit used it), `link-dead` with `reason` (completed, cancelled, expired,
 * dropped, run-finished), `link-revoked` (an operator ended it). The step knows each slot's live
 * link (loaded with the run).
 *
 * A token is `sfl_` + 32 bytes from `crypto.randomBytes` (256 bits, spec §8) in base64url + a
 * checksum (token.ts gives the format). Only its SHA-256 (hex) is stored; the URL
 * `{BASE_URL}/api/workflow/callback/{token}` is returned once, to the handler that minted it. The
 * minting version is recorded with the link so a deposit is validated against the event as it was
 * then (spec §9).
 */
import { randomUUID } from "node:crypto";
import type { IdempotencyFingerprint } from "../values/idempotency.js";
import { RefusalCode, refuse, type LinkEndReason, type Refusal } from "../refusals.js";
import { CALLBACK_PATH_SEGMENT } from "../sealing/seal.js";
import type { LinkRow, LinkSettlement, SlotRecord, Step } from "../step.js";

/** The link records live beside the step's other records (step.ts); re-exported for the modules that read links. */
export type { LinkRow, LinkSettlement, LinkStatus } from "../step.js";
import { checkTokenFormat, hashToken, newToken } from "../sealing/token.js";

export { hashToken, newToken };


/**
 * Mints a link for `slot` inside the step and returns its URL. The link row (hash only) is written
 * at flush, retiring the slot's previous live link in the same transaction. The caller (the
 * interpreter) has checked that the slot is open or waiting.
 */
export function mintLink(step: Step, slot: SlotRecord): string {
  const token = newToken();
  const linkId = randomUUID();
  const previous = step.liveLinkOf(slot.id);
  if (previous) step.addHistory("link-retired", { linkId: previous, alias: slot.alias, element: slot.element, by: linkId });
  step.recordMint({ linkId, slotId: slot.id, tokenSha256: hashToken(token) });
  step.setLiveLink(slot.id, linkId);
  step.addHistory("link-minted", { linkId, alias: slot.alias, element: slot.element });
  return `${step.services.baseUrl}${CALLBACK_PATH_SEGMENT}${token}`;
}


/**
 * True when `token` may name a link: a current token whose checksum holds, or a legacy one (token.ts).
 * Other strings — mistyped links included — are refused as 404 without a database lookup.
 */
export function isTokenShaped(token: string): boolean {
  return checkTokenFormat(token) !== "invalid";
}

/** The refusal for a link that is not live (410 link-burned / link-retired / link-dead). */
export function refusalForEndedLink(link: Pick<LinkRow, "status" | "endReason">): Refusal | null {
  switch (link.status) {
    case "live":
      return null;
    case "burned":
      return refuse(RefusalCode.LinkBurned, "This link has already been used.", { reason: "burned" });
    case "retired":
      if (link.endReason === "forwarded") {
        return refuse(RefusalCode.LinkRetired, "This link was forwarded to someone else; it no longer works here.", { reason: "forwarded" });
      }
      return refuse(RefusalCode.LinkRetired, "This link was replaced by a newer one.", { reason: "retired" });
    case "dead":
      return refuse(RefusalCode.LinkDead, deadDetail(link.endReason ?? "cancelled"), { reason: link.endReason ?? "cancelled" });
  }
}

export function deadDetail(reason: LinkEndReason): string {
  switch (reason) {
    case "completed":
      return "This link no longer works: its slot was already completed.";
    case "cancelled":
      return "This link no longer works: its slot was cancelled.";
    case "expired":
      return "This link no longer works: its slot's deadline has passed.";
    case "dropped":
      return "This link no longer works: its slot was withdrawn.";
    case "run-finished":
      return "This link no longer works: its workflow run has finished.";
    case "run-cancelled":
      return "This link no longer works: its workflow run was cancelled by an operator.";
    case "revoked":
      return "This link no longer works: it was revoked.";
    case "quorum-reached":
      return "This link no longer works: enough others have already answered.";
    case "forwarded":
      return "This link no longer works: it was forwarded to someone else.";
  }
}

/**
 * Marks the deposit's link burned at flush (its slot is completed in the same step), keeping the
 * hashes of the request's Idempotency-Key and body when it had one (idempotency.ts).
 */
export function burnLink(step: Step, slot: SlotRecord, linkId: string, idempotency: IdempotencyFingerprint | null = null): void {
  step.recordBurn(linkId, idempotency);
  if (step.liveLinkOf(slot.id) === linkId) step.setLiveLink(slot.id, null);
  step.addHistory("link-burned", { linkId, alias: slot.alias, element: slot.element });
}

/**
 * The slot's live link, if it has one, dies at flush with `reason`; the run's history records it
 * now (`link-dead`). Called when the slot closes (slot.ts). A slot without a live link records
 * nothing. (An operator's revocation is `revokeLink`, recorded as `link-revoked`.)
 */
export function killLiveLink(step: Step, slot: SlotRecord, reason: LinkEndReason): void {
  step.recordLinkEnd(slot.id, reason);
  const linkId = step.liveLinkOf(slot.id);
  if (!linkId) return;
  step.setLiveLink(slot.id, null);
  step.addHistory("link-dead", { linkId, alias: slot.alias, element: slot.element, reason });
}

/**
 * Ends the live link `linkId` of `slot` with reason "revoked" at flush (issue 10 §2): the slot and
 * the run are untouched, and the workflow may mint a new link for the slot later.
 */
export function revokeLink(step: Step, slot: SlotRecord, linkId: string, why: { reason?: string; actor?: string } = {}): void {
  step.recordLinkEnd(slot.id, "revoked");
  if (step.liveLinkOf(slot.id) === linkId) step.setLiveLink(slot.id, null);
  step.addHistory("link-revoked", { linkId, alias: slot.alias, element: slot.element, ...(why.reason ? { reason: why.reason } : {}), ...(why.actor ? { actor: why.actor } : {}) });
}


/**
 * Forwards the live link `linkId` of `slot` (v0.4 "Many responders, forwarding, and receipts"):
 * it is retired at flush with end reason "forwarded" (its holder then gets 410 `link-retired`,
 * `reason: "forwarded"`), and a new link is minted for the same slot. Returns the new link's URL.
 * The history records `link-forwarded` with the address and both link ids, never a token.
 */
export function forwardLink(step: Step, slot: SlotRecord, linkId: string, to: string): string {
  step.retireReasons.set(linkId, "forwarded");
  const url = mintLink(step, slot);
  step.addHistory("link-forwarded", { linkId, alias: slot.alias, element: slot.element, to, by: step.liveLinkOf(slot.id) });
  return url;
}

/**
 * Decides, in memory, every link write of a step (the transitions in this module's header), so
 * the flush names each row it changes and sends no write that cannot match:
 *
 * - the deposit's own link → burned (with the hashes of its Idempotency-Key and body);
 * - an existing live link of a slot minted again → retired; of a slot closed, or revoked → dead
 *   (its reason);
 * - a minted link → retired when a later mint of the same step replaced it, dead when its slot
 *   closed later in the step, else live.
 *
 * `loadedLiveLinks` are the live links of the run's current slots as read under the run lock (at
 * most one per slot).
 */
export function settleLinks(step: {
  loadedLiveLinks: { id: string; slotId: string }[];
  mints: { linkId: string; slotId: string; tokenSha256: string }[];
  linkEnds: Map<string, LinkEndReason>;
  burned: { linkId: string; idempotency: IdempotencyFingerprint | null } | null;
  retireReasons?: Map<string, LinkEndReason>;
}): LinkSettlement {
  const minted = new Set(step.mints.map((m) => m.slotId));
  const burnedId = step.burned?.linkId ?? null;
  const ended: LinkSettlement["ended"] = [];
  const noKey = { idempotency_key_sha256: null, idempotency_body_sha256: null };
  if (step.burned) {
    const key = step.burned.idempotency;
    ended.push({
      id: step.burned.linkId,
      status: "burned",
      end_reason: null,
      idempotency_key_sha256: key?.keySha256 ?? null,
      idempotency_body_sha256: key?.bodySha256 ?? null,
    });
  }
  for (const link of step.loadedLiveLinks) {
    if (link.id === burnedId) continue;
    if (minted.has(link.slotId)) ended.push({ id: link.id, status: "retired", end_reason: step.retireReasons?.get(link.id) ?? null, ...noKey });
    else if (step.linkEnds.has(link.slotId)) ended.push({ id: link.id, status: "dead", end_reason: step.linkEnds.get(link.slotId)!, ...noKey });
  }
  const lastMint = new Map(step.mints.map((m) => [m.slotId, m.linkId]));
  return {
    ended,
    minted: step.mints.map((m) => {
      const base = { id: m.linkId, token_sha256: m.tokenSha256, slot_id: m.slotId };
      if (lastMint.get(m.slotId) !== m.linkId) return { ...base, status: "retired" as const, end_reason: null };
      const reason = step.linkEnds.get(m.slotId);
      return reason ? { ...base, status: "dead" as const, end_reason: reason } : { ...base, status: "live" as const, end_reason: null };
    }),
  };
}
