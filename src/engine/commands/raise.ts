/**
 * raise: a signed-in principal raises a slot's event through the ordinary path
 * (`POST /api/runs/{id}/slots/{alias}/events`; language reference §7, first column).
 *
 * Locks: the run row (held by the caller).
 * Refuses, changing nothing, in this order:
 *   404 not-found — no slot of that alias (and element) in the run's current state (an unknown
 *       alias: NO_SUCH_RUN_OR_SLOT, the words of an unknown run, naming no state; issue 28 item 7);
 *   409 slot-closed — the run finished, or the slot was completed, cancelled, expired or dropped
 *       (a passed deadline counts even before the sweeper runs);
 *   409 slot-not-open — the slot waits on `After`;
 *   403 not-a-candidate — `Candidates` admits no matcher for the principal, or the slot has no
 *       `Candidates` in a version compiled since v0.5: it is answered only through its link
 *       (lang/slot-access.ts; issue 38 M2);
 *   409 already-answered-by-you — the principal completed another element of this fanned-out slot
 *       (v0.4 Many responders: distinct responders);
 *   403 authorize-denied — an `[Authorize]` predicate of the event is false;
 *   422 invalid-body — the arguments do not match the event;
 *   409 requires-failed — `Requires` does not hold (worded by its `else`, if any; requires.ts).
 * Throws RuntimeFault from a predicate or the handler (the caller refuses with handler-failed).
 * Who answered (v0.4): the completed slot records `{via: cmd.via ?? "principal", id, email}` of the
 * principal (`via: "slack"` for an answer given inside Slack), in `slots.answered_by` and in the
 * history's `event` entry.
 * Everything before the body (`checkBeforeBody`) is also run read-only by the web process's early
 * check (prepare.ts), so a non-candidate is refused 403 before the body says anything (issue 28 item 7).
 */
import { checkBody } from "../values/body.js";
import { Scope, type Principal } from "../../lang/runtime/interpreter.js";
import { NO_SUCH_RUN_OR_SLOT, RefusalCode, refuse, requiresGenericRaise, type Refusal } from "../refusals.js";
import { acceptEvent } from "../lifecycles/run.js";
import { slotScope, slotsOf } from "../lifecycles/slot.js";
import type { SlotRecord, Step } from "../step.js";
import type { CompiledSlot } from "../../lang/compiled.js";
import { authorizeRefusal, candidateGate } from "./gate.js";
import { requiresRefusal } from "./requires.js";
import { applied, refused, type CommandResult } from "./result.js";
import type { AnsweredBy, Command } from "./types.js";

/**
 * The checks of a raise that come before its body, in raise's order (404, 409 slot-closed /
 * slot-not-open, 403 not-a-candidate): the refusal, or the slot and its declaration. Reads the step
 * only. Throws RuntimeFault from a `Candidates` expression.
 */
export function checkBeforeBody(
  step: Step,
  alias: string,
  element: number | null,
  principal: Principal,
): { ok: false; refusal: Refusal } | { ok: true; slot: SlotRecord; decl: CompiledSlot } {
  const no = (refusal: Refusal) => ({ ok: false as const, refusal });
  if (step.run.status === "finished") return no(refuse(RefusalCode.SlotClosed, "The run has finished."));
  const candidates = slotsOf(step, alias);
  const decl = step.workflow.states[step.run.state]?.slots.find((s) => s.alias === alias);
  if (!decl) return no(refuse(RefusalCode.NotFound, NO_SUCH_RUN_OR_SLOT));
  if (decl.forEach && element === null) {
    return no(refuse(RefusalCode.NotFound, `Slot "${alias}" is fanned out: name the element with ?element=N.`));
  }
  const slot = candidates.find((s) => s.element === (decl.forEach ? element : null));
  if (!slot) return no(refuse(RefusalCode.NotFound, `Slot "${alias}" has no element ${element}.`));
  if (slot.status === "waiting") return no(refuse(RefusalCode.SlotNotOpen, `Slot "${alias}" waits on ${decl.after.join(", ")}.`));
  if (slot.status !== "open" || (slot.deadline && slot.deadline.getTime() <= step.now.getTime())) {
    const status = slot.status === "open" ? "expired" : slot.status;
    return no(refuse(RefusalCode.SlotClosed, `Slot "${alias}" is ${status}.`, { slotStatus: status }));
  }
  const gate = candidateGate(step, decl, slot, principal); // the one Candidates gate (gate.ts)
  if (gate.refusal) return no(gate.refusal);
  // v0.4 Many responders: a principal completes at most one element of a fanned-out slot.
  const mine = slot.element === null ? undefined : candidates.find((s) => s.status === "completed" && answeredByPrincipal(s, principal.id));
  if (mine) {
    return no(refuse(RefusalCode.AlreadyAnsweredByYou, `You already answered element ${mine.element} of slot "${alias}": each element needs a different responder.`, { element: mine.element }));
  }
  return { ok: true, slot, decl };
}

/** True when `slot` was completed by the principal (or Slack user) `id` (slots.answered_by). */
function answeredByPrincipal(slot: SlotRecord, id: string): boolean {
  const by = slot.answeredBy;
  return by !== null && (by.via === "principal" || by.via === "slack") && by.id === id;
}

export async function raise(step: Step, cmd: Extract<Command, { kind: "raise" }>): Promise<CommandResult> {
  const principal: Principal = { kind: "principal", ...cmd.principal };
  const before = checkBeforeBody(step, cmd.alias, cmd.element, principal);
  if (!before.ok) return refused(before.refusal);
  const { slot, decl } = before;
  const event = step.workflow.events[slot.event];
  const checked = checkBody(cmd.args, event.params, { now: step.now });
  if (!checked.ok) return refused(refuse(RefusalCode.InvalidBody, checked.detail, { expects: checked.expects, errors: checked.problems }));
  const denied = authorizeRefusal(step, event, principal, checked.args); // the one [Authorize] gate (gate.ts)
  if (denied) return refused(denied);
  const scope = slotScope(step, slot, Scope.of(checked.args));
  const requires = requiresRefusal(step, scope, decl, requiresGenericRaise(cmd.alias));
  if (requires) return refused(requires);
  // Who answered (v0.4): a principal of the web (task page, API) or a Slack user, by the command's `via`.
  const answeredBy: AnsweredBy = { via: cmd.via ?? "principal", id: cmd.principal.id, email: cmd.principal.email };
  acceptEvent(step, slot, checked.args, cmd.args, answeredBy);
  return applied(step, "completed");
}
