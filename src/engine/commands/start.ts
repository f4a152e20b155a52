/**
 * start: creates a run of a deployed version with its input and enters the initial state.
 *
 * Locks: nothing yet exists to lock; the new run's id is unique, so a repeated start of the same
 * command id cannot create two runs (the second insert conflicts and the retry finds the first
 * outcome).
 * Refuses: `invalid-body` when the input does not match the workflow's parameters (the web
 * process checked it already; checked again here because job data is checked where processed).
 * Throws: RuntimeFault from the initial state's `enter` (the caller refuses with handler-failed).
 */
import { checkBody } from "../body.js";
import { RefusalCode, refuse } from "../refusals.js";
import { enterState } from "../run.js";
import { Step, type EntityRecord, type StepServices } from "../step.js";
import { toJson, type Value } from "../values.js";
import { loadVersion } from "../workflows.js";
import { applied, refused, type CommandResult } from "./result.js";
import type { Command } from "./types.js";
import type { CompiledWorkflow } from "../../lang/compiled.js";

/**
 * Checks run input against the workflow's parameters: scalars by type, entity-typed parameters as
 * objects of the entity's fields (missing optional fields become null). Returns the JSON input
 * and the tracked rows to create, or a refusal.
 */
export function checkInput(workflow: CompiledWorkflow, input: unknown) {
  const scalarParams = workflow.params.filter((p) => p.type.kind !== "entity");
  const entityParams = workflow.params.filter((p) => p.type.kind === "entity");
  const body = (input ?? {}) as Record<string, unknown>;
  const problems: string[] = [];
  const expects: Record<string, string> = {};
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return { ok: false as const, refusal: refuse(RefusalCode.InvalidBody, "The run input must be a JSON object of the workflow's parameters.") };
  }
  const declared = new Set(workflow.params.map((p) => p.name));
  for (const key of Object.keys(body)) if (!declared.has(key)) problems.push(`"${key}" is not a parameter of ${workflow.name}`);
  const scalars = checkBody(
    Object.fromEntries(scalarParams.filter((p) => Object.prototype.hasOwnProperty.call(body, p.name)).map((p) => [p.name, body[p.name]])),
    scalarParams,
  );
  if (!scalars.ok) {
    problems.push(...scalars.problems.map((p) => `"${p.name}" ${p.problem}`));
    Object.assign(expects, scalars.expects);
  }
  const entities: EntityRecord[] = [];
  for (const p of entityParams) {
    const entity = workflow.entities[(p.type as { name: string }).name];
    const fields = Object.entries(entity.fields).map(([name, f]) => ({ name, type: { ...f.type, optional: true } }));
    const raw = Object.prototype.hasOwnProperty.call(body, p.name) ? body[p.name] : undefined;
    expects[p.name] = `object (${entity.name})`;
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
      problems.push(`"${p.name}" must be an object of ${entity.name}'s fields`);
      continue;
    }
    const filled = Object.fromEntries(fields.map((f) => [f.name, (raw as Record<string, unknown>)[f.name] ?? null]));
    for (const key of Object.keys(raw)) if (!(key in entity.fields)) problems.push(`"${p.name}.${key}" is not a field of ${entity.name}`);
    const checked = checkBody(filled, fields);
    if (!checked.ok) {
      problems.push(...checked.problems.map((x) => `"${p.name}.${x.name}" ${x.problem}`));
      continue;
    }
    const data: Record<string, Value> = {};
    for (const [name, f] of Object.entries(entity.fields)) {
      const v = checked.args[name];
      if (v === null && !f.type.optional) problems.push(`"${p.name}.${name}" is required`);
      if (typeof v === "string" && f.maxLength !== null && v.length > f.maxLength) problems.push(`"${p.name}.${name}" takes at most ${f.maxLength} characters`);
      if (typeof v === "string" && f.minLength !== null && v.length < f.minLength) problems.push(`"${p.name}.${name}" takes at least ${f.minLength} characters`);
      data[name] = v;
    }
    entities.push({ name: p.name, entity: entity.name, data });
  }
  if (problems.length > 0) {
    return {
      ok: false as const,
      refusal: refuse(RefusalCode.InvalidBody, `The run input does not match ${workflow.name}'s parameters: ${problems.join("; ")}.`, {
        errors: problems,
        expects,
      }),
    };
  }
  const scalarJson = scalars.ok ? Object.fromEntries(Object.entries(scalars.args).map(([k, v]) => [k, toJson(v)])) : {};
  return { ok: true as const, input: scalarJson, entities };
}

export async function startRun(services: StepServices, cmd: Extract<Command, { kind: "start" }>): Promise<CommandResult> {
  const workflow = await loadVersion(services.tx, cmd.workflow, cmd.version);
  const checked = checkInput(workflow, cmd.input);
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
