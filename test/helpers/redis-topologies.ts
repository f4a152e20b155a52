/**
 * Throwaway Redis topologies for tests (issue 17), all plain `redis-server` processes on free
 * ports, in a temporary directory, killed by PID (and the directory removed) by `destroy()` or
 * when the test process exits — never the machine's own Redis:
 *
 * - `startRedisCluster()`: a Redis Cluster of 3 masters with 1 replica each
 *   (`--cluster-enabled yes` ×6, then `redis-cli --cluster create … --cluster-replicas 1`);
 * - `startRedisSentinel()`: a master, a replica and three Sentinels (quorum 2, down after 1 s).
 *
 * Ports are chosen below 55536 with the port + 10000 also free (a Cluster node's bus port).
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Cluster, Redis } from "ioredis";

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once("error", () => resolve(false));
    s.listen(port, "127.0.0.1", () => s.close(() => resolve(true)));
  });
}

const taken = new Set<number>();
/** A free port p in [20000, 55000) with p + 10000 free too. */
async function clusterPort(): Promise<number> {
  for (;;) {
    const p = 20000 + Math.floor(Math.random() * 35000);
    if (taken.has(p) || taken.has(p + 10000)) continue;
    if ((await portFree(p)) && (await portFree(p + 10000))) {
      taken.add(p);
      taken.add(p + 10000);
      return p;
    }
  }
}

export interface RedisProcess {
  port: number;
  child: ChildProcess;
}

function launch(args: string[], dir: string): ChildProcess {
  const child = spawn("redis-server", args, { stdio: "ignore", cwd: dir });
  child.unref();
  return child;
}

async function answers(port: number, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    const probe = new Redis(port, "127.0.0.1", { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on("error", () => undefined);
    try {
      await probe.connect();
      await probe.ping();
      probe.disconnect();
      return;
    } catch (err) {
      probe.disconnect();
      if (Date.now() > until) throw err;
      await sleep(50);
    }
  }
}

/** A client to one node (no cluster redirection), for administration. */
export function nodeClient(port: number): Redis {
  const c = new Redis(port, "127.0.0.1", { maxRetriesPerRequest: 1, connectTimeout: 2000 });
  c.on("error", () => undefined);
  return c;
}

function killAll(procs: RedisProcess[]): Promise<void> {
  return Promise.all(
    procs.map(
      (p) =>
        new Promise<void>((resolve) => {
          if (p.child.exitCode !== null || p.child.signalCode !== null) return resolve();
          p.child.ref(); // wait for its exit (the children are unref'd so they never hold the test process)
          p.child.once("exit", () => resolve());
          p.child.kill("SIGCONT"); // a stalled (SIGSTOP) server must be woken to die of SIGKILL promptly
          p.child.kill("SIGKILL");
        }),
    ),
  ).then(() => undefined);
}

function cleanupOnExit(procs: RedisProcess[], dir: string): () => Promise<void> {
  const onExit = () => {
    for (const p of procs) p.child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", onExit);
  return async () => {
    await killAll(procs);
    rmSync(dir, { recursive: true, force: true });
    process.off("exit", onExit);
  };
}

export interface RedisClusterServers {
  /** `host:port,…` of every node (REDIS_CLUSTER_NODES). */
  nodes: string;
  procs: RedisProcess[];
  /** Ports of the current masters (asked from the cluster). */
  masters(): Promise<number[]>;
  /** The port of the master that owns `key`'s slot. */
  ownerOf(key: string): Promise<number>;
  /** A Cluster client (for assertions). */
  client(): Cluster;
  destroy(): Promise<void>;
}

/** Masters' ports from CLUSTER NODES as seen by the node on `port`. */
async function mastersSeenBy(port: number): Promise<number[]> {
  const c = nodeClient(port);
  try {
    const text = String(await c.call("CLUSTER", "NODES"));
    return text
      .split("\n")
      .filter((l) => /\bmaster\b/.test(l) && !/\bfail\b/.test(l) && l.split(" ").length > 8)
      .map((l) => Number(/:(\d+)@/.exec(l)![1]));
  } finally {
    c.disconnect();
  }
}

export async function startRedisCluster(): Promise<RedisClusterServers> {
  const dir = mkdtempSync(join(tmpdir(), "slotflow-test-rcluster-"));
  const procs: RedisProcess[] = [];
  const destroy = cleanupOnExit(procs, dir);
  try {
    for (let i = 0; i < 6; i++) {
      const port = await clusterPort();
      const args = ["--port", String(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes", "--cluster-config-file", `nodes-${port}.conf`, "--cluster-node-timeout", "2000", "--save", "", "--appendonly", "yes", "--appendfilename", `aof-${port}.aof`, "--appenddirname", `aof-${port}`, "--dir", dir, "--enable-debug-command", "local"];
      procs.push({ port, child: launch(args, dir) });
    }
    await Promise.all(procs.map((p) => answers(p.port)));
    await run("redis-cli", ["--cluster", "create", ...procs.map((p) => `127.0.0.1:${p.port}`), "--cluster-replicas", "1", "--cluster-yes"], { timeout: 30_000 });
    // Every node agrees the cluster is ok and sees three masters.
    const until = Date.now() + 30_000;
    for (;;) {
      const states = await Promise.all(
        procs.map(async (p) => {
          const c = nodeClient(p.port);
          try {
            return /cluster_state:ok/.test(String(await c.call("CLUSTER", "INFO"))) && (await mastersSeenBy(p.port)).length === 3;
          } catch {
            return false;
          } finally {
            c.disconnect();
          }
        }),
      );
      if (states.every(Boolean)) break;
      if (Date.now() > until) throw new Error("the Redis Cluster did not become ok within 30 s");
      await sleep(200);
    }
  } catch (err) {
    await destroy();
    throw err;
  }
  const nodes = procs.map((p) => `127.0.0.1:${p.port}`).join(",");
  const alive = () => procs.find((p) => p.child.exitCode === null && p.child.signalCode === null)!.port;
  return {
    nodes,
    procs,
    masters: () => mastersSeenBy(alive()),
    async ownerOf(key) {
      const c = nodeClient(alive());
      try {
        const slot = Number(await c.call("CLUSTER", "KEYSLOT", key));
        const slots = (await c.call("CLUSTER", "SLOTS")) as [number, number, [string, number, string]][];
        const range = slots.find(([from, to]) => slot >= from && slot <= to)!;
        return Number(range[2][1]);
      } finally {
        c.disconnect();
      }
    },
    client() {
      const c = new Cluster(procs.map((p) => ({ host: "127.0.0.1", port: p.port })), { redisOptions: { maxRetriesPerRequest: 2 } });
      c.on("error", () => undefined);
      return c;
    },
    destroy,
  };
}

export interface RedisSentinelServers {
  /** `host:port,…` of the three Sentinels (REDIS_SENTINELS). */
  sentinels: string;
  /** The master's name (REDIS_SENTINEL_MASTER). */
  name: string;
  procs: RedisProcess[];
  sentinelPorts: number[];
  /** The port of the current master, as the first Sentinel answers. */
  masterPort(): Promise<number>;
  /** The master and replica processes. */
  servers: RedisProcess[];
  destroy(): Promise<void>;
}

export async function startRedisSentinel(name = "slotflow"): Promise<RedisSentinelServers> {
  const dir = mkdtempSync(join(tmpdir(), "slotflow-test-rsentinel-"));
  const procs: RedisProcess[] = [];
  const destroy = cleanupOnExit(procs, dir);
  const servers: RedisProcess[] = [];
  const sentinelPorts: number[] = [];
  try {
    const master = await clusterPort();
    const replica = await clusterPort();
    const common = (port: number) => ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes", "--appendfilename", `aof-${port}.aof`, "--appenddirname", `aof-${port}`, "--dir", dir, "--enable-debug-command", "local"];
    servers.push({ port: master, child: launch(common(master), dir) });
    await answers(master);
    servers.push({ port: replica, child: launch([...common(replica), "--replicaof", "127.0.0.1", String(master)], dir) });
    procs.push(...servers);
    await answers(replica);
    for (let i = 0; i < 3; i++) {
      const port = await clusterPort();
      const conf = join(dir, `sentinel-${port}.conf`);
      writeFileSync(
        conf,
        [`port ${port}`, `bind 127.0.0.1`, `dir ${dir}`, `sentinel monitor ${name} 127.0.0.1 ${master} 2`, `sentinel down-after-milliseconds ${name} 1000`, `sentinel failover-timeout ${name} 5000`, `sentinel parallel-syncs ${name} 1`, ""].join("\n"),
      );
      procs.push({ port, child: launch([conf, "--sentinel"], dir) });
      sentinelPorts.push(port);
    }
    await Promise.all(sentinelPorts.map((p) => answers(p)));
    // The replica is in sync and every Sentinel knows the master, its replica and the other Sentinels.
    const until = Date.now() + 30_000;
    for (;;) {
      const ok = await Promise.all(
        sentinelPorts.map(async (p) => {
          const c = nodeClient(p);
          try {
            const info = (await c.call("SENTINEL", "MASTER", name)) as string[];
            const field = (k: string) => info[info.indexOf(k) + 1];
            return field("num-slaves") === "1" && Number(field("num-other-sentinels")) === 2;
          } catch {
            return false;
          } finally {
            c.disconnect();
          }
        }),
      );
      const r = nodeClient(replica);
      const synced = /master_link_status:up/.test(String(await r.info("replication").catch(() => "")));
      r.disconnect();
      if (ok.every(Boolean) && synced) break;
      if (Date.now() > until) throw new Error("the Sentinels did not agree on the master within 30 s");
      await sleep(200);
    }
  } catch (err) {
    await destroy();
    throw err;
  }
  return {
    sentinels: sentinelPorts.map((p) => `127.0.0.1:${p}`).join(","),
    name,
    procs,
    sentinelPorts,
    servers,
    async masterPort() {
      const c = nodeClient(sentinelPorts[0]!);
      try {
        const [, port] = (await c.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", name)) as [string, string];
        return Number(port);
      } finally {
        c.disconnect();
      }
    },
    destroy,
  };
}
