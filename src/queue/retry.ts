/**
 * The retry policy of queued jobs (issue 8 item 8: "202 is a durable promise").
 *
 * A job that fails is sorted into one of three kinds by `classifyFailure`:
 *
 * | kind | examples | what happens |
 * |---|---|---|
 * | `infrastructure` | PostgreSQL or Redis unreachable, a connection reset or closed, the server shutting down, a read-only server mid-failover (25006), a pool or lock timeout, a serialization failure or deadlock | retried until it succeeds, however long the outage (capped backoff) |
 * | `deterministic` | a validation error, a value PostgreSQL cannot store (SQLSTATE class 22), a constraint violation (23), a programming error (TypeError…) | ends the job now (BullMQ `UnrecoverableError`); the worker records an incident on the run |
 * | `unknown` | anything else, including job data the worker cannot read (during a rolling deploy it may be a newer version's command) | retried while the job has failed fewer than `UNKNOWN_FAILURE_LIMIT` times in all, then treated as deterministic |
 *
 * Jobs are added with `attempts: UNBOUNDED_ATTEMPTS` (so retries never run out by count) and the
 * custom backoff type `capped`, computed by `cappedBackoff`: 250 ms doubling per failure, capped
 * at 5 s, with ±20 % jitter so a fleet of jobs does not retry in lockstep. Units: milliseconds.
 */
import { UnrecoverableError } from "bullmq";

/** "Never runs out" by count: at the 5 s cap this many attempts last longer than any outage. */
export const UNBOUNDED_ATTEMPTS = 1_000_000_000;
/** Failures in all after which an error of unknown kind is treated as deterministic. */
export const UNKNOWN_FAILURE_LIMIT = 5;
export const RETRY_BASE_DELAY_MS = 250;
export const RETRY_MAX_DELAY_MS = 5000;
const JITTER = 0.2;

/** The name of the custom backoff type (job option `backoff: { type: "capped" }`). */
export const CAPPED_BACKOFF = "capped";

/** Job options of a retried-until-applied job (commands and mail deliveries). */
export const durableJobRetry = {
  attempts: UNBOUNDED_ATTEMPTS,
  backoff: { type: CAPPED_BACKOFF },
} as const;

/**
 * BullMQ's `settings.backoffStrategy` for workers: the delay in ms before retry number
 * `attemptsMade` (1 for the first retry). `random` is injectable for tests.
 */
export function cappedBackoff(attemptsMade: number, random: () => number = Math.random): number {
  const exp = Math.min(RETRY_MAX_DELAY_MS, RETRY_BASE_DELAY_MS * 2 ** Math.max(0, Math.min(30, attemptsMade - 1)));
  return Math.round(exp * (1 - JITTER + 2 * JITTER * random()));
}

export type FailureKind = "infrastructure" | "deterministic" | "unknown";

/** Error codes (Node errno, SQLSTATE, Prisma) that mean a dependency could not answer. */
const TRANSIENT_CODES = new Set([
  // Node sockets and DNS
  "ECONNREFUSED", "ECONNRESET", "ECONNABORTED", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN", "ENOTCONN",
  // PostgreSQL: lock not available, query cancelled (statement timeout), admin/crash shutdown, cannot connect now, too many connections
  "55P03", "57014", "57P01", "57P02", "57P03", "53300", "53400",
  // PostgreSQL: a read-only transaction — a standby not yet promoted, or a demoted primary, during a failover (issue 17)
  "25006",
  // Prisma: cannot reach / timed out / closed / pool timeout / transaction API / write conflict / too many connections
  "P1001", "P1002", "P1008", "P1011", "P1017", "P2024", "P2028", "P2034", "P2037",
]);

/** Driver-adapter error kinds (@prisma/adapter-pg) that mean the database could not answer. */
const TRANSIENT_KINDS = new Set(["DatabaseNotReachable", "ConnectionClosed", "SocketTimeout", "TooManyConnections", "TransactionWriteConflict", "TlsConnectionError"]);

/** SQLSTATE classes of transient conditions: 08 connection exception, 40 transaction rollback, 53 insufficient resources, 57 operator intervention. */
const TRANSIENT_SQLSTATE_CLASS = /^(08|40|53|57)[0-9A-Z]{3}$/;
/** SQLSTATE classes of deterministic failures: 22 data exception, 23 integrity constraint, 42 syntax/access rule. */
const DETERMINISTIC_SQLSTATE_CLASS = /^(22|23|42)[0-9A-Z]{3}$/;

/** Messages of errors that carry no code (pg, ioredis, Prisma's transaction API, BullMQ). */
const TRANSIENT_MESSAGE =
  /connection (terminated|closed|refused|reset|timeout)|terminating connection|can't reach database|server closed the connection|connection is closed|stream isn't writeable|reached the max retries per request|timed out fetching a new connection|transaction already closed|transaction api error|unable to start a transaction|socket hang up|the database system is (starting up|shutting down|in recovery mode)|too many clients|redis is loading/i;

// UnsealError: no key of SLOTFLOW_SEAL_KEY opens a stored value — a configuration fault no retry
// cures until an operator adds the key to the ring (issue 16 item 4; src/engine/failures.ts)
const DETERMINISTIC_NAMES = new Set(["ValidationError", "TypeError", "RangeError", "ReferenceError", "SyntaxError", "UnrecoverableError", "PrismaClientValidationError", "UnsealError"]);

/** The error and its `cause` chain (Prisma and pg wrap the driver's error). */
function chain(err: unknown): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  let e: unknown = err;
  for (let i = 0; i < 6 && e && typeof e === "object"; i++) {
    out.push(e as Record<string, unknown>);
    const rec = e as { cause?: unknown; meta?: { driverAdapterError?: unknown } };
    e = rec.cause ?? rec.meta?.driverAdapterError;
  }
  return out;
}

/** Sorts a job failure; see the module header. */
export function classifyFailure(err: unknown): FailureKind {
  const links = chain(err);
  for (const e of links) {
    const code = typeof e.code === "string" ? e.code : typeof e.originalCode === "string" ? e.originalCode : undefined;
    const kind = typeof e.kind === "string" ? e.kind : undefined;
    const message = typeof e.message === "string" ? e.message : "";
    if (code && (TRANSIENT_CODES.has(code) || TRANSIENT_SQLSTATE_CLASS.test(code))) return "infrastructure";
    if (kind && TRANSIENT_KINDS.has(kind)) return "infrastructure";
    if (e.name === "PrismaClientInitializationError" || e.name === "MaxRetriesPerRequestError") return "infrastructure";
    if (TRANSIENT_MESSAGE.test(message)) return "infrastructure";
  }
  for (const e of links) {
    const code = typeof e.code === "string" ? e.code : typeof e.originalCode === "string" ? e.originalCode : undefined;
    if (code && DETERMINISTIC_SQLSTATE_CLASS.test(code)) return "deterministic";
    if (typeof e.kind === "string" && ["LengthMismatch", "ValueOutOfRange", "InvalidInputValue", "UniqueConstraintViolation", "NullConstraintViolation", "ForeignKeyConstraintViolation"].includes(e.kind)) return "deterministic";
    if (typeof e.name === "string" && DETERMINISTIC_NAMES.has(e.name)) return "deterministic";
    if (e instanceof UnrecoverableError) return "deterministic";
  }
  return "unknown";
}

/**
 * Decides what a failed attempt does. `failuresBefore` is BullMQ's `job.attemptsMade` (failures
 * before this attempt). Returns `"retry"` (re-throw the error) or `"end"` (record an incident and
 * throw `UnrecoverableError`).
 */
export function decideRetry(err: unknown, failuresBefore: number): "retry" | "end" {
  const kind = classifyFailure(err);
  if (kind === "infrastructure") return "retry";
  if (kind === "deterministic") return "end";
  return failuresBefore + 1 >= UNKNOWN_FAILURE_LIMIT ? "end" : "retry";
}
