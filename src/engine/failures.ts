/**
 * A command whose job ended for good (issue 8 item 8): it failed deterministically — the same
 * command would fail the same way however often it was retried (a value PostgreSQL cannot store,
 * a malformed job, a programming error). Nothing of it was applied (its transaction rolled back);
 * the run gets an incident, code `command-failed`, so an operator sees it in `GET /api/runs/{id}`.
 *
 * A `start` whose run was never created has no run to carry the incident: the worker's error log
 * line is its only record. Throws (and the job is retried) when the database cannot be reached.
 */
import type { Db } from "../db.js";
import type { Command } from "./commands/types.js";
import { redactTokens } from "./sealing/seal.js";
import { UUID } from "../json/uuid.js";

export const COMMAND_FAILED = "command-failed";

/**
 * Prefix of the failure message (the job's `failedReason`) of a command that failed on a
 * configuration fault: a stored value no key of SLOTFLOW_SEAL_KEY opens (issue 16 item 4). The web
 * process turns such a failure into 500 `configuration-fault` (src/queue/queues.ts), not 503.
 */
export const CONFIGURATION_FAULT = "configuration fault: ";

/** The message a failed command is recorded and reported with: `CONFIGURATION_FAULT` first for an UnsealError. */
export function failureMessage(err: unknown, message: string): string {
  return (err as { name?: unknown })?.name === "UnsealError" ? `${CONFIGURATION_FAULT}${message}` : message;
}

/**
 * Records the incident; returns false when there is no run to record it on. An identical incident
 * (same run, command, code and message) already recorded is not recorded again, so a responder
 * retrying against a permanent fault does not pile up copies (issue 16 item 4).
 */
export async function recordCommandFailure(db: Db, cmd: Pick<Command, "kind" | "runId">, message: string): Promise<boolean> {
  const run = await db.run.findUnique({ where: { id: cmd.runId }, select: { id: true } });
  if (!run) return false;
  const text = redactTokens(`The ${cmd.kind} command failed and will not be retried; nothing of it was applied. ${message}`).slice(0, 2000);
  const same = await db.incident.findFirst({ where: { runId: run.id, command: cmd.kind, code: COMMAND_FAILED, message: text }, select: { id: true } });
  if (same) return true;
  await db.incident.create({ data: { runId: run.id, command: cmd.kind, code: COMMAND_FAILED, message: text } });
  return true;
}

/** Incident code of a command job the worker refused because slotflow did not add it (issue 28 item 1). */
export const COMMAND_UNSIGNED = "command-unsigned";


/**
 * Records on the run a `command-unsigned` incident for a `commands` job whose signature did not
 * verify (src/queue/signature.ts): someone other than slotflow added it (the queue dashboard, a
 * forged request, a client of Redis), or a release before signed commands queued it. `claimed` is
 * what the job's data says — untrusted: the run id is used only when it is a uuid naming an
 * existing run, and the kind only when it is a plain word; nothing else of the data (which may
 * hold anything) is written. `reason` says which check failed (signature.ts; no key in it).
 * Returns false when there is no such run. Identical incidents are not recorded twice.
 */
export async function recordUnsignedCommand(db: Db, claimed: unknown, jobId: string | undefined, reason: string): Promise<boolean> {
  const data = (claimed !== null && typeof claimed === "object" ? claimed : {}) as { kind?: unknown; runId?: unknown };
  if (typeof data.runId !== "string" || !UUID.test(data.runId)) return false;
  const kind = typeof data.kind === "string" && /^[a-z][a-z-]{0,31}$/.test(data.kind) ? data.kind : "unknown";
  const run = await db.run.findUnique({ where: { id: data.runId }, select: { id: true } });
  if (!run) return false;
  const id = typeof jobId === "string" ? jobId.replace(/[^A-Za-z0-9_.:-]/g, "?").slice(0, 80) : "?";
  const text = redactTokens(`A ${kind} job (id ${id}) for this run was refused and nothing of it was applied: ${reason}. slotflow did not add it — it was added through the queue dashboard or straight into Redis, or queued by a release before command jobs were signed (docs/deployment.md).`);
  const same = await db.incident.findFirst({ where: { runId: run.id, command: kind, code: COMMAND_UNSIGNED, message: text }, select: { id: true } });
  if (same) return true;
  await db.incident.create({ data: { runId: run.id, command: kind, code: COMMAND_UNSIGNED, message: text } });
  return true;
}
