/**
 * Calls to PostgreSQL and Redis made while answering a request. A failure that is not a refusal
 * and that means the dependency could not answer is refused with 503 `unavailable` and
 * `Retry-After` (HTTP API, last row). A 503 means "not known to be applied" (issue 8 item 9): a
 * command that reached Redis just before the failure is still applied later (its link spent
 * exactly once, as with any other deposit), so the detail tells the client to retry with the
 * same Idempotency-Key to learn the outcome rather than claiming nothing was applied.
 *
 * 503 is kept for a dependency that is really unreachable (issue 8 item 15): an error that a retry
 * cannot cure — a bug, a value the database refuses, a query error — is not turned into
 * "try again shortly" but rethrown (500, logged). See `isUnavailability` for the rule.
 */
import { RefusalCode, RefusalError, refuse } from "../engine/refusals.js";
import type { Logger } from "../log.js";
import { classifyFailure } from "../queue/retry.js";

/** JavaScript's own errors: a fault of the code, never of a dependency. */
const PROGRAM_ERRORS = [TypeError, RangeError, ReferenceError, SyntaxError];

/** SQLSTATE classes of an unavailable server: connection exception, insufficient resources, operator intervention. */
const UNAVAILABLE_SQLSTATE = /^(08|53|57)/;
/** Driver adapter error kinds (@prisma/adapter-pg) that mean the server could not be reached. */
const UNAVAILABLE_KINDS = new Set(["DatabaseNotReachable", "SocketTimeout", "ConnectionClosed", "TooManyConnections", "TlsConnectionError"]);

/**
 * True unless the error is known to be no outage: a JavaScript program error, a Prisma
 * validation error, or a Prisma query error (`P2xxx`) other than a pool timeout (`P2024`) or a
 * raw query failing with an unavailability SQLSTATE or because no server answered. Connection errors (`P1xxx`), driver and
 * Redis errors count as unavailability: when unsure, the client is told to retry.
 */
export function isUnavailability(err: unknown): boolean {
  // A fault the worker would retry as infrastructure (src/queue/retry.ts: a connection refused,
  // reset or terminated, a server shutting down, a pool or transaction timeout) is unavailability.
  if (classifyFailure(err) === "infrastructure") return true;
  if (PROGRAM_ERRORS.some((E) => err instanceof E)) return false;
  const e = err as { name?: string; code?: unknown; meta?: { code?: unknown; driverAdapterError?: { cause?: { kind?: unknown; code?: unknown } } } };
  if (e?.name === "PrismaClientValidationError") return false;
  if (e?.name === "PrismaClientKnownRequestError" && typeof e.code === "string" && e.code.startsWith("P2")) {
    if (e.code === "P2024") return true;
    if (e.code !== "P2010") return false;
    // A raw query (the hot path's, src/engine/sql/): the driver adapter's error says what failed —
    // the server's SQLSTATE when it answered, or a connection-level kind when it could not be
    // reached (Prisma's message then reads "Code: `N/A`").
    const cause = e.meta?.driverAdapterError?.cause;
    if (cause && UNAVAILABLE_KINDS.has(String(cause.kind))) return true;
    const state = cause?.code ?? e.meta?.code;
    return typeof state === "string" && UNAVAILABLE_SQLSTATE.test(state);
  }
  return true;
}

export async function dependency<T>(log: Logger, what: "database" | "redis", fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof RefusalError) throw err;
    if (!isUnavailability(err)) throw err;
    log.warn({ dependency: what, err: err instanceof Error ? err.message : String(err) }, "dependency failed");
    throw new RefusalError(
      refuse(
        RefusalCode.Unavailable,
        `The service cannot reach its ${what === "database" ? "database" : "queue"} right now. This request is not known to have been applied: retry it shortly, with the same Idempotency-Key and body, to learn its outcome.`,
      ),
    );
  }
}
