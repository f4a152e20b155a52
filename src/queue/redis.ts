/**
 * The one place that builds Redis connections from configuration (issue 17). Every slotflow
 * connection — BullMQ queues, workers and queue events, the rate limiter, the start-up checks,
 * readiness — comes from `redisClient()`, so every process runs on the same topology:
 *
 * | configuration | topology | client |
 * |---|---|---|
 * | REDIS_URL only | one Redis | `new Redis(REDIS_URL)` |
 * | REDIS_CLUSTER_NODES (+ REDIS_URL for credentials/TLS) | Redis Cluster | ioredis `Cluster` over the seed nodes |
 * | REDIS_SENTINELS + REDIS_SENTINEL_MASTER (+ REDIS_URL for credentials/TLS/db) | Sentinel-managed Redis | ioredis `Redis` with `sentinels`/`name`: it asks the Sentinels for the master and follows failovers |
 *
 * `blocking` connections (workers, queue events) retry every command until Redis is back
 * (`maxRetriesPerRequest: null`, BullMQ's requirement); the others fail a command after one retry,
 * and one Redis has not answered within COMMAND_TIMEOUT_MS (a stalled master), so a web request
 * answers 503 instead of hanging. `probe` connections (start-up checks) never
 * reconnect: one attempt, then the error.
 */
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from "ioredis";
import type { Config } from "../config.js";

/** The configuration a connection is built from (tests and benches may give only `redisUrl`). */
export type RedisConfig = Pick<Config, "redisUrl"> & Partial<Pick<Config, "redisClusterNodes" | "redisSentinels" | "redisSentinelMaster">>;

/** A connection to any of the three topologies (ioredis' `Redis` and `Cluster` share the command API). */
export type RedisClient = Redis | Cluster;

export type Topology = "single" | "cluster" | "sentinel";

export function topologyOf(config: RedisConfig): Topology {
  if (config.redisClusterNodes) return "cluster";
  if (config.redisSentinels && config.redisSentinelMaster) return "sentinel";
  return "single";
}

/** The variable(s) that point at Redis for `config`, for one-line errors. */
export function redisVariable(config: RedisConfig): string {
  const t = topologyOf(config);
  return t === "cluster" ? "REDIS_CLUSTER_NODES" : t === "sentinel" ? "REDIS_SENTINELS, REDIS_SENTINEL_MASTER" : "REDIS_URL";
}

/** Where Redis is, for messages: never a password. */
export function redisWhere(config: RedisConfig): string {
  const t = topologyOf(config);
  if (t === "cluster") return `the Redis Cluster at ${config.redisClusterNodes!.map((n) => `${n.host}:${n.port}`).join(",")}`;
  if (t === "sentinel") return `the Redis master "${config.redisSentinelMaster}" of the Sentinels at ${config.redisSentinels!.map((n) => `${n.host}:${n.port}`).join(",")}`;
  try {
    const u = new URL(config.redisUrl);
    if (u.password) u.password = "***";
    return `Redis at ${u.toString().replace(/\/$/, "")}`;
  } catch {
    return "Redis at REDIS_URL";
  }
}

/** Credentials, TLS and db from REDIS_URL, for the topologies where its host is ignored. */
function urlOptions(redisUrl: string): RedisOptions {
  const u = new URL(redisUrl);
  const opts: RedisOptions = {};
  if (u.username) opts.username = decodeURIComponent(u.username);
  if (u.password) opts.password = decodeURIComponent(u.password);
  if (u.protocol === "rediss:") opts.tls = {};
  const db = Number(u.pathname.slice(1));
  if (u.pathname.length > 1 && Number.isInteger(db)) opts.db = db;
  return opts;
}

/** How long a non-blocking connection waits for an answer to one command, ms (a stalled Redis). */
export const COMMAND_TIMEOUT_MS = 5000;

export interface ClientOptions {
  /** Retry every command until Redis is back (workers, queue events). Default false. */
  blocking?: boolean;
  /** One connection attempt, no reconnection, lazy (start-up checks). Default false. */
  probe?: boolean;
  /** Connect timeout, ms. Default 2000. */
  connectTimeoutMs?: number;
}

/** A new connection for `config`'s topology (module header). The caller owns and closes it. */
export function redisClient(config: RedisConfig, opts: ClientOptions = {}): RedisClient {
  const connectTimeout = opts.connectTimeoutMs ?? 2000;
  const base: RedisOptions = {
    maxRetriesPerRequest: opts.probe ? 0 : opts.blocking ? null : 1,
    enableOfflineQueue: opts.probe ? false : !!opts.blocking,
    connectTimeout,
    lazyConnect: !!opts.probe,
    ...(opts.probe ? { retryStrategy: () => null } : {}),
    ...(opts.blocking ? {} : { commandTimeout: COMMAND_TIMEOUT_MS }),
  };
  const topology = topologyOf(config);
  if (topology === "cluster") {
    const { db: _db, ...credentials } = urlOptions(config.redisUrl); // a Cluster has only db 0
    const options: ClusterOptions = {
      redisOptions: { ...credentials, connectTimeout, maxRetriesPerRequest: base.maxRetriesPerRequest, ...(opts.blocking ? {} : { commandTimeout: COMMAND_TIMEOUT_MS }) },
      enableOfflineQueue: base.enableOfflineQueue,
      lazyConnect: base.lazyConnect,
      enableReadyCheck: true,
      // MOVED/ASK during a failover or resharding: follow them; a node that is gone is waited for.
      retryDelayOnFailover: 200,
      retryDelayOnClusterDown: 300,
      retryDelayOnTryAgain: 200,
      ...(opts.probe ? { clusterRetryStrategy: () => null } : { clusterRetryStrategy: (times: number) => Math.min(100 * times, 2000) }),
    };
    return new Cluster(config.redisClusterNodes!, options);
  }
  if (topology === "sentinel") {
    const client = new Redis({
      ...urlOptions(config.redisUrl),
      ...base,
      sentinels: config.redisSentinels!,
      name: config.redisSentinelMaster!,
      role: "master",
      sentinelRetryStrategy: opts.probe ? () => null : (times: number) => Math.min(100 * times, 2000),
      // A master that became a replica (a failover) answers READONLY: reconnect to the new master.
      reconnectOnError: (err) => (err.message.startsWith("READONLY") ? 2 : false),
      failoverDetector: true,
    });
    if (!opts.probe) reresolveWhenStuck(client);
    return client;
  }
  return new Redis(config.redisUrl, {
    ...base,
    reconnectOnError: (err) => (err.message.startsWith("READONLY") ? 2 : false),
  });
}

/** How long a Sentinel connection may stay not ready before it asks the Sentinels again, ms. */
export const STUCK_RECONNECT_MS = 3000;

/**
 * A reconnection that raced a failover can ask a Sentinel before it switched, connect to the old,
 * stalled master (its kernel still accepts connections) and wait there for the ready check until
 * that master wakes; its failover detector subscribed after `+switch-master` and never fires.
 * Seen in the fault suite's 30 s stall: 503s for the whole stall although the replica was
 * promoted in 3 s. So a Sentinel connection that stays not ready for STUCK_RECONNECT_MS is
 * dropped and made again, which asks the Sentinels for the master afresh.
 */
function reresolveWhenStuck(client: Redis): void {
  let since: number | null = null;
  const timer = setInterval(() => {
    if (client.status === "ready" || client.status === "end" || client.status === "wait") {
      since = null;
      if (client.status === "end") clearInterval(timer);
      return;
    }
    since ??= Date.now();
    if (Date.now() - since >= STUCK_RECONNECT_MS) {
      since = null;
      client.disconnect(true);
    }
  }, 500);
  timer.unref();
}

/** Whether `client` is an ioredis Cluster client. */
export function isCluster(client: RedisClient): client is Cluster {
  return (client as Cluster).isCluster === true;
}

/**
 * The probe of one shard's key layout (start-up and readiness, issue 17 item 5): sets
 * `<prefix>:commands:probe` (expires in 10 s) and reads it with `<prefix>:commands:id` in one
 * script, as BullMQ's scripts touch several keys of a queue. A Cluster reached as one node
 * (untagged layout) answers CROSSSLOT or MOVED; a replica answers READONLY. Rejects with Redis's
 * answer.
 */
export async function probeLayout(conn: RedisClient, prefix: string): Promise<void> {
  await conn.eval("redis.call('set', KEYS[1], '1', 'PX', 10000) return redis.call('exists', KEYS[1], KEYS[2])", 2, `${prefix}:commands:probe`, `${prefix}:commands:id`);
}
