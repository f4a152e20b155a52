/**
 * Waiting for runs to end (v0.5 Results, issue 40 item 4: `GET /api/runs/{id}/result?waitSeconds=N`)
 * without a worker or a PostgreSQL query per waiter while it waits.
 *
 * How it waits: the step that ends a run (finished or cancelled) commits, and then the process
 * that applied it publishes the run's id on the Redis pub/sub channel
 * `<SLOTFLOW_QUEUE_PREFIX>:run-ended` (`announceRunEnded`; engine/commands/apply.ts). Each web
 * process holds ONE subscription to that channel (`RunEndWaiters`) and keeps its waiters in memory,
 * by run id; a message wakes the waiters of that run, which then read the run once — one read
 * shared by all the waiters of a run woken together. So a waiter costs a timer and a map entry:
 * one read when it arrives, one when it is woken (or its wait runs out), nothing in between.
 *
 * A message can be missed while the subscription is down (a Redis restart); the subscription being
 * confirmed again wakes every waiter to read once more, so no end is missed for longer than the
 * reconnection. A waiter whose time runs out reads once and answers what it finds.
 */
import { redisClient, type RedisClient, type RedisConfig } from "../queue/redis.js";

/** The pub/sub channel of run ends for `queuePrefix`. */
export function runEndedChannel(queuePrefix: string): string {
  return `${queuePrefix}:run-ended`;
}

/** Publishes that `runId` ended; call after the step that ended it committed. Never throws. */
export async function announceRunEnded(publisher: Pick<RedisClient, "publish">, queuePrefix: string, runId: string): Promise<void> {
  await publisher.publish(runEndedChannel(queuePrefix), runId).catch(() => undefined);
}

type Wake = () => void;

export class RunEndWaiters {
  private subscriber: RedisClient | null = null;
  private readonly waiting = new Map<string, Set<Wake>>();
  private readonly channel: string;
  private closed = false;

  constructor(private readonly config: RedisConfig & { queuePrefix: string }) {
    this.channel = runEndedChannel(config.queuePrefix);
  }

  /** How many waiters are waiting now (tests, metrics). */
  get size(): number {
    let n = 0;
    for (const set of this.waiting.values()) n += set.size;
    return n;
  }

  /**
   * Waits up to `ms` for run `runId` to end: registers first, then calls `read` (so an end that
   * lands in between is seen); `ended(value)` says whether what `read` returned is an ended run.
   * Resolves with the last value read: at once when ended, else when woken by the run's end (or a
   * resubscription) and the read shows it ended, or when the time runs out (one last read).
   */
  async wait<T>(runId: string, ms: number, read: () => Promise<T>, ended: (value: T) => boolean): Promise<T> {
    this.subscribe();
    let wake: Wake = () => undefined;
    let woken = new Promise<void>((resolve) => (wake = resolve));
    const register = () => {
      const set = this.waiting.get(runId) ?? new Set<Wake>();
      set.add(wake);
      this.waiting.set(runId, set);
    };
    const unregister = () => {
      const set = this.waiting.get(runId);
      set?.delete(wake);
      if (set && set.size === 0) this.waiting.delete(runId);
    };
    register();
    const deadline = Date.now() + ms;
    try {
      let value = await read();
      while (!ended(value) && !this.closed) {
        const left = deadline - Date.now();
        if (left <= 0) return value;
        let timer: NodeJS.Timeout | undefined;
        const timedOut = await Promise.race([
          woken.then(() => false),
          new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), left))),
        ]);
        clearTimeout(timer);
        unregister();
        woken = new Promise<void>((resolve) => (wake = resolve));
        register();
        value = await read();
        if (timedOut || this.closed) return value;
      }
      return value;
    } finally {
      unregister();
    }
  }

  /** Wakes the waiters of `runId` (or, without it, every waiter). */
  private wake(runId?: string): void {
    const sets = runId === undefined ? [...this.waiting.values()] : [this.waiting.get(runId) ?? new Set<Wake>()];
    for (const set of sets) for (const w of [...set]) w();
  }

  /** Opens the one subscription of this process (once). */
  subscribe(): void {
    if (this.subscriber || this.closed) return;
    const sub = redisClient(this.config, { blocking: true });
    this.subscriber = sub;
    sub.on("error", () => undefined); // reconnects on its own; waits then end by their timers
    sub.on("message", (channel: string, runId: string) => {
      if (channel === this.channel) this.wake(runId);
    });
    sub.on("ready", () => {
      sub.subscribe(this.channel).then(
        () => {
          // an end published while not subscribed may have been missed: everyone reads again
          if (this.subscriber === sub) this.wake();
        },
        () => undefined,
      );
    });
  }

  /** Closes the subscription and wakes every waiter (each reads once and answers at once). */
  close(): void {
    this.closed = true;
    const sub = this.subscriber;
    this.subscriber = null;
    this.wake();
    sub?.disconnect();
  }
}
