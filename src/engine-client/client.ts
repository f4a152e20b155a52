/**
 * The engine client (issue 39 item 1, "One hallway"): the one place where a door builds a command,
 * prepares it (engine/commands/prepare.ts, redeem.ts: the early checks, nothing changed), submits
 * it and translates its outcome into a typed result (result.ts). Modelled on Temporal's
 * WorkflowClient, which only builds and sends commands: no status code, no page, no tool answer
 * here — each door (src/web routes, the console, Slack, MCP, the testing kit, the task workers'
 * API) turns a `Submitted` into its own answer.
 *
 * One method per command a door sends: start, deposit (by link), raise (as a principal; raiseChecked
 * for a door that read the run and asked the gate itself), forward,
 * cancel, revoke, completeTask / failTask. Each resolves a `Submitted` (or `Deposited`); every
 * refusal comes back as `{kind: "refused"}` — the early checks', the worker's, and 503
 * `unavailable` when PostgreSQL or Redis could not answer (`guard`, dependency.ts on a server).
 * Other faults are thrown.
 *
 * Built from a Runtime by `engineClient(rt)` (commands go through the queues, waited for up to
 * SLOTFLOW_DEPOSIT_WAIT_MS); the testing kit builds one with its own `send` (applied in process).
 */
import { randomUUID } from "node:crypto";
import { answerCommand, failCommand } from "../calls/task/lease.js";
import { heldTask } from "../calls/task/store.js";
import type { Limits } from "../config.js";
import { prepareRaise, prepareStart, prepareTaskAnswer, raiseCommand, RUN_ID, type RaiseDeps } from "../engine/commands/prepare.js";
import type { CompiledParam } from "../lang/compiled.js";
import { prepareDeposit, prepareForward } from "../engine/commands/redeem.js";
import type { Command, Outcome, PrincipalClaims } from "../engine/commands/types.js";
import { RefusalCode, RefusalError, refuse, type Refusal } from "../engine/refusals.js";
import { fingerprint } from "../engine/values/idempotency.js";
import type { CurrentVersions } from "../engine/versions/version-cache.js";
import type { Logger } from "../log.js";
import type { Runtime } from "../runtime.js";
import { dependency } from "./dependency.js";
import { fromOutcome, refused, type Deposited, type Submitted } from "./result.js";

/** A run id as doors take it (engine/commands/prepare.ts): doors check ids through the client's module. */
export { RUN_ID };

/** A workflow name is an identifier of the flow language, or a built-in's `slotflow.` + an identifier (src/mcp/builtins.ts). */
export const WORKFLOW_NAME = /^(?:slotflow\.)?[A-Za-z_][A-Za-z0-9_]{0,199}$/;

/** How a command is sent: `waitMs` bounds the wait for its outcome; `onQueued` is called once it is queued. */
export interface SendOptions {
  waitMs?: number;
  onQueued?: () => void;
}

/** What the client needs. */
export interface EngineClientDeps {
  /** The database, sealer and base URL the early checks read. */
  engine: RaiseDeps;
  limits: Limits;
  /** The process's cache of current versions (engine/versions/version-cache.ts); without it, one read per start. */
  versions?: CurrentVersions;
  /** Sends one command: its outcome once applied, or "accepted" when the applier was late. */
  send(cmd: Command, opts?: SendOptions): Promise<Outcome | "accepted">;
  /** Wraps each call to PostgreSQL or Redis (dependency.ts on a server: an outage is a RefusalError 503). */
  guard<T>(what: "database" | "redis", fn: () => Promise<T>): Promise<T>;
  log?: Logger;
}

/** The task workers' refusal when a lock token does not hold its task (409 task-lock-lost; web/tasks-api.ts). */
export const lockLost = (): Refusal =>
  refuse(
    RefusalCode.TaskLockLost,
    "This lock token does not hold the task: its lease ran out (the task is offered again as the next attempt), the task was withdrawn, or this attempt's outcome was already given.",
  );

const NO_RUN = (): Refusal => refuse(RefusalCode.NotFound, "No run has this id.");

export class EngineClient {
  constructor(private readonly deps: EngineClientDeps) {}

  /** Runs `fn`, turning a RefusalError it throws (a 503 from `guard`, a refusal of a check) into `refused`. */
  private async refusing<T extends Submitted | Deposited>(fn: () => Promise<T>): Promise<T | Submitted> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof RefusalError) return refused({ code: err.code, detail: err.message, extra: err.extra });
      throw err;
    }
  }

  private submit(cmd: Command, opts?: SendOptions): Promise<Submitted> {
    return this.deps.guard("redis", () => this.deps.send(cmd, opts)).then((o) => fromOutcome(o, cmd.runId));
  }

  /**
   * Starts a run of workflow `name` with `input` (POST /api/workflows/{name}/runs): 404 for a name
   * that is no identifier, prepareStart's checks (404 unknown workflow, 422 invalid-body, 413),
   * then the start command. `beforeSubmit` runs with the new run's id before it is submitted (MCP
   * marks its runs before they exist, issue 38 L5).
   */
  start(name: string, input: unknown, beforeSubmit?: (runId: string) => Promise<void>): Promise<Submitted> {
    return this.refusing(async () => {
      if (!WORKFLOW_NAME.test(name)) return refused(refuse(RefusalCode.NotFound, "No workflow has this name (workflow names are identifiers)."));
      const { engine, limits, versions } = this.deps;
      const prepared = await this.deps.guard("database", () => prepareStart(engine.db, name, input, limits, versions));
      if (!prepared.ok) return refused(prepared.refusal);
      if (beforeSubmit) await beforeSubmit(prepared.cmd.runId);
      return this.submit(prepared.cmd);
    });
  }

  /**
   * A deposit through callback link `token` (callback-links spec §4): 400 invalid-idempotency-key
   * for a bad `Idempotency-Key`, prepareDeposit's 404 / 410 / 422, then the deposit command
   * (409 / 410 / 500 from the worker). `replayed` for a same-key retry of the completing request.
   */
  deposit(token: string, body: unknown, idempotencyKey?: string): Promise<Deposited> {
    return this.refusing<Deposited>(async () => {
      const idempotency = fingerprint(idempotencyKey, body);
      if (idempotency !== null && "code" in idempotency) return refused(idempotency);
      const prepared = await this.deps.guard("database", () => prepareDeposit(this.deps.engine.db, token, body, idempotency));
      if (!prepared.ok) return refused(prepared.refusal);
      if (prepared.cmd === null) return prepared.receipt ? { kind: "replayed", receipt: prepared.receipt } : { kind: "replayed" };
      return this.submit(prepared.cmd);
    });
  }

  /**
   * An ordinary raise as `principal` (language reference §7): prepareRaise's early checks (404, 409
   * slot-closed / slot-not-open, 403 not-a-candidate, 422 invalid-body), then the raise command,
   * which the worker checks again under the run lock. Every door that raises as a principal comes
   * here — the API, the task page, Slack (`via: "slack"`, with its own `commandId` derived from
   * the click so a retried click is the same command, and its own wait).
   */
  raise(
    target: { runId: string; alias: string; element: number | null },
    body: unknown,
    principal: PrincipalClaims,
    opts: { via?: "principal" | "slack"; commandId?: string } & SendOptions = {},
  ): Promise<Submitted> {
    return this.refusing(async () => {
      const prepared = await this.deps.guard("database", () => prepareRaise(this.deps.engine, target.runId, target.alias, target.element, body, principal));
      if (!prepared.ok) return refused(prepared.refusal);
      const cmd = { ...prepared.cmd, ...(opts.via && opts.via !== "principal" ? { via: opts.via } : {}), ...(opts.commandId ? { commandId: opts.commandId } : {}) };
      return this.submit(cmd, { waitMs: opts.waitMs, onQueued: opts.onQueued });
    });
  }

  /**
   * A raise as `principal` for a door that has read the run and asked the gate itself, once (the
   * task page: engine/views/task.ts — the run read once, `Candidates` and `[Authorize]` asked once
   * through commands/gate.ts, the slot seen open in the run's current visit): only the body is
   * checked here (422 invalid-body against `params`, the slot's event's parameters as the door
   * read them; prepare.ts `raiseCommand`), with no second read of the run, then the raise command,
   * which the worker checks again under the run lock (404, 409, 403 as for `raise`).
   */
  raiseChecked(target: { runId: string; alias: string; element: number | null }, params: CompiledParam[], body: unknown, principal: PrincipalClaims): Promise<Submitted> {
    return this.refusing(async () => {
      const prepared = raiseCommand(params, target.runId, target.alias, target.element, body, principal);
      if (!prepared.ok) return refused(prepared.refusal);
      return this.submit(prepared.cmd);
    });
  }

  /** Forwards callback link `token` to `{email}` (v0.4): prepareForward's 404 / 410 / 422, then the forward command; `lang` is the mail's language. */
  forward(token: string, body: unknown, lang: string): Promise<Submitted> {
    return this.refusing(async () => {
      const prepared = await this.deps.guard("database", () => prepareForward(this.deps.engine.db, token, body));
      if (!prepared.ok) return refused(prepared.refusal);
      return this.submit({ ...prepared.cmd, lang });
    });
  }

  /** Cancels run `runId` (issue 23): 404 for an id that is no UUID; the worker's 404 / 409 run-finished. `reason` is checked by the door (cancel-reason.ts). */
  cancel(runId: string, reason: string, actor: string): Promise<Submitted> {
    return this.refusing(async () => {
      if (!RUN_ID.test(runId)) return refused(NO_RUN());
      const result = await this.submit({ kind: "cancel", commandId: randomUUID(), runId: runId.toLowerCase(), reason, actor });
      if (result.kind === "applied") this.deps.log?.info({ runId: runId.toLowerCase(), actor }, "run cancelled");
      return result;
    });
  }

  /** Ends one slot's live link (issue 10 §2; `element`: one element's own link of a fanned-out slot): 404 for an id that is no UUID, or no run, slot or live link. */
  revoke(runId: string, alias: string, opts: { element?: number | null; reason?: string; actor?: string } = {}): Promise<Submitted> {
    return this.refusing(async () => {
      if (!RUN_ID.test(runId)) return refused(NO_RUN());
      const cmd = {
        kind: "revoke" as const,
        commandId: randomUUID(),
        runId: runId.toLowerCase(),
        alias,
        ...(opts.element === null || opts.element === undefined ? {} : { element: opts.element }),
        ...(opts.reason === undefined ? {} : { reason: opts.reason }),
        ...(opts.actor === undefined ? {} : { actor: opts.actor }),
      };
      const result = await this.submit(cmd);
      if (result.kind === "applied") this.deps.log?.info({ runId: cmd.runId, alias, ...(opts.actor ? { actor: opts.actor } : {}) }, "link revoked");
      return result;
    });
  }

  /**
   * A task worker's answer (v0.5 SDK, issue 41 item 3): the task held by `lockToken` (409
   * task-lock-lost otherwise), the answer checked against the call's `returns` event (422), then
   * the call command. Applied with status "completed"; any other outcome of the attempt (its
   * slot closed, its link dead, the run gone, or its lease reported lapsed first) is task-lock-lost.
   */
  completeTask(taskId: string, lockToken: string, answer: unknown): Promise<Submitted> {
    return this.refusing(async () => {
      const task = await this.deps.guard("database", () => heldTask(this.deps.engine.db, taskId, lockToken));
      if (!task) return refused(lockLost());
      const checked = await this.deps.guard("database", () => prepareTaskAnswer(this.deps.engine.db, task, answer));
      if (!checked.ok) return refused(checked.refusal);
      return attemptOnly(await this.submit(answerCommand(task, checked.answer)), ["completed"]);
    });
  }

  /** A task worker's failed attempt: retried while attempts remain unless `retry` is false (status "retried" or "failed"); task-lock-lost as for completeTask. */
  failTask(taskId: string, lockToken: string, error: string, retry: boolean): Promise<Submitted> {
    return this.refusing(async () => {
      const task = await this.deps.guard("database", () => heldTask(this.deps.engine.db, taskId, lockToken));
      if (!task) return refused(lockLost());
      return attemptOnly(await this.submit(failCommand(task, error, retry)), ["retried", "failed"]);
    });
  }
}

/** A task attempt's result: anything but the attempt's own outcome is task-lock-lost. */
function attemptOnly(result: Submitted, expected: readonly string[]): Submitted {
  if (result.kind === "refused") {
    const code = result.refusal.code;
    return code === RefusalCode.SlotClosed || code === RefusalCode.LinkDead || code === RefusalCode.NotFound ? refused(lockLost()) : result;
  }
  // the same attempt reported another way first (the sweeper's "lease ran out"): its outcome stands
  if (result.kind === "applied" && !expected.includes(result.status)) return refused(lockLost());
  return result;
}

/** The client of a server process: commands through the queues (rt.queues.submit), PostgreSQL and Redis failures as 503 (dependency.ts). */
export function engineClient(rt: Runtime): EngineClient {
  return new EngineClient({
    engine: rt.engine,
    limits: rt.config.limits,
    versions: rt.versions,
    send: (cmd, opts) => rt.queues.submit(cmd, opts?.waitMs, opts?.onQueued),
    guard: (what, fn) => dependency(rt.log, what, fn),
    log: rt.log,
  });
}
