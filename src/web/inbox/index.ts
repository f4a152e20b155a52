/**
 * The inbox's routes (v0.4 "People inside the company"; docs/inbox.md): `GET /inbox` (page.ts, HTML
 * for a signed-in person) and `GET /api/inbox` (api.ts, JSON for a principal's client).
 */
import Router from "@koa/router";
import type { Runtime } from "../../runtime.js";
import { inboxApi } from "./api.js";
import { inboxPageHandler } from "./page.js";

export function inboxRouter(rt: Runtime): Router {
  const router = new Router({ sensitive: true, strict: true });
  router.get("/inbox", (ctx) => inboxPageHandler(rt, ctx));
  router.get("/api/inbox", (ctx) => inboxApi(rt, ctx));
  return router;
}
