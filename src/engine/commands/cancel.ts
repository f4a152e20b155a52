/**
 * cancel: an operator ends a running run (issue 23; `POST /api/runs/{id}/cancel`,
 * `slotflow cancel RUN --reason TEXT`, the console's "Cancel run").
 *
 * Locks: the run row (held by the caller), so a cancel and a deposit (or raise, expiry, revoke) of
 * the same run apply one after the other: whichever takes the lock first wins. A deposit that comes
 * second finds its link dead (410 link-dead, reason "run-cancelled"); a cancel that comes second
 * finds the run finished (409 run-finished) when the deposit ended it, or cancels what is left.
 * Refuses, changing nothing:
 *   409 run-finished — the run already ended (finished, or cancelled before).
 * Applies, in one transaction:
 *   1. the run: status "cancelled", ended now; every open or waiting slot of its current state
 *      cancelled; each live link dead with reason "run-cancelled" (run.ts `cancelRun`, slot.ts,
 *      link.ts); history `run-cancelled` with the reason and the actor. No workflow code runs.
 *   2. the run's end effects outside the step model, each in one place below:
 *      - unsent mail of the run withdrawn (engine/sql/outbox-status.ts);
 *      - pending webhook and chat deliveries of the run ended (outbox/deliveries.ts, issue 18).
 *   Pending timers (issue 19) are rows of the run's step model, cancelled by `cancelRun`.
 */
import { withdrawPendingDeliveries } from "../sql/delivery-status.js";
import { withdrawPendingMessages } from "../sql/outbox-status.js";
import { RefusalCode, refuse } from "../refusals.js";
import { cancelRun } from "../lifecycles/run.js";
import type { Step } from "../step.js";
import { applied, refused, type CommandResult } from "./result.js";
import type { Command } from "./types.js";

export async function cancel(step: Step, cmd: Extract<Command, { kind: "cancel" }>): Promise<CommandResult> {
  if (step.run.status !== "running") {
    return refused(refuse(RefusalCode.RunFinished, `The run has already ended (${step.run.status}); there is nothing to cancel.`, { runStatus: step.run.status }));
  }
  cancelRun(step, cmd.reason, cmd.actor);
  await endEffectsOfCancelledRun(step);
  return applied(step, "cancelled");
}

/**
 * What a cancelled run stops outside its own rows; runs in the cancel's transaction (the run locked).
 * Add here each new kind of pending work a run can own (timers of issue 19, messages of issue 18).
 */
async function endEffectsOfCancelledRun(step: Step): Promise<void> {
  const tx = step.services.tx;
  const withdrawn = (await withdrawPendingMessages(tx, step.run.id)) + (await withdrawPendingDeliveries(tx, step.run.id));
  if (withdrawn > 0) step.addHistory("messages-withdrawn", { count: withdrawn, reason: "run-cancelled" });
}
