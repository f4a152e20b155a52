/**
 * `POST /mcp` (issue 33 item 1): the MCP server over Streamable HTTP on the web process, stateless
 * (a fresh server and transport per request, no session: any web process behind a load balancer
 * can answer any request). Bearer: SLOTFLOW_MCP_TOKEN when set, else the admin token; 401 before
 * the body is read. A tool call that waits streams its progress notifications as server-sent
 * events on the request's response; closing the request ends the wait (the tool returns
 * `waiting`; get_answer resumes). Bodies: JSON, at most 1 MiB (request-body.ts).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import Router from "@koa/router";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { RefusalCode, RefusalError, refuse } from "../engine/refusals.js";
import type { Runtime } from "../runtime.js";
import { readBody } from "../web/request-body.js";
import { createMcpServer } from "./server.js";

const BODY_LIMIT_BYTES = 1024 * 1024;

/** Throws 401 unless the request's bearer token is `token` (compared in constant time). */
function requireToken(authorization: string, token: string, variable: string): void {
  const given = /^Bearer\s+(\S+)$/i.exec(authorization)?.[1];
  const digest = (s: string) => createHash("sha256").update(s).digest();
  if (!given || !timingSafeEqual(digest(given), digest(token))) {
    throw new RefusalError(refuse(RefusalCode.Unauthorized, `The MCP endpoint needs a bearer token (Authorization: Bearer $${variable}).`));
  }
}

/** The router of `POST /mcp`. */
export function mcpRouter(rt: Runtime): Router {
  const router = new Router();
  router.post("/mcp", async (ctx) => {
    const [token, variable] = rt.config.mcpToken ? [rt.config.mcpToken, "SLOTFLOW_MCP_TOKEN"] : [rt.config.adminToken, "SLOTFLOW_ADMIN_TOKEN"];
    requireToken(ctx.get("authorization"), token, variable);
    const body = await readBody(ctx, "json", BODY_LIMIT_BYTES, rt.config.limits.maxInputDepth);
    const gone = new AbortController();
    const server = createMcpServer(rt, gone.signal);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    ctx.res.once("close", () => {
      gone.abort();
      void transport.close().catch(() => undefined);
      void server.close().catch(() => undefined);
    });
    await server.connect(transport);
    ctx.status = 200; // for the access log; the transport writes the response itself
    ctx.respond = false;
    await transport.handleRequest(ctx.req, ctx.res, body);
  });
  return router;
}
