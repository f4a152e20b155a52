/**
 * Security, round two — tokens (issue 38 L2, L6, L8; docs/sign-in.md), against a real
 * `slotflow serve` and a real OpenID provider (oidc-provider, whose published key signs the
 * issuer's tokens):
 * - L2: a JWT whose `iat` is more than 60 s in the future is refused (HS256 and issuer tokens), and
 *   SLOTFLOW_JWT_MAX_TTL_SECONDS bounds the issuer's tokens too;
 * - L6: a principal id or role with a control character is 401 on the inbox, its API and the raise
 *   path (was: 500 on the inbox, a misleading 503 with an incident on raise);
 * - L8: an issuer's `email` is used only with `email_verified: true`.
 */
import test from "ava";
import { randomUUID } from "node:crypto";
import { SignJWT } from "jose";
import { dropDatabase } from "../helpers/db.js";
import { CLIENT_ID, startIssuer, type TestIssuer } from "../helpers/oidc-issuer.js";
import { JWT_SECRET, startCluster, type Cluster } from "../helpers/server.js";

let idp: TestIssuer;
let cluster: Cluster;
let base: string;

test.before(async () => {
  idp = await startIssuer();
  cluster = await startCluster("tokenchecks", {
    env: { SLOTFLOW_OIDC_ISSUER: idp.issuer, SLOTFLOW_OIDC_CLIENT_ID: CLIENT_ID, SLOTFLOW_SESSION_SECRET: "token-checks-session-key-0123456789abcdef", SLOTFLOW_JWT_MAX_TTL_SECONDS: "3600" },
  });
  base = cluster.baseUrl;
  idp.register(base);
});

test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
  await idp?.close();
});

const now = () => Math.floor(Date.now() / 1000);

/** An HS256 principal token with exactly these claims (jose). */
function hs256(claims: Record<string, unknown>): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: "HS256" }).sign(new TextEncoder().encode(JWT_SECRET));
}

async function whoami(token: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}/auth/whoami`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, body: await res.json().catch(() => null) };
}

test("L2: an HS256 JWT issued more than 60 s in the future is refused, even with a short exp − iat; within the skew it is accepted", async (t) => {
  const n = now();
  t.is((await whoami(await hs256({ sub: "fut", iat: n + 3 * 3600, exp: n + 3 * 3600 + 60 }))).status, 401, "iat 3 h ahead: exp − iat is 60 s, but it lives 3 h");
  t.is((await whoami(await hs256({ sub: "fut", iat: n + 120, exp: n + 600 }))).status, 401, "iat 2 min ahead");
  t.is((await whoami(await hs256({ sub: "ok", iat: n + 30, exp: n + 600 }))).status, 200, "30 s of skew is fine");
  t.is((await whoami(await hs256({ sub: "ok", iat: n, exp: n + 7200 }))).status, 401, "over SLOTFLOW_JWT_MAX_TTL_SECONDS");
});

test("L2: the issuer's tokens: a future iat is refused, and SLOTFLOW_JWT_MAX_TTL_SECONDS bounds their lifetime", async (t) => {
  const n = now();
  t.is((await whoami(await idp.sign({ sub: "iss-ok" }))).status, 200, "an ordinary 5-minute token");
  t.is((await whoami(await idp.sign({ sub: "iss-fut", iat: n + 3 * 3600, exp: n + 3 * 3600 + 60 }))).status, 401, "iat 3 h ahead");
  t.is((await whoami(await idp.sign({ sub: "iss-long" }, undefined, 2 * 3600))).status, 401, "lives 2 h, the bound is 1 h");
  t.is((await whoami(await idp.sign({ sub: "iss-long", iat: undefined, exp: n + 2 * 3600 }))).status, 401, "no iat: counted from now");
});

test("L6: a principal id or role with a control character is 401 on the inbox, its API and the raise path — never 500 or 503", async (t) => {
  const n = now();
  const tokens = [
    await hs256({ sub: "a\u0000b", iat: n, exp: n + 600 }),
    await hs256({ sub: "ok", roles: ["finance\u0000"], iat: n, exp: n + 600 }),
    await hs256({ sub: "line\nbreak", iat: n, exp: n + 600 }),
    await idp.sign({ sub: "a\u0000b" }),
    await idp.sign({ sub: "ok", roles: ["bad\u0007role"] }),
  ];
  for (const [i, token] of tokens.entries()) {
    const auth = { authorization: `Bearer ${token}` };
    const inbox = await fetch(`${base}/inbox`, { headers: auth, redirect: "manual" });
    t.is(inbox.status, 401, `inbox, token ${i}`);
    const api = await fetch(`${base}/api/inbox`, { headers: auth });
    t.is(api.status, 401, `api inbox, token ${i}`);
    t.is(((await api.json()) as { code: string }).code, "unauthorized");
    const raise = await fetch(`${base}/api/runs/${randomUUID()}/slots/decision/events`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: "{}" });
    t.is(raise.status, 401, `raise, token ${i}`);
  }
});

test("L8: the issuer's email is used only with email_verified: true", async (t) => {
  const verified = await whoami(await idp.sign({ sub: "v", email: "v@example.test", email_verified: true }));
  t.is(verified.body.email, "v@example.test");
  for (const flag of [false, "true", undefined]) {
    const res = await whoami(await idp.sign({ sub: "u", email: "u@example.test", ...(flag === undefined ? {} : { email_verified: flag }) }));
    t.is(res.status, 200);
    t.is(res.body.email, null, `email_verified: ${String(flag)}`);
  }
});
