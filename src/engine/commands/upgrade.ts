/**
 * What a deploy adds to the runs it upgrades (issue 19 item 3; language reference §10 "Upgrades add
 * what the new version adds"). When a live run's current state gained a `subscribe` or a timer in
 * the new version, the upgrade creates that slot — open, or waiting on its `After`; a fanned-out
 * slot gets one slot per element of its list, evaluated now; its deadline counted from the
 * upgrade — or starts that timer, its first firing counted from the upgrade; an added call slot
 * (v0.5) starts its call. `enter` is not run again. The run's history gets `upgraded` with `{ from, to, added: { slots, timers } }`.
 * A slot the run has open that gained timers (issue 43 item 3, timers on a slot) gets them for
 * each open element, their clock from the upgrade; `added.slotTimers` then lists
 * `{ alias, element, index }` (the key only when some were added).
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
import { slotTimerAlias, startSlotTimers, startTimer, TIMER_ALIAS_PREFIX } from "../lifecycles/timer.js";
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
  const slotTimers = (st: CompiledState, alias: string) => st.slots.find((s) => s.alias === alias)?.timers?.length ?? 0;
  return (
    after.slots.some((s) => !aliases.has(s.alias) || slotTimers(after, s.alias) > slotTimers(before, s.alias)) ||
    (after.timers?.length ?? 0) > (before.timers?.length ?? 0)
  );
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
): Promise<{ slots: string[]; timers: number[]; slotTimers?: { alias: string; element: number | null; index: number }[] } | null> {
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
  // issue 43 item 3: open slots (elements) of kept declarations lacking some of their timers
  const kept = state.slots.filter((d) => has(d.alias) && (d.timers?.length ?? 0) > 0);
  const lacking = kept.flatMap((d) =>
    step.slots
      .filter((s) => s.alias === d.alias && s.state === step.run.state && s.visit === step.run.visit && s.status === "open")
      .filter((s) => d.timers!.some((t) => !step.slots.some((r) => r.alias === slotTimerAlias(d.alias, t.index) && r.visit === s.visit && r.element === s.element)))
      .map((s) => ({ slot: s, timers: d.timers! })),
  );
  if (slots.length === 0 && timers.length === 0 && lacking.length === 0) return null;
  step.run.version = to;
  const created = slots.flatMap((decl) => createSlot(step, step.run.state, decl));
  openSatisfiedSlots(step);
  runEachBlocks(step, created); // v0.4: an added fanned-out slot's `each` runs in the upgrade's step
  for (const timer of timers) startTimer(step, timer);
  const slotTimers = lacking.flatMap(({ slot, timers: ts }) => startSlotTimers(step, slot, ts).map((index) => ({ alias: slot.alias, element: slot.element, index })));
  // v0.5: a call slot the upgrade opened starts its call, as one opened by a step does (apply.ts).
  // The deploy's process queues no job: the call row is due at once, and the sweeper queues
  // pending calls no worker took (calls/overdue.ts), so its first attempt follows within a sweep.
  startOpenedCalls(step);
  const added = { slots: slots.map((s) => s.alias), timers: timers.map((t) => t.index), ...(slotTimers.length > 0 ? { slotTimers } : {}) };
  step.addHistory("upgraded", { from, to, added });
  const run = { id: step.run.id, workflow: step.run.workflowName, version: to, state: step.run.state, status: step.run.status };
  await step.flush({ id: commandId, kind: "upgrade", outcome: { ok: true, status: "upgraded", run } });
  return added;
}
