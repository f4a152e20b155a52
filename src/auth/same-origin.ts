/**
 * The one same-origin check of a state-changing browser request (issue 39 item 1: five copies
 * became this one). Used by the sign-in forms, the task page, the console, the responder page's
 * forward form and the queue dashboard.
 *
 * `sameOrigin`: false when a browser says the request comes from another site — `Sec-Fetch-Site`
 * other than `same-origin`/`none`, or an `Origin` that is neither BASE_URL's origin nor this
 * request's own (`{protocol}://{host}`). An absent or `null` Origin proves nothing either way
 * (browsers send `Origin: null` for a form posted from a `no-referrer` page): the CSRF token
 * (csrf.ts) is the check that always applies. The queue dashboard (dashboard.ts), whose changes
 * come from its own script only, applies `fetchSite` and `isOwnOrigin` more strictly: `Sec-Fetch-Site`,
 * when sent, must be `same-origin`, and `Origin` this request's own. `POST /mcp` has its own rule
 * (mcp/http.ts `rebindingRefusal`: DNS rebinding, loopback hosts), as the MCP specification asks.
 */
import type { Context } from "koa";

/** What the check reads of a request (a Koa context has it all). */
export type OriginHeaders = Pick<Context, "protocol" | "host" | "get">;

/** The request's `Sec-Fetch-Site`, or "" when the browser sent none. */
export function fetchSite(ctx: OriginHeaders): string {
  return ctx.get("sec-fetch-site");
}

/** True when `origin` (an `Origin` header) names this request's own origin or, when given, BASE_URL's. */
export function isOwnOrigin(ctx: OriginHeaders, origin: string, baseUrl: string | null): boolean {
  return origin === `${ctx.protocol}://${ctx.host}` || (baseUrl !== null && origin === new URL(baseUrl).origin);
}

/** False when a browser says the request comes from another site (see the module header). */
export function sameOrigin(ctx: OriginHeaders, baseUrl: string): boolean {
  const site = fetchSite(ctx);
  if (site && site !== "same-origin" && site !== "none") return false;
  const origin = ctx.get("origin");
  return !origin || origin === "null" || isOwnOrigin(ctx, origin, baseUrl);
}
