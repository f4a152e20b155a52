/**
 * revoke: an operator ends one slot's live link (issue 10 §2;
 * `POST /api/runs/{id}/slots/{alias}/link/revoke`, `slotflow revoke RUN ALIAS`).
 *
 * Locks: the run row (held by the caller), so a revoke and a deposit of the same link apply one
 * after the other: whichever comes first wins, and the other is refused.
 * Refuses, changing nothing:
 *   404 not-found — the run's current state has no slot `alias` (no element `element` of it, when
 *       given: v0.4, each element of a fanned-out slot has its own link, minted in `each { … }`),
 *       or the slot has no live link (never minted, already burned, retired, dead, or revoked
 *       before; without `element`, a fanned-out slot never has one).
 * Applies: the link becomes dead with end_reason "revoked" (its holders then get 410 `link-dead`,
 * `reason: "revoked"`) and the run's history records `link-revoked`. The slot, the run and its
 * tracked rows are untouched; the workflow may mint a new link for the slot. The console (issue 23)
 * passes the operator's `reason` and `actor`, recorded with `link-revoked`.
 */
import { revokeLink } from "../lifecycles/link.js";
import { RefusalCode, refuse } from "../refusals.js";
import { slotsOf } from "../lifecycles/slot.js";
import type { Step } from "../step.js";
import { applied, refused, type CommandResult } from "./result.js";
import type { Command } from "./types.js";

export async function revoke(step: Step, cmd: Extract<Command, { kind: "revoke" }>): Promise<CommandResult> {
  const which = cmd.element === undefined ? `Slot "${cmd.alias}"` : `Slot "${cmd.alias}", element ${cmd.element},`;
  const noLink = refuse(RefusalCode.NotFound, `${which} has no live link to revoke.`);
  const slot = slotsOf(step, cmd.alias).find((s) => s.element === (cmd.element ?? null));
  if (!slot) return refused(noLink);
  const link = await step.services.tx.link.findFirst({ where: { runId: cmd.runId, slotId: slot.id, status: "live" }, select: { id: true } });
  if (!link) return refused(noLink);
  revokeLink(step, slot, link.id, { reason: cmd.reason, actor: cmd.actor });
  return applied(step, "revoked");
}
