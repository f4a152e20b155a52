/**
 * The Redis persistence check every slotflow process makes at start (issue 8 item 8; relaxed by
 * issue 34 item 3).
 *
 * Queued jobs live in Redis, which should keep them across a restart and never evict them:
 * `appendonly yes` (with `appendfsync everysec`) and `maxmemory-policy noeviction`.
 * `checkRedisPersistence` asks `CONFIG GET appendonly` and `CONFIG GET maxmemory-policy`:
 *
 * | finding | development | production (NODE_ENV=production) |
 * |---|---|---|
 * | both settings right | nothing | nothing |
 * | `appendonly` not `yes` | warning naming it | the same warning (the process starts) |
 * | `maxmemory-policy` not `noeviction` | warning naming it | `VolatileRedisError` (the process refuses to start) unless SLOTFLOW_ALLOW_VOLATILE_REDIS=1, then a warning |
 * | CONFIG refused (managed Redis) or Redis unreachable | warning that it could not be checked | the same warning (the process still starts; requests needing Redis answer 503 until it is back) |
 *
 * Why a Redis without AOF is no longer refused (issue 34 item 3): a 202 is recorded in PostgreSQL
 * before it is given, and the sweeper queues again a recorded command whose job a restart lost
 * (src/engine/commands/pending.ts); every other job is rebuilt from PostgreSQL too (expiries from the slots'
 * deadlines, mail and deliveries from their rows, the sweep scheduler re-asserted). A restart then
 * costs time (a lost 202 is queued again within about 5 s plus a sweep; mail within 30 s), not
 * promises. Eviction is still refused: it removes keys while Redis runs, one at a time — a job's
 * hash without its place in a list, a lock, a queue's metadata — which leaves queues in states no
 * sweep repairs.
 *
 * `appendfsync` is reported in the warning when it is `no` (Redis then flushes only every ~30 s)
 * but is not a reason to refuse.
 */
import type { Redis } from "ioredis";
import { redisClient, type RedisClient, type RedisConfig } from "./redis.js";
import { ConfigError, type Config } from "../config.js";
import type { Logger } from "../log.js";

/** A configuration problem of the Redis server: the CLI prints its message as one `error:` line and exits 1. */
export class VolatileRedisError extends ConfigError {
  override name = "VolatileRedisError";
}

export interface PersistenceFinding {
  /** Problems found, e.g. `appendonly is "no" (needs "yes")`; empty when Redis persists. */
  problems: string[];
  /** Set when the settings could not be read (unreachable, CONFIG disabled). */
  unchecked?: string;
}

async function configGet(redis: Redis | RedisClient, name: string): Promise<string | undefined> {
  const reply = (await redis.call("CONFIG", "GET", name)) as string[];
  return reply[1];
}

/** Reads the settings (on a Cluster: of the node the client picks); never throws. */
export async function inspectRedis(config: string | RedisConfig, timeoutMs = 2000): Promise<PersistenceFinding> {
  const redis = redisClient(typeof config === "string" ? { redisUrl: config } : config, { probe: true, connectTimeoutMs: timeoutMs });
  redis.on("error", () => undefined);
  try {
    await redis.connect();
    const [appendonly, policy, fsync] = await Promise.all([configGet(redis, "appendonly"), configGet(redis, "maxmemory-policy"), configGet(redis, "appendfsync")]);
    const problems: string[] = [];
    if (appendonly !== "yes") problems.push(`appendonly is "${appendonly}" (needs "yes")`);
    if (policy !== "noeviction") problems.push(`maxmemory-policy is "${policy}" (needs "noeviction")`);
    if (appendonly === "yes" && fsync === "no") problems.push(`appendfsync is "no" (use "everysec")`);
    return { problems };
  } catch (err) {
    return { problems: [], unchecked: err instanceof Error ? err.message : String(err) };
  } finally {
    redis.disconnect();
  }
}

/**
 * Logs or refuses as the table in the module header says. Throws `VolatileRedisError` in
 * production on a Redis that does not persist, unless `allowVolatileRedis`.
 */
export async function checkRedisPersistence(config: Pick<Config, "redisUrl" | "nodeEnv" | "allowVolatileRedis"> & RedisConfig, log: Logger): Promise<PersistenceFinding> {
  const finding = await inspectRedis(config);
  if (finding.unchecked) {
    log.warn({ err: finding.unchecked }, "could not check that Redis persists (CONFIG GET appendonly / maxmemory-policy); queued commands may be lost if it does not");
    return finding;
  }
  const refusing = finding.problems.filter((p) => p.startsWith("maxmemory-policy"));
  if (refusing.length > 0 && config.nodeEnv === "production" && !config.allowVolatileRedis) {
    throw new VolatileRedisError(
      `Redis evicts queued jobs: ${refusing.join("; ")}. Set maxmemory-policy noeviction (and appendonly yes, appendfsync everysec), or set SLOTFLOW_ALLOW_VOLATILE_REDIS=1 to start anyway (REDIS_URL).`,
    );
  }
  if (finding.problems.length > 0) {
    log.warn(
      { problems: finding.problems },
      "Redis does not persist queued commands: a restart loses queued jobs, which are rebuilt from PostgreSQL (accepted 202 requests queued again by the sweeper within seconds), and eviction can wedge queues; set appendonly yes, appendfsync everysec, maxmemory-policy noeviction",
    );
  }
  return finding;
}
