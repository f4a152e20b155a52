/**
 * The development sign-in (v0.4 "People inside the company": "Without an issuer and outside
 * production: a development sign-in page (id, email, roles), marked as such on every page it signs
 * into; 404 in production without an issuer"; since v0.5 only with SLOTFLOW_DEV_SIGN_IN=1, see
 * dev-sign-in-opt-in.test.ts), in headless Chromium against a real `slotflow serve`, and a
 * production one without an issuer.
 */
import test from "ava";
import { spawn } from "node:child_process";
import { cliEntry } from "../helpers/cli-entry.js";
import { freePort, ROOT } from "../helpers/server.js";
import AxeBuilder from "@axe-core/playwright";
import type { Browser } from "playwright-core";
import { DESKTOP, launchBrowser, PHONE } from "../helpers/browser.js";
import { dropDatabase } from "../helpers/db.js";
import { JWT_SECRET, startCluster, type Cluster } from "../helpers/server.js";
import { signPrincipal } from "../../src/auth/jwt.js";
import { generateKeyPair, SignJWT } from "jose";

let dev: Cluster;
let prod: Cluster;
let https: Cluster;
let down: Cluster;
let browser: Browser;

test.before(async () => {
  const closedPort = await freePort();
  [dev, https, prod, down, browser] = await Promise.all([
    startCluster("devsignin", { env: { SLOTFLOW_DEV_SIGN_IN: "1" } }),
    // https on a loopback name: the development sign-in is refused at start on any other BASE_URL (issue 38 M3)
    startCluster("httpssignin", { env: { BASE_URL: "https://localhost", SLOTFLOW_DEV_SIGN_IN: "1" } }),
    startCluster("prodsignin", { env: { NODE_ENV: "production", SLOTFLOW_ALLOW_VOLATILE_REDIS: "1" } }),
    startCluster("downsignin", { env: { SLOTFLOW_OIDC_ISSUER: `http://127.0.0.1:${closedPort}`, SLOTFLOW_OIDC_CLIENT_ID: "slotflow" } }),
    launchBrowser(),
  ]);
});

test.after.always(async () => {
  await browser?.close();
  for (const c of [dev, prod, https, down]) {
    await c?.stop();
    if (c) await dropDatabase(c.databaseUrl);
  }
});

const form = { "content-type": "application/x-www-form-urlencoded" };

test("outside production without an issuer, /auth/login is a development sign-in page marked as such; it signs in with development: true and lands on returnTo", async (t) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${dev.baseUrl}/auth/login?returnTo=${encodeURIComponent("/auth/whoami?x=1")}`);
  await t.notThrowsAsync(page.getByRole("heading", { name: "Development sign-in" }).waitFor());
  t.regex(await page.getByRole("note").innerText(), /Development sign-in — not for production/);
  await page.getByLabel("User id").fill("dave");
  await page.getByLabel("Email (optional)").fill("dave@example.test");
  await page.getByLabel("Roles (optional)").fill("finance, approver ,");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(`${dev.baseUrl}/auth/whoami?x=1`);
  const who = await (await context.request.get(`${dev.baseUrl}/auth/whoami`)).json();
  t.like(who, { id: "dave", email: "dave@example.test", roles: ["finance", "approver"], via: "session", development: true });
  const cookie = (await context.cookies(dev.baseUrl)).find((c) => c.name === "slotflow_session")!;
  t.true(cookie.httpOnly);
  t.is(cookie.sameSite, "Lax");

  // logout without an issuer: back to /
  const res = await context.request.post(`${dev.baseUrl}/auth/logout`, { form: { csrf: who.csrf }, maxRedirects: 0 });
  t.is(res.status(), 303);
  t.is(res.headers().location, "/");
  t.is((await context.request.get(`${dev.baseUrl}/auth/whoami`)).status(), 401);
  await context.close();
});

test("the development sign-in form refuses another site and a missing or wrong CSRF token, and shows an error for a missing id", async (t) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${dev.baseUrl}/auth/login`);
  const csrf = await page.locator('input[name="csrf"]').inputValue();
  const post = (data: Record<string, string>, headers: Record<string, string> = {}) =>
    context.request.post(`${dev.baseUrl}/auth/login`, { form: data, headers, maxRedirects: 0 });
  t.is((await post({ id: "mallory" })).status(), 403, "no token");
  t.is((await post({ id: "mallory", csrf: "x".repeat(43) })).status(), 403, "wrong token");
  t.is((await post({ id: "mallory", csrf }, { origin: "https://evil.example" })).status(), 403, "another site");
  const noToken = await fetch(`${dev.baseUrl}/auth/login`, { method: "POST", headers: form, body: `id=mallory&csrf=${csrf}`, redirect: "manual" });
  t.is(noToken.status, 403, "the token without its cookie");
  const empty = await post({ id: " ", csrf });
  t.is(empty.status(), 422);
  const again = await empty.text();
  t.regex(again, /Enter a user id/);
  t.is((await context.request.get(`${dev.baseUrl}/auth/whoami`)).status(), 401, "nobody signed in by any of these");
  t.is((await post({ id: "mallory", csrf })).status(), 403, "the form shown again carries a new token; the old one is stale");
  const fresh0 = /name="csrf" value="([^"]+)"/.exec(again)![1]!;
  const huge = await post({ id: "mallory", csrf: fresh0, roles: Array.from({ length: 100 }, (_, i) => `role-${i}-${"r".repeat(60)}`).join(",") });
  t.is(huge.status(), 422, "a session that would not fit in a cookie is refused, not set");
  const hugePage = await huge.text();
  t.regex(hugePage, /do not fit in a session cookie/);
  t.is((await context.request.get(`${dev.baseUrl}/auth/whoami`)).status(), 401);
  const fresh1 = /name="csrf" value="([^"]+)"/.exec(hugePage)![1]!;
  // the form's refusals are in the reader's language (docs/languages.md)
  const german = await post({ id: " ", csrf: fresh1 }, { "accept-language": "de-DE,de;q=0.9" });
  t.is(german.status(), 422);
  const germanPage = await german.text();
  t.regex(germanPage, /<p class="error" role="alert">Geben Sie eine Benutzerkennung mit höchstens 200 Zeichen ein\.<\/p>/);
  const fresh = /name="csrf" value="([^"]+)"/.exec(germanPage)![1]!;
  const ok = await post({ id: "mallory", csrf: fresh, returnTo: "https://evil.example/" });
  t.is(ok.status(), 303);
  t.is(ok.headers().location, "/inbox", "returnTo to another site is refused");
  await context.close();
});

test("in production without an issuer there is no sign-in: /auth/login, POST /auth/login and /auth/callback are 404", async (t) => {
  for (const [method, path] of [["GET", "/auth/login"], ["POST", "/auth/login"], ["GET", "/auth/callback?code=a&state=b"]] as const) {
    const res = await fetch(`${prod.baseUrl}${path}`, { method, headers: form, body: method === "POST" ? "id=x" : undefined, redirect: "manual" });
    t.is(res.status, 404, `${method} ${path}`);
  }
  t.is((await fetch(`${prod.baseUrl}/auth/whoami`)).status, 401);
});

test("with an https BASE_URL the cookies are Secure; the session cookie is HttpOnly, SameSite=Lax and lasts at most 12 h", async (t) => {
  const local = `http://127.0.0.1:${https.env.PORT}`; // the process listens here; BASE_URL is its public https address
  const page = await fetch(`${local}/auth/login`);
  t.is(page.status, 200);
  const pending = page.headers.getSetCookie().find((c) => c.startsWith("slotflow_login="))!;
  t.regex(pending, /;\s*secure/i);
  t.regex(pending, /;\s*path=\/auth/i);
  const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())![1]!;
  const res = await fetch(`${local}/auth/login`, {
    method: "POST",
    headers: { ...form, cookie: pending.split(";")[0]!, origin: "https://localhost" },
    body: new URLSearchParams({ id: "olivia", csrf, returnTo: "/auth/whoami" }).toString(),
    redirect: "manual",
  });
  t.is(res.status, 303);
  t.is(res.headers.get("location"), "/auth/whoami");
  const session = res.headers.getSetCookie().find((c) => c.startsWith("slotflow_session="))!;
  t.regex(session, /;\s*secure/i);
  t.regex(session, /;\s*httponly/i);
  t.regex(session, /;\s*samesite=lax/i);
  t.regex(session, /;\s*path=\//i);
  const expires = Date.parse(/expires=([^;]+)/i.exec(session)![1]!);
  t.true(expires <= Date.now() + 12 * 3600_000 + 2_000 && expires > Date.now() + 11 * 3600_000, "12 h");
});

test("in production, `slotflow web` with an issuer and no SLOTFLOW_SESSION_SECRET refuses to start: one line naming the variable, exit 1", async (t) => {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: "production",
    PORT: String(await freePort()),
    SLOTFLOW_ADMIN_TOKEN: "a".repeat(40),
    SLOTFLOW_JWT_SECRET: "j".repeat(40),
    SLOTFLOW_SEAL_KEY: "s".repeat(40),
    SLOTFLOW_OIDC_ISSUER: "https://id.example.test/realms/acme",
    SLOTFLOW_OIDC_CLIENT_ID: "slotflow",
  };
  const child = spawn(process.execPath, [...cliEntry(), "web"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  child.stderr.on("data", (c: Buffer) => (err += c.toString("utf8")));
  const killer = setTimeout(() => child.kill("SIGKILL"), 50_000);
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  clearTimeout(killer);
  t.is(code, 1);
  t.deepEqual(err.split("\n").filter((l) => l !== ""), [
    "error: SLOTFLOW_SESSION_SECRET is required when NODE_ENV=production and SLOTFLOW_OIDC_ISSUER is set (the key of signed session cookies)",
  ]);
});

test("the development sign-in page is accessible (axe: no serious or critical violation) and fits a 360 px phone", async (t) => {
  for (const [name, viewport] of [["phone", PHONE], ["desktop", DESKTOP]] as const) {
    for (const colorScheme of ["light", "dark"] as const) {
      const context = await browser.newContext({ viewport, colorScheme });
      const page = await context.newPage();
      await page.goto(`${dev.baseUrl}/auth/login`);
      const result = await new AxeBuilder({ page }).analyze();
      const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
      t.deepEqual(bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`), [], `${name} ${colorScheme}`);
      t.is(await page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth"), 0, `${name}: no horizontal scrolling`);
      await context.close();
    }
  }
});

test("an issuer that does not answer: sign-in and its bearer JWTs are 503 unavailable (retried on the next request), HS256 principals keep working", async (t) => {
  const login = await fetch(`${down.baseUrl}/auth/login`, { redirect: "manual" });
  t.is(login.status, 503);
  t.is(((await login.json()) as { code: string }).code, "unavailable");
  const { privateKey } = await generateKeyPair("RS256");
  const rs = await new SignJWT({ sub: "x", aud: "slotflow", iss: down.env.SLOTFLOW_OIDC_ISSUER }).setProtectedHeader({ alg: "RS256", kid: "k" }).setExpirationTime("5m").sign(privateKey);
  const bearer = await fetch(`${down.baseUrl}/auth/whoami`, { headers: { authorization: `Bearer ${rs}` } });
  t.is(bearer.status, 503);
  const again = await fetch(`${down.baseUrl}/auth/login`, { redirect: "manual" });
  t.is(again.status, 503, "a failed discovery is not cached as a success");
  const hs = await fetch(`${down.baseUrl}/auth/whoami`, { headers: { authorization: `Bearer ${await signPrincipal(JWT_SECRET, { sub: "ops" })}` } });
  t.is(hs.status, 200);
  t.is(((await hs.json()) as { id: string }).id, "ops");
});
