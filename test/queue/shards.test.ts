/**
 * Queue shards and Redis topology configuration (issue 17 items 1-2): the default layout keeps the
 * key names of earlier versions, a tagged layout gives each shard its own hash tag, a run id
 * always maps to the same shard, `--shards` lists are checked, and the topology variables are
 * validated with one line per problem.
 */
import test from "ava";
import { randomUUID } from "node:crypto";
import { ConfigError, loadConfig } from "../../src/config.js";
import { topologyOf } from "../../src/queue/redis.js";
import { allShards, parseShardList, shardOf, shardPrefix, taggedLayout } from "../../src/queue/shards.js";

test("one shard on one Redis keeps the plain prefix (existing installations keep their queued jobs)", (t) => {
  const config = loadConfig({ SLOTFLOW_QUEUE_PREFIX: "acme" });
  t.is(config.queueShards, 1);
  t.false(taggedLayout(config));
  t.is(shardPrefix(config, 0), "acme");
  t.deepEqual(allShards(config), [0]);
});

test("more shards, or a Cluster, tag each shard's prefix", (t) => {
  const sharded = loadConfig({ SLOTFLOW_QUEUE_PREFIX: "acme", SLOTFLOW_QUEUE_SHARDS: "4" });
  t.deepEqual(allShards(sharded).map((i) => shardPrefix(sharded, i)), ["{acme:0}", "{acme:1}", "{acme:2}", "{acme:3}"]);
  const onCluster = loadConfig({ SLOTFLOW_QUEUE_PREFIX: "acme", REDIS_CLUSTER_NODES: "10.0.0.1:7000,10.0.0.2:7001" });
  t.is(shardPrefix(onCluster, 0), "{acme:0}");
  t.deepEqual(onCluster.redisClusterNodes, [
    { host: "10.0.0.1", port: 7000 },
    { host: "10.0.0.2", port: 7001 },
  ]);
  t.is(topologyOf(onCluster), "cluster");
});

test("a run id always maps to the same shard, whatever its case, and ids spread over every shard", (t) => {
  const config = loadConfig({ SLOTFLOW_QUEUE_SHARDS: "5" });
  const seen = new Set<number>();
  for (let i = 0; i < 500; i++) {
    const id = randomUUID();
    const shard = shardOf(config, id);
    t.true(shard >= 0 && shard < 5);
    if (shardOf(config, id.toUpperCase()) !== shard) t.fail(id);
    seen.add(shard);
  }
  t.is(seen.size, 5);
  t.is(shardOf(loadConfig({}), randomUUID()), 0);
});

test("--shards lists and ranges are checked against the shard count", (t) => {
  t.deepEqual(parseShardList("0-2", 4), [0, 1, 2]);
  t.deepEqual(parseShardList("3, 1,1", 4), [1, 3]);
  t.throws(() => parseShardList("4", 4), { message: /"4" is not a shard or range of shards in 0-3/ });
  t.throws(() => parseShardList("2-1", 4));
  t.throws(() => parseShardList("x", 4));
  t.throws(() => parseShardList("", 4), { message: /no shard/ });
});

test("the topology variables are validated, each problem named", (t) => {
  const problem = (env: NodeJS.ProcessEnv) => t.throws(() => loadConfig(env), { instanceOf: ConfigError })?.message ?? "";
  t.regex(problem({ REDIS_CLUSTER_NODES: "a:1", REDIS_SENTINELS: "b:2", REDIS_SENTINEL_MASTER: "m" }), /cannot both be set/);
  t.regex(problem({ REDIS_SENTINELS: "b:2" }), /REDIS_SENTINEL_MASTER is required/);
  t.regex(problem({ REDIS_SENTINEL_MASTER: "m" }), /REDIS_SENTINELS is required/);
  t.regex(problem({ REDIS_CLUSTER_NODES: "nohostport" }), /REDIS_CLUSTER_NODES must be host:port/);
  t.regex(problem({ SLOTFLOW_QUEUE_SHARDS: "0" }), /SLOTFLOW_QUEUE_SHARDS must be an integer >= 1/);
  t.regex(problem({ SLOTFLOW_QUEUE_SHARDS: "257" }), /at most 256/);
  const sentinel = loadConfig({ REDIS_SENTINELS: "10.0.0.5:26379, [::1]:26380", REDIS_SENTINEL_MASTER: "slotflow" });
  t.deepEqual(sentinel.redisSentinels, [
    { host: "10.0.0.5", port: 26379 },
    { host: "::1", port: 26380 },
  ]);
  t.is(topologyOf(sentinel), "sentinel");
});
