/**
 * Sign-in of people inside the company (v0.4 "People inside the company": SLOTFLOW_OIDC_*,
 * SLOTFLOW_SESSION_SECRET, `/auth/login`, `/auth/callback`, `/auth/logout`), against a real OpenID
 * provider (panva's oidc-provider, test/helpers/oidc-issuer.ts) and a real `slotflow serve`, with
 * headless Chromium going through the provider's login and consent pages.
 *
 * Covers: the code flow with PKCE, state and nonce, landing on returnTo with a session cookie
 * (HttpOnly, SameSite=Lax, ≤ 12 h, sealed: nothing readable in it); roles from a dotted-path claim
 * (`realm_access.roles`); a wrong state, nonce or code → 400 `sign-in-failed`; returnTo refusing other
 * sites; logout with its CSRF token → RP-initiated logout at the issuer; session cookie tampering and
 * key rotation; bearer JWTs of the issuer (valid, expired, wrong audience, wrong issuer, unknown kid,
 * `alg: none`, HS256 made with the issuer's public key, not yet valid) and a key the issuer adds,
 * picked up without restarting slotflow; the ordinary raise path taking these principals.
 */
import test from "ava";
import { randomUUID } from "node:crypto";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { exportSPKI, SignJWT } from "jose";
import { launchBrowser } from "../helpers/browser.js";
import { dropDatabase } from "../helpers/db.js";
import { CLIENT_ID, issuerKey, signInAtIssuer, startIssuer, type TestIssuer } from "../helpers/oidc-issuer.js";
import { JWT_SECRET, startCluster, type Cluster } from "../helpers/server.js";
import { signPrincipal } from "../../src/auth/jwt.js";
import { SESSION_COOKIE, LOGIN_COOKIE, seal, unseal } from "../../src/web/identity/session.js";
import { JWKS_COOLDOWN_MS } from "../../src/web/identity/oidc.js";
import { createHash, randomBytes } from "node:crypto";
import { sql } from "../helpers/db.js";

const NEW_KEY = "session-key-new-0123456789abcdef0123456789";
const OLD_KEY = "session-key-old-0123456789abcdef0123456789";

let idp: TestIssuer;
let cluster: Cluster;
let base: string;
let browser: Browser;

test.before(async () => {
  idp = await startIssuer();
  [cluster, browser] = await Promise.all([
    startCluster("oidc", {
      env: {
        SLOTFLOW_OIDC_ISSUER: idp.issuer,
        SLOTFLOW_OIDC_CLIENT_ID: CLIENT_ID,
        SLOTFLOW_OIDC_ROLES_CLAIM: "realm_access.roles",
        SLOTFLOW_SESSION_SECRET: `${NEW_KEY},${OLD_KEY}`,
      },
    }),
    launchBrowser(),
  ]);
  base = cluster.baseUrl;
  idp.register(base);
});

test.after.always(async () => {
  await browser?.close();
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
  await idp?.close();
});

/** A request that does not follow redirects. */
async function call(path: string, opts: { method?: string; cookie?: string; token?: string; headers?: Record<string, string>; body?: string } = {}) {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.cookie) headers.cookie = opts.cookie;
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const res = await fetch(new URL(path, base), { method: opts.method ?? "GET", headers, body: opts.body, redirect: "manual" });
  const text = await res.text();
  let body: any = null;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, text, body };
}

/** The value of cookie `name` among a response's Set-Cookie headers. */
function setCookie(headers: Headers, name: string): { value: string; attributes: string } | null {
  for (const line of headers.getSetCookie()) {
    const [pair, ...attrs] = line.split(";");
    const eq = pair!.indexOf("=");
    if (pair!.slice(0, eq).trim() === name) return { value: pair!.slice(eq + 1), attributes: attrs.join(";").trim() };
  }
  return null;
}

/**
 * A session cookie made with the keys alone, as an attacker holding SLOTFLOW_SESSION_SECRET would
 * (`row`: also its server-side row, as the sign-in would record it — issue 38 L4).
 */
async function forgeSession(keys: string[], claims: Record<string, unknown>, ttlS: number, row = true): Promise<string> {
  const sid = randomBytes(32).toString("base64url");
  if (row) {
    await sql(cluster.databaseUrl, "INSERT INTO sessions (id_sha256, principal_id, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))", [
      createHash("sha256").update(sid).digest("hex"),
      String(claims.sub),
      Math.max(ttlS, 1),
    ]);
  }
  return seal(keys, "session", { aud: new URL(base).origin, sid, ...claims }, ttlS);
}

async function newSignedInContext(login: string, returnTo: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${base}/auth/login?returnTo=${encodeURIComponent(returnTo)}`);
  if (!page.url().startsWith(idp.issuer)) throw new Error(`expected the issuer's login page, got ${page.url()}`);
  await signInAtIssuer(page, base, login);
  return { context, page };
}

async function sessionCookieOf(context: BrowserContext): Promise<string> {
  const c = (await context.cookies(base)).find((x) => x.name === SESSION_COOKIE);
  if (!c) throw new Error("no session cookie");
  return c.value;
}

test.serial("GET /auth/login sends the browser to the issuer with code, PKCE S256, state and nonce, and keeps them in a sealed short-lived cookie", async (t) => {
  const res = await call("/auth/login?returnTo=%2Fauth%2Fwhoami");
  t.is(res.status, 302);
  const to = new URL(res.headers.get("location")!);
  t.is(to.origin, idp.issuer);
  t.is(to.searchParams.get("response_type"), "code");
  t.is(to.searchParams.get("client_id"), CLIENT_ID);
  t.is(to.searchParams.get("redirect_uri"), `${base}/auth/callback`);
  t.is(to.searchParams.get("code_challenge_method"), "S256");
  t.truthy(to.searchParams.get("code_challenge"));
  t.truthy(to.searchParams.get("state"));
  t.truthy(to.searchParams.get("nonce"));
  t.deepEqual(to.searchParams.get("scope")!.split(" ").sort(), ["email", "openid", "profile"]);
  const pending = setCookie(res.headers, LOGIN_COOKIE)!;
  t.regex(pending.attributes, /httponly/i);
  t.regex(pending.attributes, /samesite=lax/i);
  t.regex(pending.attributes, /path=\/auth/i);
  t.regex(pending.attributes, /max-age=600|expires=/i);
  t.false(pending.value.includes(to.searchParams.get("state")!), "the state is sealed, not in clear");
  const opened = await unseal([NEW_KEY], "login", pending.value);
  t.is(opened?.state, to.searchParams.get("state"));
  t.is(opened?.returnTo, "/auth/whoami");
});

test.serial("a person signs in through the issuer's login and consent pages and lands on returnTo with a sealed HttpOnly session; roles come from realm_access.roles", async (t) => {
  const { context, page } = await newSignedInContext("alice", "/auth/whoami");
  t.is(page.url(), `${base}/auth/whoami`);
  const who = await (await context.request.get(`${base}/auth/whoami`)).json();
  t.like(who, { id: "alice", email: "alice@example.test", roles: ["approver", "finance"], via: "session", development: false });
  t.is(typeof who.csrf, "string");
  const cookie = (await context.cookies(base)).find((c) => c.name === SESSION_COOKIE)!;
  t.true(cookie.httpOnly);
  t.is(cookie.sameSite, "Lax");
  t.false(cookie.secure, "BASE_URL is http here: Secure only with https");
  t.true(cookie.expires * 1000 <= Date.now() + 12 * 3600_000 + 5_000, "at most 12 h");
  t.true(cookie.expires * 1000 > Date.now() + 11 * 3600_000);
  t.is(cookie.value.split(".").length, 5, "a compact JWE");
  t.false(cookie.value.includes("alice"));
  t.false(Buffer.from(cookie.value.split(".")[3]!, "base64url").toString("latin1").includes("alice"), "the principal is encrypted, not just encoded");
  t.is((await context.cookies(base)).find((c) => c.name === LOGIN_COOKIE), undefined, "the pending sign-in is used once and cleared");
  await context.close();
});

test.serial("logout needs the session's CSRF token, ends the session, and hands over to the issuer's end_session_endpoint with id_token_hint", async (t) => {
  const { context, page } = await newSignedInContext("bob", "/auth/whoami");
  const who = await (await context.request.get(`${base}/auth/whoami`)).json();
  const cookie = `${SESSION_COOKIE}=${await sessionCookieOf(context)}`;

  const noToken = await call("/auth/logout", { method: "POST", cookie, headers: { "content-type": "application/x-www-form-urlencoded" }, body: "" });
  t.is(noToken.status, 403);
  t.is(noToken.body.code, "csrf-refused");
  const wrong = await call("/auth/logout", { method: "POST", cookie, headers: { "content-type": "application/x-www-form-urlencoded" }, body: `csrf=${"x".repeat(43)}` });
  t.is(wrong.status, 403);
  const otherSite = await call("/auth/logout", { method: "POST", cookie, headers: { "content-type": "application/x-www-form-urlencoded", origin: "https://evil.example", "sec-fetch-site": "cross-site" }, body: `csrf=${who.csrf}` });
  t.is(otherSite.status, 403);
  t.is((await context.request.get(`${base}/auth/whoami`)).status(), 200, "refused logouts end nothing");
  // a script (no Sec-Fetch-Dest: document) gets the 303 to the issuer
  const scripted = await newSignedInContext("bob", "/auth/whoami");
  const scriptedWho = await (await scripted.context.request.get(`${base}/auth/whoami`)).json();
  const scriptedOut = await call("/auth/logout", { method: "POST", cookie: `${SESSION_COOKIE}=${await sessionCookieOf(scripted.context)}`, headers: { "x-csrf-token": scriptedWho.csrf } });
  t.is(scriptedOut.status, 303);
  t.true(scriptedOut.headers.get("location")!.startsWith(`${idp.issuer}/session/end`));
  await scripted.context.close();

  // the real thing: the browser posts a form from a page of this site
  // (from the real inbox page, under its CSP: its own Sign out form carries the session's CSRF token)
  await page.goto(`${base}/inbox`);
  const [response, handOver] = await Promise.all([
    page.waitForResponse((r) => r.url() === `${base}/auth/logout`),
    page.waitForRequest((r) => r.url().startsWith(`${idp.issuer}/session/end`)),
    page.getByRole("button", { name: "Sign out" }).click(),
  ]);
  // issue 38 defect 2: a browser's form gets a same-origin page that moves on to the issuer by itself
  // (a 303 would be blocked by the CSP `form-action 'self'` of the pages that carry the form)
  t.is(response.status(), 200);
  const to = new URL(handOver.url());
  t.is(`${to.origin}${to.pathname}`, `${idp.issuer}/session/end`);
  t.is(to.searchParams.get("post_logout_redirect_uri"), `${base}/`);
  t.truthy(to.searchParams.get("id_token_hint"), "the id_token kept sealed in the session is the hint");
  // the issuer asks; the person confirms; the issuer sends the browser back to slotflow
  await page.waitForURL((u) => u.href.startsWith(idp.issuer));
  await page.getByRole("button", { name: "Yes, sign me out" }).click();
  await page.waitForURL((u) => u.href.startsWith(base));
  t.is(new URL(page.url()).pathname, "/");
  t.is((await context.cookies(base)).find((c) => c.name === SESSION_COOKIE), undefined);
  t.is((await context.request.get(`${base}/auth/whoami`)).status(), 401);
  // issue 38 L4: the cookie captured before the logout, replayed, is refused: the session ended server-side
  const replayed = await call("/auth/whoami", { cookie });
  t.is(replayed.status, 401);
  await context.close();
});

test.serial("returnTo is a path on this site only: //evil.com, https://evil, /\\evil land on /inbox", async (t) => {
  for (const returnTo of ["//evil.com/x", "https://evil.example/", "/\\evil.example", "javascript:alert(1)", "inbox"]) {
    const res = await call(`/auth/login?returnTo=${encodeURIComponent(returnTo)}`);
    t.is(res.status, 302);
    const pending = await unseal([NEW_KEY], "login", setCookie(res.headers, LOGIN_COOKIE)!.value);
    t.is(pending?.returnTo, "/inbox", returnTo);
  }
  // through the browser too
  const { context, page } = await newSignedInContext("erin", "//evil.com/steal");
  t.is(page.url(), `${base}/inbox`);
  await context.close();
});

test.serial("GET /auth/callback answers 400 sign-in-failed for a wrong state, a missing pending sign-in, a wrong code, and a wrong nonce", async (t) => {
  const start = await call("/auth/login?returnTo=/auth/whoami");
  const pendingValue = setCookie(start.headers, LOGIN_COOKIE)!.value;
  const state = new URL(start.headers.get("location")!).searchParams.get("state")!;
  const cookie = `${LOGIN_COOKIE}=${pendingValue}`;

  const wrongState = await call(`/auth/callback?code=abc&state=not-the-state&iss=${encodeURIComponent(idp.issuer)}`, { cookie });
  t.is(wrongState.status, 400);
  t.regex(wrongState.headers.get("content-type")!, /^application\/problem\+json/);
  t.is(wrongState.body.code, "sign-in-failed");
  t.is(setCookie(wrongState.headers, SESSION_COOKIE), null);

  const noPending = await call(`/auth/callback?code=abc&state=${state}&iss=${encodeURIComponent(idp.issuer)}`);
  t.is(noPending.status, 400);
  t.is(noPending.body.code, "sign-in-failed");

  const wrongCode = await call(`/auth/callback?code=not-a-code&state=${state}&iss=${encodeURIComponent(idp.issuer)}`, { cookie });
  t.is(wrongCode.status, 400);
  t.is(wrongCode.body.code, "sign-in-failed");
  t.false(wrongCode.text.includes("not-a-code"), "the code is never quoted");

  // a wrong nonce: a real sign-in whose pending cookie, once the browser is at the issuer, expects another nonce
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${base}/auth/login?returnTo=/auth/whoami`);
  const jar = await context.cookies(`${base}/auth/callback`); // the pending cookie's path is /auth
  const real = await unseal([NEW_KEY], "login", jar.find((c) => c.name === LOGIN_COOKIE)?.value);
  const { iat: _iat, exp: _exp, ...rest } = real!;
  const forged = await seal([NEW_KEY], "login", { ...rest, nonce: "another-nonce" }, 600);
  await context.addCookies([{ name: LOGIN_COOKIE, value: forged, domain: "127.0.0.1", path: "/auth", httpOnly: true, sameSite: "Lax" }]);
  t.is((await context.cookies(`${base}/auth/callback`)).filter((c) => c.name === LOGIN_COOKIE).length, 1, "the forged cookie replaced the real one");
  const callback = page.waitForResponse((r) => r.url().startsWith(`${base}/auth/callback`));
  await page.locator('input[name="login"]').fill("frank");
  await page.locator('input[name="password"]').fill("x");
  await page.getByRole("button", { name: "Sign-in" }).click();
  await page.waitForURL((u) => u.href.startsWith(base) || u.pathname.includes("/interaction/"));
  if (!page.url().startsWith(base)) await page.getByRole("button", { name: "Continue" }).click();
  const res = await callback;
  t.is(res.status(), 400);
  t.is((await res.json()).code, "sign-in-failed");
  t.is((await context.cookies(base)).find((c) => c.name === SESSION_COOKIE), undefined);
  await context.close();
});

test.serial("session cookies: a tampered one is nobody; one sealed with the older key of SLOTFLOW_SESSION_SECRET still works; an unknown key, a login cookie or an expired one is nobody", async (t) => {
  const claims = { sub: "grace", email: "grace@example.test", roles: ["finance"], csrf: "c".repeat(43), dev: false };
  const byOld = await forgeSession([OLD_KEY], claims, 3600);
  const ok = await call("/auth/whoami", { cookie: `${SESSION_COOKIE}=${byOld}` });
  t.is(ok.status, 200);
  t.like(ok.body, { id: "grace", roles: ["finance"], via: "session" });

  const parts = byOld.split(".");
  const ct = Buffer.from(parts[3]!, "base64url");
  ct[0] ^= 1;
  parts[3] = ct.toString("base64url");
  t.is((await call("/auth/whoami", { cookie: `${SESSION_COOKIE}=${parts.join(".")}` })).status, 401);

  const unknown = await forgeSession(["a-key-slotflow-never-had-0123456789abc"], claims, 3600);
  t.is((await call("/auth/whoami", { cookie: `${SESSION_COOKIE}=${unknown}` })).status, 401);
  const loginAsSession = await seal([NEW_KEY], "login", { aud: new URL(base).origin, ...claims }, 3600);
  t.is((await call("/auth/whoami", { cookie: `${SESSION_COOKIE}=${loginAsSession}` })).status, 401);
  const expired = await forgeSession([NEW_KEY], { ...claims, iat: Math.floor(Date.now() / 1000) - 7200 }, -60);
  t.is((await call("/auth/whoami", { cookie: `${SESSION_COOKIE}=${expired}` })).status, 401);
  const tooLong = await forgeSession([NEW_KEY], claims, 13 * 3600);
  t.is((await call("/auth/whoami", { cookie: `${SESSION_COOKIE}=${tooLong}` })).status, 401, "a session living longer than 12 h is refused");
  // issue 38: the key alone no longer makes a session — without its server-side row, or bound to another origin, it is nobody
  const noRow = await forgeSession([NEW_KEY], claims, 3600, false);
  t.is((await call("/auth/whoami", { cookie: `${SESSION_COOKIE}=${noRow}` })).status, 401, "no server-side session");
  const otherOrigin = await forgeSession([NEW_KEY], { ...claims, aud: "https://elsewhere.example" }, 3600);
  t.is((await call("/auth/whoami", { cookie: `${SESSION_COOKIE}=${otherOrigin}` })).status, 401, "bound to another origin");
});

test.serial("bearer JWTs signed by the issuer are principals; expired, wrong audience, wrong issuer, unknown kid, alg none, HS256 with the issuer's public key and not-yet-valid ones are 401", async (t) => {
  const good = await idp.sign({ sub: "heidi", email: "heidi@example.test", email_verified: true, realm_access: { roles: ["approver"] } });
  const ok = await call("/auth/whoami", { token: good });
  t.is(ok.status, 200);
  t.like(ok.body, { id: "heidi", email: "heidi@example.test", roles: ["approver"], via: "bearer", csrf: null });

  const now = Math.floor(Date.now() / 1000);
  const refused: [string, string][] = [
    ["expired", await idp.sign({ sub: "heidi", iat: now - 7200, exp: now - 3600 })],
    ["wrong audience", await idp.sign({ sub: "heidi", aud: "another-client" })],
    ["wrong issuer", await idp.sign({ sub: "heidi", iss: "http://127.0.0.1:9/elsewhere" })],
    ["not yet valid", await idp.sign({ sub: "heidi", nbf: now + 3600 })],
    ["no sub", await idp.sign({})],
    ["unknown kid", await idp.sign({ sub: "heidi" }, await issuerKey("k-unknown"))],
  ];
  const none = `${Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url")}.${Buffer.from(JSON.stringify({ sub: "heidi", iss: idp.issuer, aud: CLIENT_ID, exp: now + 300 })).toString("base64url")}.`;
  refused.push(["alg none", none]);
  const publicPem = await exportSPKI(idp.keys[0]!.publicKey);
  for (const secret of [publicPem, JSON.stringify(idp.keys[0]!.privateJwk.n)]) {
    const hs = await new SignJWT({ sub: "heidi", iss: idp.issuer, aud: CLIENT_ID })
      .setProtectedHeader({ alg: "HS256", kid: idp.keys[0]!.kid })
      .setIssuedAt()
      .setExpirationTime(now + 300)
      .sign(new TextEncoder().encode(secret));
    refused.push(["HS256 made with the issuer's public key", hs]);
  }
  for (const [why, token] of refused) {
    const res = await call("/auth/whoami", { token });
    t.is(res.status, 401, why);
    t.is(res.body?.code, "unauthorized", why);
    t.false(res.text.includes(token), `${why}: the token is never quoted`);
  }
  // HS256 principals (SLOTFLOW_JWT_SECRET) keep working beside the issuer's
  const hs = await call("/auth/whoami", { token: await signPrincipal(JWT_SECRET, { sub: "ivan", roles: ["ops"] }) });
  t.is(hs.status, 200);
  t.like(hs.body, { id: "ivan", roles: ["ops"], via: "bearer" });
});

test.serial("a key the issuer adds is accepted without restarting slotflow", async (t) => {
  const k2 = await issuerKey("k2");
  const before = await call("/auth/whoami", { token: await idp.sign({ sub: "judy" }, k2) });
  t.is(before.status, 401, "not yet published");
  idp.rotate(k2);
  await new Promise((r) => setTimeout(r, JWKS_COOLDOWN_MS + 500)); // the JWKS refetch cooldown after the last unknown kid
  const after = await call("/auth/whoami", { token: await idp.sign({ sub: "judy", realm_access: { roles: ["finance"] } }, k2) });
  t.is(after.status, 200);
  t.like(after.body, { id: "judy", roles: ["finance"] });
  t.is((await call("/auth/whoami", { token: await idp.sign({ sub: "judy" }, idp.keys[1]) })).status, 200, "the older key is still published, still accepted");
});

test.serial("the raise path (POST /api/runs/{id}/slots/{alias}/events) takes every principal signedIn finds, 401 for nobody, and a browser session needs its CSRF token", async (t) => {
  const path = `/api/runs/${randomUUID()}/slots/approve/events`;
  const json = { "content-type": "application/json" };
  const nobody = await call(path, { method: "POST", headers: json, body: "{}" });
  t.is(nobody.status, 401);
  t.is(nobody.body.code, "unauthorized");
  const issuerJwt = await call(path, { method: "POST", headers: json, body: "{}", token: await idp.sign({ sub: "kim" }) });
  t.is(issuerJwt.status, 404, "signed in: the run is what is missing");
  const badJwt = await call(path, { method: "POST", headers: json, body: "{}", token: await idp.sign({ sub: "kim", aud: "x" }) });
  t.is(badJwt.status, 401);
  const session = await forgeSession([NEW_KEY], { sub: "kim", email: null, roles: [], csrf: "t".repeat(43), dev: false }, 3600);
  const noCsrf = await call(path, { method: "POST", headers: json, body: "{}", cookie: `${SESSION_COOKIE}=${session}` });
  t.is(noCsrf.status, 403);
  t.is(noCsrf.body.code, "csrf-refused");
  const withCsrf = await call(path, { method: "POST", headers: { ...json, "x-csrf-token": "t".repeat(43) }, body: "{}", cookie: `${SESSION_COOKIE}=${session}` });
  t.is(withCsrf.status, 404);
});

test.serial("no development sign-in beside an issuer: POST /auth/login is 404", async (t) => {
  const res = await call("/auth/login", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "id=mallory" });
  t.is(res.status, 404);
});

test.serial("nothing secret reaches slotflow's log: no JWT, no authorization code, no session or pending-login cookie", (t) => {
  const lines = cluster.output();
  t.true(lines.some((l) => l.includes('"signed in"')), "the log did record the sign-ins");
  for (const line of lines) {
    t.false(/eyJ[A-Za-z0-9_-]{10,}/.test(line), `a JWT or JWE in: ${line.slice(0, 200)}`);
    t.false(line.includes("not-a-code"), "an authorization code");
    t.false(/code=|state=|nonce=|id_token_hint/.test(line), `a query of the sign-in in: ${line.slice(0, 200)}`);
  }
});
