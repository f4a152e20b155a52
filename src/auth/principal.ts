/**
 * The one principal type of every door (issue 39 item 1: "one principal type from every source").
 * A `Principal` is who a request acts as — `claims` (id, email, roles: what the engine sees, its
 * `PrincipalClaims`) — and how it was authenticated (`source`):
 *
 * | source | how | where |
 * |---|---|---|
 * | `hs256` | `Authorization: Bearer` JWT signed with SLOTFLOW_JWT_SECRET | jwt.ts `verifyPrincipal` |
 * | `issuer` | `Authorization: Bearer` JWT signed by SLOTFLOW_OIDC_ISSUER (its JWKS) | web/identity/oidc.ts |
 * | `session` | the session cookie `slotflow_session` (OpenID or development sign-in) | web/identity/session.ts |
 * | `slack` | a verified Slack interaction (`slack:{team}:{user}`, the app's `answerAs` roles) | web/slack.ts |
 * | `mcp` | SLOTFLOW_MCP_TOKEN (`mcp-token`) or the admin token (`admin-token`) on `POST /mcp` | mcp/http.ts |
 *
 * The web's `signedIn` (web/identity/signed-in.ts) resolves the first three for every page and
 * principal endpoint; its `bearerPrincipal` (the `hs256` and `issuer` sources) also serves
 * `POST /mcp`, handed to mcp/http.ts by the web app, for an agent holding a principal's token. Operators (the admin token, the console's Basic sign-in) and task workers
 * (SLOTFLOW_WORKER_TOKEN) are callers, not principals: tokens.ts admits them.
 */
import type { PrincipalClaims } from "../engine/commands/types.js";
import { RefusalCode, RefusalError, refuse } from "../engine/refusals.js";

/** How a principal was authenticated (see the module header). */
export type PrincipalSource = "hs256" | "issuer" | "session" | "slack" | "mcp";

/** Who a request acts as, and how that was established. */
export interface Principal {
  claims: PrincipalClaims;
  source: PrincipalSource;
}

/** C0 and C1 control characters and DEL. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Throws 401 `unauthorized` when a principal's id, email or a role holds a control character
 * (issue 38 L6: a NUL answered 500 on the inbox and a misleading 503 on raise); returns it otherwise.
 */
export function checkedPrincipal(p: PrincipalClaims): PrincipalClaims {
  if (CONTROL.test(p.id) || (p.email !== null && CONTROL.test(p.email)) || p.roles.some((r) => CONTROL.test(r))) {
    throw new RefusalError(refuse(RefusalCode.Unauthorized, "The principal's id, email or a role holds a control character; such a principal is refused."));
  }
  return p;
}

/** A Slack user answering inside Slack (web/slack.ts verified the request's signature): id `slack:{team}:{user}`. */
export function slackPrincipal(team: string, user: string, email: string | null, roles: string[]): Principal {
  return { claims: { id: `slack:${team}:${user}`, email, roles }, source: "slack" };
}

/** An MCP client by the token it holds (`mcp-token`: SLOTFLOW_MCP_TOKEN, `admin-token`: the admin token). */
export function mcpPrincipal(client: "mcp-token" | "admin-token"): Principal {
  return { claims: { id: client, email: null, roles: [] }, source: "mcp" };
}
