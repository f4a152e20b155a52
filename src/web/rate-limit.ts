/**
 * Per-client rate limit of the callback endpoint (429 `rate-limited` with `Retry-After`), counted
 * in Redis with rate-limiter-flexible so every web process shares one budget per client.
 * The client is the socket's address (or the first `X-Forwarded-For` hop when Koa's `proxy` is on).
 * Budget: SLOTFLOW_RATE_LIMIT_PER_MINUTE requests per client per 60 s.
 */
import type { Context } from "koa";
import type { Redis } from "ioredis";
import { RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import { RefusalCode, RefusalError, refuse } from "../engine/refusals.js";

export interface RateLimit {
  /** Counts one request of the client; throws RefusalError(rate-limited) past the budget. */
  consume(ctx: Context): Promise<void>;
}

export function redisRateLimit(redis: Redis, pointsPerMinute: number, keyPrefix: string): RateLimit {
  const limiter = new RateLimiterRedis({ storeClient: redis, points: pointsPerMinute, duration: 60, keyPrefix: `${keyPrefix}:ratelimit:callback`, rejectIfRedisNotReady: true });
  return {
    async consume(ctx) {
      try {
        await limiter.consume(ctx.ip || "unknown");
      } catch (res) {
        if (!(res instanceof RateLimiterRes)) throw res;
        const seconds = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
        ctx.set("Retry-After", String(seconds));
        throw new RefusalError(refuse(RefusalCode.RateLimited, `Too many requests from this client; retry in ${seconds} s.`, { retryAfterSeconds: seconds }));
      }
    },
  };
}
