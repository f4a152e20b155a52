/**
 * The first delivery attempt of the mail a step queued, made by the worker process that committed
 * the step, in batches (issue 22 item 2, "or batch … measure which pays"; docs/performance.md
 * "Starts and deliveries"). This is the transactional outbox's relay: the outbox row is the durable
 * record, and this module only moves it on sooner and cheaper than one queue job per message.
 *
 *   step commits ──deliver(runId, ids)──▶ in-memory set ──drain──▶ claim ≤ BATCH rows by key (1 statement)
 *                                                               ├─ send each (≤ SEND_CONCURRENCY at once)
 *                                                               └─ mark the sent ones (1 statement)
 *
 * - The claim is the same as a `deliver` job's (mailer.ts): `claimed_until` set on rows still
 *   pending and unclaimed, by `(run_id, id)` — so a message is sent by one claimant only, whether the
 *   other is a pump, a `mail` job (a sweeper's re-enqueue, a job of an older release) or a pump of
 *   another process. No row lock is held while sending.
 * - Only first attempts: a send that fails records the attempt on the row (mailer.ts
 *   markSendFailed) and hands the message to the `mail` queue with the capped backoff's first
 *   delay; retries are that queue's, as before. A row whose recipient is not one plain address
 *   fails at once, as in a job.
 * - Nothing is lost on a crash: rows not yet claimed are re-enqueued by the sweeper after 30 s
 *   (MAIL_GRACE_MS); a claim left by a dead process lapses after MAIL_CLAIM_MS, as a job's does.
 *   A database that cannot be reached for the claim hands the batch to the `mail` queue, whose jobs
 *   retry until it answers.
 * - Back-pressure: more than MAX_BACKLOG messages waiting in memory (a slow SMTP server), and new
 *   mail goes to the `mail` queue instead, as before this module.
 *
 * Cost per message at C=10 (bench/mint.ts, docs/performance.md): the claim and the mark shared by
 * the batch, and no queue job — no Redis command at all.
 */
import type { Db } from "../db.js";
import type { Logger } from "../log.js";
import { redactTokens, type Sealer } from "../engine/sealing/seal.js";
import type { MailJob } from "../queue/outbox-jobs.js";
import { markMailSentBatch } from "../engine/sql/outbox-status.js";
import { cappedBackoff } from "../queue/retry.js";
import { CLAIMED_COLUMNS, MAIL_CLAIM_MS, logSent, markSendFailed, markUndeliverable, openClaimed, type ClaimedRow, type MailTransport } from "./mailer.js";

/** At most this many messages per claim statement. */
export const BATCH = 50;
/** At most this many sends in flight per pump (the `mail` worker's concurrency). */
export const SEND_CONCURRENCY = 4;
/** Above this many messages waiting in memory, new mail is queued as jobs instead. */
export const MAX_BACKLOG = 1000;

/** Where a message goes when the pump does not deliver it itself: the `mail` queue (Queues.enqueueMail). */
export type EnqueueMail = (items: MailJob[], delayMs?: number) => Promise<void>;

export interface MailPumpDeps {
  db: Db;
  sealer: Sealer;
  transport: MailTransport;
  log?: Logger;
  enqueue: EnqueueMail;
}

/** Claims the given pending, unclaimed rows by `(run_id, id)`; returns those this call got. */
async function claimByKey(db: Db, keys: MailJob[]): Promise<ClaimedRow[]> {
  return db.$queryRawUnsafe<ClaimedRow[]>(
    `UPDATE outbox o SET claimed_until = now() + make_interval(secs => $1)
       FROM unnest($2::uuid[], $3::uuid[]) AS k(run_id, id)
      WHERE o.run_id = k.run_id AND o.id = k.id AND o.status = 'pending' AND o.attempts = 0
        AND (o.claimed_until IS NULL OR o.claimed_until < now())
     RETURNING ${CLAIMED_COLUMNS.split(", ").map((c) => `o.${c}`).join(", ")}`,
    MAIL_CLAIM_MS / 1000,
    keys.map((k) => k.runId),
    keys.map((k) => k.outboxId),
  );
}

/** Runs `work` over `items` with at most `limit` at once. */
async function eachLimited<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

/**
 * One per worker process (src/cli/server.ts). `deliver` is called after a step committed; `close`
 * waits for the sends in flight (the process's shutdown).
 */
export class MailPump {
  /** outbox id → run id, waiting for the next claim. */
  private readonly waiting = new Map<string, string>();
  private draining: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly deps: MailPumpDeps) {}

  /**
   * Hands over the mail of a step that has committed (its outbox rows and their run). Never
   * throws. Returns at once while the pump takes the messages; when it does not (closing, or over
   * MAX_BACKLOG), returns the enqueue of `mail` jobs, which the caller may await as before.
   */
  deliver(items: MailJob[]): Promise<void> {
    if (items.length === 0) return Promise.resolve();
    if (this.closed || this.waiting.size + items.length > MAX_BACKLOG) return this.handOver(items);
    for (const { outboxId, runId } of items) this.waiting.set(outboxId, runId);
    // The drain starts on the next turn of the event loop, so the mail of every step that
    // committed in this turn shares its first claim.
    this.draining ??= new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.drain())
      .catch((err: unknown) => this.deps.log?.error({ err: redactTokens(String(err)) }, "mail pump failed; the sweeper re-enqueues what it held"));
    return Promise.resolve();
  }

  /** Stops taking mail and waits for what was taken to be sent and marked. */
  async close(): Promise<void> {
    this.closed = true;
    await this.draining;
  }

  private async drain(): Promise<void> {
    try {
      while (this.waiting.size > 0) {
        const keys: MailJob[] = [];
        for (const [outboxId, runId] of this.waiting) {
          keys.push({ outboxId, runId });
          this.waiting.delete(outboxId);
          if (keys.length === BATCH) break;
        }
        await this.deliverBatch(keys);
      }
    } finally {
      // set synchronously with the loop's last check: a deliver() after it starts a new drain
      this.draining = null;
    }
  }

  private async deliverBatch(keys: MailJob[]): Promise<void> {
    const { db, sealer, transport, log } = this.deps;
    let rows: ClaimedRow[];
    try {
      rows = await claimByKey(db, keys);
    } catch (err) {
      log?.warn({ err: redactTokens(String(err)), messages: keys.length }, "could not claim mail for delivery; queued as jobs");
      await this.handOver(keys);
      return;
    }
    const sent: { row: ClaimedRow; messageId: string }[] = [];
    const retry: MailJob[] = [];
    await eachLimited(rows, SEND_CONCURRENCY, async (row) => {
      try {
        const mail = openClaimed(sealer, row);
        if (!mail) return await markUndeliverable(db, row);
        try {
          sent.push({ row, messageId: await transport.send(mail) });
        } catch (err) {
          if (!(await markSendFailed(db, row, err, log))) retry.push({ outboxId: row.id, runId: row.run_id });
        }
      } catch (err) {
        // Opening the row (no key of SLOTFLOW_SEAL_KEY opens it) or recording a failure failed: the
        // row stays claimed, and once the claim lapses the sweeper's job tries again.
        log?.warn({ err: redactTokens(String(err)), outboxId: row.id }, "email delivery could not be attempted or recorded; retried when its claim lapses");
      }
    });
    if (sent.length > 0) {
      try {
        await markMailSentBatch(db, sent);
        for (const s of sent) logSent(transport, s.row.id, log);
      } catch (err) {
        // Sent but not marked: the claims lapse after MAIL_CLAIM_MS and the sweeper's jobs send
        // them again (delivery is at least once, as for a job that dies before its mark).
        log?.warn({ err: redactTokens(String(err)), messages: sent.length }, "could not mark sent email");
      }
    }
    if (retry.length > 0) await this.handOver(retry, cappedBackoff(1));
  }

  /** Queues `items` as `mail` jobs; a Redis that refuses is left to the sweeper (logged). */
  private async handOver(items: MailJob[], delayMs?: number): Promise<void> {
    await this.deps.enqueue(items, delayMs).catch((err: unknown) => {
      this.deps.log?.warn({ err: String(err) }, "could not enqueue mail delivery; the sweeper will retry");
    });
  }
}
