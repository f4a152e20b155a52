/**
 * What confirming a 202 on a replica costs (issue 17 item 4; docs/operations.md, "Redis failover:
 * what a 202 survives"): against a throwaway master + replica + 3 Sentinels (test helper, free
 * ports), N BullMQ adds through slotflow's Sentinel connection, each alone and each followed by
 * `WAIT 1 1000`, sequentially; prints the median and p99 per add in ms.
 *
 *   node --import=tsx bench/wait-cost.ts [N=2000]
 */
import { Queue, type ConnectionOptions } from "bullmq";
import { redisClient } from "../src/queue/redis.js";
import { startRedisSentinel } from "../test/helpers/redis-topologies.js";

const n = Number(process.argv[2] || 2000);
const servers = await startRedisSentinel();
const conn = redisClient({ redisUrl: "redis://ignored:1", redisSentinels: servers.sentinels.split(",").map((s) => ({ host: "127.0.0.1", port: Number(s.split(":")[1]) })), redisSentinelMaster: servers.name });
const queue = new Queue("commands", { connection: conn as ConnectionOptions, prefix: "waitcost" });
const pct = (xs: number[], p: number) => xs.sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!.toFixed(3);
try {
  for (const wait of [false, true, false, true]) {
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      await queue.add("x", { i }, { jobId: `${wait}-${i}-${Math.random()}`, removeOnComplete: true });
      if (wait) await conn.call("WAIT", 1, 1000);
      times.push(performance.now() - t0);
    }
    console.log(`${wait ? "add + WAIT 1" : "add alone   "}: median ${pct(times, 0.5)} ms, p99 ${pct(times, 0.99)} ms (${n} sequential)`);
  }
} finally {
  await queue.close();
  conn.disconnect();
  await servers.destroy();
}
