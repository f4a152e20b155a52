/**
 * Signing out through the identity provider, in Chromium, from the real inbox page (issue 38
 * defect 2; v0.5 "…branding; home": "After signing out — through the issuer's end-session endpoint
 * when it has one — the browser lands there; signing out works in Chromium with the pages' CSP").
 * The inbox's CSP says `form-action 'self'`, and Chromium applies form-action to the redirects of a
 * form's submission too, so a 303 from `/auth/logout` to the issuer was blocked: the page stayed
 * "Signed in as…" and the issuer's session lived on. Against a real OpenID provider
 * (oidc-provider) and a real `slotflow serve`: after clicking "Sign out" on /inbox, both sessions
 * have ended — the cookie captured before is refused, and the next sign-in asks for credentials at
 * the issuer again — and the browser lands on slotflow's `/` (the post-logout redirect).
 */
import test from "ava";
import type { Browser } from "playwright-core";
import { launchBrowser } from "../helpers/browser.js";
import { dropDatabase } from "../helpers/db.js";
import { CLIENT_ID, signInAtIssuer, startIssuer, type TestIssuer } from "../helpers/oidc-issuer.js";
import { startCluster, type Cluster } from "../helpers/server.js";
import { SESSION_COOKIE } from "../../src/web/identity/session.js";

let idp: TestIssuer;
let cluster: Cluster;
let base: string;
let browser: Browser;

test.before(async () => {
  idp = await startIssuer();
  [cluster, browser] = await Promise.all([
    startCluster("signoutbrowser", {
      env: {
        SLOTFLOW_OIDC_ISSUER: idp.issuer,
        SLOTFLOW_OIDC_CLIENT_ID: CLIENT_ID,
        SLOTFLOW_OIDC_ROLES_CLAIM: "realm_access.roles",
        SLOTFLOW_SESSION_SECRET: "sign-out-session-key-0123456789abcdef0123",
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

test("signing out from the inbox page in Chromium ends slotflow's session and the issuer's, and lands on slotflow's /", async (t) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const blocked: string[] = [];
  page.on("console", (m) => {
    if (/Content Security Policy/i.test(m.text())) blocked.push(m.text());
  });
  await page.goto(`${base}/inbox`);
  t.true(page.url().startsWith(idp.issuer), "sent to sign in at the issuer");
  await signInAtIssuer(page, base, "nina");
  t.is(new URL(page.url()).pathname, "/inbox");
  const captured = (await context.cookies(base)).find((c) => c.name === SESSION_COOKIE)!.value;

  // the real page's own "Sign out" button
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.waitForURL((u) => u.href.startsWith(idp.issuer), { timeout: 60_000 });
  await page.getByRole("button", { name: "Yes, sign me out" }).click();
  await page.waitForURL((u) => u.href.startsWith(base), { timeout: 60_000 });
  t.is(new URL(page.url()).pathname, "/", "the post-logout redirect lands on slotflow's /");
  t.deepEqual(blocked, [], "the page's CSP blocked nothing");

  // slotflow's session is gone, in the browser and on the server
  t.is((await context.cookies(base)).find((c) => c.name === SESSION_COOKIE), undefined);
  t.is((await context.request.get(`${base}/auth/whoami`)).status(), 401);
  t.is((await fetch(`${base}/auth/whoami`, { headers: { cookie: `${SESSION_COOKIE}=${captured}` } })).status, 401, "the cookie captured before is refused");

  // the issuer's session is gone: signing in again asks for credentials
  await page.goto(`${base}/auth/login?returnTo=%2Finbox`);
  await page.waitForURL((u) => u.href.startsWith(idp.issuer));
  await t.notThrowsAsync(page.locator('input[name="login"]').waitFor({ timeout: 30_000 }), "the issuer asks for credentials again");
  await context.close();
});
