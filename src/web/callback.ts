/**
 * The public callback endpoint: `POST /api/workflow/callback/{token}` (callback-links spec §4;
 * HTTP API "The callback endpoint"). No sign-in: the token in the path is the credential.
 *
 * Order of checks, each refusing with nothing changed:
 *   405 method-not-allowed for any other method (`Allow: POST`) — before any lookup, so it neither
 *       spends the link nor reveals whether the token exists;
 *   429 rate-limited (per client, shared across web processes through Redis);
 *   415 unsupported-media-type when a body is sent with a content type other than JSON;
 *   413 payload-too-large above SLOTFLOW_CALLBACK_BODY_LIMIT_BYTES (64 KiB by default);
 *   400 malformed-json;
 *   400 invalid-idempotency-key when an `Idempotency-Key` header is not 1–255 printable ASCII;
 *   404 / 410 / 422 from `prepareDeposit` (link lookup and body check at the minting version; a
 *       retry under the Idempotency-Key of the request that burned the link answers 200 again);
 *   then the deposit is queued and applied by a worker under the run lock: 200 `{"status":"completed"}`,
 *   409 / 410 / 500 refusals, or 202 `{"status":"accepted"}` when the worker takes longer than
 *   SLOTFLOW_DEPOSIT_WAIT_MS; 503 `unavailable` when PostgreSQL or Redis cannot be reached.
 */
import { bodyParser } from "@koa/bodyparser";
import Router from "@koa/router";
import type { Context } from "koa";
import { fingerprint } from "../engine/idempotency.js";
import { prepareDeposit } from "../engine/redeem.js";
import { RefusalCode, RefusalError } from "../engine/refusals.js";
import type { Runtime } from "../runtime.js";
import { dependency } from "./dependency.js";
import { metrics } from "./metrics.js";
import { sendProblem } from "./problems.js";
import type { RateLimit } from "./rate-limit.js";

export const CALLBACK_ROUTE = "/api/workflow/callback/:token";

function hasBody(ctx: Context): boolean {
  const len = ctx.get("content-length");
  return (len !== "" && Number(len) > 0) || ctx.get("transfer-encoding") !== "";
}

export function callbackRouter(rt: Runtime, rateLimit: RateLimit): Router {
  const router = new Router();
  const parse = bodyParser({
    enableTypes: ["json"],
    jsonLimit: rt.config.callbackBodyLimitBytes,
    jsonStrict: false,
    onError(err, ctx) {
      const e = err as Error & { status?: number; body?: string };
      // co-body refuses keys such as "__proto__" as "prototype poisoning" with a 400; they are
      // valid JSON, so parse them safely (JSON.parse makes them own properties) and let the body
      // check refuse them as undeclared properties (422).
      if (e.status === 400 && typeof e.body === "string") {
        try {
          ctx.request.body = JSON.parse(e.body);
          return;
        } catch {
          // fall through: truly malformed
        }
      }
      throw err;
    },
  });

  router.all(CALLBACK_ROUTE, async (ctx, next) => {
    if (ctx.method !== "POST") {
      sendProblem(ctx, { code: RefusalCode.MethodNotAllowed, detail: "A callback link is answered with POST only." });
      return;
    }
    await dependency(rt.log, "redis", () => rateLimit.consume(ctx));
    if (hasBody(ctx) && !ctx.is("application/json", "+json")) {
      sendProblem(ctx, { code: RefusalCode.UnsupportedMediaType, detail: "Send the body as application/json." });
      return;
    }
    await next();
  }, parse, async (ctx) => {
    const raw = (ctx.request as { rawBody?: string }).rawBody;
    const body = raw === undefined || raw.trim() === "" ? undefined : ctx.request.body;
    const key = ctx.headers["idempotency-key"];
    const idempotency = fingerprint(typeof key === "string" ? key : undefined, body);
    if (idempotency !== null && "code" in idempotency) throw new RefusalError(idempotency);
    const prepared = await dependency(rt.log, "database", () => prepareDeposit(rt.db, ctx.params.token, body, idempotency));
    if (!prepared.ok) throw new RefusalError(prepared.refusal);
    const cmd = prepared.cmd;
    if (cmd === null) {
      // This request, under its Idempotency-Key, is the one that already completed the slot.
      metrics.deposits.inc({ outcome: "replayed" });
      ctx.status = 200;
      ctx.body = { status: "completed" };
      return;
    }
    const outcome = await dependency(rt.log, "redis", () => rt.queues.submit(cmd));
    if (outcome === "accepted") {
      metrics.deposits.inc({ outcome: "accepted" });
      ctx.status = 202;
      ctx.body = { status: "accepted" };
      return;
    }
    if (!outcome.ok) {
      metrics.deposits.inc({ outcome: outcome.refusal.code });
      throw new RefusalError(outcome.refusal);
    }
    metrics.deposits.inc({ outcome: "completed" });
    ctx.status = 200;
    ctx.body = { status: "completed" };
  });
  return router;
}
