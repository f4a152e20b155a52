/**
 * start: creates a run of a deployed version with its input and enters the initial state.
 *
 * Locks: nothing yet exists to lock; the new run's id is unique, so a repeated start of the same
 * command id cannot create two runs (the second insert conflicts and the retry finds the first
 * outcome).
 * Refuses: `invalid-body` when the input does not match the workflow's parameters, and
 * `payload-too-large` over the input size limit (input.ts; the web process checked it already,
 * checked again here because job data is checked where processed).
 * Throws: RuntimeFault from the initial state's `enter` (the caller refuses with handler-failed).
 */
import { DEFAULT_LIMITS } from "../../config.js";
import { checkInput } from "../values/input.js";
import { enterState } from "../lifecycles/run.js";
import { Step, type StepServices } from "../step.js";
import { loadVersion } from "../versions/workflows.js";
import { applied, refused, type CommandResult } from "./result.js";
import type { Command } from "./types.js";

export async function startRun(services: StepServices, cmd: Extract<Command, { kind: "start" }>): Promise<CommandResult> {
  const workflow = await loadVersion(services.tx, cmd.workflow, cmd.version);
  const checked = checkInput(workflow, cmd.input, services.limits ?? DEFAULT_LIMITS);
  if (!checked.ok) return refused(checked.refusal);
  const step = new Step(
    services,
    workflow,
    { id: cmd.runId, workflowName: workflow.name, version: cmd.version, state: workflow.initialState, status: "running", visit: 1, input: checked.input, milestones: [], finishedAt: null },
    [],
    checked.entities,
    true,
  );
  step.addHistory("run-started", { version: cmd.version });
  enterState(step, workflow.initialState, true);
  return applied(step, "started");
}
