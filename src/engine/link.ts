/**
 * The callback link lifecycle (callback-links spec §3). This module alone writes `links.status`.
 *
 *   (none) --CallbackUrl()--> live
 *   live --CallbackUrl() again for the same slot--> retired        (at most one live link per slot)
 *   live --successful deposit--> burned                             (single use)
 *   live --slot completed/cancelled/expired/dropped, run finished--> dead (end_reason says which)
 *
 * A token is 32 bytes from `crypto.randomBytes` (256 bits, spec §8), encoded base64url (43
 * characters). Only its SHA-256 (hex) is stored; the URL `{BASE_URL}/api/workflow/callback/{token}`
 * is returned once, to the handler that minted it. The minting version is recorded with the link
 * so a deposit is validated against the event as it was then (spec §9).
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { RefusalCode, refuse, type LinkEndReason, type Refusal } from "./refusals.js";
import { CALLBACK_PATH_SEGMENT } from "./seal.js";
import type { SlotRecord, Step } from "./step.js";

export type LinkStatus = "live" | "burned" | "retired" | "dead";

export const TOKEN_BYTES = 32;
/** A well-formed token: 43 base64url characters. Anything else cannot be a token. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** SHA-256 of a token, hex. */
export function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** A fresh token: 256 bits of cryptographic randomness, base64url. */
export function newToken(): string {
  return randomBytes(TOKEN_BYTES).toString("base64url");
}

/**
 * Mints a link for `slot` inside the step and returns its URL. The link row (hash only) is written
 * at flush, retiring the slot's previous live link in the same transaction. The caller (the
 * interpreter) has checked that the slot is open or waiting.
 */
export function mintLink(step: Step, slot: SlotRecord): string {
  const token = newToken();
  const linkId = randomUUID();
  step.recordMint({ linkId, slotId: slot.id, tokenSha256: hashToken(token) });
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
}

/** True when `token` has the shape of a token; other strings are refused without a lookup. */
export function isTokenShaped(token: string): boolean {
  return TOKEN_SHAPE.test(token);
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
  }
}

/** Marks the deposit's link burned at flush (its slot is completed in the same step). */
export function burnLink(step: Step, linkId: string): void {
  step.recordBurn(linkId);
  step.addHistory("link-burned", { linkId });
}

export interface LinkSettlement {
  /** Links that existed before the step and end now, by id. */
  ended: { id: string; status: "burned" | "retired" | "dead"; end_reason: LinkEndReason | null }[];
  /** Links minted during the step, with the status they have when it commits. */
  minted: { id: string; token_sha256: string; slot_id: string; status: LinkStatus; end_reason: LinkEndReason | null }[];
}

/**
 * Decides, in memory, every link write of a step (the transitions in this module's header), so
 * the flush names each row it changes and sends no write that cannot match:
 *
 * - the deposit's own link → burned;
 * - an existing live link of a slot minted again → retired; of a slot closed → dead (its reason);
 * - a minted link → retired when a later mint of the same step replaced it, dead when its slot
 *   closed later in the step, else live.
 *
 * `liveLinks` are the live links of the run's current slots as read under the run lock (at most
 * one per slot).
 */
export function settleLinks(step: {
  liveLinks: { id: string; slotId: string }[];
  mints: { linkId: string; slotId: string; tokenSha256: string }[];
  linkEnds: Map<string, LinkEndReason>;
  burnedLinkId: string | null;
}): LinkSettlement {
  const minted = new Set(step.mints.map((m) => m.slotId));
  const ended: LinkSettlement["ended"] = [];
  if (step.burnedLinkId) ended.push({ id: step.burnedLinkId, status: "burned", end_reason: null });
  for (const link of step.liveLinks) {
    if (link.id === step.burnedLinkId) continue;
    if (minted.has(link.slotId)) ended.push({ id: link.id, status: "retired", end_reason: null });
    else if (step.linkEnds.has(link.slotId)) ended.push({ id: link.id, status: "dead", end_reason: step.linkEnds.get(link.slotId)! });
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
