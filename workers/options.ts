/**
 * BullMQ options shared by every worker of a slotflow process (issue 8 items 8 and 11):
 *
 * - `lockDuration` / `stalledInterval` from configuration (SLOTFLOW_WORKER_LOCK_MS,
 *   SLOTFLOW_STALLED_CHECK_MS; defaults 5 s and 2.5 s): a worker renews its jobs' locks every half
 *   lock; once a killed worker's lock has expired, the next stalled check of any live worker moves
 *   its jobs back to waiting. So a killed worker's jobs are taken again within about
 *   lock + 2 × check ≈ 10 s with the defaults (BullMQ's own defaults give 30–60 s).
 * - `maxStalledCount` (SLOTFLOW_MAX_STALLED_COUNT, default 10): a job held by two (or nine)
 *   workers that died in a row is still applied, not failed for good.
 * - `settings.backoffStrategy`: the capped backoff of src/queue/retry.ts (the `capped` type).
 *
 * - `prefix`: the key prefix of the queue's shard `shard` (src/queue/shards.ts, issue 17).
 *
 * Taking a job again is safe: commands are idempotent by command id (src/engine/commands/apply.ts) and mail
 * delivery is at least once.
 */
import type { ConnectionOptions, WorkerOptions } from "bullmq";
import type { Config } from "../src/config.js";
import { redisConnection, type QueuesConfig } from "../src/queue/queues.js";
import type { RedisClient } from "../src/queue/redis.js";
import { cappedBackoff } from "../src/queue/retry.js";
import { shardPrefix } from "../src/queue/shards.js";

export function workerOptions(
  config: Omit<QueuesConfig, "depositWaitMs"> & Pick<Config, "workerLockMs" | "stalledCheckMs" | "maxStalledCount">,
  concurrency: number,
  connection: RedisClient = redisConnection(config, true),
  shard = 0,
): WorkerOptions {
  return {
    connection: connection as ConnectionOptions,
    prefix: shardPrefix(config, shard),
    concurrency,
    lockDuration: config.workerLockMs,
    stalledInterval: config.stalledCheckMs,
    maxStalledCount: config.maxStalledCount,
    settings: { backoffStrategy: (attemptsMade: number) => cappedBackoff(attemptsMade) },
  };
}
