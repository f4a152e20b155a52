/**
 * A real OpenID Connect provider for the sign-in tests: panva's `oidc-provider` (the certified
 * implementation) in the test process, on a free port of 127.0.0.1. Its built-in development
 * interactions give a login page (any login name; the password is ignored) and a consent page.
 *
 * - Accounts: any login `x` is the account `x` with `email` `x@example.test`, a top-level `roles`
 *   claim `["top-level"]` and the nested `realm_access.roles` `["approver", "finance"]` (as Keycloak
 *   gives them), all in the `profile` scope. A login starting with a prefix of ZONE_LOGINS also has
 *   the standard `zoneinfo` claim (`profile` scope): `berlin-…` Europe/Berlin, `tokyo-…` Asia/Tokyo,
 *   `badzone-…` a zone no one knows.
 * - The client `slotflow` is public (PKCE, no secret): redirect URI `{slotflowBase}/auth/callback`,
 *   post-logout redirect `{slotflowBase}/`.
 * - `startIssuer({ backchannelLogout: true })`: the provider's Back-Channel Logout 1.0 is on, and
 *   the client registers `{slotflowBase}/auth/backchannel-logout` with
 *   `backchannel_logout_session_required` (ID tokens carry `sid`; logout tokens carry `sid` and `sub`).
 *   Ending a session at the provider (`/session/end`) posts a logout token there and waits for the
 *   answer; each failed delivery is kept in `backchannelErrors`.
 * - `rotate(key)` replaces the provider (same issuer, same port, no restart of anything else) with
 *   one whose JWKS holds `key` first, then the keys it had: a key rotation at the issuer.
 * - `sign(claims, key?)` makes a JWT with one of the provider's private keys (the issuer's key,
 *   published in its JWKS), as an issuer's access token would be.
 */
import { createServer, type Server } from "node:http";
import Provider from "oidc-provider";
import type { Page } from "playwright-core";
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from "jose";
import { freePort } from "./server.js";

export interface IssuerKey {
  kid: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  privateJwk: JWK;
}

/** A fresh RS256 key pair named `kid`. */
export async function issuerKey(kid: string): Promise<IssuerKey> {
  const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: "RS256", use: "sig" };
  return { kid, privateKey, publicKey, privateJwk };
}

export const CLIENT_ID = "slotflow";

/** The `zoneinfo` claim of a login starting with each prefix (the reader's time zone; none for other logins). */
export const ZONE_LOGINS: Record<string, string> = { "berlin-": "Europe/Berlin", "tokyo-": "Asia/Tokyo", "badzone-": "Mars/Olympus_Mons" };

export function accountClaims(id: string): Record<string, unknown> {
  // a login starting with "sales-" is someone outside finance (the 403 of a task only finance may answer)
  const realmRoles = id.startsWith("sales-") ? ["sales"] : ["approver", "finance"];
  const zone = Object.entries(ZONE_LOGINS).find(([prefix]) => id.startsWith(prefix))?.[1];
  return { sub: id, email: `${id}@example.test`, email_verified: true, name: id, roles: ["top-level"], realm_access: { roles: realmRoles }, ...(zone ? { zoneinfo: zone } : {}) };
}

/**
 * Drives the provider's login page (and consent, when it asks) with `login` until the browser is
 * back at `slotflowBase`. The page must be on the provider's login page.
 */
export async function signInAtIssuer(page: Page, slotflowBase: string, login: string): Promise<void> {
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill("any password");
  await page.getByRole("button", { name: "Sign-in" }).click();
  await page.waitForURL((url) => url.href.startsWith(slotflowBase) || url.pathname.includes("/interaction/"));
  if (!page.url().startsWith(slotflowBase)) {
    await page.getByRole("button", { name: "Continue" }).click();
  }
  await page.waitForURL((url) => url.href.startsWith(slotflowBase));
}

export interface TestIssuer {
  issuer: string;
  keys: IssuerKey[];
  /** Back-channel logout deliveries slotflow refused or did not answer (their error messages). */
  backchannelErrors: string[];
  /** Registers slotflow (at `slotflowBase`) as the client; call before anyone signs in. */
  register(slotflowBase: string): void;
  rotate(key: IssuerKey): void;
  sign(claims: JWTPayload, key?: IssuerKey, ttlSeconds?: number): Promise<string>;
  close(): Promise<void>;
}

export async function startIssuer(opts: { backchannelLogout?: boolean } = {}): Promise<TestIssuer> {
  const backchannel = opts.backchannelLogout === true;
  const backchannelErrors: string[] = [];
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const keys: IssuerKey[] = [await issuerKey("k1")];
  let slotflowBase = "";
  let current: Provider | null = null;
  const build = () => {
    const provider = new Provider(issuer, {
      clients: [
        {
          client_id: CLIENT_ID,
          token_endpoint_auth_method: "none",
          redirect_uris: [`${slotflowBase}/auth/callback`],
          post_logout_redirect_uris: [`${slotflowBase}/`],
          grant_types: ["authorization_code"],
          response_types: ["code"],
          ...(backchannel ? { backchannel_logout_uri: `${slotflowBase}/auth/backchannel-logout`, backchannel_logout_session_required: true } : {}),
        },
      ],
      jwks: { keys: keys.map((k) => k.privateJwk) as never },
      cookies: { keys: ["oidc-test-cookie-key"] },
      claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name", "roles", "realm_access", "zoneinfo"] },
      findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => accountClaims(id) as never }),
      pkce: { required: () => true },
      // slotflow listens on 127.0.0.1, which the provider's SSRF guard refuses to call; and its
      // 2.5 s limit on a delivery is too short for a loaded test machine (no wall-clock bounds)
      fetch: (url: string | URL | Request, options?: RequestInit) => {
        const { dispatcher: _guard, ...rest } = (options ?? {}) as RequestInit & { dispatcher?: unknown };
        return globalThis.fetch(url, { ...rest, signal: AbortSignal.timeout(120_000) });
      },
      features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true }, backchannelLogout: { enabled: backchannel } },
    });
    provider.on("server_error", () => undefined);
    provider.on("backchannel.error", (_ctx: unknown, err: Error) => backchannelErrors.push(err.message));
    return provider;
  };
  const server: Server = createServer((req, res) => {
    if (!current) {
      res.statusCode = 503;
      res.end();
      return;
    }
    void current.callback()(req, res);
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", () => resolve()));
  return {
    issuer,
    keys,
    backchannelErrors,
    register(base) {
      slotflowBase = base;
      current = build();
    },
    rotate(key) {
      keys.unshift(key);
      current = build();
    },
    async sign(claims, key = keys[0]!, ttlSeconds = 300) {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ iss: issuer, aud: CLIENT_ID, iat: now, exp: now + ttlSeconds, ...claims })
        .setProtectedHeader({ alg: "RS256", kid: key.kid, typ: "JWT" })
        .sign(key.privateKey);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
