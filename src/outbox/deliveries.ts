/**
 * Delivery of `send webhook` / `send message` (issue 18 items 3–5). This module alone writes
 * `deliveries.status` and `delivery_attempts`.
 *
 *   pending --2xx--> sent
 *   pending --non-2xx, network error, refused address--> pending (next attempt on the schedule)
 *   pending --last attempt failed--> failed ("gave up after N attempts")
 *   pending --every link it carries is no longer live--> failed ("link burned" …; never retried),
 *            at once by the step that ended the link (endDeliveriesOfDeadLinks), else at the attempt
 *   pending --no such endpoint / endpoint disabled / statement does not fit the endpoint--> failed
 *   pending --410 Gone--> failed, and the endpoint is disabled (endpoints.ts)
 *   pending --an operator cancels the run (issue 23)--> failed ("withdrawn: the run was cancelled";
 *            payload dropped, so a redelivery is refused with 409)
 *   sent|failed --redeliver while its link is live--> pending (same sealed payload, same webhook-id)
 *
 * A delivery row is written in the step's transaction (engine/sql/deliveries-write.ts), so it
 * exists only if the step committed; the worker enqueues its first attempt after commit, and the
 * sweeper re-enqueues any whose due attempt was not taken (a worker that died). An attempt holds
 * the row locked (FOR UPDATE SKIP LOCKED) while it sends, so two jobs never send one attempt.
 * Delivery is at least once: a crash between the endpoint's 2xx and the commit sends again with
 * the same `webhook-id` (receivers de-duplicate on it).
 *
 * Retries (SLOTFLOW_DELIVERY_RETRY_MS; the Standard Webhooks example schedule by default) with
 * ±10 % jitter; a 429 or 503 with `Retry-After` waits at least that long. No redirect is followed
 * (a 3xx is a failure). Only 2xx succeeds.
 *
 * Never leaks: the payload is sealed; the API and logs see endpoint name, attempt, status code,
 * latency and the next attempt; errors are stored with tokens redacted and never include the URL.
 */
import type { Db, Tx } from "../db.js";
import type { Logger } from "../log.js";
import { openEndpoint, recordEndpointOutcome } from "../endpoints/endpoints.js";
import { redactTokens, type Sealer } from "../engine/seal.js";
import { checkLiteralHost, deliveryAgent, type Resolver } from "./address-guard.js";
import { wireRequest, type Payload } from "./wire.js";
import { fetch } from "undici";

export interface DeliveryDeps {
  db: Db;
  sealer: Sealer;
  log?: Logger;
  /** SLOTFLOW_ENDPOINTS_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  /** Resolves endpoint host names (default: the system resolver, dns.lookup; tests pass a stand-in for DNS). */
  resolve?: Resolver;
  /** Delay before each attempt, ms (SLOTFLOW_DELIVERY_RETRY_MS). */
  retryMs: number[];
  /** Counts each attempt's outcome (metrics). */
  onOutcome?: (kind: string, outcome: string) => void;
}

/** What one attempt decided. `retry`: enqueue attempt `attempt` after `delayMs`. */
export type AttemptResult =
  | { kind: "skipped" }
  | { kind: "sent" }
  | { kind: "failed"; reason: string }
  | { kind: "retry"; attempt: number; delayMs: number };

/** How long one attempt may take (connect, send, answer), ms. */
export const ATTEMPT_TIMEOUT_MS = 10_000;
/** Longest Retry-After honoured, ms (24 h: the schedule's longest gap). */
const MAX_RETRY_AFTER_MS = 24 * 3600_000;
/** Jitter: each delay is scaled by a random factor in [1 - JITTER, 1 + JITTER]. */
const JITTER = 0.1;

/** Delay before attempt `attempt` (0-based) on `schedule`, with jitter; null when the schedule is exhausted. */
export function retryDelayMs(schedule: number[], attempt: number, random = Math.random): number | null {
  if (attempt >= schedule.length) return null;
  return Math.round(schedule[attempt] * (1 - JITTER + 2 * JITTER * random()));
}

/** `Retry-After` (seconds or an HTTP date) in ms; null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Math.min(MAX_RETRY_AFTER_MS, Number(value.trim()) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.min(MAX_RETRY_AFTER_MS, Math.max(0, at - now));
}

interface Row {
  id: string;
  run_id: string;
  endpoint: string;
  statement: string;
  webhook_id: string;
  payload: string | null;
  link_sha256: string[];
  status: string;
  attempts: number;
}

/**
 * Why the links a delivery carries no longer make it worth sending: null while one of them is live
 * (or it carries none this engine minted); else e.g. "link burned", "link dead (revoked)".
 */
export async function deadLinkReason(db: Pick<Db, "$queryRaw">, runId: string, hashes: string[]): Promise<string | null> {
  if (hashes.length === 0) return null;
  // the links of the delivery's own run (links_run_id_token_sha256_idx; issue 20 item 2)
  const links = await db.$queryRaw<{ status: string; end_reason: string | null }[]>`
    SELECT status, end_reason FROM links WHERE run_id = ${runId}::uuid AND token_sha256 = ANY(${hashes}::text[])`;
  if (links.length === 0 || links.some((l) => l.status === "live")) return null;
  const l = links[0];
  return `link ${l.status}${l.end_reason ? ` (${l.end_reason})` : ""}`;
}

/** Attempts one delivery if it is pending; see the module header. */
export async function attemptDelivery(deps: DeliveryDeps, deliveryId: string): Promise<AttemptResult> {
  const { db, sealer, log } = deps;
  let kind = "unknown";
  const result = await db.$transaction(
    async (tx): Promise<AttemptResult & { statusCode?: number; latencyMs?: number; endpoint?: string; attemptNo?: number; disabled?: string | null; nextAttemptAt?: string }> => {
      const rows = await tx.$queryRaw<Row[]>`
        SELECT id, run_id, endpoint, statement, webhook_id, payload, link_sha256, status, attempts
        FROM deliveries WHERE id = ${deliveryId}::uuid FOR UPDATE SKIP LOCKED`;
      const row = rows[0];
      if (!row || row.status !== "pending") return { kind: "skipped" };
      const fail = async (reason: string, dropPayload: boolean) => {
        await tx.delivery.update({ where: { runId_id: { runId: row.run_id, id: row.id } }, data: { status: "failed", endReason: reason, nextAttemptAt: null, ...(dropPayload ? { payload: null } : {}) } });
        return { kind: "failed" as const, reason };
      };
      const dead = await deadLinkReason(tx, row.run_id, row.link_sha256);
      if (dead !== null || row.payload === null) return fail(dead ?? "link no longer live", true);
      const endpoint = await openEndpoint(tx as unknown as Db, sealer, row.endpoint);
      if (!endpoint) return fail(`no endpoint named "${row.endpoint}"`, false);
      kind = endpoint.kind;
      if (endpoint.disabledReason) return fail(`endpoint disabled: ${endpoint.disabledReason}`, false);
      const payload = { statement: row.statement, ...(JSON.parse(sealer.openText(row.payload)) as object) } as Payload;
      const attempt = row.attempts + 1;
      const now = new Date();
      let req: ReturnType<typeof wireRequest>;
      try {
        req = wireRequest(endpoint, payload, row.webhook_id, now);
      } catch (err) {
        // the statement does not fit the endpoint (a send webhook to a chat endpoint): no retry helps
        return fail(err instanceof Error ? err.message : String(err), false);
      }
      let statusCode: number | null = null;
      let error: string | null = null;
      let retryAfterMs: number | null = null;
      const t0 = performance.now();
      const agent = deliveryAgent(deps.allowPrivate, deps.resolve);
      try {
        const url = new URL(endpoint.url);
        checkLiteralHost(url, deps.allowPrivate);
        const res = await fetch(url, { method: "POST", headers: req.headers, body: req.body, redirect: "manual", dispatcher: agent, signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS) });
        statusCode = res.status;
        if (res.status === 429 || res.status === 503) retryAfterMs = parseRetryAfter(res.headers.get("retry-after"));
        await res.body?.cancel().catch(() => undefined);
        if (res.status < 200 || res.status > 299) error = res.status >= 300 && res.status < 400 ? `HTTP ${res.status} (redirects are not followed)` : `HTTP ${res.status}`;
      } catch (err) {
        const cause = (err as { cause?: unknown }).cause;
        const e = cause instanceof Error ? cause : err instanceof Error ? err : new Error(String(err));
        // the message of a connection error may name the URL; keep the error's class and code only
        error = e.name === "AddressRefusedError" ? e.message : `${e.name}${(e as { code?: string }).code ? ` ${(e as { code?: string }).code}` : ""}`;
      } finally {
        await agent.close().catch(() => undefined);
      }
      const latencyMs = Math.round(performance.now() - t0);
      await tx.deliveryAttempt.create({ data: { runId: row.run_id, deliveryId: row.id, attempt, at: now, statusCode, latencyMs, error: error === null ? null : redactTokens(error).slice(0, 300) } });
      const common = { attempts: attempt, lastStatusCode: statusCode, lastLatencyMs: latencyMs, lastError: error === null ? null : redactTokens(error).slice(0, 300) };
      const seen = { statusCode: statusCode ?? undefined, latencyMs, endpoint: row.endpoint, attemptNo: attempt };
      // the endpoint's state changes in the same transaction, so nobody sees one without the other
      const endpointTx = tx as unknown as Db;
      if (error === null) {
        await tx.delivery.update({ where: { runId_id: { runId: row.run_id, id: row.id } }, data: { ...common, status: "sent", deliveredAt: new Date(), nextAttemptAt: null, endReason: null } });
        await recordEndpointOutcome(endpointTx, row.endpoint, "ok");
        return { kind: "sent", ...seen };
      }
      if (statusCode === 410) {
        await recordEndpointOutcome(endpointTx, row.endpoint, "gone");
        await tx.delivery.update({ where: { runId_id: { runId: row.run_id, id: row.id } }, data: { ...common, status: "failed", endReason: "the endpoint answered 410 Gone (endpoint disabled)", nextAttemptAt: null } });
        return { kind: "failed", reason: "410 Gone", ...seen, disabled: "the endpoint answered 410 Gone" };
      }
      const disabled = await recordEndpointOutcome(endpointTx, row.endpoint, "failed");
      let delay = retryDelayMs(deps.retryMs, attempt);
      if (disabled !== null || delay === null) {
        const reason = disabled !== null ? `endpoint disabled: ${disabled}` : `gave up after ${attempt} attempts`;
        await tx.delivery.update({ where: { runId_id: { runId: row.run_id, id: row.id } }, data: { ...common, status: "failed", endReason: reason, nextAttemptAt: null } });
        return { kind: "failed", reason, ...seen, disabled };
      }
      if (retryAfterMs !== null) delay = Math.max(delay, retryAfterMs);
      const nextAttemptAt = new Date(Date.now() + delay);
      await tx.delivery.update({ where: { runId_id: { runId: row.run_id, id: row.id } }, data: { ...common, nextAttemptAt } });
      return { kind: "retry", attempt, delayMs: delay, ...seen, nextAttemptAt: nextAttemptAt.toISOString() };
    },
    { maxWait: 10_000, timeout: ATTEMPT_TIMEOUT_MS + 20_000 },
  );
  const { statusCode, latencyMs, endpoint, attemptNo, disabled, nextAttemptAt, ...final } = result;
  if (final.kind === "skipped") return final;
  deps.onOutcome?.(kind, final.kind);
  const fields = { deliveryId, endpoint, kind, attempt: attemptNo, statusCode: statusCode ?? null, latencyMs: latencyMs ?? null, nextAttemptAt: nextAttemptAt ?? null };
  if (final.kind === "sent") log?.info(fields, "delivery sent");
  else if (final.kind === "retry") log?.warn(fields, "delivery attempt failed; will retry");
  else log?.warn({ ...fields, reason: redactTokens(final.reason) }, "delivery failed");
  if (disabled) log?.warn({ endpoint, reason: disabled }, "endpoint disabled");
  return final;
}

/**
 * `POST /api/runs/{id}/outbox/{messageId}/redeliver` (issue 18 item 4): puts a delivered or failed
 * delivery back to pending — the same sealed payload, the same `webhook-id`, its attempts counted
 * afresh — and returns its id to enqueue. `not-found` when the run has no such delivery;
 * `link-not-live` when the link it carries is no longer live (its payload is then dropped).
 */
export async function redeliver(db: Db, runId: string, deliveryId: string): Promise<{ ok: true } | { ok: false; code: "not-found" | "link-not-live"; reason: string }> {
  return db.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<Row[]>`
      SELECT id, run_id, endpoint, statement, webhook_id, payload, link_sha256, status, attempts
      FROM deliveries WHERE id = ${deliveryId}::uuid AND run_id = ${runId}::uuid FOR UPDATE`;
    const row = rows[0];
    if (!row) return { ok: false as const, code: "not-found" as const, reason: "This run has no such outbox message." };
    const dead = row.payload === null ? "link no longer live" : await deadLinkReason(tx, row.run_id, row.link_sha256);
    if (dead !== null) {
      if (row.payload !== null) await tx.delivery.update({ where: { runId_id: { runId: row.run_id, id: row.id } }, data: { payload: null } });
      return { ok: false as const, code: "link-not-live" as const, reason: dead };
    }
    await tx.delivery.update({ where: { runId_id: { runId: row.run_id, id: row.id } }, data: { status: "pending", attempts: 0, nextAttemptAt: new Date(), endReason: null, deliveredAt: null } });
    return { ok: true as const };
  });
}

/**
 * Ends every pending delivery of `runId` because an operator cancelled the run (issue 23;
 * engine/commands/cancel.ts, inside the cancel's transaction with the run locked). An attempt in
 * flight holds its row (`FOR UPDATE SKIP LOCKED` above): this update waits for it and then finds the
 * row sent, or still pending and withdraws it. Resolves how many were withdrawn.
 */
export async function withdrawPendingDeliveries(tx: Tx, runId: string): Promise<number> {
  return tx.$executeRaw`UPDATE deliveries SET status = 'failed', end_reason = 'withdrawn: the run was cancelled',
                               payload = NULL, next_attempt_at = NULL
                         WHERE run_id = ${runId}::uuid AND status = 'pending'`;
}

/**
 * Ends, at once, every pending delivery of `runId` that carries links none of which is live any
 * more (issue 18 item 4: "stops being retried the moment that link is no longer live and records
 * why"): status `failed`, `end_reason` e.g. "link burned" or "link dead (revoked)" — the words of
 * `deadLinkReason` — payload dropped, no further attempt. Called by a step that ended a link of a
 * run with pending deliveries, inside its transaction (engine/step.ts flush), so it commits with
 * the step. A delivery whose attempt is under way (its row locked by `attemptDelivery`) is skipped
 * rather than waited for — the step holds the run lock — and that attempt, or the next, finds the
 * link dead itself. Returns how many deliveries it ended.
 */
export async function endDeliveriesOfDeadLinks(tx: Tx, runId: string): Promise<number> {
  return tx.$executeRaw`
    UPDATE deliveries d
       SET status = 'failed', payload = NULL, next_attempt_at = NULL,
           end_reason = (SELECT 'link ' || l.status || coalesce(' (' || l.end_reason || ')', '')
                           FROM links l WHERE l.run_id = d.run_id AND l.token_sha256 = ANY(d.link_sha256) LIMIT 1)
     WHERE d.run_id = ${runId}::uuid AND d.id IN (SELECT p.id FROM deliveries p
                     WHERE p.run_id = ${runId}::uuid AND p.status = 'pending' AND cardinality(p.link_sha256) > 0
                       AND EXISTS (SELECT 1 FROM links l WHERE l.run_id = p.run_id AND l.token_sha256 = ANY(p.link_sha256))
                       AND NOT EXISTS (SELECT 1 FROM links l WHERE l.run_id = p.run_id AND l.token_sha256 = ANY(p.link_sha256) AND l.status = 'live')
                       FOR UPDATE SKIP LOCKED)`;
}

/** Pending deliveries whose attempt is overdue by `graceMs` (a lost job): the sweeper re-enqueues them. */
export async function overdueDeliveries(db: Db, now: Date, graceMs: number, take: number): Promise<{ id: string; attempts: number }[]> {
  return db.delivery.findMany({
    where: { status: "pending", nextAttemptAt: { lte: new Date(now.getTime() - graceMs) } },
    select: { id: true, attempts: true },
    orderBy: { nextAttemptAt: "asc" },
    take,
  });
}
