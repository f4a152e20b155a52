/**
 * RFC 9457 problem documents: the one place that maps refusal codes to HTTP statuses and writes
 * `application/problem+json`. Handlers throw `RefusalError`; `problemMiddleware` answers it.
 *
 * A problem's `type` is `https://slotflow.dev/problems/<code>` and `code` repeats the bare code.
 * Errors that are not refusals answer 500 with no internal detail — except when PostgreSQL or
 * Redis cannot be reached, which answers 503 `unavailable` with `Retry-After` (nothing applied).
 */
import type { Context, Middleware } from "koa";
import { RefusalCode, RefusalError, type Refusal } from "../engine/refusals.js";
import type { Logger } from "../log.js";

export const PROBLEM_BASE = "https://slotflow.dev/problems/";

export const STATUS: Record<RefusalCode, number> = {
  "link-not-found": 404,
  "link-burned": 410,
  "link-retired": 410,
  "link-dead": 410,
  "slot-not-open": 409,
  "requires-failed": 409,
  "slot-closed": 409,
  "not-a-candidate": 403,
  "authorize-denied": 403,
  unauthorized: 401,
  "invalid-body": 422,
  "malformed-json": 400,
  "unsupported-media-type": 415,
  "payload-too-large": 413,
  "method-not-allowed": 405,
  "handler-failed": 500,
  "not-found": 404,
  "invalid-workflow": 422,
  "version-conflict": 409,
  "rate-limited": 429,
  unavailable: 503,
};

export const TITLE: Record<RefusalCode, string> = {
  "link-not-found": "Link not found",
  "link-burned": "Link already used",
  "link-retired": "Link replaced",
  "link-dead": "Link no longer works",
  "slot-not-open": "Slot not open yet",
  "requires-failed": "Condition does not hold",
  "slot-closed": "Slot closed",
  "not-a-candidate": "Not a candidate",
  "authorize-denied": "Not authorized",
  unauthorized: "Sign-in required",
  "invalid-body": "Invalid body",
  "malformed-json": "Malformed JSON",
  "unsupported-media-type": "Unsupported media type",
  "payload-too-large": "Payload too large",
  "method-not-allowed": "Method not allowed",
  "handler-failed": "Workflow handler failed",
  "not-found": "Not found",
  "invalid-workflow": "Invalid workflow",
  "version-conflict": "Deploy refused by versioning",
  "rate-limited": "Too many requests",
  unavailable: "Service unavailable",
};

/** Seconds a client should wait after 503 `unavailable`. */
export const UNAVAILABLE_RETRY_AFTER_S = 5;

/** Writes `refusal` as the response. */
export function sendProblem(ctx: Context, refusal: Refusal): void {
  const status = STATUS[refusal.code];
  ctx.status = status;
  ctx.type = "application/problem+json";
  ctx.body = JSON.stringify({
    type: PROBLEM_BASE + refusal.code,
    title: TITLE[refusal.code],
    status,
    detail: refusal.detail,
    code: refusal.code,
    ...refusal.extra,
  });
  if (refusal.code === RefusalCode.MethodNotAllowed) ctx.set("Allow", "POST");
  if (refusal.code === RefusalCode.Unavailable) ctx.set("Retry-After", String(UNAVAILABLE_RETRY_AFTER_S));
  if (refusal.code === RefusalCode.Unauthorized) ctx.set("WWW-Authenticate", 'Bearer realm="slotflow"');
}

const CONNECTIVITY = /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|Connection is closed|enableOfflineQueue|MaxRetriesPerRequest|Can't reach database|Connection terminated|connect ECONN|P1001|P1017|timeout exceeded when trying to connect/i;

/** True for errors that mean PostgreSQL or Redis could not be reached. */
export function isConnectivityError(err: unknown): boolean {
  const e = err as { code?: string; name?: string; message?: string; cause?: unknown } | null;
  if (!e) return false;
  if (e.code && ["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "P1001", "P1017", "P2024"].includes(e.code)) return true;
  if (e.name === "MaxRetriesPerRequestError") return true;
  if (typeof e.message === "string" && CONNECTIVITY.test(e.message)) return true;
  return e.cause ? isConnectivityError(e.cause) : false;
}

/** Catches everything downstream and answers with a problem document. */
export function problemMiddleware(log: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      if (err instanceof RefusalError) {
        sendProblem(ctx, { code: err.code, detail: err.message, extra: err.extra });
        return;
      }
      const status = (err as { status?: number }).status;
      if (status === 413) return sendProblem(ctx, { code: RefusalCode.PayloadTooLarge, detail: "The body is larger than this endpoint accepts." });
      if (status === 415) return sendProblem(ctx, { code: RefusalCode.UnsupportedMediaType, detail: "Send the body as application/json." });
      if (status === 400) return sendProblem(ctx, { code: RefusalCode.MalformedJson, detail: "The body is not valid JSON." });
      if (isConnectivityError(err)) {
        log.warn({ err: (err as Error).message }, "dependency unreachable");
        return sendProblem(ctx, { code: RefusalCode.Unavailable, detail: "The service cannot reach its database or queue right now; nothing was applied. Try again shortly." });
      }
      log.error({ err: (err as Error)?.message, stack: (err as Error)?.stack }, "unhandled error");
      ctx.status = 500;
      ctx.type = "application/problem+json";
      ctx.body = JSON.stringify({ type: "about:blank", title: "Internal Server Error", status: 500 });
    }
  };
}
