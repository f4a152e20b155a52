/**
 * The BullMQ queues and their job catalog.
 *
 * | queue | job | data | produced by | consumed by |
 * |---|---|---|---|---|
 * | `commands` | start, deposit, raise, expire | a `Command` (commands/types.ts), id = commandId | web, sweeper | worker: applyCommand |
 * | `mail` | deliver | `{ outboxId }`, id = outboxId | worker after commit, sweeper | worker: deliverOutbox |
 * | `deliveries` | attempt | `{ deliveryId }`, id = `<deliveryId>-a<attempt>` (delayed to its time) | worker after commit, the worker itself (retries), sweeper, redeliver | worker: attemptDelivery (issue 18) |
 * | `sweep` | sweep | `{}` (a job scheduler, every SLOTFLOW_SWEEP_INTERVAL_MS) | sweeper | sweeper |
 *
 * Job data is validated when enqueued and again when processed. No job ever carries a token.
 * A deposit's job id is the request's own random command id, never derived from the link: BullMQ
 * ignores an `add` whose id already exists, and a second poster must never be handed the outcome
 * of the first one's job.
 */
import { Job, Queue, QueueEvents, type ConnectionOptions } from "bullmq";
import { Redis } from "ioredis";
import type { Config } from "../config.js";
import { validateCommand, type Command, type Outcome } from "../engine/commands/types.js";
import { durableJobRetry } from "./retry.js";

export const QUEUE = { commands: "commands", mail: "mail", sweep: "sweep", deliveries: "deliveries" } as const;

/**
 * Options of every `commands` job (the id is the command id, set per job): retried until applied
 * after infrastructure failures, with capped backoff (retry.ts).
 */
export const COMMAND_JOB_OPTIONS = {
  ...durableJobRetry,
  removeOnComplete: { age: 3600, count: 10_000 },
  removeOnFail: { age: 24 * 3600 },
} as const;

/** A Redis connection for BullMQ. `blocking` connections (workers, queue events) retry forever. */
export function redisConnection(config: Pick<Config, "redisUrl">, blocking: boolean): Redis {
  return new Redis(config.redisUrl, {
    maxRetriesPerRequest: blocking ? null : 1,
    enableOfflineQueue: blocking,
    connectTimeout: 2000,
    lazyConnect: false,
  });
}

/** How long the one look at a job after a wait ran out may take (ms). */
const LATE_LOOK_MS = 500;
/** How long `close()` waits for BullMQ to close its clients before disconnecting them (ms). */
const CLOSE_GRACE_MS = 2000;

type WaitResult = { kind: "completed"; value: Outcome } | { kind: "failed"; reason: string } | { kind: "timeout" };

export class Queues {
  readonly commands: Queue;
  readonly mail: Queue;
  readonly sweep: Queue;
  readonly deliveries: Queue;
  private events: QueueEvents | null = null;
  private eventsConnection: Redis | null = null;
  private readonly connection: Redis;
  /** Waits in progress, by command id (= job id). */
  private readonly waiting = new Map<string, (r: WaitResult) => void>();

  constructor(readonly config: Pick<Config, "redisUrl" | "queuePrefix" | "depositWaitMs">) {
    this.connection = redisConnection(config, false);
    this.connection.on("error", () => undefined); // surfaced as failed commands; logged by callers
    const opts = { connection: this.connection as ConnectionOptions, prefix: config.queuePrefix };
    this.commands = new Queue(QUEUE.commands, opts);
    this.mail = new Queue(QUEUE.mail, opts);
    this.sweep = new Queue(QUEUE.sweep, opts);
    this.deliveries = new Queue(QUEUE.deliveries, opts);
    // Connection errors surface as failed calls (503 for the web); without a listener BullMQ
    // prints every reconnect attempt to stderr.
    for (const q of [this.commands, this.mail, this.sweep, this.deliveries]) q.on("error", () => undefined);
  }

  private queueEvents(): QueueEvents {
    if (!this.events) {
      const conn = redisConnection(this.config, true);
      conn.on("error", () => undefined);
      this.eventsConnection = conn;
      // A 2 s block (BullMQ's default is 10 s) bounds how long a closed or cut-off reader lingers
      // (BullMQ's watchdog keeps the process alive block + 1 s); under load reads return at once.
      const events = new QueueEvents(QUEUE.commands, { connection: conn as ConnectionOptions, prefix: this.config.queuePrefix, autorun: true, blockingTimeout: 2000 });
      // Two listeners for the life of the process, whatever the number of waits (issue 8 item 13:
      // Job.waitUntilFinished added a 'closing' listener to the Queue per wait).
      events.on("completed", ({ jobId, returnvalue }) => this.settle(jobId, { kind: "completed", value: returnvalue as unknown as Outcome }));
      events.on("failed", ({ jobId, failedReason }) => this.settle(jobId, { kind: "failed", reason: failedReason }));
      events.on("error", () => undefined); // a dropped connection: waits end by their own timer
      this.events = events;
    }
    return this.events;
  }

  private settle(jobId: string, result: WaitResult): void {
    const resolve = this.waiting.get(jobId);
    if (!resolve) return;
    this.waiting.delete(jobId);
    resolve(result);
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
      ...COMMAND_JOB_OPTIONS,
      jobId: cmd.commandId,
      ...(opts.removeOnComplete ? { removeOnComplete: true } : {}),
    });
  }

  /**
   * Enqueues many commands in one Redis call (`addBulk`: one MULTI of the add script per job),
   * for the sweeper's batches of expiries.
   */
  async enqueueMany(cmds: Command[], opts: { removeOnComplete?: boolean } = {}): Promise<void> {
    if (cmds.length === 0) return;
    for (const cmd of cmds) validateCommand(cmd);
    await this.commands.addBulk(
      cmds.map((cmd) => ({
        name: cmd.kind,
        data: cmd,
        opts: { ...COMMAND_JOB_OPTIONS, jobId: cmd.commandId, ...(opts.removeOnComplete ? { removeOnComplete: true } : {}) },
      })),
    );
  }

  /**
   * Enqueues a command and waits up to `waitMs` for a worker to apply it. Returns its outcome, or
   * `"accepted"` when the wait ran out (the command will still be applied). Throws when the
   * enqueue fails (Redis unreachable) or the job failed for good.
   *
   * The wait is registered under the command id (= the job id) before the job is added, so the
   * completion cannot be missed and no "is it already finished?" call is needed; completions
   * arrive through the one QueueEvents stream. The wait itself never rejects: if Redis drops
   * while waiting, the timer ends it and one look at the job (which may fail too) decides between
   * the outcome and "accepted" (issue 8 item 10: Job.waitUntilFinished rejected inside a Promise
   * executor, an unhandled rejection that killed the web process).
   */
  async submit(cmd: Command, waitMs = this.config.depositWaitMs): Promise<Outcome | "accepted"> {
    this.queueEvents();
    const id = cmd.commandId;
    let timer: NodeJS.Timeout | undefined;
    const finished = new Promise<WaitResult>((resolve) => {
      this.waiting.set(id, resolve);
      timer = setTimeout(() => this.settle(id, { kind: "timeout" }), waitMs);
    });
    try {
      await this.enqueue(cmd);
    } catch (err) {
      clearTimeout(timer);
      this.waiting.delete(id);
      throw err;
    }
    const result = await finished;
    clearTimeout(timer);
    if (result.kind === "completed") return result.value;
    if (result.kind === "failed") throw new Error(result.reason);
    return this.lateOutcome(id);
  }

  /** After a wait ran out: the job's outcome if it finished meanwhile (a missed event), else "accepted". */
  private async lateOutcome(id: string): Promise<Outcome | "accepted"> {
    // Redis unreachable: the command may still be applied; the client learns it by retrying.
    if (this.connection.status !== "ready") return "accepted";
    let timer: NodeJS.Timeout | undefined;
    const giveUp = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), LATE_LOOK_MS);
    });
    try {
      const job = await Promise.race([Job.fromId(this.commands, id), giveUp]);
      if (job?.finishedOn && !job.failedReason && job.returnvalue) return job.returnvalue as Outcome;
    } catch {
      // as above
    } finally {
      clearTimeout(timer);
    }
    return "accepted";
  }

  /** Waits in progress (for tests: none should be left after a burst). */
  get pendingWaits(): number {
    return this.waiting.size;
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

  /**
   * Enqueues attempt `attempt` (0-based: the attempts already made) of each delivery after
   * `delayMs` (issue 18). The job id names the attempt, so a repeat (the sweeper, a redeliver
   * racing a retry) adds nothing. Job data carries only the delivery id.
   */
  async enqueueDeliveries(items: { deliveryId: string; attempt: number | string; delayMs?: number }[]): Promise<void> {
    if (items.length === 0) return;
    await this.deliveries.addBulk(
      items.map(({ deliveryId, attempt, delayMs }) => ({
        name: "attempt",
        data: { deliveryId },
        opts: { jobId: `${deliveryId}-a${attempt}`, delay: Math.max(0, delayMs ?? 0), ...durableJobRetry, removeOnComplete: true, removeOnFail: { age: 24 * 3600 } },
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
    for (const id of [...this.waiting.keys()]) this.settle(id, { kind: "timeout" });
    // Closing waits for Redis; with Redis gone it would wait forever, so it gets CLOSE_GRACE_MS.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([this.events?.close(), this.commands.close(), this.mail.close(), this.sweep.close(), this.deliveries.close()]),
      new Promise((resolve) => {
        timer = setTimeout(resolve, CLOSE_GRACE_MS);
      }),
    ]);
    clearTimeout(timer);
    this.eventsConnection?.disconnect();
    this.connection.disconnect();
  }
}
