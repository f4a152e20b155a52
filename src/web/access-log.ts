/**
 * The access log and the request-duration metric (issue 8 item 6: redaction is structural).
 *
 * One line per request: `{method, path, status, ms}`. `path` is never the raw path:
 *   - a request that matched a route logs the route's template, its `:token` parameter written
 *     `[redacted]` (`/api/workflow/callback/[redacted]`, `/api/runs/:id`), so a token in a matched
 *     path cannot reach the log whatever its spelling;
 *   - an unmatched path is logged percent-decoded with every run of 32 or more token characters
 *     (`A–Z a–z 0–9 _ -`) replaced by `[redacted]` — a token is 43 such characters, so a mistyped,
 *     re-cased or oddly nested callback path (`/API/WORKFLOW/CALLBACK/…`, `/api/workflow//callback/…`,
 *     `/api/workflow/callback/..;/…`) is blanked too;
 *   - and, whatever the shape of the rest (issue 28, "also check": a token split by `/` into short
 *     pieces was logged verbatim), everything after the first `callback` (any case) and after a
 *     `sfl_` token prefix (any case) is written `[redacted]`.
 */
import type { Middleware } from "koa";
import type { Logger } from "../log.js";
import { metrics } from "../metrics/metrics.js";

const TOKEN_RUN = /[A-Za-z0-9_-]{32,}/g;
/** A callback path's tail (after `callback` and its separators) or a token from its prefix on, any case. */
const CALLBACK_TAIL = /(callback)[/\\;.]*(.+)$|sfl_.*$/is;

/** An unmatched path as the access log writes it. */
export function redactUnmatchedPath(path: string): string {
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    // not valid percent-encoding: redact the raw form
  }
  return decoded.replace(CALLBACK_TAIL, (_all, word: string | undefined) => (word === undefined ? "[redacted]" : `${word}/[redacted]`)).replace(TOKEN_RUN, "[redacted]");
}

/** What the access log writes for a request: its route template, or its redacted path. */
export function loggedPath(matchedRoute: string | undefined, path: string): string {
  return matchedRoute === undefined ? redactUnmatchedPath(path) : matchedRoute.replace(/:token\b/g, "[redacted]");
}

export function accessLog(log: Logger): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const ms = performance.now() - started;
      const matched = (ctx as unknown as { _matchedRoute?: string })._matchedRoute;
      metrics.http.observe({ method: ctx.method, route: matched ?? "unmatched", status: String(ctx.status) }, ms / 1000);
      log.info({ method: ctx.method, path: loggedPath(typeof matched === "string" ? matched : undefined, ctx.path), status: ctx.status, ms: Math.round(ms * 10) / 10 }, "request");
    }
  };
}
