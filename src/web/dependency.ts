/**
 * Calls to PostgreSQL and Redis made while answering a request. A failure that is not a refusal
 * means the dependency could not answer: the request is refused with 503 `unavailable` and
 * `Retry-After` (HTTP API, last row). A 503 means "not known to be applied" (issue 8 item 9): a
 * command that reached Redis just before the failure is still applied later (its link spent
 * exactly once, as with any other deposit), so the detail tells the client to retry with the
 * same Idempotency-Key to learn the outcome rather than claiming nothing was applied.
 */
import { RefusalCode, RefusalError, refuse } from "../engine/refusals.js";
import type { Logger } from "../log.js";

export async function dependency<T>(log: Logger, what: "database" | "redis", fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof RefusalError) throw err;
    log.warn({ dependency: what, err: err instanceof Error ? err.message : String(err) }, "dependency failed");
    throw new RefusalError(
      refuse(
        RefusalCode.Unavailable,
        `The service cannot reach its ${what === "database" ? "database" : "queue"} right now. This request is not known to have been applied: retry it shortly, with the same Idempotency-Key and body, to learn its outcome.`,
      ),
    );
  }
}
