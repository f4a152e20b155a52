/**
 * Session cookies of people signed in (v0.4 "People inside the company"): `slotflow_session`, and
 * the short-lived `slotflow_login` cookie that carries a pending OpenID Connect sign-in from
 * `GET /auth/login` to `GET /auth/callback` (state, nonce, PKCE verifier, returnTo — never Redis).
 *
 * Format: a compact JWE (`dir`, `A256GCM`, made and opened with jose). Encryption rather than a bare
 * HMAC because the session keeps the issuer's id_token (the `id_token_hint` of RP-initiated logout)
 * and the principal's email, which must not be readable from the browser; AES-GCM authenticates
 * too, so a changed byte makes the cookie invalid (treated as absent). Each purpose (session, pending
 * login) has its own 256-bit key, derived with HKDF-SHA-256 from SLOTFLOW_SESSION_SECRET's keys;
 * the header's `kid` names the key (a digest, never the key).
 *
 * Key rotation: SLOTFLOW_SESSION_SECRET is comma-separated, newest first; the first seals, all open.
 * Session content: `sub`, `email`, `roles`, `csrf` (random, 256 bits), `dev` (development sign-in),
 * `aud` (BASE_URL's origin: the cookie is bound to the deployment that minted it), `iat`, `exp` (at
 * most SESSION_LIFETIME_S after `iat`), `tz` (the person's IANA time zone, from the issuer's
 * `zoneinfo` claim or the development sign-in, when it is one `Intl` knows — src/i18n `readerZone`;
 * checked again on read), and `idt` (the id_token) when the cookie stays under
 * MAX_COOKIE_BYTES with it (else logout sends `client_id` instead).
 *
 * `sid`: the server-side session id (store.ts, issue 38 L4): a session is live only while its row
 * is — logout ends it at once, so a cookie copied before a logout is refused after it.
 *
 * Refused on read (issue 38 M3; the cookie then counts as absent): a session whose `aud` is not this
 * process's BASE_URL origin (a cookie minted by another deployment sharing SLOTFLOW_SESSION_SECRET),
 * and a development session (`dev`) on a process where the development sign-in is off — so a
 * production process never accepts one.
 */
import { createHash, hkdfSync } from "node:crypto";
import { EncryptJWT, jwtDecrypt, decodeProtectedHeader, type JWTPayload } from "jose";
import type { Context } from "koa";
import type { PrincipalClaims } from "../../engine/commands/types.js";
import { endSessionRow, openSessionRow, sessionLive, type SessionStore } from "./store.js";
import { randomCsrf } from "../../auth/csrf.js";
import { readerZone } from "../../i18n/index.js";

/** The session cookie's name (contract: `slotflow_session`). */
export const SESSION_COOKIE = "slotflow_session";
/** The pending sign-in's cookie (path `/auth`). */
export const LOGIN_COOKIE = "slotflow_login";
/** A session lives 12 hours at most (contract: "at most 12 h"), seconds. */
export const SESSION_LIFETIME_S = 12 * 3600;
/** A pending sign-in must come back within 10 minutes, seconds. */
export const LOGIN_LIFETIME_S = 600;
/** Browsers keep cookies up to about 4096 bytes; above this the id_token is left out. */
export const MAX_COOKIE_BYTES = 3800;
/** Roles kept in a session at most (and each at most MAX_ROLE_CHARS characters). */
export const MAX_ROLES = 100;
export const MAX_ROLE_CHARS = 200;

type Purpose = "session" | "login" | "dev-csrf";

interface Key {
  kid: string;
  key: Uint8Array;
}

const rings = new WeakMap<readonly string[], Record<Purpose, Key[]>>();

function derive(secret: string, purpose: Purpose): Key {
  const key = new Uint8Array(hkdfSync("sha256", secret, "slotflow-session-v1", purpose, 32));
  const kid = createHash("sha256").update(key).digest("base64url").slice(0, 16);
  return { kid, key };
}

/** The derived keys of a key ring (newest first), cached per ring. */
function keysOf(secrets: readonly string[], purpose: Purpose): Key[] {
  let r = rings.get(secrets);
  if (!r) {
    r = { session: secrets.map((s) => derive(s, "session")), login: secrets.map((s) => derive(s, "login")), "dev-csrf": secrets.map((s) => derive(s, "dev-csrf")) };
    rings.set(secrets, r);
  }
  return r[purpose];
}

/** Seals `claims` for `purpose` with the newest key; `exp` seconds from now. */
export async function seal(secrets: readonly string[], purpose: Purpose, claims: JWTPayload, lifetimeS: number): Promise<string> {
  const { kid, key } = keysOf(secrets, purpose)[0]!;
  return new EncryptJWT(claims)
    .setProtectedHeader({ alg: "dir", enc: "A256GCM", kid, cty: `slotflow-${purpose}` })
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + lifetimeS)
    .encrypt(key);
}

/** Opens a cookie sealed for `purpose` with any key of the ring; null when it is invalid, of another purpose, or expired. */
export async function unseal(secrets: readonly string[], purpose: Purpose, value: string | undefined): Promise<JWTPayload | null> {
  if (!value || value.length > 8192) return null;
  try {
    const { kid } = decodeProtectedHeader(value);
    const found = keysOf(secrets, purpose).find((k) => k.kid === kid);
    if (!found) return null;
    const { payload } = await jwtDecrypt(value, found.key, { keyManagementAlgorithms: ["dir"], contentEncryptionAlgorithms: ["A256GCM"], requiredClaims: ["exp", "iat"] });
    return payload;
  } catch {
    return null;
  }
}

/** A signed-in browser's session, as opened from its cookie. */
export interface Session {
  principal: PrincipalClaims;
  /** The session's CSRF token (base64url, 43 characters). */
  csrf: string;
  /** Signed in through the development sign-in. */
  development: boolean;
  /** The person's IANA time zone (src/i18n `readerZone`), for the times on their pages; null: UTC. */
  zone: string | null;
  /** The issuer's id_token, for `id_token_hint` at logout; null when it did not fit or there is none. */
  idToken: string | null;
  /** The server-side session id (store.ts); a credential: never logged. */
  sid: string;
  /** Seconds since the epoch. */
  issuedAt: number;
  expiresAt: number;
}

/** Cookie attributes: HttpOnly, SameSite=Lax, Secure when BASE_URL is https. */
export function cookieOptions(baseUrl: string, maxAgeS: number, path = "/") {
  return { httpOnly: true, sameSite: "lax" as const, secure: baseUrl.startsWith("https:"), maxAge: maxAgeS * 1000, path, overwrite: true };
}

/**
 * Sets a cookie. Koa refuses a Secure cookie on a connection it does not see as https (behind a
 * proxy with SLOTFLOW_TRUST_PROXY unset); BASE_URL decides here, as the contract says.
 */
export function setCookie(ctx: Context, baseUrl: string, name: string, value: string | null, maxAgeS: number, path = "/"): void {
  const opts = cookieOptions(baseUrl, value === null ? 0 : maxAgeS, path);
  (ctx.cookies as unknown as { secure: boolean }).secure ||= opts.secure;
  if (value === null) ctx.cookies.set(name, "", { ...opts, maxAge: 0, expires: new Date(0) });
  else ctx.cookies.set(name, value, opts);
}

/** Keeps at most MAX_ROLES strings of at most MAX_ROLE_CHARS characters each. */
export function boundedRoles(roles: unknown): string[] {
  if (!Array.isArray(roles)) return [];
  return roles.filter((r): r is string => typeof r === "string" && r !== "" && r.length <= MAX_ROLE_CHARS).slice(0, MAX_ROLES);
}

/**
 * Starts a session: sets `slotflow_session` for `principal` (the id_token too when it fits; the
 * time zone `opts.zone` when src/i18n `readerZone` accepts it, else none) and
 * returns true; false (nothing set) when even without the id_token the cookie would exceed
 * MAX_COOKIE_BYTES — a browser would drop it — so the caller can say so instead of looping.
 */
export async function startSession(
  ctx: Context,
  cfg: { baseUrl: string; sessionKeys: string[] },
  store: SessionStore,
  principal: PrincipalClaims,
  opts: { development: boolean; idToken?: string | null; issuerSid?: string | null; zone?: string | null },
): Promise<boolean> {
  // a placeholder sid of the real length first: the size check must not leave a row behind
  const zone = readerZone(opts.zone);
  const base = {
    sub: principal.id,
    email: principal.email,
    roles: boundedRoles(principal.roles),
    csrf: randomCsrf(),
    dev: opts.development,
    aud: originOf(cfg.baseUrl),
    sid: "x".repeat(43),
    ...(zone ? { tz: zone } : {}),
  };
  let claims: JWTPayload = opts.idToken ? { ...base, idt: opts.idToken } : base;
  if ((await seal(cfg.sessionKeys, "session", claims, SESSION_LIFETIME_S)).length > MAX_COOKIE_BYTES) claims = base;
  if ((await seal(cfg.sessionKeys, "session", claims, SESSION_LIFETIME_S)).length > MAX_COOKIE_BYTES) return false;
  const sid = await openSessionRow(store, { principalId: principal.id, issuerSid: opts.issuerSid ?? null, development: opts.development, expiresAt: new Date(Date.now() + SESSION_LIFETIME_S * 1000) });
  setCookie(ctx, cfg.baseUrl, SESSION_COOKIE, await seal(cfg.sessionKeys, "session", { ...claims, sid }, SESSION_LIFETIME_S), SESSION_LIFETIME_S);
  return true;
}

/** BASE_URL's origin (`https://host[:port]`): the `aud` of every session cookie. */
export function originOf(baseUrl: string): string {
  return new URL(baseUrl).origin;
}

/** What reading a session needs of the configuration. */
export interface SessionConfig {
  sessionKeys: string[];
  baseUrl: string;
  /** The development sign-in is on here: only then is a development session accepted. */
  devSignIn: boolean;
}

/**
 * The request's session, or null when its cookie is absent, tampered with, sealed by an unknown key,
 * expired, bound to another origin than BASE_URL's, or a development session where the development
 * sign-in is off, or whose server-side session has ended (logout) or is unknown (store.ts).
 */
export async function readSession(ctx: Context, cfg: SessionConfig, store: SessionStore): Promise<Session | null> {
  const p = await unseal(cfg.sessionKeys, "session", ctx.cookies.get(SESSION_COOKIE));
  if (!p || typeof p.sub !== "string" || p.sub === "" || typeof p.csrf !== "string") return null;
  if (typeof p.exp !== "number" || typeof p.iat !== "number" || p.exp - p.iat > SESSION_LIFETIME_S) return null;
  if (p.aud !== originOf(cfg.baseUrl)) return null;
  if (p.dev === true && !cfg.devSignIn) return null;
  if (typeof p.sid !== "string" || !(await sessionLive(store, p.sid))) return null;
  return {
    principal: { id: p.sub, email: typeof p.email === "string" ? p.email : null, roles: boundedRoles(p.roles) },
    csrf: p.csrf,
    development: p.dev === true,
    zone: readerZone(p.tz),
    idToken: typeof p.idt === "string" ? p.idt : null,
    sid: p.sid,
    issuedAt: p.iat,
    expiresAt: p.exp,
  };
}

/** Ends the session: its server-side row at once (when there is one), and the cookie in this browser. */
export async function endSession(ctx: Context, baseUrl: string, store: SessionStore, session: Session | null): Promise<void> {
  if (session) await endSessionRow(store, session.sid);
  setCookie(ctx, baseUrl, SESSION_COOKIE, null, 0);
}
