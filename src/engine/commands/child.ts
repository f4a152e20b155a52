/**
 * Child runs (v0.5, issue 40 item 3; docs/language.md "Calls", docs/architecture.md "Child runs"):
 * `call workflow Child as x returns E { Input { … } }`.
 *
 * - **Start, in the parent's transaction.** When a step opens a `call workflow` slot
 *   (lifecycles/call.ts records the call and a `ChildStart`), `startChildRuns` runs right after
 *   that step's write, in the SAME transaction: the child's input is checked exactly as a start's
 *   (start.ts `startRun`: checkInput), the child's first step (its initial state's `enter`, its
 *   own calls and children, recursively) is written as a start is (`flushStart`), the child row
 *   names its parent run and call (`runs.parent_run_id`, `parent_call_id`, `call_depth`) and the
 *   parent's call names its child (`calls.child_run_id`). So either both commit or neither.
 * - **A child that cannot start fails the call, never the step**: no workflow of that name
 *   deployed, an input the child refuses (`invalid input for workflow "Child": …`), a failure in
 *   the child's initial `enter`, or a nesting deeper than MAX_CHILD_DEPTH (the 11th level). The
 *   failure reaches the parent as a `call` command (`fail`), applied in a later step like any call
 *   outcome: `on x.failed` with `x.error`.
 * - **Cross-run effects travel as commands** — the established path for a change to another run
 *   (every change to a run goes through its own lock, commands/apply.ts): the step that ends a child
 *   (finished, or cancelled on its own) builds a `call` command for the parent (`answer` with the
 *   child's result `{state, …fields}`, or `fail`: `child run cancelled: <reason>`, `child finished
 *   in state X without a result`), and a step that closes a `call workflow` slot builds a `cancel`
 *   command for the child (lifecycles/call.ts `cancelCallOf`). Each is recorded in
 *   `pending_commands` (pending.ts) in the causing step's transaction — so a Redis that loses the
 *   job loses nothing: the sweeper queues it again — and queued once the step committed
 *   (`Applied.queuedCommands`, the command worker). Ids are derived from the call id, so each is
 *   applied once however often it is queued. No step writes another run's rows, except the child
 *   starts above, which create rows nobody else can hold a lock on yet.
 */
import { DEFAULT_LIMITS } from "../../config.js";
import type { Db, Tx } from "../../db.js";
import { RuntimeFault } from "../../lang/runtime/interpreter.js";
import { derivedCommandId, MAX_CHILD_DEPTH } from "../lifecycles/call.js";
import { startOpenedCalls } from "../lifecycles/slot.js";
import { redactTokens } from "../sealing/seal.js";
import { setCallChild } from "../sql/calls.js";
import type { ChildStart, CrossRunCommand, Step } from "../step.js";
import { currentVersion } from "../versions/workflows.js";
import { callCommandId } from "./call.js";
import { recordPending } from "./pending.js";
import { startRun } from "./start.js";
import type { Command } from "./types.js";

/** What the started children queued, merged into the parent's `Applied` (apply.ts) to hand on after commit. */
export interface ChildEffects {
  queuedMail: Step["queuedMail"];
  queuedDeliveries: Step["queuedDeliveries"];
  queuedCalls: Step["queuedCalls"];
  queuedCommands: CrossRunCommand[];
  /** Runs that ended in this transaction (a child that finished at once), for `runEnded`. */
  ended: string[];
}

/** Empty effects. */
export function noChildEffects(): ChildEffects {
  return { queuedMail: [], queuedDeliveries: [], queuedCalls: [], queuedCommands: [], ended: [] };
}

/**
 * Starts the children `step` queued (see the header), after `step`'s write and in its transaction
 * (`step.services.tx`), then records the commands `step` built for other runs. Appends what the
 * children queued to `effects`. Throws only what the database throws (the whole transaction then
 * rolls back and the command is retried).
 */
export async function startChildRuns(step: Step, effects: ChildEffects): Promise<void> {
  for (const start of step.childStarts.splice(0)) {
    if (start.call.status !== "pending") continue; // its slot closed in the same step
    const failure = await startChild(step, start, effects);
    if (failure !== null) step.queuedCommands.push(callFailed(step.run.id, start.call.id, start.call.slotId, failure));
  }
  await recordCrossRun(step, effects);
}

/** Starts one child; resolves null when started, else why it could not start (the call's error). */
async function startChild(parent: Step, start: ChildStart, effects: ChildEffects): Promise<string | null> {
  const tx = parent.services.tx as Tx;
  const depth = (parent.run.depth ?? 0) + 1;
  if (depth > MAX_CHILD_DEPTH) return `child runs nest deeper than ${MAX_CHILD_DEPTH}: workflow "${start.workflow}" not started`;
  const version = await currentVersion(tx as unknown as Db, start.workflow);
  if (version === null) return `no workflow named "${start.workflow}" is deployed`;
  const childId = derivedCommandId(`slotflow.child-run:${start.call.id}`);
  const cmd = { kind: "start" as const, commandId: derivedCommandId(`slotflow.child-start:${start.call.id}`), runId: childId, workflow: start.workflow, version, input: start.input };
  let child: Step;
  try {
    const result = await startRun({ ...parent.services, limits: parent.services.limits ?? DEFAULT_LIMITS }, cmd);
    if (!result.outcome.ok || !result.step) {
      const refusal = result.outcome.ok ? null : result.outcome.refusal;
      return `invalid input for workflow "${start.workflow}": ${refusal?.detail ?? "refused"}`.slice(0, 900);
    }
    child = result.step;
    startOpenedCalls(child);
  } catch (err) {
    if (!(err instanceof RuntimeFault)) throw err;
    return `child run of workflow "${start.workflow}" failed to start: ${redactTokens(err.message)}`.slice(0, 900);
  }
  child.run.parent = { runId: parent.run.id, callId: start.call.id };
  child.run.depth = depth;
  const prior = await child.flushStart({ id: cmd.commandId, kind: "start", outcome: { ok: true, status: "started", run: { id: childId, workflow: start.workflow, version, state: child.run.state, status: child.run.status } } });
  if (prior !== null) return null; // started by an earlier application of this very step (cannot happen in one transaction)
  await tx.$executeRawUnsafe(
    `UPDATE runs SET parent_run_id = $2::uuid, parent_call_id = $3::uuid, call_depth = $4 WHERE id = $1::uuid`,
    childId,
    parent.run.id,
    start.call.id,
    depth,
  );
  await setCallChild(tx, parent.run.id, start.call.id, childId);
  start.call.childRunId = childId;
  effects.queuedMail.push(...child.queuedMail);
  effects.queuedDeliveries.push(...child.queuedDeliveries);
  effects.queuedCalls.push(...child.queuedCalls);
  if (child.run.status !== "running") effects.ended.push(childId);
  // the child's own children (depth + 1), its end if it ended at once, and its cross-run commands
  notifyParentOfEnd(child);
  await startChildRuns(child, effects);
  return null;
}

/**
 * When `step` ended a child run (finished or cancelled), queues the `call` command that answers or
 * fails its parent's call (see the header). A child cancelled by its parent (its slot closed:
 * actor `run:<parent id>`) sends nothing: that slot is no longer open to answer.
 */
export function notifyParentOfEnd(step: Step): void {
  const parent = step.run.parent;
  if (!parent || step.run.status === "running") return;
  if (step.run.status === "cancelled" && step.cancelActor === `run:${parent.runId}`) return;
  const slotless = { runId: parent.runId, callId: parent.callId };
  if (step.run.status === "cancelled") {
    step.queuedCommands.push(callFailed(slotless.runId, slotless.callId, null, `child run cancelled: ${step.cancelReason ?? "cancelled"}`.slice(0, 900)));
    return;
  }
  if (step.workflow.returns && (step.run.result === null || step.run.result === undefined)) {
    step.queuedCommands.push(callFailed(slotless.runId, slotless.callId, null, `child finished in state ${step.run.state} without a result`));
    return;
  }
  // the run's result as the views show it (views.ts runResult): {state, …fields}, `state` always the state
  const body: Record<string, unknown> = { ...(step.run.result ?? {}), state: step.run.state };
  step.queuedCommands.push({
    kind: "call",
    commandId: callCommandId(parent.callId, 1),
    runId: parent.runId,
    callId: parent.callId,
    slotId: "",
    attempt: 1,
    result: { kind: "answer", status: null, ms: 0, body },
  } as CrossRunCommand);
}

/** The `call` command failing call `callId` of run `runId` (slot id filled in by `recordCrossRun` when unknown). */
function callFailed(runId: string, callId: string, slotId: string | null, error: string): CrossRunCommand {
  return {
    kind: "call",
    commandId: callCommandId(callId, 1),
    runId,
    callId,
    slotId: slotId ?? "",
    attempt: 1,
    result: { kind: "fail", status: null, ms: 0, error },
  } as CrossRunCommand;
}

/**
 * Records in `pending_commands` the commands `step` built for other runs (one INSERT each, in its
 * transaction) and hands them to `effects.queuedCommands`. A parent's `call` command learns its
 * slot id here (the child does not hold it): one read of the parent's call by (run_id, id).
 */
async function recordCrossRun(step: Step, effects: ChildEffects): Promise<void> {
  const tx = step.services.tx as Tx;
  for (const c of step.queuedCommands.splice(0)) {
    const cmd = c as Command;
    if (cmd.kind === "call" && cmd.slotId === "") {
      const rows = await tx.$queryRawUnsafe<{ slot_id: string }[]>(`SELECT slot_id::text AS slot_id FROM calls WHERE run_id = $1::uuid AND id = $2::uuid`, cmd.runId, cmd.callId);
      if (rows.length === 0) continue; // the parent is gone (purged)
      cmd.slotId = rows[0].slot_id;
    }
    await recordPending(tx as unknown as Db, step.services.sealer, cmd);
    effects.queuedCommands.push(c);
  }
}
