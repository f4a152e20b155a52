/**
 * The data of `mail` and `deliveries` jobs (queues.ts): the row to deliver and its run.
 *
 * This release writes `{ outboxId, runId }` and `{ deliveryId, runId }`, so a worker's claim names
 * `(run_id, id)`: a router statement under a distributed PostgreSQL (docs/scaling.md "Which
 * statements are router"). Releases before it wrote the row id alone; such jobs may still wait in
 * Redis across an upgrade, so the workers read both shapes and deliver a job without a run id by
 * its row id (src/outbox/mailer.ts, deliveries.ts).
 */
import { UnrecoverableError } from "bullmq";
import type { DeliveryRef } from "../outbox/deliveries.js";
import type { OutboxRef } from "../outbox/mailer.js";
import type { DeliveryKey, MailKey } from "../engine/sql/deliveries-write.js";
import { UUID } from "../json/uuid.js";

/** A `mail` job as this release enqueues it: the key of a mail row the step queued (engine/sql/deliveries-write.ts). */
export type MailJob = MailKey;

/** A `deliveries` job as this release enqueues it: the key of a delivery row the step queued. */
export type DeliveryJob = DeliveryKey;


/** Thrown for job data that names no row: the job cannot succeed, however often it is retried. */
export class MalformedJobError extends Error {
  override name = "MalformedJobError";
}

function uuidField(data: Record<string, unknown>, field: string, queue: string): string {
  const value = data[field];
  if (typeof value !== "string" || !UUID.test(value)) throw new MalformedJobError(`malformed ${queue} job: "${field}" is not a uuid`);
  return value;
}

function runIdOf(data: Record<string, unknown>, queue: string, needRunId: boolean): string | undefined {
  if (data.runId === undefined && !needRunId) return undefined; // a job of the previous release
  return uuidField(data, "runId", queue);
}

function record(data: unknown, queue: string): Record<string, unknown> {
  if (typeof data !== "object" || data === null) throw new MalformedJobError(`malformed ${queue} job: its data is not an object`);
  return data as Record<string, unknown>;
}

/**
 * A `mail` job's row: `{ outboxId, runId }`, or `{ outboxId }` as the previous release queued it
 * (only when `needRunId` is false: the workers read old jobs, enqueueing writes new ones).
 * Throws MalformedJobError when an id is missing or not a uuid.
 */
export function mailJobOf(data: unknown, needRunId = false): OutboxRef {
  const d = record(data, "mail");
  const outboxId = uuidField(d, "outboxId", "mail");
  const runId = runIdOf(d, "mail", needRunId);
  return runId === undefined ? { outboxId } : { outboxId, runId };
}

/**
 * A `deliveries` job's row: `{ deliveryId, runId }`, or `{ deliveryId }` as the previous release
 * queued it (only when `needRunId` is false). Throws MalformedJobError when an id is missing or
 * not a uuid.
 */
export function deliveryJobOf(data: unknown, needRunId = false): DeliveryRef {
  const d = record(data, "deliveries");
  const deliveryId = uuidField(d, "deliveryId", "deliveries");
  const runId = runIdOf(d, "deliveries", needRunId);
  return runId === undefined ? { deliveryId } : { deliveryId, runId };
}

/**
 * For a worker: `read()`, with malformed job data (MalformedJobError) turned into BullMQ's
 * UnrecoverableError, so the job fails for good instead of being retried (src/queue/retry.ts
 * retries every other failure) — no retry can make it name a row.
 */
export function readJobData<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof MalformedJobError) throw new UnrecoverableError(err.message);
    throw err;
  }
}
