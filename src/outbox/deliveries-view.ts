/**
 * What the outbox API shows of a run's deliveries (issue 18 item 5): per delivery its endpoint,
 * status, attempts (each with its status code, latency and error), the next attempt and why it
 * ended — never its payload (it may carry a live link), a token, a secret or an endpoint's URL.
 */
import type { Db } from "../db.js";

export interface DeliveryView {
  id: string;
  channel: "webhook" | "message";
  endpoint: string;
  webhookId: string;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  lastLatencyMs: number | null;
  lastError: string | null;
  nextAttemptAt: Date | null;
  endReason: string | null;
  createdAt: Date;
  deliveredAt: Date | null;
  attemptLog: { attempt: number; at: Date; statusCode: number | null; latencyMs: number | null; error: string | null }[];
}

/** The run's deliveries, oldest first, each with its last 50 attempts. */
export async function showDeliveries(db: Db, runId: string): Promise<DeliveryView[]> {
  const rows = await db.delivery.findMany({
    where: { runId },
    orderBy: { createdAt: "asc" },
    include: { attemptLog: { orderBy: { id: "desc" }, take: 50 } },
  });
  return rows.map((d) => ({
    id: d.id,
    channel: d.statement as "webhook" | "message",
    endpoint: d.endpoint,
    webhookId: d.webhookId,
    status: d.status,
    attempts: d.attempts,
    lastStatusCode: d.lastStatusCode,
    lastLatencyMs: d.lastLatencyMs,
    lastError: d.lastError,
    nextAttemptAt: d.nextAttemptAt,
    endReason: d.endReason,
    createdAt: d.createdAt,
    deliveredAt: d.deliveredAt,
    attemptLog: d.attemptLog.reverse().map((a) => ({ attempt: a.attempt, at: a.at, statusCode: a.statusCode, latencyMs: a.latencyMs, error: a.error })),
  }));
}
