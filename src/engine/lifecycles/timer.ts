/**
 * The timer lifecycle (issue 19; language reference §10 "Timers"). This module alone writes the
 * rows of timers.
 *
 * A timer of the run's current state is stored as a row of `slots` whose alias is `@timer:N`
 * (N: its index among the state's timers, compiled.ts `CompiledTimer.index`; `@` starts no alias
 * a source can declare) and whose `deadline` is its next firing. So timers fire through the same
 * deadline machinery as slots: the sweeper's one index on `slots(status, deadline)` finds due
 * timers beside due slots (cost ∝ due rows), each firing is an `expire` command applied under the
 * run lock like any step, and its command id names the firing (`expire-<row>-<due ms>`), so a
 * firing applies at most once however often it is enqueued or redelivered (applied_commands).
 *
 *   (state entered, or an upgrade adds it) --> open, deadline = entry + delay
 *   open --fired, `after`--> completed
 *   open --fired, `every`--> open, deadline = previous due + period (args.periodMs)
 *   open --state left / run cancelled--> cancelled
 *
 * History: `timer-started`, `timer-fired`, `timer-cancelled` (data: `{ index, schedule, … }`).
 *
 * A timer on a slot (issue 43 item 3; language reference "Timers on a slot, per element") is a
 * row of the same kind whose alias is `@timer:<slot alias>:N` (N: its index among that slot's
 * timers, `CompiledSlot.timers`) and whose `element`/`element_value` are the element's (null for a
 * slot not fanned out): started when that slot (element) opens, its clock from the opening (or
 * from an upgrade that adds it); cancelled when that slot (element) closes — answered, quorum
 * reached, expired, dropped, failed, state left. It fires through the same sweeper query and
 * `expire` command; its handler runs with the fan-out variable bound and the alias standing for
 * the element's slot (so `x.CallbackUrl()` mints a fresh link for it, retiring the previous one,
 * link.ts). History data of its rows carries `{ alias, element }` beside `index`.
 */
import { randomUUID } from "node:crypto";
import { MIN_TIMER_PERIOD_MS, type CompiledTimer } from "../../lang/compiled.js";
import { evaluate, RuntimeFault, Scope } from "../../lang/runtime/interpreter.js";
import type { SlotRecord, Step } from "../step.js";
import { Duration } from "../../lang/runtime/values.js";

/** The alias prefix of timer rows in `slots`. */
export const TIMER_ALIAS_PREFIX = "@timer:";

/** True when a `slots` row is a timer (by its alias). */
export function isTimerAlias(alias: string): boolean {
  return alias.startsWith(TIMER_ALIAS_PREFIX);
}

/** A state timer row's index, or null when `alias` is not a state timer's (a slot timer's included). */
export function timerIndex(alias: string): number | null {
  if (!isTimerAlias(alias)) return null;
  const n = Number(alias.slice(TIMER_ALIAS_PREFIX.length));
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}

/** The alias of the row of timer `index` on slot `slotAlias` (issue 43 item 3). */
export function slotTimerAlias(slotAlias: string, index: number): string {
  return `${TIMER_ALIAS_PREFIX}${slotAlias}:${index}`;
}

/** `{ alias, index }` of a slot timer's row (issue 43 item 3), or null when `alias` is not one. */
export function slotTimerOf(alias: string): { alias: string; index: number } | null {
  if (!isTimerAlias(alias)) return null;
  const rest = alias.slice(TIMER_ALIAS_PREFIX.length);
  const colon = rest.lastIndexOf(":");
  if (colon <= 0) return null;
  const index = Number(rest.slice(colon + 1));
  return Number.isSafeInteger(index) && index >= 0 ? { alias: rest.slice(0, colon), index } : null;
}

/** The compiled timer a row stands for in the step's version (a state's or a slot's), or null when that version has none. */
export function timerDecl(step: Step, row: SlotRecord): CompiledTimer | null {
  const state = step.workflow.states[row.state];
  const onSlot = slotTimerOf(row.alias);
  if (onSlot !== null) return state?.slots.find((s) => s.alias === onSlot.alias)?.timers?.find((t) => t.index === onSlot.index) ?? null;
  const index = timerIndex(row.alias);
  if (index === null) return null;
  return state?.timers?.find((t) => t.index === index) ?? null;
}

/** Evaluates a timer duration expression to milliseconds (RuntimeFault when null or not a duration). */
function durationMs(step: Step, timer: CompiledTimer, which: "duration" | "first"): number {
  const expr = which === "duration" ? timer.duration : timer.first!;
  const v = evaluate(step, new Scope(), expr);
  if (!(v instanceof Duration)) throw new RuntimeFault(`timer '${timer.schedule}': the duration is not a duration`, expr.range);
  if (timer.every && which === "duration" && v.ms < MIN_TIMER_PERIOD_MS) {
    throw new RuntimeFault(`timer '${timer.schedule}': 'every' needs a period of at least 1 minute`, expr.range);
  }
  if (v.ms < 0) throw new RuntimeFault(`timer '${timer.schedule}': a negative duration`, expr.range);
  return v.ms;
}

/**
 * Starts one timer of the current state: its row is open with the first firing `delay` after
 * `from` (the state's entry, or an upgrade's time). Throws RuntimeFault when a duration cannot be
 * evaluated or an `every` period is under a minute.
 */
export function startTimer(step: Step, timer: CompiledTimer, from: Date = step.now, slot: SlotRecord | null = null): void {
  const periodMs = timer.every ? durationMs(step, timer, "duration") : null;
  const delayMs = timer.first !== null ? durationMs(step, timer, "first") : periodMs ?? durationMs(step, timer, "duration");
  const row: SlotRecord = {
    id: randomUUID(),
    state: slot?.state ?? step.run.state,
    visit: slot?.visit ?? step.run.visit,
    alias: slot ? slotTimerAlias(slot.alias, timer.index) : `${TIMER_ALIAS_PREFIX}${timer.index}`,
    element: slot?.element ?? null,
    elementValue: slot?.elementValue ?? null,
    event: "",
    status: "open",
    openedAt: from,
    deadline: new Date(from.getTime() + delayMs),
    closedAt: null,
    args: periodMs === null ? null : { periodMs },
    candidateUsers: null,
    candidateRoles: null,
    answeredBy: null,
    receipt: null,
    forwards: 0,
  };
  step.addSlot(row);
  step.addHistory("timer-started", { index: timer.index, schedule: timer.schedule, ...onSlotData(row), next: row.deadline!.toISOString() });
}

/** `{ alias, element }` for the history of a slot timer's row; nothing for a state timer's. */
function onSlotData(row: SlotRecord): { alias?: string; element?: number | null } {
  const onSlot = slotTimerOf(row.alias);
  return onSlot ? { alias: onSlot.alias, element: row.element } : {};
}

/**
 * Starts the timers of `slot` (issue 43 item 3), which has just opened — one row per timer of its
 * declaration, for this slot (element) only, the clock from `from` (its opening, or an upgrade's
 * time). Timers the slot already has in its visit are not started again (an upgrade adds only the
 * new ones). Returns the indexes started. Throws RuntimeFault as `startTimer`.
 */
export function startSlotTimers(step: Step, slot: SlotRecord, timers: readonly CompiledTimer[], from: Date = step.now): number[] {
  const started: number[] = [];
  for (const timer of timers) {
    const alias = slotTimerAlias(slot.alias, timer.index);
    if (step.slots.some((r) => r.alias === alias && r.state === slot.state && r.visit === slot.visit && r.element === slot.element)) continue;
    startTimer(step, timer, from, slot);
    started.push(timer.index);
  }
  return started;
}

/**
 * Cancels the scheduled timers of `slot` (issue 43 item 3) as it closes, whatever closes it; a
 * firing already enqueued then finds nothing due and is skipped.
 */
export function cancelSlotTimers(step: Step, slot: SlotRecord): void {
  const prefix = `${TIMER_ALIAS_PREFIX}${slot.alias}:`;
  for (const row of step.slots) {
    if (row.status !== "open" || !row.alias.startsWith(prefix) || slotTimerOf(row.alias)?.alias !== slot.alias) continue;
    if (row.state === slot.state && row.visit === slot.visit && row.element === slot.element) cancelTimer(step, row);
  }
}

/** Starts every timer of the state just entered (run.ts `enterState`). */
export function startStateTimers(step: Step, stateName: string): void {
  for (const timer of step.workflow.states[stateName].timers ?? []) startTimer(step, timer);
}

/** Timer rows of the run's current visit that are still scheduled. */
export function liveTimers(step: Step): SlotRecord[] {
  return step.slots.filter((s) => isTimerAlias(s.alias) && s.status === "open" && s.state === step.run.state && s.visit === step.run.visit);
}

/**
 * Records one firing of timer row `row`, which is due (`row.deadline` ≤ now; the caller checks).
 * `after`: the row completes. `every`: the next firing is one period after the due time, moved
 * past now when firings were missed (a sweeper that was down fires once, not once per period
 * missed; the testing kit's `advanceTime` moves the clock in order, so it sees every firing).
 * Returns the timer's declaration, whose handler the caller runs; null when the run's version
 * has no such timer any more (the row is then cancelled and nothing runs).
 */
export function fireTimer(step: Step, row: SlotRecord): CompiledTimer | null {
  const timer = timerDecl(step, row);
  const due = row.deadline!;
  if (timer === null) {
    cancelTimer(step, row);
    return null;
  }
  const periodMs = (row.args as { periodMs?: number } | null)?.periodMs;
  if (timer.every && typeof periodMs === "number" && periodMs > 0) {
    let next = due.getTime() + periodMs;
    const now = step.now.getTime();
    if (next <= now) next += Math.ceil((now - next + 1) / periodMs) * periodMs;
    row.deadline = new Date(next);
  } else {
    row.status = "completed";
    row.closedAt = step.now;
  }
  step.markSlotDirty(row);
  step.addHistory("timer-fired", {
    index: timer.index,
    schedule: timer.schedule,
    ...onSlotData(row),
    due: due.toISOString(),
    next: row.status === "open" ? row.deadline!.toISOString() : null,
  });
  return timer;
}

function cancelTimer(step: Step, row: SlotRecord): void {
  row.status = "cancelled";
  row.closedAt = step.now;
  step.markSlotDirty(row);
  step.addHistory("timer-cancelled", { index: timerIndex(row.alias) ?? slotTimerOf(row.alias)?.index ?? null, ...onSlotData(row) });
}

/**
 * Cancels every scheduled timer of the run's current state — on leaving the state (run.ts) and
 * for any command that ends a run early (issue 23: this is the one function to call). Their rows
 * become `cancelled`; a firing already enqueued then finds nothing due and is skipped.
 */
export function cancelRunTimers(step: Step): void {
  for (const row of liveTimers(step)) cancelTimer(step, row);
}
