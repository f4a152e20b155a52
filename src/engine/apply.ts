/**
 * The one path by which every change reaches a run: `applyCommand` runs a command (start, deposit,
 * raise, expire, revoke) in one Prisma transaction with the run's row locked.
 *
 * 1. `SELECT … FROM runs WHERE id = $1 FOR UPDATE` — every change to a run takes this lock first,
 *    so changes to one run apply one at a time, in lock order, however many workers run; changes
 *    to different runs proceed in parallel. (A queue per run would serialise too, but needs a
 *    queue and a consumer per live run; a row lock costs nothing while a run is idle.)
 * 2. Idempotency: if `applied_commands` holds this command id, its recorded outcome is returned
 *    and nothing is applied again — a worker that died after commit but before acknowledging its
 *    job is retried safely.
 * 3. The command decides on the locked state; a success flushes the step and records the outcome
 *    in `applied_commands` in the same transaction.
 * 4. A refusal changes nothing. A RuntimeFault (the workflow's own code failed) discards the step
 *    and records an incident on the run instead: refusal `handler-failed`, links stay live.
 *
 * Database faults propagate (the queue retries the job later); nothing partial is ever committed.
 */
import type { Limits } from "../config.js";
import type { Db, Tx } from "../db.js";
import type { Logger } from "../log.js";
import { deposit } from "./commands/deposit.js";
import { expire } from "./commands/expire.js";
import { raise } from "./commands/raise.js";
import { revoke } from "./commands/revoke.js";
import type { CommandResult } from "./commands/result.js";
import { startRun } from "./commands/start.js";
import type { Command, Outcome } from "./commands/types.js";
import { RuntimeFault } from "./interpreter.js";
import { RefusalCode, refuse } from "./refusals.js";
import { redactTokens, type Sealer } from "./seal.js";
import { Step, type RunRecord, type RunStatus } from "./step.js";
import { loadVersion } from "./workflows.js";

export interface EngineDeps {
  db: Db;
  sealer: Sealer;
  baseUrl: string;
  log?: Logger;
  /** Input and fan-out limits (config.ts); the defaults when absent. */
  limits?: Limits;
}

export interface Applied {
  outcome: Outcome;
  /** Outbox ids queued by the step, to hand to the mailer once committed. */
  queuedMail: string[];
}

const TX_OPTIONS = { maxWait: 10_000, timeout: 30_000 };

/** Locks the run row and reads it; null when no run has that id. */
export async function lockRun(tx: Tx, runId: string, sealer: Sealer): Promise<RunRecord | null> {
  const rows = await tx.$queryRaw<
    { id: string; workflow_name: string; version: number; state: string; status: string; visit: number; input: unknown; milestones: string[]; finished_at: Date | null }[]
  >`SELECT id, workflow_name, version, state, status, visit, input, milestones, finished_at FROM runs WHERE id = ${runId}::uuid FOR UPDATE`;
  const r = rows[0];
  if (!r) return null;
  return {
    id: r.id,
    workflowName: r.workflow_name,
    version: r.version,
    state: r.state,
    status: r.status as RunStatus,
    visit: r.visit,
    input: sealer.unsealJson(r.input) as Record<string, unknown>,
    milestones: r.milestones ?? [],
    finishedAt: r.finished_at,
  };
}

/**
 * Records an incident on the run, unless its latest incident is the same failure of the same
 * command kind (an expiry handler that keeps failing is retried by every sweep; one incident says it).
 */
async function recordIncident(tx: Tx, runId: string, command: string, message: string): Promise<void> {
  const latest = await tx.incident.findFirst({ where: { runId }, orderBy: { id: "desc" }, select: { command: true, message: true } });
  if (latest && latest.command === command && latest.message === message) return;
  await tx.incident.create({ data: { runId, command, code: RefusalCode.HandlerFailed, message } });
}

/** Applies `cmd`; see the module header for the contract. */
export async function applyCommand(deps: EngineDeps, cmd: Command): Promise<Applied> {
  let fault: RuntimeFault | null = null;
  const applied = await deps.db.$transaction(async (tx) => {
    const services = { tx, sealer: deps.sealer, baseUrl: deps.baseUrl, limits: deps.limits };
    const run = cmd.kind === "start" ? null : await lockRun(tx, cmd.runId, deps.sealer);
    const prior = await tx.appliedCommand.findUnique({ where: { id: cmd.commandId } });
    if (prior) return { outcome: prior.outcome as unknown as Outcome, queuedMail: [] };
    if (cmd.kind !== "start" && !run) {
      return { outcome: { ok: false as const, refusal: refuse(RefusalCode.NotFound, "No run has this id.") }, queuedMail: [] };
    }
    let result: CommandResult;
    try {
      if (cmd.kind === "start") {
        result = await startRun(services, cmd);
      } else {
        const step = await Step.load(services, await loadVersion(tx, run!.workflowName, run!.version), run!);
        result =
          cmd.kind === "deposit" ? await deposit(step, cmd)
          : cmd.kind === "raise" ? await raise(step, cmd)
          : cmd.kind === "revoke" ? await revoke(step, cmd)
          : await expire(step, cmd);
      }
    } catch (err) {
      if (!(err instanceof RuntimeFault)) throw err;
      fault = err;
      const message = redactTokens(err.message);
      if (run) await recordIncident(tx, run.id, cmd.kind, message);
      return {
        outcome: { ok: false as const, refusal: refuse(RefusalCode.HandlerFailed, `The workflow failed while handling this request; nothing was applied. ${message}`) },
        queuedMail: [],
      };
    }
    if (result.outcome.ok && result.step) {
      await result.step.flush();
      await tx.appliedCommand.create({
        data: { id: cmd.commandId, runId: result.step.run.id, kind: cmd.kind, outcome: result.outcome as object },
      });
      return { outcome: result.outcome, queuedMail: result.step.queuedMail };
    }
    return { outcome: result.outcome, queuedMail: [] };
  }, TX_OPTIONS);
  if (fault) deps.log?.warn({ command: cmd.kind, runId: cmd.runId, err: redactTokens((fault as RuntimeFault).message) }, "handler failed; step discarded");
  return applied;
}
