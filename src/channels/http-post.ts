/**
 * The guarded HTTP POST that the webhook, Slack (incoming webhook) and Teams channels share
 * (issue 18 item 3; moved from outbox/deliveries.ts, issue 39 item 2). One POST per attempt:
 *
 * - the endpoint's address is checked (outbox/address-guard.ts: no private or loopback address
 *   unless SLOTFLOW_ENDPOINTS_ALLOW_PRIVATE), at most ATTEMPT_TIMEOUT_MS, no redirect followed (a
 *   3xx is a failure); only a 2xx succeeds;
 * - a 429 or 503 with `Retry-After` asks the lifecycle to wait at least that long (≤ 24 h);
 * - a connection error is recorded by its class and code only: its message may name the URL,
 *   which is a credential for chat webhooks.
 */
import { fetch } from "undici";
import { checkLiteralHost, deliveryAgent } from "../outbox/address-guard.js";
import type { ChannelDeps, ChannelOutcome } from "./channel.js";

/** How long one attempt may take (connect, send, answer), ms. */
export const ATTEMPT_TIMEOUT_MS = 10_000;
/** Longest Retry-After honoured, ms (24 h: the schedule's longest gap). */
const MAX_RETRY_AFTER_MS = 24 * 3600_000;

/** `Retry-After` (seconds or an HTTP date) in ms; null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Math.min(MAX_RETRY_AFTER_MS, Number(value.trim()) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.min(MAX_RETRY_AFTER_MS, Math.max(0, at - now));
}

/** A request to POST: headers and body (a channel's wire format). */
export interface WireRequest {
  headers: Record<string, string>;
  body: string;
}

/** POSTs `req` to `url` (see the module header); the outcome is always `answered`. */
export async function postGuarded(deps: Pick<ChannelDeps, "allowPrivate" | "resolve">, url: string, req: WireRequest): Promise<ChannelOutcome> {
  let statusCode: number | null = null;
  let error: string | null = null;
  let retryAfterMs: number | null = null;
  const agent = deliveryAgent(deps.allowPrivate, deps.resolve);
  try {
    const target = new URL(url);
    checkLiteralHost(target, deps.allowPrivate);
    const res = await fetch(target, { method: "POST", headers: req.headers, body: req.body, redirect: "manual", dispatcher: agent, signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS) });
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
  return { kind: "answered", statusCode, error, retryAfterMs };
}
