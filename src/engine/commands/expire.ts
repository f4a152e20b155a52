/**
 * expire: a slot whose deadline has passed becomes expired, its link dies, and `on x.expired`
 * runs if the state declares it (language reference "Expiry"). Enqueued by the sweeper.
 *
 * Locks: the run row (held by the caller).
 * Skips (outcome `skipped`, nothing changed) when the slot is no longer open in the run's current
 * visit or its deadline has not passed — the sweeper may lag or repeat itself.
 * Throws RuntimeFault from the handler (the caller records an incident; the sweeper retries later).
 *
 * A timer row (timer.ts) is fired the same way: the same skips, then its handler runs (issue 19);
 * a timer on a slot (issue 43 item 3) runs in that element's scope (slot.ts `timerScope`).
 */
import { afterHandler, runHandler } from "../lifecycles/run.js";
import { expireSlot, slotScope, timerScope } from "../lifecycles/slot.js";
import { fireTimer, isTimerAlias } from "../lifecycles/timer.js";
import type { Step } from "../step.js";
import { applied, summary, type CommandResult } from "./result.js";
import type { Command } from "./types.js";

export async function expire(step: Step, cmd: Extract<Command, { kind: "expire" }>): Promise<CommandResult> {
  const slot = step.slots.find((s) => s.id === cmd.slotId);
  if (step.run.status !== "running" || !slot || slot.status !== "open" || !slot.deadline || slot.deadline.getTime() > step.now.getTime()) {
    return { outcome: { ok: true, status: "skipped", run: summary(step) }, step: null };
  }
  if (isTimerAlias(slot.alias)) {
    const timer = fireTimer(step, slot);
    if (timer) runHandler(step, timer.handler, timerScope(step, slot));
    else afterHandler(step);
    return applied(step, "fired");
  }
  expireSlot(step, slot);
  const handler = step.workflow.states[slot.state].expired[slot.alias];
  if (handler) runHandler(step, handler, slotScope(step, slot));
  else afterHandler(step);
  return applied(step, "expired");
}
