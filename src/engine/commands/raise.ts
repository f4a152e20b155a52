/**
 * raise: a signed-in principal raises a slot's event through the ordinary path
 * (`POST /api/runs/{id}/slots/{alias}/events`; language reference §7, first column).
 *
 * Locks: the run row (held by the caller).
 * Refuses, changing nothing, in this order:
 *   404 not-found — no slot of that alias (and element) in the run's current state;
 *   409 slot-closed — the run finished, or the slot was completed, cancelled, expired or dropped
 *       (a passed deadline counts even before the sweeper runs);
 *   409 slot-not-open — the slot waits on `After`;
 *   403 not-a-candidate — `Candidates` admits no matcher for the principal;
 *   403 authorize-denied — an `[Authorize]` predicate of the event is false;
 *   422 invalid-body — the arguments do not match the event;
 *   409 requires-failed — `Requires` does not hold.
 * Throws RuntimeFault from a predicate or the handler (the caller refuses with handler-failed).
 */
import { checkBody } from "../body.js";
import { admits, evaluate, Scope, type Principal } from "../interpreter.js";
import { RefusalCode, refuse } from "../refusals.js";
import { acceptEvent } from "../run.js";
import { slotScope, slotsOf } from "../slot.js";
import type { Step } from "../step.js";
import { applied, refused, type CommandResult } from "./result.js";
import type { Command } from "./types.js";

export async function raise(step: Step, cmd: Extract<Command, { kind: "raise" }>): Promise<CommandResult> {
  if (step.run.status === "finished") return refused(refuse(RefusalCode.SlotClosed, "The run has finished."));
  const candidates = slotsOf(step, cmd.alias);
  const decl = step.workflow.states[step.run.state]?.slots.find((s) => s.alias === cmd.alias);
  if (!decl) return refused(refuse(RefusalCode.NotFound, `The run's current state "${step.run.state}" has no slot "${cmd.alias}".`));
  if (decl.forEach && cmd.element === null) {
    return refused(refuse(RefusalCode.NotFound, `Slot "${cmd.alias}" is fanned out: name the element with ?element=N.`));
  }
  const slot = candidates.find((s) => s.element === (decl.forEach ? cmd.element : null));
  if (!slot) return refused(refuse(RefusalCode.NotFound, `Slot "${cmd.alias}" has no element ${cmd.element}.`));
  if (slot.status === "waiting") return refused(refuse(RefusalCode.SlotNotOpen, `Slot "${cmd.alias}" waits on ${decl.after.join(", ")}.`));
  if (slot.status !== "open" || (slot.deadline && slot.deadline.getTime() <= step.now.getTime())) {
    const status = slot.status === "open" ? "expired" : slot.status;
    return refused(refuse(RefusalCode.SlotClosed, `Slot "${cmd.alias}" is ${status}.`, { slotStatus: status }));
  }
  const principal: Principal = { kind: "principal", ...cmd.principal };
  const base = slotScope(step, slot);
  if (decl.candidates) {
    const matchers = decl.candidates.map((m) => evaluate(step, base, m));
    if (!admits(matchers, principal)) return refused(refuse(RefusalCode.NotACandidate, `The principal is not a candidate for slot "${cmd.alias}".`));
  }
  const event = step.workflow.events[slot.event];
  const checked = checkBody(cmd.args, event.params);
  if (!checked.ok) return refused(refuse(RefusalCode.InvalidBody, checked.detail, { expects: checked.expects, errors: checked.problems }));
  for (const attr of event.authorize) {
    const scope = Scope.of({ ...checked.args, [attr.param.name]: principal });
    if (!evaluate(step, scope, attr.body)) return refused(refuse(RefusalCode.AuthorizeDenied, `The principal is not authorized to raise ${event.name}.`));
  }
  const scope = slotScope(step, slot, Scope.of(checked.args));
  if (decl.requires && !evaluate(step, scope, decl.requires)) {
    return refused(refuse(RefusalCode.RequiresFailed, `The Requires condition of slot "${cmd.alias}" does not hold.`));
  }
  acceptEvent(step, slot, checked.args, cmd.args, { via: "raise", principal: principal.id });
  return applied(step, "completed");
}
