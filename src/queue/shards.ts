/**
 * Queue shards and their key layout (issue 17, SLOTFLOW_QUEUE_SHARDS).
 *
 * BullMQ keeps every key of a queue under `<prefix>:<queue>:…` and runs multi-key Lua scripts on
 * them, so on a Redis Cluster all of a queue's keys must hash to one slot: the prefix carries a
 * hash tag (BullMQ's documented way). Each shard has its own tag, so a Cluster spreads the shards
 * over its masters:
 *
 * | layout | when | prefix of shard i | keys (commands queue) |
 * |---|---|---|---|
 * | plain | one shard, not a Cluster (the default; the key names of every earlier version) | `<SLOTFLOW_QUEUE_PREFIX>` | `slotflow:commands:wait` |
 * | tagged | SLOTFLOW_QUEUE_SHARDS > 1, or REDIS_CLUSTER_NODES set | `{<SLOTFLOW_QUEUE_PREFIX>:<i>}` | `{slotflow:0}:commands:wait`, `{slotflow:1}:commands:wait`… |
 *
 * A command goes to the shard of its run: `shardOf(runId)` (FNV-1a of the run id, modulo the
 * shards), so every command of a run — its start (the run id is made before the start is
 * enqueued), deposits, raises, expiries, revocations — sits in one queue. A mail delivery goes to
 * the shard of its outbox id (its job id, so a re-enqueue by the sweeper lands on the same queue
 * and de-duplicates). The `sweep` queue (one job scheduler) lives on shard 0.
 *
 * The number of shards is fixed per installation: changing it moves runs to other queues, so it
 * is done with the queues drained (docs/deployment.md, "Redis Cluster and queue shards").
 */
import type { Config } from "../config.js";

export type ShardConfig = Pick<Config, "queuePrefix"> & Partial<Pick<Config, "queueShards" | "redisClusterNodes">>;

/** How many shards `config` has (1 when unset). */
export function shardCount(config: ShardConfig): number {
  return config.queueShards ?? 1;
}

/** Whether the key layout is tagged (table above). */
export function taggedLayout(config: ShardConfig): boolean {
  return shardCount(config) > 1 || !!config.redisClusterNodes;
}

/** The BullMQ prefix of shard `shard` (table above). */
export function shardPrefix(config: ShardConfig, shard: number): string {
  return taggedLayout(config) ? `{${config.queuePrefix}:${shard}}` : config.queuePrefix;
}

/** FNV-1a, 32 bits, of a string's UTF-16 code units: stable across versions and processes. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** The shard of a key (a run id, an outbox id): 0 … shards − 1. Case-insensitive (UUIDs). */
export function shardOf(config: ShardConfig, key: string): number {
  const n = shardCount(config);
  return n === 1 ? 0 : fnv1a(key.toLowerCase()) % n;
}

/** Every shard: [0, 1, … shards − 1]. */
export function allShards(config: ShardConfig): number[] {
  return Array.from({ length: shardCount(config) }, (_, i) => i);
}

/**
 * Parses a worker's `--shards` list: `0,2,5` or ranges `0-3`. Throws an Error naming the bad part
 * when a shard is malformed or not below `count`.
 */
export function parseShardList(raw: string, count: number): number[] {
  const picked = new Set<number>();
  for (const part of raw.split(",").map((p) => p.trim()).filter((p) => p !== "")) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    const from = m ? Number(m[1]) : NaN;
    const to = m?.[2] !== undefined ? Number(m[2]) : from;
    if (!m || to < from || to >= count) throw new Error(`--shards: "${part}" is not a shard or range of shards in 0-${count - 1} (SLOTFLOW_QUEUE_SHARDS=${count})`);
    for (let i = from; i <= to; i++) picked.add(i);
  }
  if (picked.size === 0) throw new Error(`--shards: no shard given`);
  return [...picked].sort((a, b) => a - b);
}
