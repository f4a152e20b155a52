/**
 * The web process: a Koa app that checks requests and queues commands; workers apply them.
 *
 * Routes: the public callback endpoint (callback.ts), the admin API and the ordinary raise path
 * (admin.ts), the runs list and cancel for operators (runs-api.ts), the operators' console at
 * `/console` (console/), the queue dashboard at `/admin/queues` (dashboard.ts), `GET /healthz`, `GET /readyz`,
 * `GET /metrics`, `GET /api/openapi.json`, MCP for AI agents at `POST /mcp` (src/mcp/http.ts), and
 * the inbox of a signed-in principal, `GET /inbox` and `GET /api/inbox` (inbox/).
 * the sign-in of people inside the company at `/auth/*` (identity/routes.ts), and the home page
 * `GET /` (home.ts).
 * The access log writes route templates, never raw paths (access-log.ts); requests no route takes
 * and requests Node's parser refuses are answered with problem documents (fallback.ts).
 */
import { createServer, type Server } from "node:http";
import Koa from "koa";
import Router from "@koa/router";
import { redisClient } from "../queue/redis.js";
import { isLoopbackUrl } from "../config.js";
import type { Runtime } from "../runtime.js";
import { adminRouter } from "./admin.js";
import { endpointsRouter } from "./endpoints.js";
import { slackRouter } from "./slack.js";
import { CALLBACK_ROUTE, callbackRouter } from "./callback.js";
import { dashboardMiddleware } from "./dashboard.js";
import { accessLog } from "./access-log.js";
import { answerClientErrors, honestStatus, requireHost, unmatchedRoute } from "./fallback.js";
import { bindClusterMetrics, registry } from "../metrics/metrics.js";
import { countDeposits } from "./deposit-metrics.js";
import { openApiDocument } from "./openapi.js";
import { deployedSignatures } from "./signatures.js";
import { problemMiddleware } from "./problems.js";
import { redisRateLimit, type RateLimit } from "../http/rate-limit.js";
import { doorLimits } from "./door-limits.js";
import { runsApiRouter } from "./runs-api.js";
import { runResultRouter } from "./run-result.js";
import { RunEndWaiters } from "../engine/run-end.js";
import { TaskWaiters } from "../calls/task/waiters.js";
import { tasksRouter } from "./tasks-api.js";
import { receiptsRouter } from "./receipts.js";
import { consoleGate, consoleRouter } from "./console/index.js";
import { taskRouter } from "./task/index.js";
import { requireAdmin } from "../auth/tokens.js";
import { mcpRouter } from "../mcp/http.js";
import { bearerPrincipal } from "./identity/signed-in.js";
import { inboxRouter } from "./inbox/index.js";
import { identityRouter } from "./identity/routes.js";
import { homeRouter } from "./home.js";
import { addBrandLogoRoute } from "./brand-logo.js";

export interface WebApp {
  app: Koa;
  listen(port?: number): Promise<Server>;
  /**
   * The first step of a graceful stop: `/readyz` answers 503 `{"status":"stopping"}` (a load
   * balancer stops sending here) and every response closes its connection; requests are still served.
   */
  beginDrain(): void;
  /**
   * Stops accepting connections, closes idle ones, and resolves once every request in flight has
   * been answered — or after `timeoutMs`, when the connections left are closed.
   */
  close(timeoutMs?: number): Promise<void>;
}

/** Router options of every router (issue 38 M1): paths match exactly — case-sensitive, and a trailing slash is another path. */
export const EXACT_ROUTES = { sensitive: true, strict: true } as const;

/** The operations routes: `/healthz`, `/readyz`, `/metrics`, `/api/openapi.json`. */
function opsRouter(rt: Runtime, isDraining: () => boolean): Router {
  const ops = new Router(EXACT_ROUTES);
  ops.get("/healthz", (ctx) => {
    ctx.body = { status: "ok" };
  });
  ops.get("/readyz", async (ctx) => {
    if (isDraining()) {
      ctx.status = 503;
      ctx.body = { status: "stopping" };
      return;
    }
    const [database, redis] = await Promise.all([
      rt.db.$queryRaw`SELECT 1`.then(() => true, () => false),
      // Every queue shard can run BullMQ's scripts, not just PING (issue 17 item 5).
      rt.queues.unusable().then((problem) => problem === null),
    ]);
    ctx.status = database && redis ? 200 : 503;
    ctx.body = { status: database && redis ? "ready" : "unavailable", database, redis };
  });
  ops.get("/metrics", async (ctx) => {
    // issue 16 item 5, issue 38 M3: the public port's /metrics needs the admin token unless this is
    // a local development process (not production, and BASE_URL a loopback address) — NODE_ENV
    // unset no longer opens it. Scrape SLOTFLOW_METRICS_PORT (served by every process when set) or
    // send the token (docs/operations.md).
    if (rt.config.nodeEnv === "production" || !isLoopbackUrl(rt.config.baseUrl)) requireAdmin(ctx, rt.config.adminToken);
    ctx.type = registry.contentType;
    ctx.body = await registry.metrics();
  });
  ops.get("/api/openapi.json", async (ctx) => {
    // v0.5 (issue 41 item 4): with each deployed workflow's operations and schemas
    ctx.body = openApiDocument(rt.config.baseUrl, await deployedSignatures(rt));
  });
  // v0.5: the brand's logo, from this origin (pages' CSP: img-src 'self' only with a logo)
  addBrandLogoRoute(ops, rt.config.brand.logoFile);

  return ops;
}

/**
 * Every router the web process mounts, in order (the route-variants test walks their stacks, so a
 * route added here is covered by it). Each is created with EXACT_ROUTES.
 */
export function webRouters(
  rt: Runtime,
  rateLimit: RateLimit,
  isDraining: () => boolean,
  runEndWaiters: RunEndWaiters = new RunEndWaiters(rt.config),
  taskWaiters: TaskWaiters = new TaskWaiters(rt.config),
): Router[] {
  return [opsRouter(rt, isDraining), runResultRouter(rt, runEndWaiters), tasksRouter(rt, taskWaiters, isDraining), callbackRouter(rt, rateLimit), adminRouter(rt), endpointsRouter(rt), slackRouter(rt), runsApiRouter(rt), receiptsRouter(rt), consoleRouter(rt), taskRouter(rt), mcpRouter(rt, (ctx, token) => bearerPrincipal(ctx, rt, token)), inboxRouter(rt), identityRouter(rt), homeRouter(rt)];
}

export function createWebApp(rt: Runtime): WebApp {
  // issue 28 item 4: behind N trusted proxies the client is the N-th X-Forwarded-For address from
  // the right (the one the outermost trusted proxy saw), never the client-supplied left-most one.
  const hops = rt.config.trustProxyHops;
  const app = new Koa({ proxy: hops > 0, maxIpsCount: hops });
  bindClusterMetrics(rt.db, rt.queues, rt.config.retentionMs);
  const limiterRedis = redisClient(rt.config); // the configured topology (issue 17); fails fast
  limiterRedis.on("error", () => undefined);
  const rateLimit = redisRateLimit(limiterRedis, rt.config.rateLimitPerMinute, rt.config.queuePrefix);

  let draining = false;
  app.use(async (ctx, next) => {
    if (draining) ctx.set("Connection", "close"); // graceful stop: clients reconnect elsewhere
    await next();
  });
  app.use(accessLog(rt.log));
  app.use(countDeposits(CALLBACK_ROUTE));
  app.use(problemMiddleware(rt.log));
  app.use(honestStatus());
  app.use(requireHost());
  // sign-in, task POSTs, the raise API and Slack interactions: limited as the callback endpoint is (issue 38)
  app.use(doorLimits(limiterRedis, rt.config.rateLimitPerMinute, rt.config.queuePrefix, rt.log));
  app.use(dashboardMiddleware(rt.queues, rt.config.adminToken));
  app.use(consoleGate(rt));

  // v0.5 Results: one subscription per web process for the result long-polls (engine/run-end.ts)
  const runEndWaiters = new RunEndWaiters(rt.config);
  // v0.5 SDK (issue 41 item 3): one subscription per web process for the task polls (calls/task/waiters.ts)
  const taskWaiters = new TaskWaiters(rt.config);
  taskWaiters.subscribe(); // before the first poll, so its wait is not cut short by the subscription's confirmation
  const routers = webRouters(rt, rateLimit, () => draining, runEndWaiters, taskWaiters);
  for (const router of routers) app.use(router.routes());
  app.use(unmatchedRoute(routers));

  let server: Server | null = null;
  return {
    app,
    async listen(port = rt.config.port) {
      if (!(await rt.queues.ready())) rt.log.warn("Redis is not answering; requests that need it answer 503 until it does");
      server = await new Promise<Server>((resolve, reject) => {
        // Node's own Host check answers a bare 400; requireHost() answers it with a problem body
        // Slow and many clients (issue 28, "also check"): bounded header and request times, checked
        // every second (Node's default check runs every 30 s), and a cap on open connections.
        const http = rt.config.http;
        const s = createServer(
          { requireHostHeader: false, headersTimeout: http.headersTimeoutMs, requestTimeout: http.requestTimeoutMs, keepAliveTimeout: http.keepAliveTimeoutMs, connectionsCheckingInterval: Math.min(1000, http.headersTimeoutMs) },
          app.callback(),
        );
        s.maxConnections = http.maxConnections;
        answerClientErrors(s);
        s.once("error", reject);
        s.listen(port, () => resolve(s));
      });
      return server;
    },
    beginDrain() {
      draining = true;
      taskWaiters.close(); // waiting polls answer (empty) now: workers poll another process
    },
    async close(timeoutMs = 25_000) {
      draining = true;
      taskWaiters.close();
      const s = server;
      if (s) {
        const closed = new Promise<void>((resolve) => s.close(() => resolve()));
        s.closeIdleConnections();
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<"late">((resolve) => {
          timer = setTimeout(() => resolve("late"), timeoutMs);
        });
        if ((await Promise.race([closed, late])) === "late") {
          rt.log.warn({ timeoutMs }, "requests still in flight at the shutdown timeout; closing their connections");
          s.closeAllConnections();
          await closed;
        }
        clearTimeout(timer);
      }
      limiterRedis.disconnect();
      runEndWaiters.close();
    },
  };
}
