/**
 * One attempt of a `call http` (v0.5, issue 40 item 2; docs/language.md "Calls",
 * docs/http-api.md "Calls"): ONE bounded HTTP request to an `http` endpoint, and what its outcome
 * means for the call. Pure of the engine: it is handed the endpoint opened (URL, headers, signing
 * secrets), the evaluated `Method`, `Path` and `Input`, the attempt's `Timeout`, and the call's id.
 *
 * The request: `Method` to the endpoint's URL with `Path` appended (path.ts: a `Path` that would
 * change scheme, host or port, or holds `..`, fails the call with no request); a JSON body from
 * `Input` (none for GET and DELETE); `Content-Type` and `Accept: application/json`;
 * `Idempotency-Key: <call id>` — the same on every attempt and after any crash, so the callee can
 * deduplicate; the endpoint's own headers; Standard Webhooks `webhook-id` (the call id),
 * `webhook-timestamp` and `webhook-signature` (one signature per live secret: two during a
 * rotation), signed over the exact body sent by the `standardwebhooks` library. The SSRF rules of
 * webhooks (outbox/address-guard.ts) hold on every attempt: the literal host is checked, and the
 * agent's DNS lookup refuses private addresses at connect time; the agent keeps no connection.
 *
 * Bounds: the whole attempt (connect, headers, body) within `timeoutMs`; redirects never followed
 * (a 3xx fails the call); an answer over MAX_RESPONSE_BYTES (1 MiB; a `Content-Length` above it
 * is refused before reading, and a body that outgrows it is cut off, whatever the header said),
 * nested deeper than `maxDepth`, not UTF-8, not JSON, not a JSON object, or holding text
 * PostgreSQL cannot store, fails the call (not retried).
 *
 * The outcome:
 * - `answer` — a 2xx whose body is a JSON object, or empty (`body: null`; the engine decides
 *   whether the call's `returns` event can take no parameters);
 * - `retry` — a connection error, a timeout, a body cut short, or status 408, 425, 429, 500, 502,
 *   503, 504 (with the callee's `Retry-After`, ms, when it sent one);
 * - `fail` — anything else: a refused address, a bad `Path`, another status (3xx included), a bad answer.
 *
 * `error` is words for the run's history and `x.error` (`HTTP 422 from credit-bureau`, `timeout
 * after 10s`, `invalid-response: not JSON`), never a header value, a secret or the request's URL.
 */
import { Webhook } from "standardwebhooks";
import { request } from "undici";
import { MAX_JSON_DEPTH, jsonTextDepth } from "../../json/depth.js";
import { unstorablePaths } from "../../json/storable.js";
import { checkLiteralHost, deliveryAgent, type Resolver } from "../../outbox/address-guard.js";
import { parseRetryAfter } from "./backoff.js";
import { CallPathError, callUrl } from "./path.js";

/** The largest answer read, bytes (1 MiB). */
export const MAX_RESPONSE_BYTES = 1024 * 1024;
/** Statuses after which the call is tried again. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 425, 429, 500, 502, 503, 504]);
export const HTTP_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** An `http` endpoint, opened (endpoints/endpoints.ts `openEndpointRow`). */
export interface HttpCallEndpoint {
  name: string;
  url: string;
  /** Extra request headers (credentials). */
  headers: Record<string, string>;
  /** Signing secrets `whsec_…`, the current one first. */
  secrets: string[];
}

export interface HttpAttempt {
  endpoint: HttpCallEndpoint;
  method: HttpMethod;
  /** The evaluated `Path`, or null. */
  path: string | null;
  /** The evaluated `Input` (a JSON object), sent as the body except for GET and DELETE; null sends `{}`. */
  input: Record<string, unknown> | null;
  /** The attempt's `Timeout`, ms. */
  timeoutMs: number;
  /** The call's id: `Idempotency-Key` and `webhook-id`. */
  callId: string;
  /** This attempt's number, 1-based (reported back, not sent). */
  attempt: number;
  /** SLOTFLOW_ENDPOINTS_ALLOW_PRIVATE: lifts the SSRF rules (development and tests). */
  allowPrivate: boolean;
  /** The nesting bound of the answer (SLOTFLOW_MAX_INPUT_DEPTH). */
  maxDepth?: number;
  /** DNS for the guarded lookup (tests); dns.lookup by default. */
  resolve?: Resolver;
  /** The signing time (tests); now by default. */
  now?: () => Date;
}

export type HttpAttemptOutcome =
  | { kind: "answer"; attempt: number; status: number; ms: number; body: Record<string, unknown> | null }
  | { kind: "retry"; attempt: number; status: number | null; ms: number; error: string; retryAfterMs: number | null }
  | { kind: "fail"; attempt: number; status: number | null; ms: number; error: string };

/** The request headers of one attempt (exported for the tests and the testing kit). */
export function callHeaders(a: Pick<HttpAttempt, "endpoint" | "callId">, body: string, now: Date): Record<string, string> {
  const signature = a.endpoint.secrets.map((s) => new Webhook(s).sign(a.callId, now, body)).join(" ");
  return {
    ...a.endpoint.headers,
    accept: "application/json",
    "content-type": "application/json",
    "idempotency-key": a.callId,
    "webhook-id": a.callId,
    "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
    "webhook-signature": signature,
  };
}

/**
 * What a non-2xx status means for the call (null for a 2xx): `retry` for 408, 425, 429, 500, 502,
 * 503, 504 (with `Retry-After` in ms when given), else `fail`; a 3xx says redirects are not
 * followed. Used by the attempt and by the testing kit's stand-in callee.
 */
export function judgeStatus(status: number, endpoint: string, retryAfter: string | null): { kind: "retry"; error: string; retryAfterMs: number | null } | { kind: "fail"; error: string } | null {
  if (status >= 200 && status <= 299) return null;
  const what = `HTTP ${status} from ${endpoint}`;
  if (RETRYABLE_STATUSES.has(status)) return { kind: "retry", error: what, retryAfterMs: parseRetryAfter(retryAfter) };
  return { kind: "fail", error: status >= 300 && status < 400 ? `${what} (redirects are not followed)` : what };
}

/** Makes one attempt; never throws (every failure is an outcome). */
export async function attemptHttpCall(a: HttpAttempt): Promise<HttpAttemptOutcome> {
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  const fail = (status: number | null, error: string): HttpAttemptOutcome => ({ kind: "fail", attempt: a.attempt, status, ms: ms(), error });
  const retry = (status: number | null, error: string, retryAfterMs: number | null = null): HttpAttemptOutcome => ({ kind: "retry", attempt: a.attempt, status, ms: ms(), error, retryAfterMs });
  let url: URL;
  try {
    url = callUrl(a.endpoint.url, a.path);
    checkLiteralHost(url, a.allowPrivate);
  } catch (err) {
    return fail(null, err instanceof CallPathError || (err as Error).name === "AddressRefusedError" ? (err as Error).message : "invalid endpoint URL");
  }
  const hasBody = a.method !== "GET" && a.method !== "DELETE";
  const body = hasBody ? JSON.stringify(a.input ?? {}) : "";
  const headers = callHeaders(a, body, a.now?.() ?? new Date());
  if (!hasBody) delete headers["content-type"];
  const agent = deliveryAgent(a.allowPrivate, a.resolve);
  const timeout = AbortSignal.timeout(a.timeoutMs);
  let status: number | null = null;
  try {
    // undici's request() follows no redirect (a 3xx comes back as it is)
    const res = await request(url, { method: a.method, headers, body: hasBody ? body : undefined, dispatcher: agent, signal: timeout });
    status = res.statusCode;
    const judged = judgeStatus(status, a.endpoint.name, headerText(res.headers["retry-after"]));
    if (judged) {
      discard(res.body);
      return judged.kind === "retry" ? retry(status, judged.error, judged.retryAfterMs) : fail(status, judged.error);
    }
    const declared = Number(headerText(res.headers["content-length"]) ?? NaN);
    if (Number.isFinite(declared) && declared > MAX_RESPONSE_BYTES) {
      discard(res.body);
      return fail(status, `invalid-response: larger than ${MAX_RESPONSE_BYTES} bytes`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_RESPONSE_BYTES) {
        discard(res.body);
        return fail(status, `invalid-response: larger than ${MAX_RESPONSE_BYTES} bytes`);
      }
      chunks.push(chunk);
    }
    return readAnswer(Buffer.concat(chunks), a, status, ms);
  } catch (err) {
    if (timeout.aborted) return retry(status, `timeout after ${seconds(a.timeoutMs)}`);
    const cause = (err as { cause?: unknown }).cause;
    const e = cause instanceof Error ? cause : err instanceof Error ? err : new Error(String(err));
    if (e.name === "AddressRefusedError") return fail(null, e.message);
    // the message of a connection error may name the URL: keep the error's class and code only
    const code = (e as { code?: string }).code;
    return retry(status, `connection error: ${e.name}${code ? ` ${code}` : ""}`);
  } finally {
    await agent.destroy().catch(() => undefined);
  }
}

/** A 2xx body → the answer, or why it is not one. */
function readAnswer(bytes: Buffer, a: HttpAttempt, status: number, ms: () => number): HttpAttemptOutcome {
  const fail = (error: string): HttpAttemptOutcome => ({ kind: "fail", attempt: a.attempt, status, ms: ms(), error: `invalid-response: ${error}` });
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return fail("not UTF-8 text");
  }
  if (text.trim() === "") return { kind: "answer", attempt: a.attempt, status, ms: ms(), body: null };
  const limit = Math.min(a.maxDepth ?? MAX_JSON_DEPTH, MAX_JSON_DEPTH);
  if (jsonTextDepth(text, limit) > limit) return fail(`nested deeper than ${limit} levels`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return fail("not JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return fail("not a JSON object");
  const bad = unstorablePaths(value);
  if (bad.length > 0) return fail(`${(bad[0] || "a value").slice(0, 100)} holds a character that cannot be stored (U+0000 or an unpaired surrogate)`);
  return { kind: "answer", attempt: a.attempt, status, ms: ms(), body: value as Record<string, unknown> };
}

/** Drops a body not read (or read no further): its stream is destroyed, and the abort that causes is expected. */
function discard(body: { on(event: "error", fn: () => void): unknown; destroy(): unknown }): void {
  body.on("error", () => undefined);
  body.destroy();
}

const headerText = (v: string | string[] | undefined): string | null => (v === undefined ? null : Array.isArray(v) ? (v[0] ?? null) : v);
const seconds = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`);
