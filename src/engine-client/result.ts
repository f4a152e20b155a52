/**
 * What the engine client answers for a command (issue 39 item 1, "One hallway"): a typed result,
 * never a door's status code. A door (web route, console, Slack, MCP, the testing kit) turns it
 * into its own answer — 200/201/202 and a problem document, a 303 with a notice, a Slack message,
 * a tool result.
 *
 *   applied   the command was applied by a worker under the run lock: the outcome's `status`
 *             (commands/types.ts `Outcome`: "started", "completed", "cancelled", "revoked",
 *             "forwarded", "retried", "failed", …), the run as it stands, and for a deposit that
 *             completed its slot its receipt (compact JWS, when receipts are signed);
 *   accepted  the worker took longer than SLOTFLOW_DEPOSIT_WAIT_MS: the command is recorded
 *             (engine/commands/pending.ts) and will be applied; `runId` names its run;
 *   refused   nothing changed: the refusal, from the early checks (engine/commands/prepare.ts,
 *             redeem.ts), from the worker, or 503 `unavailable` when PostgreSQL or Redis could not
 *             answer (dependency.ts). A door answers the refusal's code as it always has.
 *   replayed  a deposit only: this request, under its Idempotency-Key, is the one that already
 *             completed the slot (callback-links spec §4): nothing is submitted again.
 *
 * A fault that is not a refusal (a bug, a query error) is thrown, as before.
 */
import type { Outcome } from "../engine/commands/types.js";
import type { Refusal } from "../engine/refusals.js";

/** A command applied: the worker's outcome, `ok` dropped. */
export type Applied = { kind: "applied" } & Omit<Extract<Outcome, { ok: true }>, "ok">;
/** A command recorded and queued, not yet applied (the door's 202). */
export interface Accepted {
  kind: "accepted";
  runId: string;
}
/** A command refused; nothing changed. */
export interface Refused {
  kind: "refused";
  refusal: Refusal;
}
/** The result of every command the client submits. */
export type Submitted = Applied | Accepted | Refused;
/** A deposit's result: as any command's, or `replayed` (an Idempotency-Key retry of the request that completed the slot). */
export type Deposited = Submitted | { kind: "replayed"; receipt?: string };

/** `refused` from a refusal. */
export const refused = (refusal: Refusal): Refused => ({ kind: "refused", refusal });

/** A worker's outcome (or "accepted") of a command on run `runId` as a Submitted. */
export function fromOutcome(outcome: Outcome | "accepted", runId: string): Submitted {
  if (outcome === "accepted") return { kind: "accepted", runId };
  if (!outcome.ok) return refused(outcome.refusal);
  const { ok: _ok, ...applied } = outcome;
  return { kind: "applied", ...applied };
}
