/**
 * Slack's Web API and `response_url`s (v0.4 "Answers inside Slack"): every call to Slack goes
 * through here. The Web API through `@slack/web-api`'s WebClient, at SLOTFLOW_SLACK_API_URL, with
 * no retries of its own (the outbox retries deliveries; an interaction's follow-up is best-effort
 * and the sweeper's sync repeats what matters) and a 10 s timeout; `response_url` with a plain POST.
 *
 * Errors are reduced to words that never hold the token or a URL: `slack: channel_not_found`,
 * `HTTP 500`, `rate limited` (with Slack's Retry-After, ms).
 *
 * `@slack/web-api` (with axios, about 0.35 s of CPU to load) is loaded on the first call to Slack,
 * not when a process starts: most deployments have no Slack app, and every process start pays
 * for what it loads (issue 39 item 4).
 */
import type { Logger as SlackLogger, WebClient } from "@slack/web-api";
import { fetch } from "undici";

/** How long one call to Slack may take, ms. */
export const SLACK_CALL_TIMEOUT_MS = 10_000;

/** @slack/web-api's `ErrorCode` values (its errors.d.ts), compared as the strings they are. */
const SLACK_ERROR = { http: "slack_webapi_http_error", platform: "slack_webapi_platform_error", rateLimited: "slack_webapi_rate_limited_error" } as const;

/** A WebClient for one bot token at `apiBase` (loads @slack/web-api on first use). */
export async function slackClient(token: string, apiBase: string): Promise<WebClient> {
  const { LogLevel, WebClient } = await import("@slack/web-api");
  const silent: SlackLogger = { debug() {}, info() {}, warn() {}, error() {}, setLevel() {}, getLevel: () => LogLevel.ERROR, setName() {} };
  return new WebClient(token, { slackApiUrl: apiBase, retryConfig: { retries: 0 }, timeout: SLACK_CALL_TIMEOUT_MS, rejectRateLimitedCalls: true, logger: silent, allowAbsoluteUrls: false });
}

/** A failed call to Slack, in words safe to store and log. */
export interface SlackFailure {
  statusCode: number | null;
  error: string;
  retryAfterMs: number | null;
}

/** Reduces a WebClient (or fetch) error to a SlackFailure. */
export function slackFailure(err: unknown): SlackFailure {
  const e = err as { code?: string; data?: { error?: string }; statusCode?: number; retryAfter?: number; name?: string };
  switch (e.code) {
    case SLACK_ERROR.platform:
      return { statusCode: 200, error: `slack: ${String(e.data?.error ?? "error").slice(0, 100)}`, retryAfterMs: null };
    case SLACK_ERROR.rateLimited:
      return { statusCode: 429, error: "HTTP 429 (rate limited)", retryAfterMs: typeof e.retryAfter === "number" ? e.retryAfter * 1000 : null };
    case SLACK_ERROR.http:
      return { statusCode: e.statusCode ?? null, error: `HTTP ${e.statusCode ?? "error"}`, retryAfterMs: null };
    default:
      return { statusCode: null, error: `${e.name ?? "Error"}${e.code ? ` ${e.code}` : ""}`, retryAfterMs: null };
  }
}

/**
 * POSTs `body` to an interaction's `response_url` (Slack: valid 30 minutes, 5 uses). Resolves
 * whether Slack answered 2xx; never throws.
 */
export async function postResponseUrl(url: string, body: Record<string, unknown>): Promise<boolean> {
  try {
    const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), redirect: "manual", signal: AbortSignal.timeout(SLACK_CALL_TIMEOUT_MS) });
    await res.body?.cancel().catch(() => undefined);
    return res.status >= 200 && res.status < 300;
  } catch {
    return false;
  }
}

/** An ephemeral reply through `response_url`: only the clicking user sees it; the message stays. */
export const ephemeral = (text: string) => ({ response_type: "ephemeral", replace_original: false, text });
