/**
 * The run lifecycle. This module alone writes `runs.state`, `runs.status`, `runs.visit` and
 * `runs.milestones`.
 *
 *   (start) --> running in the initial state
 *   running --arm to a state--> running in that state (a new visit: its slots are created anew)
 *   running --arm to a terminal state--> finished (after the terminal state's `enter` runs)
 *   running --an operator cancels it (issue 23)--> cancelled (its live slots cancelled, no handler runs)
 *
 * Entering a state (language reference "Handlers and execution"): create its slots (open, or
 * waiting on `After`), start its timers (timer.ts), run its `enter` blocks — whose arms, when one
 * holds, move the run on at once (issue 19) — then its milestones. Leaving a state cancels every
 * slot of it not completed, and its timers.
 */
import type { Handler } from "../../lang/ast.js";
import { evaluate, execute, executeIn, RuntimeFault, Scope } from "../../lang/runtime/interpreter.js";
import { cancelStateSlots, completeSlot, createSlotsForState, openSatisfiedSlots, runEachBlocks, slotScope } from "./slot.js";
import type { SlotRecord, Step } from "../step.js";
import { cancelRunTimers, startStateTimers } from "./timer.js";
import type { Value } from "../../lang/runtime/values.js";

/**
 * The maximum number of state entries in one step, so that a cycle of arms (routing on entry
 * included) cannot spin forever: more is a runtime error (language reference §10: 100).
 */
export const MAX_ENTRIES_PER_STEP = 100;

/** Enters `stateName` as a new visit (the first state of a new run included). */
export function enterState(step: Step, stateName: string, first = false): void {
  const state = step.workflow.states[stateName];
  if (!state) throw new RuntimeFault(`state "${stateName}" does not exist in this version`);
  if (!first) step.run.visit += 1;
  step.run.state = stateName;
  step.run.milestones = [];
  step.addHistory("state-entered", { state: stateName, visit: step.run.visit });
  const created = createSlotsForState(step, stateName);
  if (!state.terminal) startStateTimers(step, stateName);
  if (state.enterArms && state.enter.length > 0) {
    // Routing on entry: the block that has arms is the state's only `enter` (checker, FLOW342).
    // `each` blocks (v0.4) run after the statements, before the arms move the run on.
    runHandler(step, { statements: state.enter[0], arms: state.enterArms, range: state.enterArms[0].range }, stepScope(), () => runEachBlocks(step, created));
    return;
  }
  for (const body of state.enter) execute(step, stepScope(), body);
  runEachBlocks(step, created);
  if (state.terminal) {
    step.run.status = "finished";
    step.run.finishedAt = step.now;
    step.addHistory("run-finished", { state: stateName });
    // v0.5 Results: a workflow that declares `returns` and finishes without a result is recorded
    // (a parent's call of it fails on this: "child finished in state X without a result")
    if (step.workflow.returns && !step.run.result) step.addHistory("result-missing", { state: stateName, returns: step.workflow.returns });
    return;
  }
  afterHandler(step);
}

/** Handler bodies outside slot handlers see workflow parameters and aliases only. */
function stepScope(): Scope {
  return new Scope();
}

/**
 * Runs a handler (`on x(...)` or `on x.expired`): its statements, then the first arm whose
 * condition holds (or `default`), then moves to the arm's target. With no arm taken the run stays:
 * slots whose `After` is now satisfied open, and milestones are evaluated.
 */
export function runHandler(step: Step, handler: Handler, scope: Scope, afterStatements?: () => void): void {
  const local = scope.child();
  executeIn(step, local, handler.statements);
  afterStatements?.();
  for (const arm of handler.arms) {
    if (arm.kind === "when" && !evaluate(step, local, arm.condition!)) continue;
    if (arm.body) execute(step, local, arm.body);
    transition(step, arm.target.name);
    return;
  }
  afterHandler(step);
}

/**
 * An event accepted on `slot` (language reference "An event completes slot x"): the slot completes
 * with the arguments (`argsJson`, stored), then `on x(...)` runs with the runtime `args` bound to
 * its names by position — or, with no handler, waiting slots open and milestones are evaluated.
 * `answeredBy` (v0.4 "Who answered") is stored on the slot and recorded in the history's `event`
 * entry beside the older `via` words: `{via: "link"}` for a deposit; `{via: "raise", principal}`
 * for a principal or a Slack user (the raise path). Never a token.
 */
export function acceptEvent(step: Step, slot: SlotRecord, args: Record<string, Value>, argsJson: Record<string, unknown>, answeredBy: NonNullable<SlotRecord["answeredBy"]>): void {
  completeSlot(step, slot, argsJson, answeredBy);
  const via = answeredBy.via === "link" ? { via: "link" } : answeredBy.via === "call" ? { via: "call" } : { via: "raise", principal: answeredBy.id };
  step.addHistory("event", { alias: slot.alias, element: slot.element, ...via, answeredBy });
  const on = step.workflow.states[slot.state].on[slot.alias];
  if (!on) return afterHandler(step);
  const event = step.workflow.events[slot.event];
  const bound = Object.fromEntries(on.params.map((name, i) => [name, args[event.params[i].name]]));
  runHandler(step, on.handler, slotScope(step, slot, Scope.of(bound)));
}

/** Leaves the current state and enters `target`. */
export function transition(step: Step, target: string): void {
  if (++step.entries > MAX_ENTRIES_PER_STEP) throw new RuntimeFault(`more than ${MAX_ENTRIES_PER_STEP} state entries in one step`);
  const next = step.workflow.states[target];
  if (!next) throw new RuntimeFault(`state "${target}" does not exist in this version`);
  cancelStateSlots(step, next.terminal ? "run-finished" : "cancelled");
  cancelRunTimers(step);
  enterState(step, target);
}

/**
 * After every handler: open slots whose predecessors completed, then fire milestones of the
 * current state whose condition holds, each once per visit; repeat while a milestone fired, since
 * its body may satisfy another.
 */
export function afterHandler(step: Step): void {
  const state = step.workflow.states[step.run.state];
  for (;;) {
    openSatisfiedSlots(step);
    const due = state.milestones.find((m) => !step.run.milestones.includes(m.name) && Boolean(evaluate(step, stepScope(), m.condition)));
    if (!due) return;
    step.run.milestones = [...step.run.milestones, due.name];
    step.addHistory("milestone", { name: due.name });
    execute(step, stepScope(), due.body);
  }
}

/**
 * An operator ends the run (issue 23; commands/cancel.ts): every open or waiting slot of the
 * current state is cancelled and its live link dies with reason "run-cancelled", and every
 * scheduled timer (issue 19) is cancelled; no workflow code runs. The history records `run-cancelled` with the reason and the actor. The caller has checked
 * that the run is running.
 */
export function cancelRun(step: Step, reason: string, actor: string): void {
  // v0.5 child runs: the reason a cancelled run's children are given (lifecycles/call.ts), and who
  // cancelled it (a child cancelled by its parent does not answer the parent: commands/child.ts)
  step.cancelReason = reason;
  step.cancelActor = actor;
  cancelStateSlots(step, "run-cancelled");
  cancelRunTimers(step);
  step.run.status = "cancelled";
  step.run.finishedAt = step.now;
  step.addHistory("run-cancelled", { state: step.run.state, reason, actor });
}
