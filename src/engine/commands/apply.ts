/**
 * The one path by which every change reaches a run: `applyCommand` runs a command (start, deposit,
 * raise, expire, revoke, cancel, forward) in one Prisma transaction with the run's row locked.
 *
 * 1. One read (sql/step-read.ts) takes the run row lock (`SELECT … FOR UPDATE`) and then reads
 *    the run, its current slots, tracked rows and live links — every change to a run takes this
 *    lock first, so changes to one run apply one at a time, in lock order, however many workers
 *    run; changes to different runs proceed in parallel. (A queue per run would serialise too,
 *    but needs a queue and a consumer per live run; a row lock costs nothing while a run is idle.)
 * 2. Idempotency: if `applied_commands` holds this command id (returned by the same read), its
 *    recorded outcome is returned and nothing is applied again — a worker that died after commit
 *    but before acknowledging its job is retried safely.
 * 3. The command decides on the locked state in memory; a success flushes the step and records
 *    the outcome in `applied_commands` in one statement (sql/step-write.ts).
 *
 * Round trips of a deposit: BEGIN, the read, the write, COMMIT (bench `deposits` counts them).
 * A start is the exception: no transaction, one statement (`applyStart` below; issue 22).
 * 4. A refusal changes nothing. A RuntimeFault (the workflow's own code failed) discards the step
 *    and records an incident on the run instead: refusal `handler-failed`, links stay live.
 *
 * Database faults propagate (the queue retries the job later); nothing partial is ever committed.
 */
import type { Limits } from "../../config.js";
import type { Db, Tx } from "../../db.js";
import type { Logger } from "../../log.js";
import type { DeliveryKey, MailKey } from "../sql/deliveries-write.js";
import { cancel } from "./cancel.js";
import { deposit } from "./deposit.js";
import { expire } from "./expire.js";
import { forward } from "./forward.js";
import { raise } from "./raise.js";
import { revoke } from "./revoke.js";
import type { CommandResult } from "./result.js";
import { startRun } from "./start.js";
import type { Command, Outcome } from "./types.js";
import { RuntimeFault } from "../../lang/runtime/interpreter.js";
import type { LinkRow, LinkStatus } from "../lifecycles/link.js";
import { RefusalCode, refuse, type LinkEndReason } from "../refusals.js";
import { redactTokens, type Sealer } from "../sealing/seal.js";
import { priorOutcome } from "../sql/applied.js";
import { readStep } from "../sql/step-read.js";
import { Step, type CallJob, type WithdrawnNote } from "../step.js";
import { loadVersion } from "../versions/workflows.js";
import { LIFECYCLES } from "../lifecycles/lifecycles.js";
import { startOpenedCalls } from "../lifecycles/slot.js";
import { applyCallOutcome, loadCalls } from "./call.js";
import { noChildEffects, notifyParentOfEnd, startChildRuns, type ChildEffects } from "./child.js";
import type { ReceiptKeySource } from "../receipts/keys.js";

export interface EngineDeps {
  db: Db;
  sealer: Sealer;
  baseUrl: string;
  log?: Logger;
  /** Input and fan-out limits (config.ts); the defaults when absent. */
  limits?: Limits;
  /** The receipt keys (receipts/keys.ts); absent: completions carry no receipt. */
  receiptKeys?: ReceiptKeySource;
  /**
   * Called with a run's id after the step that ended it (finished or cancelled) committed (v0.5
   * Results: run-end.ts publishes it to the waiters of `GET /api/runs/{id}/result`). Never awaited
   * for the outcome; absent: nobody is told.
   */
  runEnded?: (runId: string) => void;
}

export interface Applied {
  outcome: Outcome;
  /** Outbox rows queued by the step (`{ outboxId, runId }`), handed to the worker's mail pump once committed (src/outbox/mail-pump.ts). */
  queuedMail: MailKey[];
  /** Delivery rows queued by the step (`send webhook` / `send message`, issue 18; `{ deliveryId, runId }`), to enqueue once committed. */
  queuedDeliveries?: DeliveryKey[];
  /** Messages the step withdrew because a link they carry was not live at commit (logged at `warn` by `applyCommand`). */
  withdrawn?: WithdrawnNote[];
  /** Call attempts to hand to the calls worker once committed (v0.5: new calls and scheduled retries). */
  queuedCalls?: CallJob[];
  /** Calls the step cancelled (their slot closed first), for slotflow_calls_total. */
  cancelledCalls?: number;
  /** Of those, `call workflow` calls (v0.5 child runs), for the `type` label. */
  cancelledChildCalls?: number;
  /** A `call` command that was applied: the type of its call (`http`, `workflow`), for the `type` label. */
  callType?: string;
  /**
   * Commands for other runs the step caused (v0.5 child runs, child.ts: a child's end answering its
   * parent's call, a closed `call workflow` slot cancelling its child), already recorded in
   * `pending_commands` in the step's transaction: to enqueue once committed.
   */
  queuedCommands?: Command[];
}

const TX_OPTIONS = { maxWait: 10_000, timeout: 30_000 };

/**
 * Records an incident on the run, unless its latest incident is the same failure of the same
 * command kind (an expiry handler that keeps failing is retried by every sweep; one incident says it).
 */
async function recordIncident(tx: Tx, runId: string, command: string, message: string): Promise<void> {
  const latest = await tx.incident.findFirst({ where: { runId }, orderBy: { id: "desc" }, select: { command: true, message: true } });
  if (latest && latest.command === command && latest.message === message) return;
  await tx.incident.create({ data: { runId, command, code: RefusalCode.HandlerFailed, message } });
}

/**
 * A start (issue 22 item 1): a new run has nothing to lock and nothing to read, so it is decided
 * in memory and written as ONE statement outside any interactive transaction
 * (sql/start-write.ts), which also answers a repeated command id with its recorded outcome. A
 * refusal or a handler failure writes nothing; it probes for an outcome recorded earlier (a
 * retried job whose first attempt committed) and returns that instead, if any.
 * Round trips: 1 (a refusal: 1, the probe).
 */
async function applyStart(deps: EngineDeps, cmd: Extract<Command, { kind: "start" }>): Promise<Applied> {
  const services = { tx: deps.db, sealer: deps.sealer, baseUrl: deps.baseUrl, limits: deps.limits, lifecycles: LIFECYCLES };
  let result: CommandResult;
  try {
    result = await startRun(services, cmd);
    if (result.outcome.ok && result.step) startOpenedCalls(result.step);
  } catch (err) {
    if (!(err instanceof RuntimeFault)) throw err;
    const prior = await priorOutcome(deps.db, cmd.commandId);
    if (prior) return { outcome: prior as Outcome, queuedMail: [] };
    const message = redactTokens(err.message);
    deps.log?.warn({ command: cmd.kind, runId: cmd.runId, err: message }, "handler failed; step discarded");
    return {
      outcome: { ok: false, refusal: refuse(RefusalCode.HandlerFailed, `The workflow failed while handling this request; nothing was applied. ${message}`) },
      queuedMail: [],
    };
  }
  if (!result.outcome.ok || !result.step) {
    const prior = await priorOutcome(deps.db, cmd.commandId);
    return { outcome: (prior as Outcome | null) ?? result.outcome, queuedMail: [] };
  }
  const step = result.step;
  const effects = noChildEffects();
  let prior: unknown | null;
  if (step.childStarts.length === 0) prior = await step.flushStart({ id: cmd.commandId, kind: cmd.kind, outcome: result.outcome });
  else {
    // v0.5 child runs (child.ts): the start and the children it starts commit together
    prior = await deps.db.$transaction(async (tx) => {
      services.tx = tx as unknown as typeof services.tx;
      const p = await step.flushStart({ id: cmd.commandId, kind: cmd.kind, outcome: result.outcome });
      if (p === null) await startChildRuns(step, effects);
      return p;
    }, TX_OPTIONS);
  }
  if (prior !== null) return { outcome: prior as Outcome, queuedMail: [] };
  const applied = withEffects({ outcome: result.outcome, queuedMail: step.queuedMail, queuedDeliveries: step.queuedDeliveries, withdrawn: step.withdrawn, queuedCalls: step.queuedCalls, cancelledCalls: step.cancelledCalls, cancelledChildCalls: step.cancelledChildCalls }, effects);
  logWithdrawn(deps, cmd.runId, applied.withdrawn);
  if (step.run.status !== "running") deps.runEnded?.(step.run.id);
  for (const id of effects.ended) deps.runEnded?.(id);
  return applied;
}

/**
 * Logs, at `warn`, each message a committed step withdrew because a link it carries was not live
 * (v0.5 "Answers people can trust", issue 38): one line per message with the run, the message's
 * outbox id (`send email`) or delivery id and endpoint (`send message`) and the reason
 * (`withdrawn: link burned`) — never its text or a token.
 */
function logWithdrawn(deps: EngineDeps, runId: string, withdrawn: WithdrawnNote[] | undefined): void {
  for (const w of withdrawn ?? []) {
    deps.log?.warn({ runId, ...w }, "message withdrawn: it carries a link that is no longer live");
  }
}

/** Applies `cmd`; see the module header for the contract. */
export async function applyCommand(deps: EngineDeps, cmd: Command): Promise<Applied> {
  if (cmd.kind === "start") return applyStart(deps, cmd);
  let fault: RuntimeFault | null = null;
  let ended = false;
  let effects = noChildEffects();
  const applied = await deps.db.$transaction(async (tx) => {
    effects = noChildEffects(); // a transaction retried from the start starts over
    const services = { tx, sealer: deps.sealer, baseUrl: deps.baseUrl, limits: deps.limits, lifecycles: LIFECYCLES, receiptKeys: deps.receiptKeys };
    const read = await readStep(tx, cmd.runId, cmd.commandId, cmd.kind === "deposit" || cmd.kind === "forward" ? cmd.linkId : null);
    const prior = read.prior;
    if (prior) return { outcome: prior as Outcome, queuedMail: [] };
    if (!read.run) {
      return { outcome: { ok: false as const, refusal: refuse(RefusalCode.NotFound, "No run has this id.") }, queuedMail: [] };
    }
    let result: CommandResult;
    try {
      const run = read.run;
      const step = Step.fromRead(services, await loadVersion(tx, run.workflow_name as string, run.version as number), read);
      if (cmd.kind === "deposit" || cmd.kind === "forward") step.depositLink = linkRowOf(read.link);
      await loadCalls(step);
      result =
        cmd.kind === "deposit" ? await deposit(step, cmd)
        : cmd.kind === "raise" ? await raise(step, cmd)
        : cmd.kind === "revoke" ? await revoke(step, cmd)
        : cmd.kind === "cancel" ? await cancel(step, cmd)
        : cmd.kind === "forward" ? await forward(step, cmd)
        : cmd.kind === "call" ? await applyCallOutcome(step, cmd)
        : await expire(step, cmd);
      if (result.outcome.ok && result.step) startOpenedCalls(result.step);
    } catch (err) {
      if (!(err instanceof RuntimeFault)) throw err;
      fault = err;
      const message = redactTokens(err.message);
      await recordIncident(tx, cmd.runId, cmd.kind, message);
      return {
        outcome: { ok: false as const, refusal: refuse(RefusalCode.HandlerFailed, `The workflow failed while handling this request; nothing was applied. ${message}`) },
        queuedMail: [],
      };
    }
    if (result.outcome.ok && result.step) {
      await result.step.flush({ id: cmd.commandId, kind: cmd.kind, outcome: result.outcome });
      ended = read.run.status === "running" && result.step.run.status !== "running";
      // v0.5 child runs (child.ts): a child's end answers its parent; children start in this transaction
      if (ended) notifyParentOfEnd(result.step);
      await startChildRuns(result.step, effects);
      return withEffects({ outcome: result.outcome, queuedMail: result.step.queuedMail, queuedDeliveries: result.step.queuedDeliveries, withdrawn: result.step.withdrawn, queuedCalls: result.step.queuedCalls, cancelledCalls: result.step.cancelledCalls, cancelledChildCalls: result.step.cancelledChildCalls, callType: cmd.kind === "call" ? [...result.step.calls.values()].find((c) => c.id === cmd.callId)?.type : undefined }, effects);
    }
    return { outcome: result.outcome, queuedMail: [] };
  }, TX_OPTIONS);
  logWithdrawn(deps, cmd.runId, (applied as Applied).withdrawn);
  // v0.5 Results: after commit, so a waiter woken by it reads the ended run
  if (ended) deps.runEnded?.(cmd.runId);
  for (const id of effects.ended) deps.runEnded?.(id);
  if (fault) deps.log?.warn({ command: cmd.kind, runId: cmd.runId, err: redactTokens((fault as RuntimeFault).message) }, "handler failed; step discarded");
  return applied;
}

/** `applied` with what the children it started queued (child.ts) added to its lists. */
function withEffects(applied: Applied, effects: ChildEffects): Applied {
  return {
    ...applied,
    queuedMail: [...applied.queuedMail, ...effects.queuedMail],
    queuedDeliveries: [...(applied.queuedDeliveries ?? []), ...effects.queuedDeliveries],
    queuedCalls: [...(applied.queuedCalls ?? []), ...effects.queuedCalls],
    queuedCommands: effects.queuedCommands as Command[],
  };
}

/** The deposit's link as read under the lock (JSON row → LinkRow), or null. */
function linkRowOf(row: Record<string, unknown> | null): LinkRow | null {
  if (!row) return null;
  return {
    id: row.id as string,
    runId: row.run_id as string,
    slotId: row.slot_id as string,
    mintedVersion: row.minted_version as number,
    status: row.status as LinkStatus,
    endReason: (row.end_reason as LinkEndReason | null) ?? null,
    idempotencyKeySha256: (row.idempotency_key_sha256 as string | null) ?? null,
    idempotencyBodySha256: (row.idempotency_body_sha256 as string | null) ?? null,
  };
}
