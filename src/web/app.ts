/**
 * The web process: a Koa app that checks requests and queues commands; workers apply them.
 *
 * Routes: the public callback endpoint (callback.ts), the admin API and the ordinary raise path
 * (admin.ts), `GET /healthz`, `GET /readyz`, `GET /metrics`, `GET /api/openapi.json`.
 * The access log writes route templates, never raw paths (access-log.ts); requests no route takes
 * and requests Node's parser refuses are answered with problem documents (fallback.ts).
 */
import { createServer, type Server } from "node:http";
import Koa from "koa";
import Router from "@koa/router";
import { Redis } from "ioredis";
import type { Runtime } from "../runtime.js";
import { adminRouter } from "./admin.js";
import { callbackRouter } from "./callback.js";
import { accessLog } from "./access-log.js";
import { answerClientErrors, requireHost, unmatchedRoute } from "./fallback.js";
import { registry } from "./metrics.js";
import { openApiDocument } from "./openapi.js";
import { problemMiddleware } from "./problems.js";
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

  app.use(accessLog(rt.log));
  app.use(problemMiddleware(rt.log));
  app.use(requireHost());

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

  const routers = [ops, callbackRouter(rt, rateLimit), adminRouter(rt)];
  for (const router of routers) app.use(router.routes());
  app.use(unmatchedRoute(routers));

  let server: Server | null = null;
  return {
    app,
    async listen(port = rt.config.port) {
      if (!(await rt.queues.ready())) rt.log.warn("Redis is not answering; requests that need it answer 503 until it does");
      server = await new Promise<Server>((resolve, reject) => {
        // Node's own Host check answers a bare 400; requireHost() answers it with a problem body
        const s = createServer({ requireHostHeader: false }, app.callback());
        answerClientErrors(s);
        s.once("error", reject);
        s.listen(port, () => resolve(s));
      });
      return server;
    },
    async close() {
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
      limiterRedis.disconnect();
    },
  };
}
