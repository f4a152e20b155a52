/**
 * The gate of a principal's raise (spec §1 "Gates": `Candidates` and `[Authorize]`): the one place
 * that decides whether a signed-in principal may answer a slot. Issue 39 item 1: the task page
 * (views/task.ts) had its own copy; now the raise (raise.ts `checkBeforeBody` and the body
 * checks), the web's early check (prepare.ts, through `checkBeforeBody`) and the task page all ask
 * these functions. Reads the step only; changes nothing.
 *
 * - `candidateGate(step, decl, slot, principal)`: for a slot of the run's current visit —
 *   `{refusal, matchers}`: 403 not-a-candidate when the slot is link-only (lang/slot-access.ts:
 *   no `Candidates` in a version compiled since v0.5, issue 38 M2) or its `Candidates`, evaluated
 *   now in the slot's scope, admit no matcher for the principal; `matchers` the evaluated
 *   `Candidates` (null for a link-only slot or one without them). Throws RuntimeFault from a
 *   `Candidates` expression.
 * - `recordedCandidateRefusal(decl, slot row, principal)`: for a slot of an earlier visit (no
 *   longer in the step): the candidates recorded when it was created (lifecycles/slot.ts).
 * - `authorizeRefusal(step, event, principal, args)`: 403 authorize-denied when an `[Authorize]`
 *   predicate of the event is false for the principal (and the answer's `args`). With `args`
 *   null (a page before the answer), a predicate that needs the arguments (a RuntimeFault) cannot
 *   be judged yet and is skipped: the raise judges it.
 */
import type { CompiledEvent, CompiledSlot } from "../../lang/compiled.js";
import { linkOnlyDetail, slotAccess } from "../../lang/slot-access.js";
import { admits, evaluate, RuntimeFault, Scope, type Principal } from "../../lang/runtime/interpreter.js";
import type { Value } from "../../lang/runtime/values.js";
import { slotScope } from "../lifecycles/slot.js";
import { RefusalCode, refuse, type Refusal } from "../refusals.js";
import type { SlotRecord, Step } from "../step.js";

const notACandidate = (alias: string) => refuse(RefusalCode.NotACandidate, `The principal is not a candidate for slot "${alias}".`);

/** The `Candidates` gate of `slot` (declared by `decl`) for `principal`; see the module header. */
export function candidateGate(step: Step, decl: CompiledSlot, slot: SlotRecord, principal: Principal): { refusal: Refusal | null; matchers: Value[] | null } {
  if (slotAccess(step.workflow, decl) === "link-only") return { refusal: refuse(RefusalCode.NotACandidate, linkOnlyDetail(decl.alias)), matchers: null };
  if (!decl.candidates) return { refusal: null, matchers: null };
  const base = slotScope(step, slot);
  const matchers = decl.candidates.map((m) => evaluate(step, base, m));
  return { refusal: admits(matchers, principal) ? null : notACandidate(decl.alias), matchers };
}

/** The candidates recorded on a slot row of an earlier visit, and whether they admit `principal`. */
export function recordedCandidates(
  decl: CompiledSlot,
  row: { candidateUsers: string[]; candidateRoles: string[] },
  principal: Principal,
): { users: string[]; roles: string[]; anyone: boolean; refusal: Refusal | null } {
  const anyone = (decl.candidates ?? []).some((m) => m.kind === "call" && m.callee.kind === "name" && m.callee.name === "anyone");
  const admitted = anyone || row.candidateUsers.includes(principal.id) || row.candidateRoles.some((r) => principal.roles.includes(r));
  return { users: row.candidateUsers, roles: row.candidateRoles, anyone, refusal: admitted ? null : notACandidate(decl.alias) };
}

/** The `[Authorize]` gate of `event` for `principal` and the answer's `args` (null: not known yet); see the module header. */
export function authorizeRefusal(step: Step, event: CompiledEvent, principal: Principal, args: Record<string, Value> | null): Refusal | null {
  for (const attr of event.authorize) {
    let allowed: unknown;
    try {
      allowed = evaluate(step, Scope.of({ ...(args ?? {}), [attr.param.name]: principal }), attr.body);
    } catch (err) {
      if (args === null && err instanceof RuntimeFault) continue; // needs the answer's arguments: judged by the raise
      throw err;
    }
    if (!allowed) return refuse(RefusalCode.AuthorizeDenied, `The principal is not authorized to raise ${event.name}.`);
  }
  return null;
}
