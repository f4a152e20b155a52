/**
 * Checks made before a start or an ordinary raise is queued (shared by the HTTP API and the
 * testing kit). The worker checks again under the run lock; these only refuse early, with
 * nothing changed.
 */
import { randomUUID } from "node:crypto";
import type { Db } from "../db.js";
import { checkBody } from "./body.js";
import { DEFAULT_LIMITS, type Limits } from "../config.js";
import { checkInput } from "./input.js";
import type { Command, PrincipalClaims } from "./commands/types.js";
import { RefusalCode, refuse, type Refusal } from "./refusals.js";
import { entityJson } from "./step.js";
import { toJson } from "./values.js";
import type { CurrentVersions } from "./version-cache.js";
import { currentVersion, loadVersion } from "./workflows.js";

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

/** 404 not-found for an unknown run or alias; 422 invalid-body for arguments that do not match the slot's event. */
export async function prepareRaise(
  db: Db,
  runId: string,
  alias: string,
  element: number | null,
  body: unknown,
  principal: PrincipalClaims,
): Promise<Prepared<"raise">> {
  const run = /^[0-9a-f-]{36}$/i.test(runId) ? await db.run.findUnique({ where: { id: runId }, select: { workflowName: true, version: true, state: true } }) : null;
  if (!run) return { ok: false, refusal: refuse(RefusalCode.NotFound, "No run has this id.") };
  const wf = await loadVersion(db, run.workflowName, run.version);
  const decl = wf.states[run.state]?.slots.find((s) => s.alias === alias);
  if (!decl) return { ok: false, refusal: refuse(RefusalCode.NotFound, `The run's current state "${run.state}" has no slot "${alias}".`) };
  const checked = checkBody(body, wf.events[decl.event].params);
  if (!checked.ok) return { ok: false, refusal: refuse(RefusalCode.InvalidBody, checked.detail, { expects: checked.expects, errors: checked.problems }) };
  const args = Object.fromEntries(Object.entries(checked.args).map(([k, v]) => [k, toJson(v)]));
  return { ok: true, cmd: { kind: "raise", commandId: randomUUID(), runId, alias, element, args, principal } };
}
