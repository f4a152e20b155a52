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
import { createHash, randomUUID } from "node:crypto";
import type { CompiledCall, CompiledSlot } from "../../lang/compiled.js";
import { evaluate, jsonValue, RuntimeFault, type Scope } from "../../lang/runtime/interpreter.js";
import type { CallRecord, CrossRunCommand, SlotRecord, Step } from "../step.js";
import { Duration } from "../../lang/runtime/values.js";

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
  if (callee.type === "workflow") return startChildCall(step, slot, call, scope);
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

/** The deepest nesting of child runs (docs/language.md "Calls"): a run at this depth cannot start a child. */
export const MAX_CHILD_DEPTH = 10;

/**
 * `call workflow Child as x` (v0.5 child runs, issue 40 item 3): evaluates `Input` and records the
 * call (type `workflow`, the child workflow's name in `endpoint`, one attempt, no attempt for the
 * calls worker) and the child run to start. The child itself is started by commands/child.ts after
 * this step's write, in the same transaction; an input the child refuses, a workflow not deployed
 * or a nesting deeper than MAX_CHILD_DEPTH fails the call (`on x.failed`), it never aborts the step.
 */
function startChildCall(step: Step, slot: SlotRecord, call: CompiledCall, scope: Scope): void {
  if (call.callee.type !== "workflow") return;
  const input: Record<string, unknown> = {};
  for (const f of call.input) input[f.name] = jsonValue(step, evaluate(step, scope, f.value));
  const record: CallRecord = {
    id: randomUUID(),
    slotId: slot.id,
    alias: slot.alias,
    element: slot.element,
    type: "workflow",
    endpoint: call.callee.workflow,
    method: null,
    status: "pending",
    attempts: 1,
    maxAttempts: 1,
    timeoutMs: 0,
    deadline: slot.deadline,
    nextAttemptAt: null,
    lastStatus: null,
    lastError: null,
    error: null,
    endedAt: null,
    childRunId: null,
  };
  step.queueCall(record, { path: null, input });
  step.childStarts.push({ call: record, workflow: call.callee.workflow, input });
  step.addHistory("call-started", { alias: slot.alias, element: slot.element, callId: record.id, type: "workflow", workflow: call.callee.workflow, attempts: 1 });
}

/** A UUID-shaped SHA-256 of `key`: the id of a command derived from what causes it (stable across crashes and retries). */
export function derivedCommandId(key: string): string {
  const h = createHash("sha256").update(key).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
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
  if (call.type === "workflow") step.cancelledChildCalls++;
  step.addHistory("call-cancelled", { alias: slot.alias, element: slot.element, callId: call.id, reason: slot.status });
  // v0.5 child runs: the child (and, through its own cancel, its children) is cancelled with the
  // reason — a command for the child run, recorded and queued with this step (commands/child.ts)
  if (call.type === "workflow" && call.childRunId) {
    const why = step.cancelReason !== null ? `the parent run was cancelled: ${step.cancelReason}` : `the parent's call slot "${slot.alias}" closed (${slot.status})`;
    step.queuedCommands.push({
      kind: "cancel",
      commandId: derivedCommandId(`slotflow.child-cancel:${call.id}`),
      runId: call.childRunId,
      reason: why.slice(0, 500),
      actor: `run:${step.run.id}`,
    } as CrossRunCommand);
  }
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
