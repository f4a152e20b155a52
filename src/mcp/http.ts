/**
 * `POST /mcp` (issue 33 item 1): the MCP server over Streamable HTTP on the web process, stateless
 * (a fresh server and transport per request, no session: any web process behind a load balancer
 * can answer any request). Bearer: the admin token, or SLOTFLOW_MCP_TOKEN when set (interfaces.md:
 * "the admin token, or SLOTFLOW_MCP_TOKEN when set"), or a principal's JWT — the tokens the raise
 * and inbox APIs take (HS256 with SLOTFLOW_JWT_SECRET, or the issuer's), resolved by the web's one
 * resolver (BearerPrincipal); 401 before the body is read (a control character in the principal's
 * id, email or a role too). A JSON-RPC batch (a JSON array) is refused 400 with a JSON-RPC error
 * (-32600), before any of it runs. A tool call that waits streams its progress notifications as server-sent
 * events on the request's response; closing the request ends the wait (the tool returns
 * `waiting`; get_answer resumes). Bodies: JSON, at most 1 MiB (request-body.ts).
 *
 * DNS rebinding (MCP specification, Streamable HTTP transport, "Security Warning": servers MUST
 * validate the Origin header; the conformance scenario `dns-rebinding-protection`): checked first,
 * before the token, by `rebindingRefusal` — a 403 with a JSON-RPC error body, as the SDK's own
 * host-validation middleware answers.
 *
 * Whose runs (tools.ts McpScope; issue 38 L5): with SLOTFLOW_MCP_TOKEN the tools reach only runs
 * started through MCP; with the admin token, every run; with a principal's token the session is
 * limited — only request_approval, ask_human and get_answer (tools/list shows only those), and
 * get_answer only for the questions that principal asked — and its questions name it ("…, on
 * behalf of ID (EMAIL), …": interfaces.md v0.5 "Agents ask insiders").
 *
 * Rate limit (interfaces.md v0.5 "Security, round two", MCP; issue 38 L5): after the token is
 * checked, each request counts against its token's budget — SLOTFLOW_RATE_LIMIT_PER_MINUTE
 * requests per 60 s, shared by every web process (http/rate-limit.ts, key
 * `{prefix}:ratelimit:mcp`, client `mcp-token`, `admin-token` or `principal:` and a SHA-256 prefix
 * of the principal's id: each principal its own budget) — past it 429 `rate-limited`
 * with `Retry-After`, before the body is read. A request without a valid token is 401 and spends
 * nothing, so no one without the token can exhaust the agents' budget.
 *
 * The agent's name (interfaces.md v0.5 "Agents ask insiders": pages and mails name the MCP client):
 * a stateless server sees `initialize` (with `clientInfo.name`) in one request and each tool call
 * in another. So the answer to `initialize` carries an `Mcp-Session-Id` that holds the name
 * (`clientSessionId`), which MCP clients send back on every later request (MCP specification,
 * Streamable HTTP, "Session Management"); `clientNameOf` reads it back. It is no session — no
 * state is kept, any web process reads it, and a request without it is served as before — and it
 * holds only what the client said of itself in initialize, which it could say anyway: no secret,
 * nothing trusted. The name is display text, bounded and put on one line where it is shown
 * (tools.ts agentNaming).
 */
import { createHash, randomUUID } from "node:crypto";
import type { Context } from "koa";
import Router from "@koa/router";
import { mcpPrincipal, type Principal } from "../auth/principal.js";
import { bearerToken, oneOf } from "../auth/tokens.js";
import { RefusalCode, RefusalError, refuse } from "../engine/refusals.js";
import type { Runtime } from "../runtime.js";
import { dependency } from "../engine-client/dependency.js";
import { redisRateLimit } from "../http/rate-limit.js";
import { readBody } from "../http/request-body.js";
import type { McpScope } from "./tools.js";

const BODY_LIMIT_BYTES = 1024 * 1024;

/** The prefix of the session ids `clientSessionId` makes; the longest client name one carries, in UTF-8 bytes. */
const SESSION_PREFIX = "sf1.";
const SESSION_NAME_BYTES = 256;

/**
 * An `Mcp-Session-Id` carrying the client's name (see the module header): `sf1.<uuid>.<name as
 * base64url>` — visible ASCII only, as the specification requires; the name cut to 256 bytes.
 */
export function clientSessionId(name: string): string {
  const bytes = Buffer.from(name, "utf8").subarray(0, SESSION_NAME_BYTES);
  return `${SESSION_PREFIX}${randomUUID()}.${bytes.toString("base64url")}`;
}

/** The client's name carried by an `Mcp-Session-Id` of `clientSessionId`, or null (absent, another form, empty). */
export function clientNameOf(sessionId: string | undefined): string | null {
  if (!sessionId?.startsWith(SESSION_PREFIX) || sessionId.length > 512) return null;
  const encoded = sessionId.slice(SESSION_PREFIX.length + 37); // after "<uuid>."
  if (!/^[A-Za-z0-9_-]+$/.test(encoded)) return null;
  const name = Buffer.from(encoded, "base64url").toString("utf8").replace(/\uFFFD+$/, "");
  return name.trim() ? name : null;
}

/** `clientInfo.name` of an `initialize` request, or null (another request, or no name). */
function initializeName(body: unknown): string | null {
  const msg = body as { method?: unknown; params?: { clientInfo?: { name?: unknown } } } | null;
  if (msg?.method !== "initialize") return null;
  const name = msg.params?.clientInfo?.name;
  return typeof name === "string" && name.trim() ? name : null;
}

/** Which token the request's bearer is — `mcp-token` (SLOTFLOW_MCP_TOKEN) or `admin-token` (compared in constant time, src/auth/tokens.ts) — or `principal`: any other bearer, to be verified as a principal's JWT. */
export type McpClient = "mcp-token" | "admin-token";
function whichToken(given: string | null, mcpToken: string | null, adminToken: string): McpClient | "principal" {
  if (mcpToken && oneOf(given, [mcpToken])) return "mcp-token";
  if (oneOf(given, [adminToken])) return "admin-token";
  if (given !== null) return "principal";
  throw new RefusalError(
    refuse(RefusalCode.Unauthorized, `The MCP endpoint needs a bearer token (Authorization: Bearer $${mcpToken ? "SLOTFLOW_MCP_TOKEN" : "SLOTFLOW_ADMIN_TOKEN"}, or a principal's JWT).`),
  );
}

/**
 * Resolves a principal's bearer JWT (HS256 with SLOTFLOW_JWT_SECRET, or the issuer's): the web's
 * one resolver of bearer principals (web/identity/signed-in.ts `bearerPrincipal`, which the inbox
 * API and the raise API use), handed in by the web app — MCP imports no web module. Throws 401
 * `unauthorized` for a token that is not valid (bad signature, expired, a control character in
 * the id, email or a role), 503 when the issuer does not answer.
 */
export type BearerPrincipal = (ctx: Context, token: string) => Promise<Principal>;

/** The rate limit's client of a principal (a label of its id: bounded, one line). */
function principalClient(id: string): string {
  return `principal:${createHash("sha256").update(id).digest("hex").slice(0, 32)}`;
}

const LOOPBACK_HOSTNAMES = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** The hostname of a `Host` header value or an origin (`http://host:port`), or null when it does not parse. */
function hostnameOf(hostOrOrigin: string, isOrigin: boolean): string | null {
  try {
    return new URL(isOrigin ? hostOrOrigin : `http://${hostOrOrigin}`).hostname.toLowerCase();
  } catch {
    return null;
  }
}

/**
 * Why a request to `/mcp` looks like a DNS-rebinding attack, or null when it does not:
 * - an `Origin` header, when present (browsers send one; MCP clients that are programs do not),
 *   must be BASE_URL's own origin — or, when BASE_URL is a loopback address (development), any
 *   loopback origin;
 * - when BASE_URL is a loopback address, the `Host` header must name a loopback host (any port):
 *   a page on evil.example resolving to 127.0.0.1 reaches this process with `Host: evil.example`.
 */
export function rebindingRefusal(baseUrl: string, host: string, origin: string | undefined): string | null {
  const base = new URL(baseUrl);
  const loopback = LOOPBACK_HOSTNAMES.has(base.hostname.toLowerCase());
  if (origin !== undefined && origin !== base.origin) {
    const name = hostnameOf(origin, true);
    if (!loopback || name === null || !LOOPBACK_HOSTNAMES.has(name)) return `Refused: a page on another site (Origin: ${origin.slice(0, 200)}) cannot call this MCP endpoint.`;
  }
  if (loopback) {
    const name = hostnameOf(host, false);
    if (name === null || !LOOPBACK_HOSTNAMES.has(name)) return `Refused: this server answers MCP on a loopback address only under a loopback host name (Host: ${host.slice(0, 200)}).`;
  }
  return null;
}

/**
 * The router of `POST /mcp`. `principalOf`: how a bearer that is neither SLOTFLOW_MCP_TOKEN nor
 * the admin token is resolved as a principal (BearerPrincipal); without it such a bearer is 401.
 */
export function mcpRouter(rt: Runtime, principalOf?: BearerPrincipal): Router {
  const router = new Router({ sensitive: true, strict: true });
  const limit = redisRateLimit(rt.queues.connection, rt.config.rateLimitPerMinute, rt.config.queuePrefix, "mcp", (ctx) => String(ctx.state.mcpClient));
  router.post("/mcp", async (ctx) => {
    const rebinding = rebindingRefusal(rt.config.baseUrl, ctx.get("host"), ctx.get("origin") || undefined);
    if (rebinding) {
      ctx.status = 403;
      ctx.body = { jsonrpc: "2.0", error: { code: -32000, message: rebinding }, id: null };
      return;
    }
    const given = bearerToken(ctx.get("authorization"));
    const client = whichToken(given, rt.config.mcpToken, rt.config.adminToken);
    let principal: Principal;
    if (client !== "principal") {
      // the one principal type (src/auth/principal.ts): source "mcp", id the token's label
      principal = mcpPrincipal(client);
      ctx.state.mcpClient = client;
    } else {
      if (!principalOf) throw new RefusalError(refuse(RefusalCode.Unauthorized, "The MCP endpoint needs a bearer token (Authorization: Bearer $SLOTFLOW_MCP_TOKEN or $SLOTFLOW_ADMIN_TOKEN)."));
      // a principal's JWT (source hs256 or issuer); 401 when it is not valid, before the body is read
      principal = await principalOf(ctx, given!).catch((err: unknown) => {
        if (!(err instanceof RefusalError) || err.code !== RefusalCode.Unauthorized) throw err;
        // say what else the token could have been (a mistyped SLOTFLOW_MCP_TOKEN lands here too); never the token
        throw new RefusalError(refuse(RefusalCode.Unauthorized, `The bearer token is neither $${rt.config.mcpToken ? "SLOTFLOW_MCP_TOKEN nor $SLOTFLOW_ADMIN_TOKEN" : "SLOTFLOW_ADMIN_TOKEN"} nor a valid principal's JWT. ${err.message}`));
      });
      ctx.state.mcpClient = principalClient(principal.claims.id);
    }
    await dependency(rt.log, "redis", () => limit.consume(ctx));
    const body = await readBody(ctx, "json", BODY_LIMIT_BYTES, rt.config.limits.maxInputDepth);
    // A JSON-RPC batch is refused (interfaces.md "Security, round two"): one request, one tool
    // call, so the per-request limits hold for each (a batch carried 20 mails in one request).
    if (Array.isArray(body)) {
      ctx.status = 400;
      ctx.body = { jsonrpc: "2.0", error: { code: -32600, message: "Invalid Request: JSON-RPC batches are not accepted here; send one request per HTTP request." }, id: null };
      return;
    }
    // The MCP SDK (with zod and ajv, about 0.4 s of CPU) is loaded by the first request to /mcp,
    // not when the web process starts (issue 39 item 4); later requests find it loaded.
    const [{ StreamableHTTPServerTransport }, { createMcpServer }] = await Promise.all([import("@modelcontextprotocol/sdk/server/streamableHttp.js"), import("./server.js")]);
    const gone = new AbortController();
    // who asks (tools.ts AgentIdentity): the client's name carried by its session id (module header);
    // on whose behalf: the principal whose token it holds — none for the admin token or SLOTFLOW_MCP_TOKEN
    const onBehalfOf = principal.source === "mcp" ? null : { id: principal.claims.id, email: principal.claims.email };
    // whose runs (tools.ts McpScope): SLOTFLOW_MCP_TOKEN MCP's runs, a principal only the questions it asked, the admin token all
    const scope: McpScope = onBehalfOf ? { askedBy: onBehalfOf.id } : principal.claims.id === "mcp-token" ? "mcp-runs" : "all";
    const server = createMcpServer(rt, gone.signal, scope, { clientName: clientNameOf(ctx.get("mcp-session-id") || undefined), onBehalfOf });
    const introduced = initializeName(body);
    if (introduced) ctx.res.setHeader("mcp-session-id", clientSessionId(introduced));
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
