/**
 * Calls to PostgreSQL and Redis made while answering a request. A failure that is not a refusal
 * means the dependency could not answer: the request is refused with 503 `unavailable` and
 * `Retry-After` (HTTP API, last row), and since nothing was committed, nothing was applied.
 * (A command already enqueued when Redis fails may still be applied later; its link is then
 * spent exactly once, as with any other deposit.)
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
      refuse(RefusalCode.Unavailable, `The service cannot reach its ${what === "database" ? "database" : "queue"} right now; nothing was applied. Try again shortly.`),
    );
  }
}
