/**
 * Per-client rate limit of the callback endpoint (429 `rate-limited` with `Retry-After`), counted
 * in Redis with rate-limiter-flexible so every web process shares one budget per client.
 * The client is `ctx.ip`: the socket's address, or behind SLOTFLOW_TRUST_PROXY=N proxies the N-th
 * `X-Forwarded-For` address from the right — the one the outermost trusted proxy saw, never a
 * client-supplied one (issue 28 item 4; src/web/app.ts sets Koa's `proxy` and `maxIpsCount`).
 * Budget: SLOTFLOW_RATE_LIMIT_PER_MINUTE requests per client per 60 s.
 *
 * Local pre-check (issue 7 §2: no Redis round trip per request where the process can answer):
 * - a web process claims points from Redis in leases of `leaseSize(budget)` (1 for budgets under
 *   200 a minute, budget/100 above, at most 100) and spends them locally until the window ends;
 * - once Redis says a client is over budget, the process refuses that client locally until the
 *   window ends.
 * Points are always taken from the shared counter before they are spent, so no client ever gets
 * more than its budget across all processes; the price is that a lease left unspent when a
 * client stops sending lapses with its window (a client spread over P web processes may be
 * refused up to P × (lease − 1) requests early). With the default 600 a minute the lease is 6.
 *
 * In src/http/ (issue 39 item 1): shared by the web doors and MCP over HTTP, which imports no web/ module.
 */
import type { Context } from "koa";
import type { RedisClient } from "../queue/redis.js";
import { RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import { RefusalCode, RefusalError, refuse } from "../engine/refusals.js";

export interface RateLimit {
  /** Counts one request of the client; throws RefusalError(rate-limited) past the budget. */
  consume(ctx: Context): Promise<void>;
}

/** Points claimed from Redis at once for a budget of `pointsPerMinute`. */
export function leaseSize(pointsPerMinute: number): number {
  return Math.max(1, Math.min(100, Math.floor(pointsPerMinute / 100)));
}

interface Local {
  /** Points claimed and not yet spent. */
  left: number;
  /** When the Redis window of the claim ends (ms since epoch). */
  until: number;
  /** Over budget until `until`. */
  blocked: boolean;
}

const MAX_LOCAL_CLIENTS = 10_000;

/**
 * A per-client limiter of `pointsPerMinute` requests per 60 s, counted under
 * `{keyPrefix}:ratelimit:{name}` (`callback` for the callback endpoint; each door of
 * door-limits.ts has its own name, so its budget is its own). `clientOf` names the client a
 * request counts against: by default its address (`ctx.ip`); `/mcp` counts per token
 * (src/mcp/http.ts) — a label, never the token itself.
 */
export function redisRateLimit(redis: RedisClient, pointsPerMinute: number, keyPrefix: string, name = "callback", clientOf: (ctx: Context) => string = (ctx) => ctx.ip || "unknown"): RateLimit {
  const limiter = new RateLimiterRedis({ storeClient: redis, points: pointsPerMinute, duration: 60, keyPrefix: `${keyPrefix}:ratelimit:${name}`, rejectIfRedisNotReady: true });
  const lease = leaseSize(pointsPerMinute);
  const local = new Map<string, Local>();

  const refuseFor = (ctx: Context, msBeforeNext: number): never => {
    const seconds = Math.max(1, Math.ceil(msBeforeNext / 1000));
    ctx.set("Retry-After", String(seconds));
    throw new RefusalError(refuse(RefusalCode.RateLimited, `Too many requests from this client; retry in ${seconds} s.`, { retryAfterSeconds: seconds }));
  };
  const remember = (key: string, entry: Local) => {
    if (local.size >= MAX_LOCAL_CLIENTS) {
      const now = Date.now();
      for (const [k, v] of local) if (v.until <= now) local.delete(k);
      if (local.size >= MAX_LOCAL_CLIENTS) local.delete(local.keys().next().value!);
    }
    local.set(key, entry);
  };

  return {
    async consume(ctx) {
      const key = clientOf(ctx);
      const now = Date.now();
      const mine = local.get(key);
      if (mine && mine.until > now) {
        if (mine.blocked) refuseFor(ctx, mine.until - now);
        if (mine.left > 0) {
          mine.left--;
          return;
        }
      }
      try {
        const res = await limiter.consume(key, lease);
        remember(key, { left: lease - 1, until: now + res.msBeforeNext, blocked: false });
      } catch (res) {
        if (!(res instanceof RateLimiterRes)) throw res;
        // The counter went past the budget with this lease; what was left before it is ours.
        const available = pointsPerMinute - (res.consumedPoints - lease);
        if (available > 0) {
          remember(key, { left: Math.min(lease, available) - 1, until: now + res.msBeforeNext, blocked: false });
          return;
        }
        remember(key, { left: 0, until: now + res.msBeforeNext, blocked: true });
        refuseFor(ctx, res.msBeforeNext);
      }
    },
  };
}
