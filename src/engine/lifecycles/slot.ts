/**
 * The slot lifecycle (language reference "Handlers and execution"). This module alone writes
 * `slots.status`.
 *
 *   waiting --all After predecessors completed--> open        (the deadline clock starts)
 *   open    --event accepted--> completed
 *   open    --deadline passed--> expired
 *   waiting/open --state left--> cancelled
 *   waiting/open --`drop slot x`--> dropped
 *
 * Every close records why the slot's live link dies (link.ts records it in the history now and
 * writes it at flush).
 */
import { randomUUID } from "node:crypto";
import { DEFAULT_LIMITS } from "../../config.js";
import type { CompiledSlot } from "../../lang/compiled.js";
import { evaluate, RuntimeFault, Scope } from "../interpreter.js";
import { killLiveLink } from "./link.js";
import type { LinkEndReason } from "../refusals.js";
import type { SlotRecord, SlotStatus, Step } from "../step.js";
import { isTimerAlias } from "./timer.js";
import { Duration, type Value } from "../values/values.js";

export function isSlotLive(slot: SlotRecord): boolean {
  return slot.status === "open" || slot.status === "waiting";
}

/** The compiled declaration of a slot record. */
export function declOf(step: Step, slot: SlotRecord): CompiledSlot {
  const decl = step.workflow.states[slot.state]?.slots.find((s) => s.alias === slot.alias);
  if (!decl) throw new RuntimeFault(`slot "${slot.alias}" is not declared in state "${slot.state}" of this version`);
  return decl;
}

/** A scope binding the slot's fan-out variable, if it has one. */
export function slotScope(step: Step, slot: SlotRecord, parent: Scope | null = null): Scope {
  const decl = declOf(step, slot);
  return decl.forEach ? Scope.of({ [decl.forEach.variable]: slot.elementValue }, parent) : new Scope(parent);
}

/** Slots of the current state with `alias`. */
export function slotsOf(step: Step, alias: string): SlotRecord[] {
  return step.slots.filter((s) => s.alias === alias && s.state === step.run.state && s.visit === step.run.visit);
}

/** `x.done`: every slot of the alias is completed (vacuously true for an empty fan-out). */
export function isAliasDone(step: Step, alias: string): boolean {
  return slotsOf(step, alias).every((s) => s.status === "completed");
}

/** The single (not fanned-out) slot of `alias` when it is open or waiting; else null. */
export function liveSlotForAlias(step: Step, alias: string): SlotRecord | null {
  const slot = slotsOf(step, alias).find((s) => s.element === null);
  return slot && isSlotLive(slot) ? slot : null;
}

/** Creates the slots of the state just entered, all waiting, then opens those with no pending `After`. */
export function createSlotsForState(step: Step, stateName: string): void {
  for (const decl of step.workflow.states[stateName].slots) createSlot(step, stateName, decl);
  openSatisfiedSlots(step);
}

/**
 * Creates the waiting slot(s) of one declaration in the current visit — one per element when it is
 * fanned out, the list evaluated now. The caller opens them (`openSatisfiedSlots`). Used on entry
 * and by an upgrade that adds a slot (issue 19 item 3). Returns the slots created.
 */
export function createSlot(step: Step, stateName: string, decl: CompiledSlot): SlotRecord[] {
  const base = { state: stateName, visit: step.run.visit, alias: decl.alias, event: decl.event, status: "waiting" as SlotStatus };
  const empty = { openedAt: null, deadline: null, closedAt: null, args: null, candidateUsers: null, candidateRoles: null, answeredBy: null, receipt: null, forwards: 0 };
  if (!decl.forEach) {
    const slot: SlotRecord = { id: randomUUID(), ...base, element: null, elementValue: null, ...empty };
    step.addSlot(slot);
    return [slot];
  }
  const list = evaluate(step, new Scope(), decl.forEach.iterable);
  if (list === null) throw new RuntimeFault(`"for each" over null in slot "${decl.alias}"`, decl.forEach.iterable.range);
  // Run input is held to the same limit at start (input.ts); this bounds lists written as
  // literals in the source too, so one step never creates more slots than configured.
  const maxFanOut = (step.services.limits ?? DEFAULT_LIMITS).maxFanOut;
  if ((list as Value[]).length > maxFanOut) {
    throw new RuntimeFault(`"for each" over ${(list as Value[]).length} elements in slot "${decl.alias}": at most ${maxFanOut} (SLOTFLOW_MAX_FANOUT)`, decl.forEach.iterable.range);
  }
  return (list as Value[]).map((value, element) => {
    const slot: SlotRecord = { id: randomUUID(), ...base, element, elementValue: value, ...empty };
    step.addSlot(slot);
    return slot;
  });
}

/** Opens every waiting slot of the current state whose `After` predecessors are all completed. */
export function openSatisfiedSlots(step: Step): void {
  for (const slot of step.slots) {
    if (slot.status !== "waiting" || slot.state !== step.run.state) continue;
    const decl = declOf(step, slot);
    if (decl.after.every((alias) => isAliasDone(step, alias))) openSlot(step, slot, decl);
  }
}

function openSlot(step: Step, slot: SlotRecord, decl: CompiledSlot): void {
  slot.status = "open";
  slot.openedAt = step.now;
  if (decl.deadline) {
    const d = evaluate(step, slotScope(step, slot), decl.deadline);
    if (d instanceof Duration) slot.deadline = new Date(step.now.getTime() + d.ms);
    else if (d instanceof Date) slot.deadline = d;
    else if (d !== null) throw new RuntimeFault(`Deadline of slot "${slot.alias}" is neither a duration nor a datetime`, decl.deadline.range);
  }
  step.markSlotDirty(slot);
  step.addHistory("slot-opened", { alias: slot.alias, element: slot.element, deadline: slot.deadline?.toISOString() ?? null });
}

function close(step: Step, slot: SlotRecord, status: SlotStatus, linkReason: LinkEndReason): void {
  if (!isSlotLive(slot)) throw new RuntimeFault(`slot "${slot.alias}" is already ${slot.status}`);
  slot.status = status;
  slot.closedAt = step.now;
  step.markSlotDirty(slot);
  killLiveLink(step, slot, linkReason);
  step.addHistory(`slot-${status}`, { alias: slot.alias, element: slot.element });
}

/**
 * An accepted event completes the slot with its arguments (JSON form) and who answered it
 * (v0.4 "Who answered": stored in `slots.answered_by`).
 */
export function completeSlot(step: Step, slot: SlotRecord, argsJson: Record<string, unknown>, answeredBy: NonNullable<SlotRecord["answeredBy"]>): void {
  slot.args = argsJson;
  slot.answeredBy = answeredBy;
  close(step, slot, "completed", "completed");
}

export function expireSlot(step: Step, slot: SlotRecord): void {
  close(step, slot, "expired", "expired");
}

/** `drop slot x`: cancels every live slot of the alias (all elements when fanned out). */
export function dropSlot(step: Step, alias: string): void {
  for (const slot of slotsOf(step, alias)) if (isSlotLive(slot)) close(step, slot, "dropped", "dropped");
}

/**
 * Leaving a state cancels its live slots; their links die as `cancelled`, or `run-finished` when the
 * next state is terminal, or `run-cancelled` when an operator cancels the run (issue 23). Timer rows
 * (timer.ts) are left to `cancelRunTimers`.
 */
export function cancelStateSlots(step: Step, reason: "cancelled" | "run-finished" | "run-cancelled"): void {
  for (const slot of step.slots) {
    if (slot.state === step.run.state && isSlotLive(slot) && !isTimerAlias(slot.alias)) close(step, slot, "cancelled", reason);
  }
}
