/**
 * Rate limits on the other doors people and systems knock on (interfaces.md v0.5 "Security, round
 * two", last bullet; issue 38): sign-in, task-page POSTs, the raise API and Slack interactions are
 * limited "as on the callback endpoint" — the same per-client counter in Redis
 * (rate-limit.ts `redisRateLimit`, rate-limiter-flexible, shared by every web process, local
 * leases), the same budget SLOTFLOW_RATE_LIMIT_PER_MINUTE per client per 60 s, and the same
 * answer past it: 429 `rate-limited` with `Retry-After`. Each door counts on its own (key
 * `{prefix}:ratelimit:{door}`), so a burst at one never closes another.
 *
 * | door | requests counted |
 * |---|---|
 * | `sign-in` | every method on `/auth/login` and `/auth/callback` (the issuer redirect, the development sign-in form) |
 * | `task` | `POST /inbox/tasks/…` (a task page's answer) |
 * | `raise` | `POST /api/runs/{id}/slots/{alias}/events` |
 * | `slack` | `POST /api/slack/interactions` |
 *
 * The client is `ctx.ip` (SLOTFLOW_TRUST_PROXY applies, as for the callback endpoint). Paths are
 * matched without regard to letter case or a trailing slash, so no spelling of a door escapes its
 * count. Redis unreachable: 503 `unavailable` (src/engine-client/dependency.ts), as on the callback endpoint. The
 * callback endpoint, its forward form and the responder page keep their own limiter
 * (callback.ts); `/mcp` has its own (src/mcp/http.ts).
 */
import type { Middleware } from "koa";
import type { Logger } from "../log.js";
import type { RedisClient } from "../queue/redis.js";
import { dependency } from "../engine-client/dependency.js";
import { redisRateLimit, type RateLimit } from "../http/rate-limit.js";

/** The doors and which requests each counts (see the module header). */
export const DOORS: { name: string; method: string | null; path: RegExp }[] = [
  { name: "sign-in", method: null, path: /^\/auth\/(?:login|callback)\/?$/i },
  { name: "task", method: "POST", path: /^\/inbox\/tasks\//i },
  { name: "raise", method: "POST", path: /^\/api\/runs\/[^/]+\/slots\/[^/]+\/events\/?$/i },
  { name: "slack", method: "POST", path: /^\/api\/slack\/interactions\/?$/i },
];

/** The door a request knocks on, or null (exported for tests). */
export function doorOf(method: string, path: string): string | null {
  return DOORS.find((d) => (d.method === null || d.method === method) && d.path.test(path))?.name ?? null;
}

/**
 * A middleware counting each request of a door against its client's budget (`pointsPerMinute`,
 * SLOTFLOW_RATE_LIMIT_PER_MINUTE) before any handler runs; past it, RefusalError `rate-limited`
 * (429, `Retry-After`). Mount it after the problem middleware.
 */
export function doorLimits(redis: RedisClient, pointsPerMinute: number, keyPrefix: string, log: Logger): Middleware {
  const limits = new Map<string, RateLimit>(DOORS.map((d) => [d.name, redisRateLimit(redis, pointsPerMinute, keyPrefix, d.name)]));
  return async (ctx, next) => {
    const door = doorOf(ctx.method, ctx.path);
    if (door !== null) await dependency(log, "redis", () => limits.get(door)!.consume(ctx));
    await next();
  };
}
