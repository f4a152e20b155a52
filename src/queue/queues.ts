/**
 * The BullMQ queues and their job catalog.
 *
 * | queue | job | data | produced by | consumed by |
 * |---|---|---|---|---|
 * | `commands` | start, deposit, raise, expire | a `Command` (commands/types.ts), id = commandId | web, sweeper | worker: applyCommand |
 * | `mail` | deliver | `{ outboxId }`, id = outboxId | worker after commit, sweeper | worker: deliverOutbox |
 * | `sweep` | sweep | `{}` (a job scheduler, every SLOTFLOW_SWEEP_INTERVAL_MS) | sweeper | sweeper |
 *
 * Job data is validated when enqueued and again when processed. No job ever carries a token.
 * A deposit's job id is the request's own random command id, never derived from the link: BullMQ
 * ignores an `add` whose id already exists, and a second poster must never be handed the outcome
 * of the first one's job.
 */
import { Queue, QueueEvents, type ConnectionOptions, type Job } from "bullmq";
import { Redis } from "ioredis";
import type { Config } from "../config.js";
import { validateCommand, type Command, type Outcome } from "../engine/commands/types.js";
import { durableJobRetry } from "./retry.js";

export const QUEUE = { commands: "commands", mail: "mail", sweep: "sweep" } as const;

/** A Redis connection for BullMQ. `blocking` connections (workers, queue events) retry forever. */
export function redisConnection(config: Pick<Config, "redisUrl">, blocking: boolean): Redis {
  return new Redis(config.redisUrl, {
    maxRetriesPerRequest: blocking ? null : 1,
    enableOfflineQueue: blocking,
    connectTimeout: 2000,
    lazyConnect: false,
  });
}

export class Queues {
  readonly commands: Queue;
  readonly mail: Queue;
  readonly sweep: Queue;
  private events: QueueEvents | null = null;
  private eventsConnection: Redis | null = null;
  private readonly connection: Redis;

  constructor(readonly config: Pick<Config, "redisUrl" | "queuePrefix" | "depositWaitMs">) {
    this.connection = redisConnection(config, false);
    this.connection.on("error", () => undefined); // surfaced as failed commands; logged by callers
    const opts = { connection: this.connection as ConnectionOptions, prefix: config.queuePrefix };
    this.commands = new Queue(QUEUE.commands, opts);
    this.mail = new Queue(QUEUE.mail, opts);
    this.sweep = new Queue(QUEUE.sweep, opts);
  }

  private queueEvents(): QueueEvents {
    if (!this.events) {
      const conn = redisConnection(this.config, true);
      conn.on("error", () => undefined);
      this.eventsConnection = conn;
      this.events = new QueueEvents(QUEUE.commands, { connection: conn as ConnectionOptions, prefix: this.config.queuePrefix, autorun: true });
    }
    return this.events;
  }

  /**
   * Starts listening for job completions (call once at start-up so the first wait is not slow).
   * Resolves false when Redis did not answer within `timeoutMs`; the process still starts and
   * answers 503 until Redis is back.
   */
  async ready(timeoutMs = 3000): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      return await Promise.race([this.queueEvents().waitUntilReady().then(() => true), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Enqueues a command without waiting. */
  async enqueue(cmd: Command, opts: { removeOnComplete?: boolean } = {}): Promise<Job> {
    validateCommand(cmd);
    return this.commands.add(cmd.kind, cmd, {
      jobId: cmd.commandId,
      ...durableJobRetry, // retried until applied; see retry.ts
      removeOnComplete: opts.removeOnComplete ? true : { age: 3600, count: 10_000 },
      removeOnFail: { age: 24 * 3600 },
    });
  }

  /**
   * Enqueues a command and waits up to `waitMs` for a worker to apply it. Returns its outcome, or
   * `"accepted"` when the wait ran out (the command will still be applied). Throws when Redis is
   * unreachable or the job failed for good.
   */
  async submit(cmd: Command, waitMs = this.config.depositWaitMs): Promise<Outcome | "accepted"> {
    const events = this.queueEvents();
    const job = await this.enqueue(cmd);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"accepted">((resolve) => {
      timer = setTimeout(() => resolve("accepted"), waitMs);
    });
    try {
      return await Promise.race([job.waitUntilFinished(events, waitMs + 5000) as Promise<Outcome>, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async enqueueMail(outboxIds: string[]): Promise<void> {
    if (outboxIds.length === 0) return;
    await this.mail.addBulk(
      outboxIds.map((outboxId) => ({
        name: "deliver",
        data: { outboxId },
        opts: { jobId: outboxId, ...durableJobRetry, removeOnComplete: true, removeOnFail: { age: 24 * 3600 } },
      })),
    );
  }

  /** Redis answers within `timeoutMs`? (readiness; waits for a connection still being made) */
  async ping(timeoutMs = 1000): Promise<boolean> {
    try {
      if (this.connection.status !== "ready") {
        await new Promise<void>((resolve, reject) => {
          const onReady = () => {
            clearTimeout(timer);
            resolve();
          };
          const timer = setTimeout(() => {
            this.connection.off("ready", onReady);
            reject(new Error("not ready"));
          }, timeoutMs);
          this.connection.once("ready", onReady);
        });
      }
      return (await this.connection.ping()) === "PONG";
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.events?.close(), this.commands.close(), this.mail.close(), this.sweep.close()]);
    this.eventsConnection?.disconnect();
    this.connection.disconnect();
  }
}
