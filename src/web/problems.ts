/**
 * RFC 9457 problem documents: the one place that maps refusal codes to HTTP statuses and writes
 * `application/problem+json`. Handlers throw `RefusalError`; `problemMiddleware` answers it.
 *
 * A problem's `type` is `https://slotflow.dev/problems/<code>` and `code` repeats the bare code.
 * Errors that are not refusals answer 500 with no internal detail. (Unreachable PostgreSQL or
 * Redis is turned into 503 `unavailable` where the call is made: see src/engine-client/dependency.ts.)
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
  "already-answered-by-you": 409,
  unauthorized: 401,
  "sign-in-failed": 400,
  "csrf-refused": 403,
  "invalid-body": 422,
  "malformed-json": 400,
  "unsupported-media-type": 415,
  "payload-too-large": 413,
  "method-not-allowed": 405,
  "invalid-idempotency-key": 400,
  "idempotency-key-reused": 422,
  "handler-failed": 500,
  "configuration-fault": 500,
  "not-found": 404,
  "invalid-workflow": 422,
  "version-conflict": 409,
  "run-finished": 409,
  "invalid-query": 400,
  "not-a-webhook": 409,
  "link-not-live": 409,
  "not-forwardable": 409,
  "forward-limit": 409,
  "task-lock-lost": 409,
  "rate-limited": 429,
  unavailable: 503,
};

export const TITLE: Record<RefusalCode, string> = {
  "link-not-found": "Link not found",
  "link-burned": "Link already used",
  "link-retired": "Link replaced",
  "link-dead": "Link no longer works",
  "task-lock-lost": "Task lock lost",
  "slot-not-open": "Slot not open yet",
  "requires-failed": "Condition does not hold",
  "slot-closed": "Slot closed",
  "not-a-candidate": "Not a candidate",
  "authorize-denied": "Not authorized",
  "already-answered-by-you": "Already answered by you",
  unauthorized: "Sign-in required",
  "sign-in-failed": "Sign-in failed",
  "csrf-refused": "Refused: not sent by this site's own form",
  "invalid-body": "Invalid body",
  "malformed-json": "Malformed JSON",
  "unsupported-media-type": "Unsupported media type",
  "payload-too-large": "Payload too large",
  "method-not-allowed": "Method not allowed",
  "invalid-idempotency-key": "Invalid Idempotency-Key",
  "idempotency-key-reused": "Idempotency-Key reused",
  "handler-failed": "Workflow handler failed",
  "configuration-fault": "Service misconfigured",
  "not-found": "Not found",
  "invalid-workflow": "Invalid workflow",
  "version-conflict": "Deploy refused by versioning",
  "run-finished": "Run already ended",
  "invalid-query": "Invalid query parameter",
  "not-a-webhook": "Not a webhook endpoint",
  "link-not-live": "The link it carries is no longer live",
  "not-forwardable": "This slot's link cannot be forwarded",
  "forward-limit": "Forwarded too often",
  "rate-limited": "Too many requests",
  unavailable: "Service unavailable",
};

/** Seconds a client should wait after 503 `unavailable`. */
export const UNAVAILABLE_RETRY_AFTER_S = 5;

/** Writes `refusal` as the response. */
export function sendProblem(ctx: Context, refusal: Refusal): void {
  const status = STATUS[refusal.code];
  ctx.state.problemCode = refusal.code; // for the deposit outcome metric (deposit-metrics.ts countDeposits)
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
      log.error({ err: (err as Error)?.message, stack: (err as Error)?.stack }, "unhandled error");
      ctx.status = 500;
      ctx.type = "application/problem+json";
      ctx.body = JSON.stringify({ type: "about:blank", title: "Internal Server Error", status: 500 });
    }
  };
}
