/**
 * The rules of an operator's cancel reason (interfaces.md "Runs for operators"), shared by every
 * door that cancels: `POST /api/runs/{id}/cancel` (web/runs-api.ts, which also refuses undeclared
 * members of its body) and the MCP tool cancel_run (src/mcp/tools.ts). Refusals are thrown as
 * RefusalError 422 invalid-body with `expects` and `errors`.
 */
import { CANCEL_REASON_MAX } from "../engine/commands/types.js";
import { RefusalCode, RefusalError, refuse } from "../engine/refusals.js";

/** The longest reason an operator may give for a cancel or a revoke (engine/commands/types.ts). */
export { CANCEL_REASON_MAX };

/** A problem with one member of a body, as `errors` lists it (docs/http-api.md). */
interface BodyProblem {
  name: string;
  problem: string;
}

const REASON_RULE = `a string of 1 to ${CANCEL_REASON_MAX} characters`;
const showMember = (k: string) => `"${k.length > 64 ? `${k.slice(0, 61)}…` : k}"`;

/** The reason if `value` is one (a string of 1–500 characters after trimming, no U+0000), else null. */
function reasonOf(value: unknown): string | null {
  const reason = typeof value === "string" ? value.trim() : "";
  return !reason || reason.length > CANCEL_REASON_MAX || reason.includes("\u0000") ? null : reason;
}

/**
 * Checks an operator's reason: a string of 1–500 characters after trimming; throws 422
 * invalid-body otherwise (interfaces.md "Runs for operators").
 */
export function checkReason(value: unknown): string {
  const reason = reasonOf(value);
  if (reason === null) throw invalidCancel(`Give a reason: ${REASON_RULE}.`, [reasonProblem(value)]);
  return reason;
}

/**
 * Checks a `POST /api/runs/{id}/cancel` body `{"reason": "…"}` and returns the reason. Refuses
 * 422 invalid-body, with `expects` and `errors` (`{name, problem}` for each member at fault), when
 * the body is not an object, the reason is missing or not a string of 1–500 characters
 * (interfaces.md "Runs for operators"), or the body has a member other than `reason` — as every
 * admin body refuses undeclared members (a run's input, an endpoint's `{kind, url}`;
 * docs/http-api.md "Request bodies"), `__proto__` included.
 */
export function checkCancelBody(body: unknown): string {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return checkReason(undefined);
  const unknown = Object.keys(body).filter((k) => k !== "reason");
  if (unknown.length === 0) return checkReason((body as { reason?: unknown }).reason);
  const value = (body as { reason?: unknown }).reason;
  const problems = unknown.map((name) => ({ name, problem: 'is not a member of a cancel body (it takes "reason" only)' }));
  if (reasonOf(value) === null) problems.push(reasonProblem(value));
  const members = `${unknown.length === 1 ? "member" : "members"} ${unknown.map(showMember).join(", ")}`;
  throw invalidCancel(`Unknown ${members}: a cancel takes only "reason" (${REASON_RULE}).`, problems);
}

function reasonProblem(value: unknown): BodyProblem {
  return { name: "reason", problem: value === undefined ? `is required: ${REASON_RULE}` : `must be ${REASON_RULE} (after trimming)` };
}

function invalidCancel(detail: string, errors: BodyProblem[]): RefusalError {
  return new RefusalError(refuse(RefusalCode.InvalidBody, detail, { expects: { reason: "string" }, errors }));
}
