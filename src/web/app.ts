/**
 * The web process: a Koa app that checks requests and queues commands; workers apply them.
 *
 * Routes: the public callback endpoint (callback.ts), the admin API and the ordinary raise path
 * (admin.ts), `GET /healthz`, `GET /readyz`, `GET /metrics`, `GET /api/openapi.json`.
 * The access log writes route templates' paths with callback tokens redacted.
 */
import type { Server } from "node:http";
import Koa from "koa";
import Router from "@koa/router";
import { Redis } from "ioredis";
import { RefusalCode } from "../engine/refusals.js";
import { redactTokens } from "../engine/seal.js";
import type { Runtime } from "../runtime.js";
import { adminRouter } from "./admin.js";
import { callbackRouter } from "./callback.js";
import { metrics, registry } from "./metrics.js";
import { openApiDocument } from "./openapi.js";
import { problemMiddleware, sendProblem } from "./problems.js";
import { redisRateLimit } from "./rate-limit.js";

export interface WebApp {
  app: Koa;
  listen(port?: number): Promise<Server>;
  close(): Promise<void>;
}

export function createWebApp(rt: Runtime): WebApp {
  const app = new Koa({ proxy: rt.config.trustProxy });
  const limiterRedis = new Redis(rt.config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2000 });
  limiterRedis.on("error", () => undefined);
  const rateLimit = redisRateLimit(limiterRedis, rt.config.rateLimitPerMinute, rt.config.queuePrefix);

  app.use(async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const ms = performance.now() - started;
      const route = (ctx as unknown as { _matchedRoute?: string })._matchedRoute ?? "unmatched";
      metrics.http.observe({ method: ctx.method, route, status: String(ctx.status) }, ms / 1000);
      rt.log.info({ method: ctx.method, path: redactTokens(ctx.path), status: ctx.status, ms: Math.round(ms * 10) / 10 }, "request");
    }
  });
  app.use(problemMiddleware(rt.log));

  const ops = new Router();
  ops.get("/healthz", (ctx) => {
    ctx.body = { status: "ok" };
  });
  ops.get("/readyz", async (ctx) => {
    const [database, redis] = await Promise.all([
      rt.db.$queryRaw`SELECT 1`.then(() => true, () => false),
      rt.queues.ping(),
    ]);
    ctx.status = database && redis ? 200 : 503;
    ctx.body = { status: database && redis ? "ready" : "unavailable", database, redis };
  });
  ops.get("/metrics", async (ctx) => {
    ctx.type = registry.contentType;
    ctx.body = await registry.metrics();
  });
  ops.get("/api/openapi.json", (ctx) => {
    ctx.body = openApiDocument(rt.config.baseUrl);
  });

  for (const router of [ops, callbackRouter(rt, rateLimit), adminRouter(rt)]) {
    app.use(router.routes());
    app.use(router.allowedMethods());
  }
  app.use((ctx) => {
    if (ctx.body === undefined && ctx.status === 404) sendProblem(ctx, { code: RefusalCode.NotFound, detail: "No such endpoint." });
  });

  let server: Server | null = null;
  return {
    app,
    async listen(port = rt.config.port) {
      if (!(await rt.queues.ready())) rt.log.warn("Redis is not answering; requests that need it answer 503 until it does");
      server = await new Promise<Server>((resolve, reject) => {
        const s = app.listen(port, () => resolve(s));
        s.once("error", reject);
      });
      return server;
    },
    async close() {
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
      limiterRedis.disconnect();
    },
  };
}
