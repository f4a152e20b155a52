/**
 * What a command function returns to `applyCommand`: its outcome, and the step to flush when it
 * succeeded (null for a refusal, which changes nothing).
 */
import type { Refusal } from "../refusals.js";
import type { Step } from "../step.js";
import type { Outcome, RunSummary } from "./types.js";

export interface CommandResult {
  outcome: Outcome;
  step: Step | null;
}

/** A refusal: nothing to flush. */
export function refused(refusal: Refusal): CommandResult {
  return { outcome: { ok: false, refusal }, step: null };
}

/** A success: the step to flush and the run as it stands after it. */
export function applied(step: Step, status: "started" | "completed" | "expired" | "fired" | "revoked" | "cancelled" | "forwarded" | "retried" | "failed"): CommandResult {
  return { outcome: { ok: true, status, run: summary(step) }, step };
}

export function summary(step: Step): RunSummary {
  const r = step.run;
  return { id: r.id, workflow: r.workflowName, version: r.version, state: r.state, status: r.status };
}
