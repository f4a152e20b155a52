/**
 * Checks made before a start or an ordinary raise is queued (shared by the HTTP API and the
 * testing kit). The worker checks again under the run lock; these only refuse early, with
 * nothing changed.
 */
import { randomUUID } from "node:crypto";
import type { Db } from "../../db.js";
import type { CompiledParam } from "../../lang/compiled.js";
import { checkBody } from "../values/body.js";
import { DEFAULT_LIMITS, type Limits } from "../../config.js";
import { checkInput } from "../values/input.js";
import type { Command, PrincipalClaims } from "./types.js";
import type { EngineDeps } from "./apply.js";
import { checkBeforeBody } from "./raise.js";
import { slotAccess } from "../../lang/slot-access.js";
import { RuntimeFault } from "../../lang/runtime/interpreter.js";
import { NO_SUCH_RUN_OR_SLOT, RefusalCode, refuse, type Refusal } from "../refusals.js";
import { LIFECYCLES } from "../lifecycles/lifecycles.js";
import { entityJson, Step } from "../step.js";
import { toJson } from "../../lang/runtime/values.js";
import type { CurrentVersions } from "../versions/version-cache.js";
import { currentVersion, loadVersion } from "../versions/workflows.js";
import { UUID } from "../../json/uuid.js";

type Prepared<K extends Command["kind"]> = { ok: true; cmd: Extract<Command, { kind: K }> } | { ok: false; refusal: Refusal };

/**
 * 404 not-found for an unknown workflow; 422 invalid-body for input that does not match its
 * parameters or passes a limit on depth or list length; 413 payload-too-large over the input size
 * limit (input.ts). The command carries the normalised input, never the caller's object.
 * `versions`: the process's cache of current versions (version-cache.ts); without it, one read.
 */
export async function prepareStart(db: Db, workflow: string, input: unknown, limits: Limits = DEFAULT_LIMITS, versions?: CurrentVersions): Promise<Prepared<"start">> {
  // The current version from the process's cache when given (issue 22: no SQL per start), else one read.
  const version = versions ? await versions.get(db, workflow) : await currentVersion(db, workflow);
  if (version === null) return { ok: false, refusal: refuse(RefusalCode.NotFound, `No workflow named "${workflow}" is deployed.`) };
  const wf = await loadVersion(db, workflow, version);
  const checked = checkInput(wf, input, limits);
  if (!checked.ok) return { ok: false, refusal: checked.refusal };
  const normalised: Record<string, unknown> = { ...checked.input };
  for (const e of checked.entities) normalised[e.name] = entityJson(e);
  return { ok: true, cmd: { kind: "start", commandId: randomUUID(), runId: randomUUID(), workflow, version, input: normalised } };
}

/** A run id as the API takes it: a UUID, strictly (issue 28 item 6: a looser shape reached PostgreSQL and answered 500). */
export const RUN_ID = UUID;

/** What the early raise check reads: the database, and to evaluate `Candidates` read-only, the sealer and base URL. */
export type RaiseDeps = Pick<EngineDeps, "db" | "sealer" | "baseUrl">;

/**
 * Early checks of an ordinary raise, in this order (issue 28 items 6–7):
 *   404 not-found — `runId` is not a UUID, no run has it, or its current state has no slot `alias`:
 *       one detail for all (NO_SUCH_RUN_OR_SLOT), naming no state;
 *   for a slot with `Candidates`, or without them in a version compiled since v0.5 (link-only,
 *       lang/slot-access.ts): the worker's checks before the body, read-only on the run as it is
 *       now (commands/raise.ts `checkBeforeBody`: 404 element, 409 slot-closed / slot-not-open,
 *       403 not-a-candidate) — so a non-candidate never learns the event's signature;
 *   422 invalid-body — the arguments do not match the slot's event.
 * The worker checks everything again under the run lock. A `Candidates` expression that fails at
 * run time is left to the worker (which refuses handler-failed).
 */
export async function prepareRaise(
  deps: RaiseDeps,
  runId: string,
  alias: string,
  element: number | null,
  body: unknown,
  principal: PrincipalClaims,
): Promise<Prepared<"raise">> {
  const { db } = deps;
  const notFound = { ok: false as const, refusal: refuse(RefusalCode.NotFound, NO_SUCH_RUN_OR_SLOT) };
  const run = RUN_ID.test(runId) ? await db.run.findUnique({ where: { id: runId.toLowerCase() }, select: { id: true, workflowName: true, version: true, state: true } }) : null;
  if (!run) return notFound;
  const wf = await loadVersion(db, run.workflowName, run.version);
  const decl = wf.states[run.state]?.slots.find((s) => s.alias === alias);
  if (!decl) return notFound;
  if (slotAccess(wf, decl) !== "anyone") {
    const step = await Step.load({ tx: db, sealer: deps.sealer, baseUrl: deps.baseUrl, lifecycles: LIFECYCLES }, wf, run).catch(() => null);
    if (!step) return notFound; // deleted since the read above
    try {
      const before = checkBeforeBody(step, alias, element, { kind: "principal", ...principal });
      if (!before.ok) return { ok: false, refusal: before.refusal };
    } catch (err) {
      if (!(err instanceof RuntimeFault)) throw err;
    }
  }
  return raiseCommand(wf.events[decl.event].params, runId, alias, element, body, principal);
}

/**
 * The last of prepareRaise's checks, for a door that has already read the run and asked the gate
 * itself (the task page: views/task.ts reads the run once and asks commands/gate.ts once, so its
 * POST does not read the run again): 422 invalid-body when `body` does not match `params` (the
 * slot's event's parameters, as the door read them); else the raise command, with the normalised
 * arguments. Reads nothing. The worker checks everything again under the run lock.
 */
export function raiseCommand(
  params: CompiledParam[],
  runId: string,
  alias: string,
  element: number | null,
  body: unknown,
  principal: PrincipalClaims,
): Prepared<"raise"> {
  const checked = checkBody(body, params);
  if (!checked.ok) return { ok: false, refusal: refuse(RefusalCode.InvalidBody, checked.detail, { expects: checked.expects, errors: checked.problems }) };
  const args = Object.fromEntries(Object.entries(checked.args).map(([k, v]) => [k, toJson(v)]));
  return { ok: true, cmd: { kind: "raise", commandId: randomUUID(), runId: runId.toLowerCase(), alias, element, args, principal } };
}

/**
 * A task worker's answer (v0.5 SDK, issue 41 item 3; docs/language.md "Calls at run time": for `task` answers,
 * properties the `returns` event does not declare are refused, as for a link): checked against the
 * `returns` event of the call's slot (`alias` in `state` of the run's version) exactly as a link's
 * body is (values/body.ts `checkBody`). Resolves the answer to hand to the `call` command (the
 * event's parameters, by name), or the 422 invalid-body refusal naming what is wrong; 404
 * not-found when the slot's declaration is gone (never, for a version stored as deployed).
 */
export async function prepareTaskAnswer(
  db: Db,
  task: { workflow: string; version: number; state: string; alias: string },
  answer: unknown,
): Promise<{ ok: true; answer: Record<string, unknown> } | { ok: false; refusal: Refusal }> {
  const wf = await loadVersion(db, task.workflow, task.version);
  const decl = wf.states[task.state]?.slots.find((s) => s.alias === task.alias);
  if (!decl) return { ok: false, refusal: refuse(RefusalCode.NotFound, "This task's call is no longer declared by its workflow.") };
  // a call without `returns` takes an answer with no parameters: `on x()`
  const checked = checkBody(answer, wf.events[decl.event]?.params ?? []);
  if (!checked.ok) return { ok: false, refusal: refuse(RefusalCode.InvalidBody, checked.detail, { expects: checked.expects, errors: checked.problems }) };
  return { ok: true, answer: Object.fromEntries(Object.entries(checked.args).map(([k, v]) => [k, toJson(v)])) };
}
