/**
 * The call lifecycle (v0.5, issue 40; docs/language.md "Calls"). This module alone writes a call's
 * status (`calls.status`); the slot it belongs to follows slot.ts's lifecycle.
 *
 *   (slot opens) --start: Path, Input, Timeout, Attempts evaluated in the step--> pending
 *   pending --an attempt answers with the `returns` event's parameters--> answered (slot completed)
 *   pending --a retryable failure, attempts and Deadline left--> pending (next attempt scheduled)
 *   pending --attempts spent, a failure not retried, an answer of the wrong shape--> failed (slot failed)
 *   pending --the slot closes first (state left, `drop slot`, run cancelled, Deadline)--> cancelled
 *
 * The call is attempted only after the step that opened its slot commits, by the calls worker
 * (workers/calls.ts, src/calls/), never under the run lock; each attempt's outcome comes back as a
 * `call` command (commands/call.ts) applied like a deposit: one step under the run lock, at most
 * once per attempt (its command id is derived from the call id and the attempt).
 */
import { randomUUID } from "node:crypto";
import type { CompiledCall, CompiledSlot } from "../../lang/compiled.js";
import { evaluate, jsonValue, RuntimeFault, type Scope } from "../interpreter.js";
import type { CallRecord, SlotRecord, Step } from "../step.js";
import { Duration } from "../values/values.js";

/** The callee and settings of a call slot. */
export type CallSpec = CompiledCall;

/** Defaults (docs/language.md "Calls"): per-attempt Timeout and attempts in all. */
export const HTTP_TIMEOUT_MS = 30_000;
export const TASK_TIMEOUT_MS = 5 * 60_000;
export const DEFAULT_ATTEMPTS = 3;
/** The largest Attempts and Timeout a call may ask for. */
export const MAX_ATTEMPTS = 100;
export const MAX_TIMEOUT_MS = 24 * 3600_000;

/** The call of a call slot's declaration; null for a `subscribe`. */
export function callOf(decl: CompiledSlot): CallSpec | null {
  return decl.kind === "call" && decl.call ? decl.call : null;
}

/**
 * Starts the call of `slot`, which just opened: evaluates its `Path`, `Input`, `Timeout` and
 * `Attempts` in `scope` (the slot's), records the call (written with the step; attempted after it
 * commits) and `call-started` in the history. A runtime fault (a Path that is not a string, a
 * Timeout ≤ 0, Attempts < 1) aborts the step like any other.
 */
export function startCall(step: Step, slot: SlotRecord, decl: CompiledSlot, scope: Scope): void {
  const call = callOf(decl);
  if (!call) return;
  const callee = call.callee;
  if (callee.type !== "http" && callee.type !== "task") throw new RuntimeFault(`call ${callee.type} is not available in this version of slotflow (call "${decl.alias}")`);
  let path: string | null = null;
  if (call.path) {
    const p = evaluate(step, scope, call.path);
    if (p !== null && typeof p !== "string") throw new RuntimeFault(`Path of call "${decl.alias}" is not a string`, call.path.range);
    path = p;
  }
  const input: Record<string, unknown> = {};
  // values in their JSON form as for a webhook's data (tracked rows as objects of their fields)
  for (const f of call.input) input[f.name] = jsonValue(step, evaluate(step, scope, f.value));
  // a task's Timeout is the lease a worker holds it for (issue 41 item 3)
  let timeoutMs = callee.type === "task" ? TASK_TIMEOUT_MS : HTTP_TIMEOUT_MS;
  if (call.timeout) {
    const t = evaluate(step, scope, call.timeout);
    if (!(t instanceof Duration) || t.ms <= 0 || t.ms > MAX_TIMEOUT_MS) throw new RuntimeFault(`Timeout of call "${decl.alias}" must be a duration above 0 and at most 24h`, call.timeout.range);
    timeoutMs = t.ms;
  }
  let maxAttempts = DEFAULT_ATTEMPTS;
  if (call.attempts) {
    const a = evaluate(step, scope, call.attempts);
    if (typeof a !== "number" || !Number.isSafeInteger(a) || a < 1 || a > MAX_ATTEMPTS) throw new RuntimeFault(`Attempts of call "${decl.alias}" must be an int from 1 to ${MAX_ATTEMPTS}`, call.attempts.range);
    maxAttempts = a;
  }
  const record: CallRecord = {
    id: randomUUID(),
    slotId: slot.id,
    alias: slot.alias,
    element: slot.element,
    type: callee.type,
    // a `call task` keeps its task type where an http call keeps its endpoint (sql/calls.ts)
    endpoint: callee.type === "task" ? callee.task : callee.endpoint,
    method: callee.type === "task" ? null : callee.method,
    status: "pending",
    attempts: 0,
    maxAttempts,
    timeoutMs,
    deadline: slot.deadline,
    nextAttemptAt: step.now,
    lastStatus: null,
    lastError: null,
    error: null,
    endedAt: null,
  };
  step.queueCall(record, { path, input });
  step.addHistory("call-started", { alias: slot.alias, element: slot.element, callId: record.id, type: callee.type, ...(callee.type === "task" ? { task: callee.task } : { endpoint: callee.endpoint, method: callee.method }), attempts: maxAttempts });
}

/** The pending call of `slot`, or null. */
export function pendingCallOf(step: Step, slot: SlotRecord): CallRecord | null {
  const call = step.calls.get(slot.id);
  return call && call.status === "pending" ? call : null;
}

/**
 * The slot of a pending call closed for another reason (its state left, `drop slot`, the run
 * cancelled, its Deadline): the call is cancelled (an attempt under way is let finish; its answer
 * is then refused, as for a closed slot). Records `call-cancelled`.
 */
export function cancelCallOf(step: Step, slot: SlotRecord): void {
  const call = pendingCallOf(step, slot);
  if (!call) return;
  endCall(step, call, "cancelled");
  step.cancelledCalls++;
  step.addHistory("call-cancelled", { alias: slot.alias, element: slot.element, callId: call.id, reason: slot.status });
}

/** Ends a call as answered, failed or cancelled (status and end time; written at flush). */
export function endCall(step: Step, call: CallRecord, status: "answered" | "failed" | "cancelled", error: string | null = null): void {
  call.status = status;
  call.endedAt = step.now;
  call.nextAttemptAt = null;
  if (error !== null) call.error = error;
  step.changeCall(call);
}

/** A retry of a pending call scheduled `delayMs` from now (the calls worker is handed it after commit). */
export function scheduleRetry(step: Step, call: CallRecord, attempt: number, delayMs: number): void {
  call.nextAttemptAt = new Date(step.now.getTime() + delayMs);
  step.changeCall(call);
  step.queuedCalls.push({ callId: call.id, runId: step.run.id, attempt, delayMs, ...(call.type === "task" && call.endpoint ? { task: call.endpoint } : {}) });
}
