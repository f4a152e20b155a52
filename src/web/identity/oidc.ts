/**
 * The OpenID Connect issuer (SLOTFLOW_OIDC_ISSUER; v0.4 "People inside the company"), through
 * panva's `openid-client` (discovery, authorization code with PKCE S256, state and nonce, userinfo,
 * RP-initiated logout) and `jose` (bearer JWTs against the issuer's JWKS). No protocol is written here.
 *
 * - Discovery runs on first use and is cached per process; a failed discovery is not cached (the next
 *   request tries again) and answers 503 `unavailable`.
 * - Bearer JWTs of the issuer: signature against `jwks_uri` (jose `createRemoteJWKSet`: an unknown
 *   `kid` refetches the set, at most once per JWKS_COOLDOWN_MS, so a key the issuer adds is picked up
 *   without a restart), `iss` (the discovered issuer), `aud` (SLOTFLOW_OIDC_AUDIENCE), `exp` (required),
 *   `nbf`; asymmetric algorithms only (never `none`, never HS256 with a public key).
 * - Roles: the claim SLOTFLOW_OIDC_ROLES_CLAIM names, a dotted path walked at most
 *   MAX_ROLES_CLAIM_STEPS objects deep; anything but an array of strings gives no roles.
 * - Time zone: the standard `zoneinfo` claim (OpenID Connect Core 1.0 §5.1, scope `profile`; an
 *   IANA name such as `Europe/Berlin`) of the ID token or userinfo at sign-in, when src/i18n
 *   `readerZone` accepts it; else none (the pages then write times in UTC with the offset).
 */
import * as client from "openid-client";
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from "jose";
import type { Config, OidcSettings } from "../../config.js";
import { MAX_ROLES_CLAIM_STEPS } from "../../config.js";
import type { PrincipalClaims } from "../../engine/commands/types.js";
import { RefusalCode, RefusalError, refuse } from "../../engine/refusals.js";
import { boundedRoles } from "./session.js";
import { MAX_IAT_SKEW_S, checkedPrincipal, lifetimeRefusal } from "../../auth/jwt.js";
import { readerZone } from "../../i18n/index.js";

/** Asymmetric JWS algorithms a bearer JWT of the issuer may use. */
export const ISSUER_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"];
/** After fetching the JWKS, no refetch for an unknown `kid` before this many ms. */
export const JWKS_COOLDOWN_MS = 5_000;
/** A fetched JWKS is trusted this long before it is fetched again, ms. */
export const JWKS_MAX_AGE_MS = 10 * 60_000;
/** Clock skew allowed on `exp`/`nbf`/`iat`, seconds. */
export const CLOCK_TOLERANCE_S = 30;
/** A logout token is refused when issued longer ago than this, seconds (Back-Channel Logout 1.0 §2.4: short-lived). */
export const LOGOUT_TOKEN_MAX_AGE_S = 300;
/** The `events` member that makes a JWT a logout token (Back-Channel Logout 1.0 §2.4). */
export const BACKCHANNEL_LOGOUT_EVENT = "http://schemas.openid.net/event/backchannel-logout";
/** The longest `sid` or `sub` of a logout token we look up, characters (as the `sid` kept at sign-in). */
const MAX_LOGOUT_ID_CHARS = 500;
/** Requests to the issuer give up after this, ms. */
export const ISSUER_TIMEOUT_MS = 10_000;

interface Issuer {
  config: client.Configuration;
  jwks: ReturnType<typeof createRemoteJWKSet>;
}

const issuers = new WeakMap<OidcSettings, Promise<Issuer>>();

async function discover(settings: OidcSettings): Promise<Issuer> {
  const insecure = settings.issuer.startsWith("http:"); // only outside production (config.ts)
  const auth = settings.clientSecret ? client.ClientSecretBasic(settings.clientSecret) : client.None();
  const config = await client.discovery(new URL(settings.issuer), settings.clientId, undefined, auth, {
    execute: insecure ? [client.allowInsecureRequests] : [],
    timeout: ISSUER_TIMEOUT_MS / 1000,
  });
  config.timeout = ISSUER_TIMEOUT_MS / 1000;
  const jwksUri = config.serverMetadata().jwks_uri;
  if (!jwksUri) throw new Error("the issuer's discovery document has no jwks_uri");
  const jwks = createRemoteJWKSet(new URL(jwksUri), { cooldownDuration: JWKS_COOLDOWN_MS, cacheMaxAge: JWKS_MAX_AGE_MS, timeoutDuration: ISSUER_TIMEOUT_MS });
  return { config, jwks };
}

/** The discovered issuer; throws 503 `unavailable` (and forgets the attempt) when discovery fails. */
export async function issuerOf(settings: OidcSettings): Promise<Issuer> {
  let found = issuers.get(settings);
  if (!found) {
    found = discover(settings);
    issuers.set(settings, found);
    found.catch(() => issuers.delete(settings));
  }
  try {
    return await found;
  } catch {
    throw new RefusalError(refuse(RefusalCode.Unavailable, "The OpenID Connect issuer (SLOTFLOW_OIDC_ISSUER) does not answer its discovery document; try again shortly."));
  }
}

/**
 * The value at `path` in `claims` (each step an own property of a plain object), bounded to
 * MAX_ROLES_CLAIM_STEPS steps; then the roles it holds (an array of strings), else [].
 */
export function rolesAt(claims: Record<string, unknown>, path: readonly string[]): string[] {
  let at: unknown = claims;
  for (const step of path.slice(0, MAX_ROLES_CLAIM_STEPS)) {
    if (at === null || typeof at !== "object" || Array.isArray(at) || !Object.hasOwn(at, step)) return [];
    at = (at as Record<string, unknown>)[step];
  }
  return boundedRoles(at);
}

/**
 * The principal of verified claims: `{id: sub, email, roles: the roles claim or []}`. `email` is the
 * email claim only when `email_verified` is `true` (issue 38 L8: an unverified address proves
 * nothing), else null. Throws 401 for a control character in the id, email or a role (L6).
 */
export function principalOf(claims: Record<string, unknown>, settings: OidcSettings): PrincipalClaims {
  return checkedPrincipal({
    id: String(claims.sub),
    email: typeof claims.email === "string" && claims.email !== "" && claims.email_verified === true ? claims.email : null,
    roles: rolesAt(claims, settings.rolesClaim),
  });
}

/** The redirect URI registered at the issuer: `{BASE_URL}/auth/callback`. */
export const redirectUri = (config: Pick<Config, "baseUrl">) => `${config.baseUrl}/auth/callback`;

/** What a pending sign-in keeps (sealed in the `slotflow_login` cookie). */
export interface PendingLogin {
  state: string;
  nonce: string;
  verifier: string;
  returnTo: string;
}

/** Starts a sign-in: the issuer's authorization URL (code, PKCE S256, state, nonce, `openid email profile`) and what to keep. */
export async function beginLogin(config: Config, settings: OidcSettings, returnTo: string): Promise<{ url: URL; pending: PendingLogin }> {
  const { config: oidc } = await issuerOf(settings);
  const pending: PendingLogin = { state: client.randomState(), nonce: client.randomNonce(), verifier: client.randomPKCECodeVerifier(), returnTo };
  const url = client.buildAuthorizationUrl(oidc, {
    redirect_uri: redirectUri(config),
    scope: "openid email profile",
    response_type: "code",
    state: pending.state,
    nonce: pending.nonce,
    code_challenge: await client.calculatePKCECodeChallenge(pending.verifier),
    code_challenge_method: "S256",
  });
  return { url, pending };
}

/**
 * Completes a sign-in from the callback's URL: exchanges the code (checking state, nonce, PKCE and
 * the ID token), reads userinfo when the issuer has it, and returns the principal, the id_token and
 * the person's time zone (`zoneinfo`, checked by `readerZone`; null when absent or unknown).
 * Throws 400 `sign-in-failed` for a wrong state, nonce or code (or the issuer's own error), 503 when
 * the issuer does not answer. Never quotes a code or token.
 */
export async function finishLogin(config: Config, settings: OidcSettings, currentUrl: URL, pending: PendingLogin): Promise<{ principal: PrincipalClaims; idToken: string | null; issuerSid: string | null; zone: string | null }> {
  const { config: oidc } = await issuerOf(settings);
  let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
  try {
    tokens = await client.authorizationCodeGrant(oidc, currentUrl, { pkceCodeVerifier: pending.verifier, expectedState: pending.state, expectedNonce: pending.nonce, idTokenExpected: true }, { redirect_uri: redirectUri(config) });
  } catch (err) {
    if (err instanceof TypeError || (err instanceof Error && err.name === "AbortError") || (err instanceof Error && err.name === "TimeoutError")) {
      throw new RefusalError(refuse(RefusalCode.Unavailable, "The OpenID Connect issuer did not answer; try signing in again shortly."));
    }
    const reason = err instanceof client.AuthorizationResponseError ? ` The issuer said: ${err.error}.` : "";
    throw new RefusalError(refuse(RefusalCode.SignInFailed, `The sign-in could not be completed: its state, nonce or code is wrong or stale.${reason} Start again from /auth/login.`));
  }
  const idClaims = (tokens.claims() ?? {}) as Record<string, unknown>;
  let claims: Record<string, unknown> = { ...idClaims };
  if (oidc.serverMetadata().userinfo_endpoint) {
    try {
      const info = await client.fetchUserInfo(oidc, tokens.access_token, String(idClaims.sub));
      // userinfo completes the ID token (many issuers put email and roles only there); sub is the ID token's
      claims = { ...idClaims, ...(info as Record<string, unknown>), sub: idClaims.sub };
    } catch {
      throw new RefusalError(refuse(RefusalCode.Unavailable, "The OpenID Connect issuer's userinfo endpoint did not answer; try signing in again."));
    }
  }
  const sid = idClaims.sid;
  return { principal: principalOf(claims, settings), idToken: tokens.id_token ?? null, issuerSid: typeof sid === "string" && sid.length <= 500 ? sid : null, zone: readerZone(claims.zoneinfo) };
}

/** Where logout sends the browser: the issuer's end_session_endpoint (id_token_hint or client_id, post_logout_redirect_uri), else null. */
export async function logoutUrl(config: Config, settings: OidcSettings, idToken: string | null): Promise<URL | null> {
  const { config: oidc } = await issuerOf(settings);
  if (!oidc.serverMetadata().end_session_endpoint) return null;
  const params: Record<string, string> = { post_logout_redirect_uri: `${config.baseUrl}/` };
  if (idToken) params.id_token_hint = idToken;
  else params.client_id = settings.clientId;
  return client.buildEndSessionUrl(oidc, params);
}

/**
 * Verifies a bearer JWT signed by the issuer; throws 401 `unauthorized` (never saying which check
 * failed, never quoting the token) unless its signature (an asymmetric key of the issuer's JWKS),
 * `iss`, `aud`, `exp` and `nbf` hold, it has a `sub`, its `iat` is not more than 60 s ahead, and
 * it lives at most `maxTtlSeconds` (SLOTFLOW_JWT_MAX_TTL_SECONDS; issue 38 L2).
 */
export async function verifyIssuerJwt(settings: OidcSettings, token: string, maxTtlSeconds: number): Promise<PrincipalClaims> {
  const { config: oidc, jwks } = await issuerOf(settings);
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, jwks, {
      algorithms: ISSUER_ALGORITHMS,
      issuer: oidc.serverMetadata().issuer,
      audience: settings.audience,
      requiredClaims: ["exp", "sub"],
      clockTolerance: CLOCK_TOLERANCE_S,
    }));
  } catch {
    throw new RefusalError(
      refuse(RefusalCode.Unauthorized, "The bearer JWT is not valid: it must be signed by SLOTFLOW_OIDC_ISSUER (a key of its JWKS, an asymmetric algorithm), for SLOTFLOW_OIDC_AUDIENCE, with sub and exp, not expired, and already valid."),
    );
  }
  if (typeof payload.sub !== "string" || payload.sub === "") throw new RefusalError(refuse(RefusalCode.Unauthorized, "The bearer JWT has no sub."));
  // issue 38 L2: the lifetime bound of HS256 tokens (SLOTFLOW_JWT_MAX_TTL_SECONDS) applies to the issuer's too
  if (lifetimeRefusal(payload, maxTtlSeconds)) {
    throw new RefusalError(refuse(RefusalCode.Unauthorized, "The bearer JWT is not valid: it is issued in the future or lives longer than SLOTFLOW_JWT_MAX_TTL_SECONDS."));
  }
  return principalOf(payload as Record<string, unknown>, settings);
}

/** Why a logout token was refused (never quoting it); `backchannel-logout` answers 400 `invalid_request`. */
export class LogoutTokenError extends Error {}

/**
 * Verifies a logout token of the issuer (OpenID Connect Back-Channel Logout 1.0 §2.6) and returns
 * the session it names: `sid` (the issuer's session, as the ID token's `sid` claim at sign-in)
 * and/or `sub`. Checked: the signature (an asymmetric key of the issuer's JWKS, as for bearer JWTs),
 * `iss` (the discovered issuer), `aud` (SLOTFLOW_OIDC_CLIENT_ID), `iat` and `jti` present, `iat` at
 * most MAX_IAT_SKEW_S ahead and at most LOGOUT_TOKEN_MAX_AGE_S old (plus CLOCK_TOLERANCE_S), `exp`
 * when present, `events` an object whose BACKCHANNEL_LOGOUT_EVENT member is an object, no `nonce`,
 * and a `sid` or `sub` (strings of 1..500 characters). Throws LogoutTokenError when any fails,
 * 503 `unavailable` when the issuer's discovery does not answer.
 */
export async function verifyLogoutToken(settings: OidcSettings, token: string): Promise<{ sid: string | null; sub: string | null }> {
  const { config: oidc, jwks } = await issuerOf(settings);
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, jwks, {
      algorithms: ISSUER_ALGORITHMS,
      issuer: oidc.serverMetadata().issuer,
      audience: settings.clientId,
      requiredClaims: ["iat", "jti"],
      maxTokenAge: LOGOUT_TOKEN_MAX_AGE_S,
      clockTolerance: CLOCK_TOLERANCE_S,
    }));
  } catch {
    throw new LogoutTokenError("the logout token's signature, iss, aud, iat, jti or exp does not hold");
  }
  if (typeof payload.iat !== "number" || payload.iat > Math.floor(Date.now() / 1000) + MAX_IAT_SKEW_S) throw new LogoutTokenError("the logout token is issued in the future");
  const events = payload.events;
  if (events === null || typeof events !== "object" || Array.isArray(events)) throw new LogoutTokenError("the logout token has no events object");
  const event = Object.hasOwn(events, BACKCHANNEL_LOGOUT_EVENT) ? (events as Record<string, unknown>)[BACKCHANNEL_LOGOUT_EVENT] : undefined;
  if (event === null || typeof event !== "object" || Array.isArray(event)) throw new LogoutTokenError("the logout token's events has no back-channel logout event");
  if (Object.hasOwn(payload, "nonce")) throw new LogoutTokenError("a logout token must not have a nonce");
  const id = (v: unknown): string | null | false => (v === undefined ? null : typeof v === "string" && v !== "" && v.length <= MAX_LOGOUT_ID_CHARS ? v : false);
  const sid = id(payload.sid);
  const sub = id(payload.sub);
  if (sid === false || sub === false || (sid === null && sub === null)) throw new LogoutTokenError("the logout token has neither a usable sid nor sub");
  return { sid, sub };
}
