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
import type { IdempotencyFingerprint } from "./idempotency.js";
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
  idempotencyKeySha256: string | null;
  idempotencyBodySha256: string | null;
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

/**
 * Marks the deposit's link burned at flush (its slot is completed in the same step), keeping the
 * hashes of the request's Idempotency-Key and body when it had one (idempotency.ts).
 */
export function burnLink(step: Step, linkId: string, idempotency: IdempotencyFingerprint | null = null): void {
  step.recordBurn(linkId, idempotency);
  step.addHistory("link-burned", { linkId });
}
