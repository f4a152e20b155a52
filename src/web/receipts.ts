/**
 * Receipts on the web (v0.4 "Many responders, forwarding, and receipts"; docs/receipts.md):
 *
 *   GET /.well-known/jwks.json — the public keys receipts are signed with (RFC 7517 JWK Set), every
 *       key of SLOTFLOW_RECEIPT_KEYS (or the development key), newest first; public, cacheable for
 *       5 minutes (`Cache-Control: public, max-age=300`), so a removed key leaves caches within that.
 *       Empty `keys` when the process signs no receipts.
 *   GET /api/runs/{id}/receipts (admin token) — the receipts of a run's completed slots, oldest
 *       completion first, at most RECEIPTS_MAX: `{ runId, receipts: [{ alias, element, state, visit,
 *       completedAt, answeredBy, receipt }] }`; 404 not-found for an unknown run (or one not a UUID).
 */
import Router from "@koa/router";
import type { Context } from "koa";
import { RUN_ID } from "../engine-client/client.js";
import { RefusalCode, RefusalError, refuse } from "../engine/refusals.js";
import { runReceipts } from "../engine/views/receipts.js";
import type { Runtime } from "../runtime.js";
import { requireAdmin } from "../auth/tokens.js";
import { dependency } from "../engine-client/dependency.js";

/** The most receipts one listing returns. */
export const RECEIPTS_MAX = 10_000;

export function receiptsRouter(rt: Runtime): Router {
  const router = new Router({ sensitive: true, strict: true });

  router.get("/.well-known/jwks.json", async (ctx) => {
    const keys = await rt.receiptKeys();
    ctx.set("Cache-Control", "public, max-age=300");
    ctx.type = "application/jwk-set+json";
    ctx.body = JSON.stringify({ keys: keys.map((k) => k.publicJwk) });
  });

  router.get("/api/runs/:id/receipts", async (ctx: Context & { params: { id: string } }) => {
    requireAdmin(ctx, rt.config.adminToken);
    const id = ctx.params.id;
    const notFound = new RefusalError(refuse(RefusalCode.NotFound, "No run has this id."));
    if (!RUN_ID.test(id)) throw notFound;
    const runId = id.toLowerCase();
    const receipts = await dependency(rt.log, "database", () => runReceipts(rt.db, runId, RECEIPTS_MAX));
    if (!receipts) throw notFound;
    ctx.body = {
      runId,
      receipts: receipts.map((r) => ({ ...r, completedAt: r.completedAt?.toISOString() ?? null })),
    };
  });
  return router;
}
