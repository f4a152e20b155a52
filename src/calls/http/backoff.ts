/**
 * When the next attempt of a `call http` may run (v0.5, issue 40; docs/language.md "Calls"):
 * exponential from 1 s (1, 2, 4, 8 … s), capped at 5 min, with **full jitter** (a uniform random
 * delay between 0 and that bound), at least what the callee's `Retry-After` asked for (up to 1 h),
 * and never at or past the slot's `Deadline` (then there is no next attempt: the call fails).
 */

/** The first backoff bound, ms. */
export const BACKOFF_BASE_MS = 1000;
/** The highest backoff bound, ms (5 min). */
export const BACKOFF_CAP_MS = 5 * 60_000;
/** The longest `Retry-After` honoured, ms (1 h). */
export const MAX_RETRY_AFTER_MS = 3600_000;

/**
 * `Retry-After` (delay-seconds, or an HTTP date) in ms, capped at MAX_RETRY_AFTER_MS; null when
 * absent or unreadable (RFC 9110 §10.2.3).
 */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | null {
  if (!value) return null;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Math.min(MAX_RETRY_AFTER_MS, Number(text) * 1000);
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.min(MAX_RETRY_AFTER_MS, Math.max(0, at - now));
}

/**
 * The delay, ms, before the attempt after `attempt` (1-based: after the first attempt, the bound
 * is 1 s; after the second, 2 s …), or null when that attempt would not start before `deadline`.
 * `retryAfterMs` (from the callee) is a floor; `random` returns a number in [0, 1).
 */
export function nextAttemptDelayMs(
  attempt: number,
  opts: { retryAfterMs?: number | null; deadline?: Date | null; now?: number; random?: () => number } = {},
): number | null {
  const bound = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.min(30, Math.max(0, attempt - 1)));
  const jittered = Math.floor((opts.random ?? Math.random)() * bound);
  const delay = Math.max(jittered, Math.min(MAX_RETRY_AFTER_MS, opts.retryAfterMs ?? 0));
  const now = opts.now ?? Date.now();
  if (opts.deadline && now + delay >= opts.deadline.getTime()) return null;
  return delay;
}
