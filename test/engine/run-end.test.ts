/**
 * Waiting for a run's end (v0.5 Results; engine/run-end.ts), on real Redis: 200 waiters of one
 * run cost one read each when they arrive and ONE read shared by all of them when the run's end
 * is announced — no read while they wait (no polling); a waiter of another run is not woken; a
 * wait that runs out reads once more and returns what it finds.
 */
import test from "ava";
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { announceRunEnded, RunEndWaiters } from "../../src/engine/run-end.js";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

test("200 waiters: no read while waiting, one shared read when the end is announced", async (t) => {
  const queuePrefix = `sft-re-${randomUUID().slice(0, 8)}`;
  const waiters = new RunEndWaiters({ redisUrl: REDIS_URL, queuePrefix });
  const publisher = new Redis(REDIS_URL);
  t.teardown(() => {
    waiters.close();
    publisher.disconnect();
  });
  let ended = false;
  let reads = 0;
  let inflight: Promise<boolean> | null = null;
  // the route's shared read (web/run-result.ts readShared): one query for the readers of one moment
  const read = () => {
    inflight ??= Promise.resolve().then(() => {
      reads++;
      inflight = null;
      return ended;
    });
    return inflight;
  };
  // Until a probe's end reaches a waiter, the subscription is not confirmed (and its confirmation
  // wakes every waiter once): wait for that first, so the count below sees only the real waiters.
  let probed = false;
  let probeDone = false;
  const probe = waiters.wait("probe", 60_000, async () => probed, (v) => v).then(() => (probeDone = true));
  while (!probeDone) {
    probed = true;
    await publisher.publish(`${queuePrefix}:run-ended`, "probe");
    await new Promise((r) => setTimeout(r, 20));
  }
  await probe;
  const all = Array.from({ length: 200 }, () => waiters.wait("run-a", 60_000, read, (v) => v));
  const other = waiters.wait("run-b", 60_000, () => Promise.resolve(false), (v) => v);
  while (waiters.size < 201) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => setTimeout(r, 50)); // their arrival reads settle
  const readsWhileWaiting = reads;
  t.true(readsWhileWaiting <= 200, "at most one read per waiter on arrival");
  await new Promise((r) => setTimeout(r, 200));
  t.is(reads, readsWhileWaiting, "nothing is read while they wait");
  ended = true;
  await announceRunEnded(publisher, queuePrefix, "run-a");
  const results = await Promise.all(all);
  t.true(results.every((v) => v === true));
  t.is(reads, readsWhileWaiting + 1, "one read, shared, for all the waiters woken together");
  t.is(waiters.size, 1, "the waiter of another run still waits");
  waiters.close();
  t.false(await other, "closing wakes it: it reads once and answers what it finds");
});

test("a wait that runs out reads once more and returns the run as it is", async (t) => {
  const waiters = new RunEndWaiters({ redisUrl: REDIS_URL, queuePrefix: `sft-re-${randomUUID().slice(0, 8)}` });
  t.teardown(() => waiters.close());
  let reads = 0;
  const value = await waiters.wait("run-x", 50, async () => ++reads, () => false);
  // one read on arrival, one when the time ran out — and, when the subscription was confirmed
  // within those 50 ms (its confirmation wakes every waiter), one more in between
  t.true(reads === 2 || reads === 3, `${reads} reads`);
  t.is(value, reads, "the answer is what the last read found");
  t.is(waiters.size, 0);
});
