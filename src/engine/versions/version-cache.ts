/**
 * The current version of each workflow, cached per process and invalidated across processes by a
 * deploy (issue 22 item 1): a run start looked it up with one SQL round trip per request before.
 *
 * Invalidation is Redis pub/sub (ioredis `subscribe` / `publish`) on the channel
 * `<SLOTFLOW_QUEUE_PREFIX>:workflow-deployed`, whose message is the workflow's name. Channels are
 * not keys, so the same code is correct on one Redis, behind Sentinel and on a Redis Cluster (where
 * a `PUBLISH` reaches the subscribers of every node; deploys are rare, so its broadcast costs
 * nothing worth sharding).
 *
 * Rules that keep it correct:
 * - A value is cached only while this process's subscription is confirmed (the `subscribe` reply
 *   came back and the connection has not closed since): a message published while it was not
 *   subscribed could be lost, so without a subscription every lookup reads PostgreSQL.
 * - The connection closing (a Redis restart, a failover) clears the cache; it is used again only
 *   once the subscription is confirmed again.
 * - A lookup that started before an invalidation does not store what it read (a generation count).
 * - Entries expire after `maxAgeMs` (default 30 s) in any case, which bounds how long a version
 *   changed without a deploy announcement (SQL by hand, a restore) stays unseen.
 *
 * So after `announce(name)` resolves, a start in another process uses the new version as soon as
 * the message reaches it (loopback: well under a millisecond; test `engine/version-cache`).
 */
import type { Db, Tx } from "../../db.js";
import { redisClient, type RedisClient, type RedisConfig } from "../../queue/redis.js";
import { currentVersion } from "./workflows.js";

export type VersionCacheConfig = RedisConfig & { queuePrefix: string };

/** The pub/sub channel of deploy announcements for `queuePrefix`. */
export function deployChannel(queuePrefix: string): string {
  return `${queuePrefix}:workflow-deployed`;
}

export class CurrentVersions {
  private readonly entries = new Map<string, { version: number | null; at: number }>();
  private subscriber: RedisClient | null = null;
  private subscribed = false;
  private generation = 0;
  private readonly channel: string;

  /** `publisher`: a connection to send announcements on (the process's queue connection). */
  constructor(
    private readonly config: VersionCacheConfig,
    private readonly publisher: Pick<RedisClient, "publish">,
    private readonly maxAgeMs = 30_000,
  ) {
    this.channel = deployChannel(config.queuePrefix);
  }

  /** Whether values are being cached (the subscription is confirmed). */
  get live(): boolean {
    return this.subscribed;
  }

  /**
   * The current version of `name` (null: no such workflow). Reads PostgreSQL (workflows.ts
   * `currentVersion`) on a miss; the first call opens the subscription.
   */
  async get(db: Db | Tx, name: string): Promise<number | null> {
    this.subscribe();
    const hit = this.entries.get(name);
    if (hit && this.subscribed && Date.now() - hit.at < this.maxAgeMs) return hit.version;
    const gen = this.generation;
    const version = await currentVersion(db, name);
    if (this.subscribed && gen === this.generation) this.entries.set(name, { version, at: Date.now() });
    return version;
  }

  /** Forgets `name` (or everything) in this process only. */
  invalidate(name?: string): void {
    this.generation++;
    if (name === undefined) this.entries.clear();
    else this.entries.delete(name);
  }

  /**
   * Tells every process that `name`'s current version changed (call after the deploy committed):
   * forgets it here, then publishes. Rejects when Redis does not take the message.
   */
  async announce(name: string): Promise<void> {
    this.invalidate(name);
    await this.publisher.publish(this.channel, name);
  }

  /** Opens the subscription (once); until it is confirmed nothing is cached. */
  subscribe(): void {
    if (this.subscriber) return;
    const sub = redisClient(this.config, { blocking: true });
    this.subscriber = sub;
    sub.on("error", () => undefined); // reconnects on its own; until then nothing is cached
    sub.on("message", (channel: string, name: string) => {
      if (channel === this.channel) this.invalidate(name);
    });
    sub.on("close", () => {
      this.subscribed = false;
      this.invalidate();
    });
    const confirm = () => {
      sub.subscribe(this.channel).then(
        () => {
          if (this.subscriber !== sub) return;
          this.invalidate(); // whatever was announced before this point may have been missed
          this.subscribed = true;
        },
        () => undefined,
      );
    };
    sub.on("ready", confirm);
  }

  /** Closes the subscription (at once, whether or not Redis is reachable). */
  async close(): Promise<void> {
    const sub = this.subscriber;
    this.subscriber = null;
    this.subscribed = false;
    this.invalidate();
    // A subscriber has nothing to flush; `quit` would wait for a Redis that may be down.
    sub?.disconnect();
  }
}
