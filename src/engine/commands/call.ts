/**
 * call: the outcome of one attempt of a call (v0.5, issue 40; lifecycles/call.ts), applied like a
 * deposit — one step under the run lock. Enqueued by the calls worker (workers/calls.ts) after the
 * attempt, with a command id derived from the call id and the attempt (`callCommandId`), so an
 * attempt's outcome is applied at most once however often its job runs.
 *
 * Locks: the run row (held by the caller).
 * Refuses, changing nothing: 409 slot-closed — the call is no longer pending, or its slot no
 * longer open (the state was left, the run cancelled or finished, `drop slot`): an answer arriving
 * after that is refused as for a closed slot; 410 link-dead `expired` — the slot's Deadline has
 * passed (the sweeper expires it: `on x.expired`).
 * Applies:
 * - **answer**: the `returns` event's parameters are read from the JSON object by name (extra
 *   properties dropped; an optional one may be absent); a missing or mistyped one fails the call
 *   (`invalid-response: "score" is required`); else the slot completes with them and `on x(…)`
 *   runs, exactly as for a deposit (`answeredBy: {via: "call", callId}`);
 * - **retry**: with attempts left and a next attempt before the Deadline (calls/http/backoff.ts),
 *   the next attempt is scheduled; else the call fails (`… (3 attempts)`, `… (no attempt left
 *   before the Deadline)`);
 * - **fail**: the call fails: the slot becomes `failed` and `on x.failed` runs (or, without one,
 *   the run waits in its state with the slot failed).
 * History: `call-attempt {alias, element, callId, attempt, status, ms, error}` for every attempt
 * (`ms`: the attempt's time; for `call workflow`, from the slot's opening to the child's end),
 * then `call-answered` or `call-failed {…, attempts, status, error}`. Never a header value.
 * Throws RuntimeFault from a handler (the caller records an incident; the job retries it later).
 */
import { nextAttemptDelayMs } from "../../calls/http/backoff.js";
import { elementRef, Scope } from "../../lang/runtime/interpreter.js";
import { callOf, derivedCommandId, endCall, scheduleRetry } from "../lifecycles/call.js";
import { acceptEvent, afterHandler, runHandler } from "../lifecycles/run.js";
import { failSlot, slotScope } from "../lifecycles/slot.js";
import { RefusalCode, refuse } from "../refusals.js";
import { readCalls } from "../sql/calls.js";
import type { CallRecord, SlotRecord, Step } from "../step.js";
import { checkBody } from "../values/body.js";
import { applied, refused, type CommandResult } from "./result.js";
import type { Command } from "./types.js";

/** The command id of attempt `attempt` of call `callId`: a UUID-shaped SHA-256 of both (stable across crashes). */
export function callCommandId(callId: string, attempt: number): string {
  return derivedCommandId(`slotflow.call:${callId}:${attempt}`);
}

/**
 * Loads the calls of the run's current slots into the step (one statement), when its current
 * state declares a call; other runs pay nothing.
 */
export async function loadCalls(step: Step): Promise<void> {
  const state = step.workflow.states[step.run.state];
  if (!state || !state.slots.some((d) => callOf(d))) return;
  const slotIds = step.slots.filter((s) => s.state === step.run.state && s.visit === step.run.visit).map((s) => s.id);
  for (const r of await readCalls(step.services.tx, step.run.id, slotIds)) {
    step.calls.set(r.slot_id, {
      id: r.id,
      slotId: r.slot_id,
      alias: r.alias,
      element: r.element,
      type: r.type,
      endpoint: r.endpoint,
      method: r.method,
      status: r.status as CallRecord["status"],
      attempts: r.attempts,
      maxAttempts: r.max_attempts,
      timeoutMs: r.timeout_ms,
      deadline: r.deadline,
      nextAttemptAt: r.next_attempt_at,
      lastStatus: r.last_status,
      lastError: r.last_error,
      error: r.error,
      endedAt: r.ended_at,
      childRunId: r.child_run_id,
    });
  }
}

export async function applyCallOutcome(step: Step, cmd: Extract<Command, { kind: "call" }>): Promise<CommandResult> {
  const slot = step.slots.find((s) => s.id === cmd.slotId);
  const call = slot ? step.calls.get(slot.id) : undefined;
  if (step.run.status !== "running" || !slot || !call || call.id !== cmd.callId || call.status !== "pending" || slot.status !== "open") {
    return refused(refuse(RefusalCode.SlotClosed, "This call's slot is closed; its answer is not applied."));
  }
  if (slot.deadline && slot.deadline.getTime() <= step.now.getTime()) {
    return refused(refuse(RefusalCode.LinkDead, "This call's slot has expired; its answer is not applied.", { reason: "expired" }));
  }
  const r = cmd.result;
  call.attempts = Math.max(call.attempts, cmd.attempt);
  call.lastStatus = r.status ?? null;
  step.changeCall(call);
  const where = { alias: slot.alias, element: slot.element, callId: call.id };
  // a child run's answer (child.ts) carries no measured time: its call took from the slot's opening to now
  const ms = call.type === "workflow" && slot.openedAt ? Math.max(0, step.now.getTime() - slot.openedAt.getTime()) : r.ms;
  step.addHistory("call-attempt", { ...where, attempt: cmd.attempt, status: r.status ?? null, ms, error: r.kind === "answer" ? null : r.error });
  if (r.kind === "answer") {
    const answer = readAnswer(step, slot, r.body ?? null);
    if (!answer.ok) return failCall(step, slot, call, answer.error);
    call.lastError = null;
    endCall(step, call, "answered");
    step.addHistory("call-answered", { ...where, attempt: cmd.attempt, status: r.status });
    acceptEvent(step, slot, answer.args, answer.json, { via: "call", callId: call.id });
    return applied(step, "completed");
  }
  call.lastError = r.error;
  if (r.kind === "retry") {
    if (cmd.attempt >= call.maxAttempts) return failCall(step, slot, call, `${r.error} (${cmd.attempt} attempt${cmd.attempt === 1 ? "" : "s"})`);
    const delay = nextAttemptDelayMs(cmd.attempt, { retryAfterMs: r.retryAfterMs ?? null, deadline: slot.deadline, now: step.now.getTime() });
    if (delay === null) return failCall(step, slot, call, `${r.error} (no attempt left before the Deadline)`);
    scheduleRetry(step, call, cmd.attempt + 1, delay);
    return applied(step, "retried");
  }
  return failCall(step, slot, call, r.error);
}

/** The call fails: ended `failed`, its slot `failed`, `call-failed` recorded, then `on x.failed` (or the run waits). */
function failCall(step: Step, slot: SlotRecord, call: CallRecord, error: string): CommandResult {
  call.lastError = error;
  endCall(step, call, "failed", error);
  failSlot(step, slot);
  step.addHistory("call-failed", { alias: slot.alias, element: slot.element, callId: call.id, attempts: call.attempts, status: call.lastStatus, error });
  const handler = step.workflow.states[slot.state].failed?.[slot.alias];
  if (handler) {
    const scope = slot.element === null ? slotScope(step, slot) : slotScope(step, slot, Scope.of({ [slot.alias]: elementRef(slot.alias, slot.element) }));
    runHandler(step, handler, scope);
  } else afterHandler(step);
  return applied(step, "failed");
}

/**
 * The answer's JSON object read as the slot's `returns` event: its declared parameters by name
 * (extra properties dropped; an absent optional one is null), checked as a deposit's body is.
 */
function readAnswer(step: Step, slot: SlotRecord, body: Record<string, unknown> | null): { ok: true; args: Parameters<typeof acceptEvent>[2]; json: Record<string, unknown> } | { ok: false; error: string } {
  const params = step.workflow.events[slot.event]?.params ?? [];
  const picked: Record<string, unknown> = {};
  for (const p of params) {
    if (body !== null && Object.prototype.hasOwnProperty.call(body, p.name)) picked[p.name] = body[p.name];
    else if (p.type.optional) picked[p.name] = null;
  }
  const checked = checkBody(picked, params);
  if (!checked.ok) {
    const problems = checked.problems.map((p) => (p.name ? `"${p.name}" ${p.problem}` : p.problem)).join("; ");
    return { ok: false, error: `invalid-response: ${problems}`.slice(0, 500) };
  }
  return { ok: true, args: checked.args, json: picked };
}
