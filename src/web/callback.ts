/**
 * The public callback endpoint: `POST /api/workflow/callback/{token}` (callback-links spec §4;
 * HTTP API "The callback endpoint"). No sign-in: the token in the path is the credential.
 *
 * A GET whose `Accept` prefers text/html is a person with a browser: it gets the responder page
 * (src/web/page/), rate-limited like a POST, and never spends the link.
 *
 * Order of checks, each refusing with nothing changed:
 *   405 method-not-allowed for any other method (`Allow: POST`) — before any lookup, so it neither
 *       spends the link nor reveals whether the token exists;
 *   429 rate-limited (per client, shared across web processes through Redis);
 *   415 unsupported-media-type when a body is sent with a content type other than JSON (or +json),
 *       or with a Content-Encoding that is unknown or false;
 *   413 payload-too-large above SLOTFLOW_CALLBACK_BODY_LIMIT_BYTES (64 KiB by default, decoded);
 *   400 malformed-json (request-body.ts: a request that carried a body is judged on it);
 *   422 invalid-body for JSON nested deeper than SLOTFLOW_MAX_INPUT_DEPTH (request-body.ts, issue 16);
 *   400 invalid-idempotency-key when an `Idempotency-Key` header is not 1–255 printable ASCII;
 *   404 / 410 / 422 from `prepareDeposit` (through the engine client, src/engine-client/client.ts `deposit`) (link lookup and body check at the minting version; a
 *       retry under the Idempotency-Key of the request that burned the link answers 200 again);
 *   then the deposit is queued and applied by a worker under the run lock: 200 `{"status":"completed",
 *   "receipt": "<compact JWS>"}` (v0.4 "Receipts"; the same receipt again on a same-key retry),
 *   409 / 410 / 500 refusals, or 202 `{"status":"accepted"}` when the worker takes longer than
 *   SLOTFLOW_DEPOSIT_WAIT_MS — given only once the command is recorded in PostgreSQL, so the
 *   sweeper queues it again if Redis loses its job (src/engine/commands/pending.ts, issue 34 item 3);
 *   503 `unavailable` when PostgreSQL or Redis cannot be reached, or that record cannot be written.
 */
import Router from "@koa/router";
import { RefusalCode, RefusalError } from "../engine/refusals.js";
import type { Runtime } from "../runtime.js";
import { engineClient } from "../engine-client/client.js";
import { dependency } from "../engine-client/dependency.js";
import { serveResponderPage, wantsResponderPage } from "./page/index.js";
import { sendProblem } from "./problems.js";
import type { RateLimit } from "../http/rate-limit.js";
import { readBody } from "../http/request-body.js";
import { addForwardRoute } from "./forward.js";

/** The route template; matched case-sensitively and strictly (no trailing slash, no `//`). */
export const CALLBACK_ROUTE = "/api/workflow/callback/:token";

export function callbackRouter(rt: Runtime, rateLimit: RateLimit): Router {
  const router = new Router({ sensitive: true, strict: true });
  const client = engineClient(rt);

  router.all(CALLBACK_ROUTE, async (ctx) => {
    if (wantsResponderPage(ctx)) {
      // A person with a browser: the responder page (src/web/page/), which never spends the link.
      await dependency(rt.log, "redis", () => rateLimit.consume(ctx));
      await serveResponderPage(rt, ctx, ctx.params.token);
      return;
    }
    if (ctx.method !== "POST") {
      // A 405 is heuristically cacheable, and a browser gets the page at the same URL: say so.
      if (ctx.method === "GET") ctx.vary("Accept");
      sendProblem(ctx, { code: RefusalCode.MethodNotAllowed, detail: "A callback link is answered with POST only." });
      return;
    }
    await dependency(rt.log, "redis", () => rateLimit.consume(ctx));
    const body = await readBody(ctx, "json", rt.config.callbackBodyLimitBytes, rt.config.limits.maxInputDepth);
    const key = ctx.headers["idempotency-key"];
    const result = await client.deposit(ctx.params.token, body, typeof key === "string" ? key : undefined);
    if (result.kind === "refused") throw new RefusalError(result.refusal);
    if (result.kind === "replayed") {
      // This request, under its Idempotency-Key, is the one that already completed the slot.
      ctx.state.depositOutcome = "replayed"; // counted by countDeposits (deposit-metrics.ts)
      ctx.status = 200;
      ctx.body = { status: "completed", ...(result.receipt ? { receipt: result.receipt } : {}) };
      return;
    }
    if (result.kind === "accepted") {
      ctx.status = 202;
      ctx.body = { status: "accepted" };
      return;
    }
    ctx.status = 200;
    ctx.body = { status: "completed", ...(result.receipt ? { receipt: result.receipt } : {}) };
  });
  // v0.4: `POST …/callback/{token}/forward` (forward.ts)
  addForwardRoute(router, rt, rateLimit);
  return router;
}
