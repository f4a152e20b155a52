/**
 * A sign-out at the issuer ends slotflow's session at once (issue 38; v0.5 "Security, round two":
 * "logout (and a sign-out at the issuer, when it tells us) ends it at once"): OpenID Connect
 * Back-Channel Logout 1.0 at `POST /auth/backchannel-logout`. Against a real OpenID provider
 * (oidc-provider, its back-channel logout on, slotflow's `backchannel_logout_uri` registered) and a
 * real `slotflow serve`: a person signs in through slotflow in Chromium; the session is then ended
 * AT THE ISSUER (its own end-session page, never through slotflow), the issuer posts a logout token
 * to slotflow, and the slotflow session cookie captured before is refused. A forged or malformed
 * logout token answers 400 `{"error":"invalid_request"}` and ends nothing; a valid one naming only
 * `sub` ends that person's sessions.
 */
import test from "ava";
import { randomUUID } from "node:crypto";
import type { Browser, BrowserContext } from "playwright-core";
import type { JWTPayload } from "jose";
import { launchBrowser } from "../helpers/browser.js";
import { dropDatabase, sql } from "../helpers/db.js";
import { CLIENT_ID, issuerKey, signInAtIssuer, startIssuer, type TestIssuer } from "../helpers/oidc-issuer.js";
import { startCluster, type Cluster } from "../helpers/server.js";
import { SESSION_COOKIE } from "../../src/web/identity/session.js";
import { BACKCHANNEL_LOGOUT_EVENT } from "../../src/web/identity/oidc.js";

let idp: TestIssuer;
let cluster: Cluster;
let base: string;
let browser: Browser;

test.before(async () => {
  idp = await startIssuer({ backchannelLogout: true });
  [cluster, browser] = await Promise.all([
    startCluster("bclogout", {
      env: {
        SLOTFLOW_OIDC_ISSUER: idp.issuer,
        SLOTFLOW_OIDC_CLIENT_ID: CLIENT_ID,
        SLOTFLOW_OIDC_ROLES_CLAIM: "realm_access.roles",
        SLOTFLOW_SESSION_SECRET: "backchannel-session-key-0123456789abcdef0123",
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

/** Signs `login` in through slotflow in a new browser context; its context and session cookie. */
async function signIn(login: string): Promise<{ context: BrowserContext; cookie: string }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${base}/auth/login?returnTo=%2Fauth%2Fwhoami`);
  await signInAtIssuer(page, base, login);
  const cookie = (await context.cookies(base)).find((c) => c.name === SESSION_COOKIE)!.value;
  return { context, cookie };
}

const whoami = (cookie: string) => fetch(`${base}/auth/whoami`, { headers: { cookie: `${SESSION_COOKIE}=${cookie}` } }).then(async (r) => ({ status: r.status, body: (await r.json()) as { id?: string } }));

const postLogout = (body: string) => fetch(`${base}/auth/backchannel-logout`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body });

/** The issuer session id slotflow keeps for `login`'s live sessions. */
const issuerSids = async (login: string) =>
  (await sql<{ issuer_sid: string | null }>(cluster.databaseUrl, `SELECT issuer_sid FROM sessions WHERE principal_id = $1 AND ended_at IS NULL`, [login])).map((r) => r.issuer_sid);

test.serial("ending the session at the issuer ends slotflow's session at once: the cookie captured before is refused", async (t) => {
  const { context, cookie } = await signIn("bruno");
  t.is((await whoami(cookie)).status, 200);
  const [sid] = await issuerSids("bruno");
  t.true(typeof sid === "string" && sid.length > 0, "the session keeps the ID token's sid");

  // at the issuer itself, not through slotflow: its end-session page and its confirmation
  const page = await context.newPage();
  await page.goto(`${idp.issuer}/session/end`);
  await page.getByRole("button", { name: "Yes, sign me out" }).click();
  await page.waitForURL((u) => u.pathname.startsWith("/session/end/success"), { timeout: 60_000 });
  // the issuer waits for slotflow's answer before it answers the browser
  t.deepEqual(idp.backchannelErrors, [], "slotflow answered the logout token 200");
  t.is((await whoami(cookie)).status, 401, "the slotflow session ended with the issuer's");
  t.deepEqual(await issuerSids("bruno"), []);
  t.true(cluster.output().some((l) => l.includes("back-channel logout")), "the sign-out is logged");
  await context.close();
});

test.serial("a forged, badly signed or malformed logout token gets 400 invalid_request and ends nothing; a valid one naming only sub ends that person's sessions", async (t) => {
  const { context, cookie } = await signIn("carla");
  t.is((await whoami(cookie)).status, 200);
  const [sid] = await issuerSids("carla");
  const events = { [BACKCHANNEL_LOGOUT_EVENT]: {} };
  const good: JWTPayload = { sub: "carla", sid: sid!, events, jti: randomUUID() };
  const forger = await issuerKey(idp.keys[0]!.kid); // same kid, a key the issuer never published

  const refused: [string, string][] = [
    ["signed by another key", `logout_token=${await idp.sign(good, forger)}`],
    ["alg none", `logout_token=${Buffer.from('{"alg":"none"}').toString("base64url")}.${Buffer.from(JSON.stringify({ ...good, iss: idp.issuer, aud: CLIENT_ID, iat: Math.floor(Date.now() / 1000) })).toString("base64url")}.`],
    ["with a nonce", `logout_token=${await idp.sign({ ...good, nonce: "n" })}`],
    ["without events", `logout_token=${await idp.sign({ sub: "carla", sid: sid!, jti: randomUUID() })}`],
    ["another event", `logout_token=${await idp.sign({ ...good, events: { "http://schemas.openid.net/event/other": {} } })}`],
    ["neither sid nor sub", `logout_token=${await idp.sign({ events, jti: randomUUID() })}`],
    ["another audience", `logout_token=${await idp.sign({ ...good, aud: "someone-else" })}`],
    ["another issuer", `logout_token=${await idp.sign({ ...good, iss: "https://evil.example" })}`],
    ["issued long ago", `logout_token=${await idp.sign({ ...good, iat: Math.floor(Date.now() / 1000) - 3600, exp: Math.floor(Date.now() / 1000) + 60 })}`],
    ["no jti", `logout_token=${await idp.sign({ sub: "carla", sid: sid!, events })}`],
    ["no token", "other=1"],
    ["not a JWT", "logout_token=abc"],
  ];
  for (const [why, body] of refused) {
    const res = await postLogout(body);
    t.is(res.status, 400, why);
    t.deepEqual(await res.json(), { error: "invalid_request" }, why);
    t.is(res.headers.get("cache-control"), "no-store", why);
  }
  t.is((await whoami(cookie)).status, 200, "nothing ended");

  // a valid token naming only the person (no sid): that person's sessions end
  const res = await postLogout(`logout_token=${await idp.sign({ sub: "carla", events, jti: randomUUID() })}`);
  t.is(res.status, 200);
  t.is(res.headers.get("cache-control"), "no-store");
  t.is((await whoami(cookie)).status, 401);
  await context.close();
});
