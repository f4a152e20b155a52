/**
 * What the task protocol hands the engine (v0.5 SDK, issue 41 item 3): each attempt's outcome is a
 * `call` command (engine/commands/call.ts), applied by a command worker in one transaction under
 * the run lock — never in the web process — exactly as an HTTP attempt's outcome is. Its command
 * id is `callCommandId(task id, attempt)`, so an attempt has one outcome however many ways it is
 * reported (a completion racing the sweeper's "lease ran out" for the same attempt: the first
 * applied wins, the other is answered with its outcome).
 */
import { callCommandId } from "../../engine/commands/call.js";
import type { Command } from "../../engine/commands/types.js";
import type { HeldTask, LapsedLease } from "./store.js";

type CallCommand = Extract<Command, { kind: "call" }>;

/** The longest error text a worker's failure carries into the run (characters). */
export const MAX_TASK_ERROR = 500;

/** `ms` as words: `10s`, `2m 30s`. */
function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return s % 60 === 0 ? `${m}m` : `${m}m ${s % 60}s`;
}

/** A completion's command: the answer (checked against the `returns` event by the caller). */
export function answerCommand(task: HeldTask, answer: Record<string, unknown> | null): CallCommand {
  return { kind: "call", commandId: callCommandId(task.id, task.attempt), runId: task.runId, callId: task.id, slotId: task.slotId, attempt: task.attempt, result: { kind: "answer", status: null, ms: task.ms, body: answer } };
}

/** A failure's command: retried while attempts remain unless `retry` is false. */
export function failCommand(task: HeldTask, error: string, retry: boolean): CallCommand {
  const text = error.slice(0, MAX_TASK_ERROR);
  const result = retry ? { kind: "retry" as const, status: null, ms: task.ms, error: text, retryAfterMs: null } : { kind: "fail" as const, status: null, ms: task.ms, error: text };
  return { kind: "call", commandId: callCommandId(task.id, task.attempt), runId: task.runId, callId: task.id, slotId: task.slotId, attempt: task.attempt, result };
}

/** The sweeper's commands for leases that ran out: each a failed attempt, retried while attempts remain (`timeout after 10s`). */
export function lapsedCommands(leases: LapsedLease[]): CallCommand[] {
  return leases.map((l) => ({
    kind: "call",
    commandId: callCommandId(l.id, l.attempt),
    runId: l.runId,
    callId: l.id,
    slotId: l.slotId,
    attempt: l.attempt,
    result: { kind: "retry", status: null, ms: l.timeoutMs, error: `timeout after ${duration(l.timeoutMs)}: the lease ran out without an answer or a heartbeat`, retryAfterMs: null },
  }));
}
