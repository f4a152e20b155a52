/**
 * The callback link lifecycle (callback-links spec §3). This module alone writes `links.status`.
 *
 *   (none) --CallbackUrl()--> live
 *   live --CallbackUrl() again for the same slot--> retired        (at most one live link per slot)
 *   live --successful deposit--> burned                             (single use)
 *   live --slot completed/cancelled/expired/dropped, run finished--> dead (end_reason says which)
 *   live --an operator's revoke (`link/revoke`, `slotflow revoke`)--> dead, end_reason "revoked"
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
import type { IdempotencyFingerprint } from "./idempotency.js";
import { RefusalCode, refuse, type LinkEndReason, type Refusal } from "./refusals.js";
import { CALLBACK_PATH_SEGMENT } from "./seal.js";
import type { SlotRecord, Step } from "./step.js";
import { checkTokenFormat, hashToken, newToken } from "./token.js";

export { hashToken, newToken };

export type LinkStatus = "live" | "burned" | "retired" | "dead";

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

export interface LinkRow {
  id: string;
  runId: string;
  slotId: string;
  mintedVersion: number;
  status: LinkStatus;
  endReason: LinkEndReason | null;
  idempotencyKeySha256: string | null;
  idempotencyBodySha256: string | null;
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
    case "revoked":
      return "This link no longer works: it was revoked.";
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
export function revokeLink(step: Step, slot: SlotRecord, linkId: string): void {
  step.recordLinkEnd(slot.id, "revoked");
  if (step.liveLinkOf(slot.id) === linkId) step.setLiveLink(slot.id, null);
  step.addHistory("link-revoked", { linkId, alias: slot.alias });
}
