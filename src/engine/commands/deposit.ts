/**
 * deposit: a holder of a callback link completes its slot (callback-links spec §3 "Successful
 * deposit", §5, §7; HTTP API "The callback endpoint").
 *
 * Locks: the run row (held by the caller). The link was read under that lock (`step.depositLink`), so of N concurrent
 * deposits of one link exactly one finds it live; the others find it burned.
 * Refuses, changing nothing:
 *   422 idempotency-key-reused — the link was burned by a request with this Idempotency-Key and
 *       another body (a retry with the same body gets "completed" again, applying nothing);
 *   410 link-burned / link-retired / link-dead (reason: completed, cancelled, expired, dropped,
 *       run-finished) — a deadline that has passed counts even if the sweeper has not run yet;
 *   409 slot-not-open — the slot waits on `After` (the link stays live);
 *   409 requires-failed — `Requires` does not hold (the link stays live; worded by its `else`, if any);
 *   422 invalid-body — job data that does not match the event (the web process checked it first), or
 *       breaks a constraint of the minting version's event (v0.5; `today` is the step's day).
 * Bypasses `Candidates` and `[Authorize]`: a deposit has no principal (spec §1 "Bypassed gates").
 * Who answered (v0.4): the completed slot records `{via: "link"}` (never the token); v0.5 adds
 * `element`, `recipient` (whom slotflow mailed or forwarded the link to) and `forwardedBy`.
 * Throws RuntimeFault from the handler; the caller refuses with handler-failed, the link stays live.
 * A completion carries the slot's receipt (commands/receipt.ts; v0.4 "Receipts"); a retry under the
 * burning request's Idempotency-Key gets the same receipt again, read from the slot.
 */
import { checkBody } from "../values/body.js";
import { Scope } from "../../lang/runtime/interpreter.js";
import { burnLink, deadDetail, refusalForEndedLink } from "../lifecycles/link.js";
import { REQUIRES_GENERIC_LINK, RefusalCode, refuse } from "../refusals.js";
import { acceptEvent } from "../lifecycles/run.js";
import { slotScope } from "../lifecycles/slot.js";
import type { Step } from "../step.js";
import { eventAtVersion, translateArgs } from "../versions/versioning.js";
import { replay } from "../values/idempotency.js";
import { requiresRefusal } from "./requires.js";
import { issueReceipt } from "./receipt.js";
import { receiptOfLinkSlot } from "../sql/receipts.js";
import { linkEvidence } from "../sql/link-recipient.js";
import { applied, refused, summary, type CommandResult } from "./result.js";
import type { Command } from "./types.js";

export async function deposit(step: Step, cmd: Extract<Command, { kind: "deposit" }>): Promise<CommandResult> {
  const link = step.depositLink;
  if (!link || link.runId !== step.run.id) return refused(refuse(RefusalCode.LinkNotFound, "No link matches this URL."));
  if (link.status === "burned") {
    // A retry of the request that burned the link, under its Idempotency-Key: its outcome, again.
    const again = replay(link, cmd.idempotency);
    if (again === "completed") {
      // the same receipt as the first time (kept on the slot, which may belong to an earlier visit)
      const receipt = await receiptOfLinkSlot(step.services.tx, link.runId, link.id);
      return { outcome: { ok: true, status: "completed", run: summary(step), ...(receipt ? { receipt } : {}) }, step: null };
    }
    if (again) return refused(again);
  }
  const ended = refusalForEndedLink(link);
  if (ended) return refused(ended);
  if (step.run.status === "finished") return refused(refuse(RefusalCode.LinkDead, deadDetail("run-finished"), { reason: "run-finished" }));
  const slot = step.slots.find((s) => s.id === link.slotId);
  if (!slot) return refused(refuse(RefusalCode.LinkDead, deadDetail("cancelled"), { reason: "cancelled" }));
  if (slot.status === "waiting") {
    return refused(refuse(RefusalCode.SlotNotOpen, "This response is not open yet: it waits for earlier steps of the workflow. The link stays valid; try again later."));
  }
  if (slot.deadline && slot.deadline.getTime() <= step.now.getTime()) {
    return refused(refuse(RefusalCode.LinkDead, deadDetail("expired"), { reason: "expired" }));
  }
  // v0.5 constraints (issue 43): the body keeps the rules of the version that minted the link (its
  // holder was shown those), checked again here under the lock with the step's clock (`today`);
  // the translated arguments are then checked against the current event's names and types only.
  const current = link.mintedVersion === step.run.version;
  if (!current) {
    const minted = await eventAtVersion(step, slot.state, slot.alias, link.mintedVersion);
    const first = minted ? checkBody(cmd.args, minted.params, { now: step.now }) : null;
    if (first && !first.ok) return refused(refuse(RefusalCode.InvalidBody, first.detail, { expects: first.expects, errors: first.problems }));
  }
  const translated = await translateArgs(step, slot.alias, slot.state, link.mintedVersion, cmd.args);
  if (!translated.ok) return refused(translated.refusal);
  const event = step.workflow.events[slot.event];
  const checked = checkBody(translated.args, event.params, { now: step.now, rules: current });
  if (!checked.ok) return refused(refuse(RefusalCode.InvalidBody, checked.detail, { expects: checked.expects, errors: checked.problems }));
  const decl = step.workflow.states[slot.state].slots.find((s) => s.alias === slot.alias)!;
  const scope = slotScope(step, slot, Scope.of(checked.args));
  const requires = requiresRefusal(step, scope, decl, REQUIRES_GENERIC_LINK);
  if (requires) return refused(requires);
  // Who answered (v0.4), with the evidence of v0.5 (issue 43 item 2): the element, whom slotflow
  // sent the link to, and who forwarded it (read before the burn: the history as committed).
  const evidence = await linkEvidence(step.services.tx, step.run.id, link.id);
  burnLink(step, slot, link.id, cmd.idempotency ?? null);
  acceptEvent(step, slot, checked.args, translated.args, { via: "link", ...(slot.element !== null ? { element: slot.element } : {}), ...evidence });
  // The receipt is signed on the body as the web accepted it (cmd.args: the event's arguments in JSON form).
  const receipt = await issueReceipt(step, slot, cmd.args);
  const result = applied(step, "completed");
  if (receipt && result.outcome.ok) result.outcome.receipt = receipt;
  return result;
}
