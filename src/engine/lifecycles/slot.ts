/**
 * The slot lifecycle (language reference "Handlers and execution"). This module alone writes
 * `slots.status`.
 *
 *   waiting --all After predecessors completed--> open        (the deadline clock starts)
 *   open    --event accepted--> completed
 *   open    --deadline passed--> expired
 *   waiting/open --state left--> cancelled
 *   waiting/open --`drop slot x`--> dropped
 *   waiting/open --another element completes its fanned-out slot's `Quorum` (v0.4)--> cancelled
 *                 (the link dies with reason "quorum-reached")
 *   open    --its call failed (v0.5 calls, call.ts)--> failed
 *
 * A call slot (v0.5) starts its call when it opens (call.ts `startCall`); any close other than
 * its answer or its failure cancels the call still pending (call.ts `cancelCallOf`).
 *
 * Every close records why the slot's live link dies (link.ts records it in the history now and
 * writes it at flush).
 *
 * The timers on a slot (issue 43 item 3, timer.ts) start when it (each element) opens and are
 * cancelled by any close.
 */
import { randomUUID } from "node:crypto";
import { DEFAULT_LIMITS } from "../../config.js";
import type { CompiledSlot } from "../../lang/compiled.js";
import { candidateNames, elementRef, evaluate, execute, RuntimeFault, Scope } from "../../lang/runtime/interpreter.js";
import { callOf, cancelCallOf, startCall } from "./call.js";
import { killLiveLink } from "./link.js";
import type { LinkEndReason } from "../refusals.js";
import type { SlotRecord, SlotStatus, Step } from "../step.js";
import { cancelSlotTimers, isTimerAlias, slotTimerOf, startSlotTimers } from "./timer.js";
import { Duration, type Value } from "../../lang/runtime/values.js";

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

/**
 * `x.done`: every slot of the alias is completed (vacuously true for an empty fan-out) — or, on a
 * fanned-out slot with `Quorum: k`, at least k of its elements are (v0.4 Many responders).
 */
export function isAliasDone(step: Step, alias: string): boolean {
  const slots = slotsOf(step, alias);
  const decl = step.workflow.states[step.run.state]?.slots.find((s) => s.alias === alias);
  if (decl?.forEach && decl.quorum) return countCompleted(slots) >= quorumOf(step, decl, slots.length);
  return slots.every((s) => s.status === "completed");
}

/** `x.count`: how many slots of the alias (elements, when fanned out) are completed (v0.4). */
export function aliasCount(step: Step, alias: string): number {
  return countCompleted(slotsOf(step, alias));
}

function countCompleted(slots: SlotRecord[]): number {
  return slots.reduce((n, s) => n + (s.status === "completed" ? 1 : 0), 0);
}

/**
 * The `Quorum` k of a fanned-out declaration over `elements` slots (v0.4 Many responders):
 * evaluated now; an int with 1 ≤ k ≤ elements, else a RuntimeFault naming the bounds.
 */
export function quorumOf(step: Step, decl: CompiledSlot, elements: number): number {
  const k = evaluate(step, new Scope(), decl.quorum!);
  if (typeof k !== "number" || !Number.isSafeInteger(k) || k < 1 || k > elements) {
    throw new RuntimeFault(`Quorum of slot "${decl.alias}" is ${k === null ? "null" : String(k)}: it must be between 1 and the ${elements} elements`, decl.quorum!.range);
  }
  return k;
}

/** The element slot `element` of a fanned-out alias in the current visit, live or not; null when none. */
export function elementSlot(step: Step, alias: string, element: number): SlotRecord | null {
  return slotsOf(step, alias).find((s) => s.element === element) ?? null;
}

/** The single (not fanned-out) slot of `alias` when it is open or waiting; else null. */
export function liveSlotForAlias(step: Step, alias: string): SlotRecord | null {
  const slot = slotsOf(step, alias).find((s) => s.element === null);
  return slot && isSlotLive(slot) ? slot : null;
}

/**
 * Creates the slots of the state just entered, all waiting, then opens those with no pending
 * `After`. Returns the slots created (their `each` blocks run after the state's `enter`).
 */
export function createSlotsForState(step: Step, stateName: string): SlotRecord[] {
  const created = step.workflow.states[stateName].slots.flatMap((decl) => createSlot(step, stateName, decl));
  openSatisfiedSlots(step);
  return created;
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
    setCandidates(step, slot, decl);
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
  const elements = list as Value[];
  if (decl.quorum) quorumOf(step, decl, elements.length);
  return elements.map((value, element) => {
    const slot: SlotRecord = { id: randomUUID(), ...base, element, elementValue: value, ...empty };
    setCandidates(step, slot, decl);
    step.addSlot(slot);
    return slot;
  });
}

/**
 * Runs the `each { … }` block of each fanned-out slot in `created`, once per element, in element
 * order (v0.4 Many responders): the fan-out variable bound to the element's value and the alias
 * to that element's slot, so `x.CallbackUrl()` / `x.TaskUrl()` mint or name that one slot. Slots
 * already closed (their state was left in the same step) are skipped.
 */
export function runEachBlocks(step: Step, created: SlotRecord[]): void {
  for (const slot of created) {
    if (slot.element === null || !isSlotLive(slot)) continue;
    const decl = declOf(step, slot);
    if (!decl.each || !decl.forEach) continue;
    execute(step, elementScope(decl, slot), decl.each);
  }
}

/** The scope of `each` for element `slot` of fanned-out `decl`: the fan-out variable, the alias naming that element's slot. */
function elementScope(decl: CompiledSlot, slot: SlotRecord): Scope {
  return Scope.of({ [decl.forEach!.variable]: slot.elementValue, [decl.alias]: elementRef(decl.alias, slot.element!) });
}

/**
 * The scope a slot timer's handler runs in (issue 43 item 3): for a fanned-out slot that of its
 * `each` (timer row `row` carries the element and its value); otherwise an empty one. A row of a
 * state timer gets an empty one too.
 */
export function timerScope(step: Step, row: SlotRecord): Scope {
  const onSlot = slotTimerOf(row.alias);
  const decl = onSlot ? step.workflow.states[row.state]?.slots.find((s) => s.alias === onSlot.alias) : undefined;
  return decl?.forEach && row.element !== null ? elementScope(decl, { ...row, alias: decl.alias }) : new Scope();
}

/**
 * Records who the inbox lists `slot` for (v0.4 "People inside the company", docs/inbox.md): its
 * `Candidates` evaluated once, now, in the slot's scope (the workflow parameters and, when fanned
 * out, this element) — the ids of `user(…)` in `candidateUsers`, the names of `role(…)` in
 * `candidateRoles`. A slot without `Candidates` keeps both null (listed in no inbox). An entry that
 * fails to evaluate now (e.g. `user(x.owner)` while `x.owner` is null) lists the slot for nobody
 * ([] and []) and does not fail the step: the raise path evaluates `Candidates` again, as before,
 * and refuses or admits on what it finds then.
 */
function setCandidates(step: Step, slot: SlotRecord, decl: CompiledSlot): void {
  if (!decl.candidates) return;
  try {
    const scope = decl.forEach ? Scope.of({ [decl.forEach.variable]: slot.elementValue }) : new Scope();
    const { users, roles } = candidateNames(decl.candidates.map((m) => evaluate(step, scope, m)));
    slot.candidateUsers = users;
    slot.candidateRoles = roles;
  } catch (err) {
    if (!(err instanceof RuntimeFault)) throw err;
    slot.candidateUsers = [];
    slot.candidateRoles = [];
  }
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
  if (decl.timers) startSlotTimers(step, slot, decl.timers, step.now);
  if (callOf(decl)) step.openedCalls.push(slot);
}

/**
 * Starts the calls of the call slots this step opened and left open (v0.5): run by apply.ts at
 * the end of the command, so a call opened at entry sees the state's `enter` statements (and one
 * opened by `After`, the handler that satisfied it); a slot closed again in the same step (its
 * state left at once) starts nothing.
 */
export function startOpenedCalls(step: Step): void {
  for (const slot of step.openedCalls.splice(0)) {
    if (slot.status !== "open") continue;
    startCall(step, slot, declOf(step, slot), slotScope(step, slot));
  }
}

function close(step: Step, slot: SlotRecord, status: SlotStatus, linkReason: LinkEndReason): void {
  if (!isSlotLive(slot)) throw new RuntimeFault(`slot "${slot.alias}" is already ${slot.status}`);
  slot.status = status;
  slot.closedAt = step.now;
  step.markSlotDirty(slot);
  killLiveLink(step, slot, linkReason);
  step.addHistory(`slot-${status}`, { alias: slot.alias, element: slot.element });
  cancelCallOf(step, slot);
  cancelSlotTimers(step, slot);
}

/** A call slot whose call failed (v0.5; commands/call.ts, after call.ts ended the call): `failed`. */
export function failSlot(step: Step, slot: SlotRecord): void {
  close(step, slot, "failed", "cancelled");
}

/**
 * An accepted event completes the slot with its arguments (JSON form) and who answered it
 * (v0.4 "Who answered": stored in `slots.answered_by`). When the slot is an element of a
 * fanned-out slot with `Quorum: k` and k elements are now completed, the elements not yet
 * completed are cancelled in the same step, their links dead with reason "quorum-reached" (v0.4).
 */
export function completeSlot(step: Step, slot: SlotRecord, argsJson: Record<string, unknown>, answeredBy: NonNullable<SlotRecord["answeredBy"]>): void {
  slot.args = argsJson;
  slot.answeredBy = answeredBy;
  close(step, slot, "completed", "completed");
  if (slot.element === null) return;
  const decl = declOf(step, slot);
  if (!decl.quorum) return;
  const siblings = step.slots.filter((s) => s.alias === slot.alias && s.state === slot.state && s.visit === slot.visit);
  const k = quorumOf(step, decl, siblings.length);
  if (countCompleted(siblings) < k) return;
  step.addHistory("quorum-reached", { alias: slot.alias, quorum: k });
  for (const s of siblings) if (isSlotLive(s)) close(step, s, "cancelled", "quorum-reached");
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
