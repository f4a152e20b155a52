/**
 * What a deploy adds to the runs it upgrades (issue 19 item 3; language reference §10 "Upgrades add
 * what the new version adds"). When a live run's current state gained a `subscribe` or a timer in
 * the new version, the upgrade creates that slot — open, or waiting on its `After`; a fanned-out
 * slot gets one slot per element of its list, evaluated now; its deadline counted from the
 * upgrade — or starts that timer, its first firing counted from the upgrade; an added call slot
 * (v0.5) starts its call. `enter` is not run again. The run's history gets `upgraded` with `{ from, to, added: { slots, timers } }`.
 *
 * Each such run is changed as one step (step.ts) inside the deploy's transaction, so the deploy and
 * every addition commit together or not at all; the step's outcome record has the id
 * `upgrade-<run>-<version>`. A runtime error while adding (a `for each` over null, a `Deadline`
 * that fails) refuses the whole deploy, naming the run (deploy.ts).
 */
import type { Limits } from "../../config.js";
import type { Tx } from "../../db.js";
import type { CompiledState, CompiledWorkflow } from "../../lang/compiled.js";
import type { Sealer } from "../sealing/seal.js";
import { createSlot, openSatisfiedSlots, runEachBlocks, startOpenedCalls } from "../lifecycles/slot.js";
import { readStep } from "../sql/step-read.js";
import { Step } from "../step.js";
import { startTimer, TIMER_ALIAS_PREFIX } from "../lifecycles/timer.js";
import { LIFECYCLES } from "../lifecycles/lifecycles.js";

/** What an upgrade needs to change runs as steps (the same services a worker's step has). */
export interface UpgradeServices {
  sealer: Sealer;
  baseUrl: string;
  limits?: Limits;
}

/**
 * True when state `name` of `next` declares a slot alias or a timer that `prev`'s state of that
 * name lacks — only runs in such states can need additions (a cheap test before any run is read).
 */
export function stateGains(prev: CompiledWorkflow, next: CompiledWorkflow, name: string): boolean {
  const before: CompiledState | undefined = prev.states[name];
  const after = next.states[name];
  if (!after || after.terminal) return false;
  if (!before) return true;
  const aliases = new Set(before.slots.map((s) => s.alias));
  return after.slots.some((s) => !aliases.has(s.alias)) || (after.timers?.length ?? 0) > (before.timers?.length ?? 0);
}

/**
 * Adds to live run `runId` (locked by the caller's transaction) what its current state has in
 * `workflow` (version `to`) and the run lacks in its current visit. Returns what was added, or null
 * when nothing was (the caller then records a plain `upgraded`). Throws RuntimeFault.
 */
export async function addWhatTheUpgradeAdds(
  tx: Tx,
  services: UpgradeServices,
  workflow: CompiledWorkflow,
  runId: string,
  from: number,
  to: number,
): Promise<{ slots: string[]; timers: number[] } | null> {
  const commandId = `upgrade-${runId}-${to}`;
  const read = await readStep(tx, runId, commandId, null);
  if (!read.run) return null;
  const step = Step.fromRead({ tx, ...services, lifecycles: LIFECYCLES }, workflow, read);
  if (step.run.status !== "running") return null;
  const state = workflow.states[step.run.state];
  if (!state || state.terminal) return null;
  const has = (alias: string) => step.slots.some((s) => s.alias === alias && s.visit === step.run.visit);
  const slots = state.slots.filter((d) => !has(d.alias));
  const timers = (state.timers ?? []).filter((t) => !has(`${TIMER_ALIAS_PREFIX}${t.index}`));
  if (slots.length === 0 && timers.length === 0) return null;
  step.run.version = to;
  const created = slots.flatMap((decl) => createSlot(step, step.run.state, decl));
  openSatisfiedSlots(step);
  runEachBlocks(step, created); // v0.4: an added fanned-out slot's `each` runs in the upgrade's step
  for (const timer of timers) startTimer(step, timer);
  // v0.5: a call slot the upgrade opened starts its call, as one opened by a step does (apply.ts).
  // The deploy's process queues no job: the call row is due at once, and the sweeper queues
  // pending calls no worker took (calls/overdue.ts), so its first attempt follows within a sweep.
  startOpenedCalls(step);
  const added = { slots: slots.map((s) => s.alias), timers: timers.map((t) => t.index) };
  step.addHistory("upgraded", { from, to, added });
  const run = { id: step.run.id, workflow: step.run.workflowName, version: to, state: step.run.state, status: step.run.status };
  await step.flush({ id: commandId, kind: "upgrade", outcome: { ok: true, status: "upgraded", run } });
  return added;
}
