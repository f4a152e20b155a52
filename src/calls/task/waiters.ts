/**
 * How a task poll waits (v0.5 SDK, issue 41 item 3: "the poll costs no PostgreSQL query per idle
 * worker per second"; docs/sdk.md "Task workers").
 *
 * The step that makes a task — or offers it again after a failed attempt — commits, and then the
 * process that applied it publishes the task's type on the Redis pub/sub channel
 * `<SLOTFLOW_QUEUE_PREFIX>:tasks-offered` (`announceTasks`; workers/commands.ts). Each web process
 * holds ONE subscription to it (`TaskWaiters`) and keeps its waiting polls in memory by type. A
 * poll claims once when it arrives (one statement, task/store.ts); finding nothing, it sleeps
 * until a message for one of its types wakes it (one waiter per message, the longest waiting),
 * until the soonest task of its types not yet due becomes due (a retry's backoff: the claim
 * answered when), or until its wait runs out — then it answers an empty list without another
 * query. So an idle worker costs one statement per poll (at most one per `waitSeconds`, ≤ 60 s).
 *
 * Races: every message bumps a per-type count; a poll whose claim ran while a message of its
 * types arrived claims again instead of sleeping, so a task committed during a claim is not
 * missed. A message published while the subscription is down is lost; the subscription being
 * confirmed again wakes every waiter, and polls re-claim at least once per wait anyway.
 */
import { redisClient, type RedisClient, type RedisConfig } from "../../queue/redis.js";

/** The pub/sub channel of offered tasks for `queuePrefix`. */
export function tasksOfferedChannel(queuePrefix: string): string {
  return `${queuePrefix}:tasks-offered`;
}

/** Publishes that tasks of `types` were offered; call after the step that offered them committed. Never throws. */
export async function announceTasks(publisher: Pick<RedisClient, "publish">, queuePrefix: string, types: Iterable<string>): Promise<void> {
  for (const type of new Set(types)) await publisher.publish(tasksOfferedChannel(queuePrefix), type).catch(() => undefined);
}

interface Waiter {
  types: readonly string[];
  wake: () => void;
}

export class TaskWaiters {
  private subscriber: RedisClient | null = null;
  /** Waiting polls, oldest first. */
  private readonly waiting: Waiter[] = [];
  /** Messages seen per type (and `*` for a resubscription). */
  private readonly seen = new Map<string, number>();
  private readonly channel: string;
  private closed = false;
  private confirmed = false;

  constructor(private readonly config: RedisConfig & { queuePrefix: string }) {
    this.channel = tasksOfferedChannel(config.queuePrefix);
  }

  /** Whether the subscription is confirmed now (the web process opens it at start; tests wait for it). */
  get subscribed(): boolean {
    return this.confirmed;
  }

  /** How many polls are waiting now (tests, metrics). */
  get size(): number {
    return this.waiting.length;
  }

  private mark(types: readonly string[]): number {
    let n = this.seen.get("*") ?? 0;
    for (const t of types) n += this.seen.get(t) ?? 0;
    return n;
  }

  /**
   * Runs `claim` until it returns tasks or `ms` has passed, sleeping between claims as the module
   * header says; resolves the tasks claimed (possibly none). `claim` answers the tasks and when
   * the soonest not-yet-due task of `types` is due (or null).
   */
  async poll<T>(types: readonly string[], ms: number, claim: () => Promise<{ tasks: T[]; nextAt: Date | null }>, signal?: AbortSignal): Promise<T[]> {
    this.subscribe();
    const deadline = Date.now() + ms;
    for (;;) {
      const before = this.mark(types);
      const { tasks, nextAt } = await claim();
      if (tasks.length > 0 || this.closed || signal?.aborted) return tasks;
      if (this.mark(types) !== before) continue;
      const left = deadline - Date.now();
      if (left <= 0) return [];
      const until = nextAt ? Math.max(10, Math.min(left, nextAt.getTime() - Date.now() + 5)) : left;
      const woken = await this.sleep(types, until, signal);
      if (!woken && until >= left) return [];
    }
  }

  /** Sleeps up to `ms`: true when woken by a message, false when the time ran out (or aborted). */
  private sleep(types: readonly string[], ms: number, signal?: AbortSignal): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const waiter: Waiter = { types, wake: () => done(true) };
      const onAbort = () => done(false);
      const done = (woken: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        const i = this.waiting.indexOf(waiter);
        if (i >= 0) this.waiting.splice(i, 1);
        resolve(woken);
      };
      this.waiting.push(waiter);
      timer = setTimeout(() => done(false), ms);
      signal?.addEventListener("abort", onAbort, { once: true });
      if (this.closed) done(false);
    });
  }

  /** A message: the longest-waiting poll of `type` claims (or, without a type, every poll). */
  private wake(type?: string): void {
    this.seen.set(type ?? "*", (this.seen.get(type ?? "*") ?? 0) + 1);
    if (type === undefined) {
      for (const w of [...this.waiting]) w.wake();
      return;
    }
    this.waiting.find((w) => w.types.includes(type))?.wake();
  }

  /** Opens the one subscription of this process (once). */
  subscribe(): void {
    if (this.subscriber || this.closed) return;
    const sub = redisClient(this.config, { blocking: true });
    this.subscriber = sub;
    sub.on("error", () => undefined); // reconnects on its own; polls then end by their timers
    sub.on("close", () => (this.confirmed = false));
    sub.on("message", (channel: string, type: string) => {
      if (channel === this.channel) this.wake(type);
    });
    sub.on("ready", () => {
      sub.subscribe(this.channel).then(
        () => {
          // a task offered while not subscribed may have been missed: every poll claims again
          if (this.subscriber === sub) {
            this.confirmed = true;
            this.wake();
          }
        },
        () => undefined,
      );
    });
  }

  /** Closes the subscription; every waiting poll answers (empty) at once. */
  close(): void {
    this.closed = true;
    const sub = this.subscriber;
    this.subscriber = null;
    for (const w of [...this.waiting]) w.wake();
    sub?.disconnect();
  }
}
