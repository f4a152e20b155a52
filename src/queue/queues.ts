/**
 * The BullMQ queues and their job catalog.
 *
 * | queue | job | data | produced by | consumed by |
 * |---|---|---|---|---|
 * | `commands` | start, deposit, raise, expire | a `Command` (commands/types.ts), id = commandId | web, sweeper | worker: applyCommand |
 * | `mail` | deliver | `{ outboxId, runId }`, id = outboxId | worker after commit, sweeper | worker: deliverOutbox |
 * | `deliveries` | attempt | `{ deliveryId, runId }`, id = `<deliveryId>-a<attempt>` (delayed to its time) | worker after commit, the worker itself (retries), sweeper, redeliver | worker: attemptDelivery (issue 18) |
 * | `calls` | attempt | `{ callId, runId, attempt }`, id = `<callId>-a<attempt>` (delayed to its time) | worker after commit (a call opened, a retry scheduled), sweeper | worker: runCallAttempt (v0.5 calls, issue 40) |
 * | `sweep` | sweep | `{}` (a job scheduler, every SLOTFLOW_SWEEP_INTERVAL_MS) | sweeper | sweeper |
 *
 * Job data is validated when enqueued and again when processed. No job ever carries a token.
 * Every `commands` job carries a signature over its data (`signature`, signature.ts), added here —
 * `enqueue` and `enqueueMany` are the only places command jobs are added (web, sweeper, and any
 * re-queue through them) — and checked by the worker before anything is applied: a command job
 * not added by slotflow is refused (issue 28 item 1).
 * Mail and delivery jobs carry their row's run id so that the worker's claim names `(run_id, id)`,
 * a router statement under a distributed PostgreSQL (docs/scaling.md); a job queued by a release
 * before that carries the row id alone and is still delivered (outbox-jobs.ts).
 * A deposit's job id is the request's own random command id, never derived from the link: BullMQ
 * ignores an `add` whose id already exists, and a second poster must never be handed the outcome
 * of the first one's job.
 */
import { Job, Queue, QueueEvents, type ConnectionOptions } from "bullmq";
import type { Config } from "../config.js";
import { validateCommand, type Command, type Outcome } from "../engine/commands/types.js";
import { CONFIGURATION_FAULT } from "../engine/failures.js";
import type { JobState } from "../engine/commands/pending.js";
import { RefusalCode, RefusalError, refuse, type Refusal } from "../engine/refusals.js";
import { isCluster, probeLayout, redisClient, topologyOf, type RedisClient, type RedisConfig } from "./redis.js";
import { deliveryJobOf, mailJobOf, type DeliveryJob, type MailJob } from "./outbox-jobs.js";
import { durableJobRetry } from "./retry.js";
import { CommandSigner } from "./signature.js";
import { allShards, shardOf, shardPrefix, type ShardConfig } from "./shards.js";
import { UUID } from "../json/uuid.js";

/**
 * The answer to a command that failed on a configuration fault (a stored value no key of
 * SLOTFLOW_SEAL_KEY opens): 500 `configuration-fault`. Not applied; retrying does not help until an
 * operator acts (docs/operations.md "When no key opens a sealed value"); no secret in the text.
 */
export function configurationFault(): Refusal {
  return refuse(
    RefusalCode.ConfigurationFault,
    "This request was not applied: the service cannot open a value this run stored, because its seal key ring (SLOTFLOW_SEAL_KEY) lacks the key that sealed it. This is a configuration fault, recorded as an incident on the run; retrying will not help until an operator fixes the key ring.",
  );
}

export const QUEUE = { commands: "commands", mail: "mail", sweep: "sweep", deliveries: "deliveries", calls: "calls" } as const;

/**
 * Options of every `commands` job (the id is the command id, set per job): retried until applied
 * after infrastructure failures, with capped backoff (retry.ts).
 */
export const COMMAND_JOB_OPTIONS = {
  ...durableJobRetry,
  removeOnComplete: { age: 3600, count: 10_000 },
  removeOnFail: { age: 24 * 3600 },
} as const;

/**
 * A Redis connection for BullMQ, of the configured topology (redis.ts). `blocking` connections
 * (workers, queue events) retry forever.
 */
export function redisConnection(config: RedisConfig, blocking: boolean): RedisClient {
  return redisClient(config, { blocking });
}

/**
 * What a `Queues` needs; tests and benches may give only the first four (one plain shard, one
 * Redis). `sealKeys` (SLOTFLOW_SEAL_KEY's ring) signs the command jobs (signature.ts).
 */
export type QueuesConfig = Pick<Config, "redisUrl" | "queuePrefix" | "depositWaitMs" | "sealKeys"> & RedisConfig & ShardConfig & Partial<Pick<Config, "redisWaitMs">>;

/**
 * Thrown when a command was added but its durability across a Redis failover could not be
 * confirmed before answering 202 (no replica acknowledged it within SLOTFLOW_REDIS_WAIT_MS): the
 * web answers 503 "not known to have been applied", and a retry with the same Idempotency-Key
 * learns the outcome (issue 17 item 4).
 */
export class UnconfirmedError extends Error {
  override name = "UnconfirmedError";
}

/**
 * Thrown when a command's wait ran out but it could not be recorded in PostgreSQL before the 202
 * (`Queues.beforeAccept`, issue 34 item 3): the web answers 503 "not known to have been applied;
 * retry with the same Idempotency-Key" instead of a 202 a Redis restart could void. The command
 * may still be applied (its job was queued).
 */
export class UnrecordedError extends Error {
  override name = "UnrecordedError";
}

/** How long the one look at a job after a wait ran out may take (ms). */
const LATE_LOOK_MS = 500;
/** How long `close()` waits for BullMQ to close its clients before disconnecting them (ms). */
const CLOSE_GRACE_MS = 2000;

type WaitResult = { kind: "completed"; value: Outcome } | { kind: "failed"; reason: string } | { kind: "timeout" };

/**
 * The queues of one process: the `commands` and `mail` queues of every shard (shards.ts) and the
 * one `sweep` queue, over one non-blocking connection; one QueueEvents reader per command shard
 * this process waited on (opened at the first wait, or by `ready()`).
 */
export class Queues {
  /** The command queue of each shard (index = shard). */
  readonly commandShards: Queue[];
  /** The mail queue of each shard (index = shard). */
  readonly mailShards: Queue[];
  /** Shard 0's command queue (the only one with the default single shard). */
  readonly commands: Queue;
  /** Shard 0's mail queue. */
  readonly mail: Queue;
  readonly sweep: Queue;
  readonly deliveries: Queue;
  /** Attempts of calls (v0.5, issue 40): one queue, beside sweep on shard 0's prefix. */
  readonly calls: Queue;
  private readonly events = new Map<number, QueueEvents>();
  private readonly eventsConnections: RedisClient[] = [];
  readonly connection: RedisClient;
  /** Signs the command jobs this process adds, and verifies those a worker takes (signature.ts). */
  readonly signer: CommandSigner;
  /** Waits in progress, by command id (= job id). */
  private readonly waiting = new Map<string, (r: WaitResult) => void>();
  /**
   * Called by `submit` when a wait ran out, before anything is answered "accepted" (issue 34 item
   * 3): the runtime sets it to record the command in PostgreSQL (src/engine/commands/pending.ts), so a 202
   * survives a Redis that keeps nothing. When it throws, `submit` throws UnrecordedError (503).
   * Unset (tests, benches that build their own Queues): nothing is recorded.
   */
  beforeAccept: ((cmd: Command) => Promise<void>) | undefined;

  constructor(readonly config: QueuesConfig) {
    this.signer = new CommandSigner(config.sealKeys);
    this.connection = redisConnection(config, false);
    this.connection.on("error", () => undefined); // surfaced as failed commands; logged by callers
    const opts = (shard: number) => ({ connection: this.connection as ConnectionOptions, prefix: shardPrefix(config, shard) });
    this.commandShards = allShards(config).map((i) => new Queue(QUEUE.commands, opts(i)));
    this.mailShards = allShards(config).map((i) => new Queue(QUEUE.mail, opts(i)));
    this.commands = this.commandShards[0]!;
    this.mail = this.mailShards[0]!;
    this.sweep = new Queue(QUEUE.sweep, opts(0));
    // deliveries (issue 18): one queue, beside sweep on shard 0's prefix
    this.deliveries = new Queue(QUEUE.deliveries, opts(0));
    this.calls = new Queue(QUEUE.calls, opts(0));
    // Connection errors surface as failed calls (503 for the web); without a listener BullMQ
    // prints every reconnect attempt to stderr.
    for (const q of this.all()) q.on("error", () => undefined);
  }

  /** Every queue of this process (each shard's commands and mail, then sweep and deliveries). */
  all(): Queue[] {
    return [...this.commandShards, ...this.mailShards, this.sweep, this.deliveries, this.calls];
  }

  /** The command queue of `runId`'s shard. */
  commandQueueOf(runId: string): Queue {
    return this.commandShards[shardOf(this.config, runId)]!;
  }

  private queueEvents(shard = 0): QueueEvents {
    let events = this.events.get(shard);
    if (!events) {
      const conn = redisConnection(this.config, true);
      conn.on("error", () => undefined);
      this.eventsConnections.push(conn);
      // A 2 s block (BullMQ's default is 10 s) bounds how long a closed or cut-off reader lingers
      // (BullMQ's watchdog keeps the process alive block + 1 s); under load reads return at once.
      events = new QueueEvents(QUEUE.commands, { connection: conn as ConnectionOptions, prefix: shardPrefix(this.config, shard), autorun: true, blockingTimeout: 2000 });
      // Two listeners per shard for the life of the process, whatever the number of waits (issue 8
      // item 13: Job.waitUntilFinished added a 'closing' listener to the Queue per wait).
      events.on("completed", ({ jobId, returnvalue }) => this.settle(jobId, { kind: "completed", value: returnvalue as unknown as Outcome }));
      events.on("failed", ({ jobId, failedReason }) => this.settle(jobId, { kind: "failed", reason: failedReason }));
      events.on("error", () => undefined); // a dropped connection: waits end by their own timer
      this.events.set(shard, events);
    }
    return events;
  }

  private settle(jobId: string, result: WaitResult): void {
    const resolve = this.waiting.get(jobId);
    if (!resolve) return;
    this.waiting.delete(jobId);
    resolve(result);
  }

  /**
   * Starts listening for job completions on every shard (call once at start-up so the first wait
   * is not slow). Resolves false when Redis did not answer within `timeoutMs`; the process still
   * starts and answers 503 until Redis is back.
   */
  async ready(timeoutMs = 3000): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      return await Promise.race([Promise.all(allShards(this.config).map((i) => this.queueEvents(i).waitUntilReady())).then(() => true), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  private static jobOptions(cmd: Command, opts: { removeOnComplete?: boolean }) {
    return { ...COMMAND_JOB_OPTIONS, jobId: cmd.commandId, ...(opts.removeOnComplete ? { removeOnComplete: true } : {}) };
  }

  /**
   * Enqueues a command on its run's shard without waiting; the job's data is the command and its
   * signature (`this.signer`, signature.ts: the worker refuses a command job without it).
   */
  async enqueue(cmd: Command, opts: { removeOnComplete?: boolean } = {}): Promise<Job> {
    validateCommand(cmd);
    return this.commandQueueOf(cmd.runId).add(cmd.kind, this.signer.signed(cmd), Queues.jobOptions(cmd, opts));
  }

  /**
   * Enqueues many commands, one Redis call per shard (`addBulk`: one MULTI of the add script per
   * job), for the sweeper's batches of expiries; each job signed as by `enqueue`.
   */
  async enqueueMany(cmds: Command[], opts: { removeOnComplete?: boolean } = {}): Promise<void> {
    if (cmds.length === 0) return;
    for (const cmd of cmds) validateCommand(cmd);
    const byShard = new Map<number, Command[]>();
    for (const cmd of cmds) {
      const shard = shardOf(this.config, cmd.runId);
      byShard.set(shard, [...(byShard.get(shard) ?? []), cmd]);
    }
    await Promise.all(
      [...byShard].map(([shard, list]) =>
        this.commandShards[shard]!.addBulk(list.map((cmd) => ({ name: cmd.kind, data: this.signer.signed(cmd), opts: Queues.jobOptions(cmd, opts) }))),
      ),
    );
  }

  /**
   * The state of each command's job on its run's shard, in order (BullMQ's `getJobState`;
   * `unknown` when there is no such job), for the sweeper's pass over recorded 202s
   * (src/engine/commands/pending.ts). One Redis call per command, pipelined.
   */
  async commandJobStates(cmds: Pick<Command, "runId" | "commandId">[]): Promise<JobState[]> {
    return Promise.all(cmds.map((c) => this.commandQueueOf(c.runId).getJobState(c.commandId) as Promise<JobState>));
  }

  /** Commands waiting in every shard (the sweeper's refill check). */
  async waitingCount(): Promise<number> {
    const counts = await Promise.all(this.commandShards.map((q) => q.getWaitingCount()));
    return counts.reduce((a, b) => a + b, 0);
  }

  /**
   * Enqueues a command and waits up to `waitMs` for a worker to apply it (`onQueued` is called once
   * the job is in the queue). Returns its outcome, or
   * `"accepted"` when the wait ran out (the command will still be applied). Throws when the
   * enqueue fails (Redis unreachable), when the job failed for good, and (UnconfirmedError) when
   * a replicated Redis could not confirm the job would survive a failover.
   *
   * The wait is registered under the command id (= the job id) before the job is added, so the
   * completion cannot be missed and no "is it already finished?" call is needed; completions
   * arrive through the QueueEvents stream of the run's shard. The wait itself never rejects: if
   * Redis drops while waiting, the timer ends it and one look at the job (which may fail too)
   * decides between the outcome and "accepted" (issue 8 item 10: Job.waitUntilFinished rejected
   * inside a Promise executor, an unhandled rejection that killed the web process).
   */
  async submit(cmd: Command, waitMs = this.config.depositWaitMs, onQueued?: () => void): Promise<Outcome | "accepted"> {
    this.queueEvents(shardOf(this.config, cmd.runId));
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
    // the job is in the queue (v0.4 "Answers inside Slack": Slack is answered 200 from here on)
    onQueued?.();
    const result = await finished;
    clearTimeout(timer);
    if (result.kind === "completed") return result.value;
    if (result.kind === "failed") {
      // a configuration fault is said as one (issue 16 item 4): 500, not "cannot reach its queue"
      if (result.reason.startsWith(CONFIGURATION_FAULT)) throw new RefusalError(configurationFault());
      throw new Error(result.reason);
    }
    // Recorded before the late look (issue 34 item 3): a worker that refuses the command after
    // this deletes the row; one that finished before it leaves a row the sweeper drops.
    if (this.beforeAccept) {
      try {
        await this.beforeAccept(cmd);
      } catch (err) {
        throw new UnrecordedError(`the accepted command could not be recorded: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    return this.lateOutcome(cmd);
  }

  /** Whether the configured Redis has replicas to fail over to (Cluster, Sentinel). */
  get replicated(): boolean {
    return topologyOf(this.config) !== "single";
  }

  /**
   * After a wait ran out: the job's outcome if it finished meanwhile (a missed event), else
   * "accepted" — the 202 (issue 17 item 4). On a replicated Redis (Cluster, Sentinel) a 202 is
   * given only once the job is known to be on the current master and acknowledged by at least
   * one replica (`WAIT 1 SLOTFLOW_REDIS_WAIT_MS` on the master of the job's shard): a job that
   * vanished in a failover (asynchronous replication) is added again (same job id; applying is
   * idempotent by command id), and one no replica acknowledged throws UnconfirmedError (503).
   */
  private async lateOutcome(cmd: Command): Promise<Outcome | "accepted"> {
    const id = cmd.commandId;
    const queue = this.commandQueueOf(cmd.runId);
    if (!this.replicated) {
      // Redis unreachable: the command may still be applied; the client learns it by retrying.
      if (this.connection.status !== "ready") return "accepted";
      const job = await withTimeout(Job.fromId(queue, id), LATE_LOOK_MS).catch(() => null);
      if (job?.finishedOn && !job.failedReason && job.returnvalue) return job.returnvalue as Outcome;
      return "accepted";
    }
    const waitMs = this.config.redisWaitMs ?? 1000;
    try {
      const job = await withTimeout(Job.fromId(queue, id), waitMs);
      if (job?.finishedOn && !job.failedReason && job.returnvalue) return job.returnvalue as Outcome;
      if (!job) await withTimeout(this.enqueue(cmd), waitMs);
      const acked = await withTimeout(this.waitReplicas(queue, waitMs), waitMs + LATE_LOOK_MS);
      if (acked >= 1) return "accepted";
    } catch {
      // unconfirmed, below
    }
    throw new UnconfirmedError("the queued command could not be confirmed on a Redis replica");
  }

  /** `WAIT 1 waitMs` on the master holding `queue`'s keys; resolves the replicas that acknowledged. */
  private async waitReplicas(queue: Queue, waitMs: number): Promise<number> {
    const conn = this.connection;
    if (!isCluster(conn)) return Number(await conn.call("WAIT", 1, waitMs));
    const key = `${queue.opts.prefix}:${queue.name}:id`;
    const slot = Number(await conn.call("CLUSTER", "KEYSLOT", key));
    const owner = conn.slots[slot]?.[0];
    const node = conn.nodes("master").find((n) => `${n.options.host}:${n.options.port}` === owner);
    if (!node) throw new Error(`no master for slot ${slot}`);
    return Number(await node.call("WAIT", 1, waitMs));
  }

  /** Waits in progress (for tests: none should be left after a burst). */
  get pendingWaits(): number {
    return this.waiting.size;
  }

  /**
   * Enqueues mail deliveries, each on the shard of its outbox id, after `delayMs` (ms) when given
   * (a retry handed over by the mail pump, src/outbox/mail-pump.ts); the job data is the row and
   * its run (`{ outboxId, runId }`), the job id the outbox id (a message already queued is not
   * queued twice). Throws (before anything is added) when an id is not a uuid.
   */
  async enqueueMail(items: MailJob[], delayMs?: number): Promise<void> {
    if (items.length === 0) return;
    for (const item of items) mailJobOf(item, true);
    const byShard = new Map<number, MailJob[]>();
    for (const item of items) {
      const shard = shardOf(this.config, item.outboxId);
      byShard.set(shard, [...(byShard.get(shard) ?? []), item]);
    }
    await Promise.all(
      [...byShard].map(([shard, list]) =>
        this.mailShards[shard]!.addBulk(
          list.map(({ outboxId, runId }) => ({
            name: "deliver",
            data: { outboxId, runId },
            opts: { jobId: outboxId, ...durableJobRetry, removeOnComplete: true, removeOnFail: { age: 24 * 3600 }, ...(delayMs ? { delay: delayMs } : {}) },
          })),
        ),
      ),
    );
  }

  /**
   * Enqueues attempt `attempt` (0-based: the attempts already made) of each delivery after
   * `delayMs` (issue 18). The job id names the attempt, so a repeat (the sweeper, a redeliver
   * racing a retry) adds nothing. Job data: the delivery id and its run id. Throws (before
   * anything is added) when an id is not a uuid.
   */
  async enqueueDeliveries(items: (DeliveryJob & { attempt: number | string; delayMs?: number })[]): Promise<void> {
    if (items.length === 0) return;
    for (const item of items) deliveryJobOf(item, true);
    await this.deliveries.addBulk(
      items.map(({ deliveryId, runId, attempt, delayMs }) => ({
        name: "attempt",
        data: { deliveryId, runId },
        opts: { jobId: `${deliveryId}-a${attempt}`, delay: Math.max(0, delayMs ?? 0), ...durableJobRetry, removeOnComplete: true, removeOnFail: { age: 24 * 3600 } },
      })),
    );
  }

  /**
   * Enqueues attempt `attempt` (1-based) of each call after `delayMs` (v0.5 calls). The job id
   * names the attempt, so a repeat (the sweeper finding it overdue) adds nothing. Throws (before
   * anything is added) when an id is not a uuid.
   */
  async enqueueCalls(items: { callId: string; runId: string; attempt: number; delayMs?: number }[]): Promise<void> {
    if (items.length === 0) return;
        for (const i of items) if (!UUID.test(i.callId) || !UUID.test(i.runId) || !Number.isSafeInteger(i.attempt) || i.attempt < 1) throw new Error("a call job names a call and a run by uuid and an attempt ≥ 1");
    await this.calls.addBulk(
      items.map(({ callId, runId, attempt, delayMs }) => ({
        name: "attempt",
        data: { callId, runId, attempt },
        opts: { jobId: `${callId}-a${attempt}`, delay: Math.max(0, delayMs ?? 0), ...durableJobRetry, removeOnComplete: true, removeOnFail: { age: 24 * 3600 } },
      })),
    );
  }

  /** Redis answers within `timeoutMs`? (waits for a connection still being made) */
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
      return (await withTimeout(this.connection.ping(), timeoutMs)) === "PONG";
    } catch {
      return false;
    }
  }

  /**
   * Every queue can serve BullMQ's commands (readiness, issue 17 item 5): PING, then on each
   * shard's key layout a write and a two-key read in one script (`probeLayout`). Resolves
   * null when usable, else the first problem (e.g. `CROSSSLOT …`, `MOVED …`, `READONLY …`).
   */
  async unusable(timeoutMs = 1000): Promise<string | null> {
    if (!(await this.ping(timeoutMs))) return "Redis does not answer";
    try {
      await withTimeout(Promise.all(allShards(this.config).map((i) => probeLayout(this.connection, shardPrefix(this.config, i)))), timeoutMs);
      return null;
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
  }

  async close(): Promise<void> {
    for (const id of [...this.waiting.keys()]) this.settle(id, { kind: "timeout" });
    // Closing waits for Redis; with Redis gone it would wait forever, so it gets CLOSE_GRACE_MS.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...[...this.events.values()].map((e) => e.close()), ...this.all().map((q) => q.close())]),
      new Promise((resolve) => {
        timer = setTimeout(resolve, CLOSE_GRACE_MS);
      }),
    ]);
    clearTimeout(timer);
    for (const c of this.eventsConnections) c.disconnect();
    this.connection.disconnect();
  }
}

/** `p`, or a rejection after `ms`. */
function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer from Redis within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
