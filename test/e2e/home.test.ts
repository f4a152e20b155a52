/**
 * The home page, `GET /` (interfaces.md v0.5 "…branding; home"; issue 38 defect 3: after signing
 * out people landed on a raw JSON 404). Over HTTP against a real `slotflow serve`: a browser that is
 * not signed in gets a small page (the brand, "Sign in" to the sign-in start) under the scriptless
 * pages' headers; a signed-in one a 303 to `/inbox`; a JSON client a JSON answer. In headless
 * Chromium: the page renders with its CSP (its nonce'd style applies, no CSP violation), "Sign in"
 * leads to the sign-in, a signed-in browser opening `/` lands on its inbox, and signing out from
 * the real inbox page lands back on the home page.
 */
import test from "ava";
import type { Browser, Page } from "playwright-core";
import { DESKTOP, launchBrowser } from "../helpers/browser.js";
import { principalJwt, rawRequest } from "../helpers/callback.js";
import { dropDatabase } from "../helpers/db.js";
import { startCluster, type Cluster } from "../helpers/server.js";

let cluster: Cluster;
let base: string;
let browser: Browser;

test.before(async () => {
  // SLOTFLOW_DEV_SIGN_IN: the development sign-in's opt-in (v0.5 "Security, round two")
  [cluster, browser] = await Promise.all([startCluster("home", { env: { SLOTFLOW_DEV_SIGN_IN: "1" } }), launchBrowser()]);
  base = cluster.baseUrl;
});

test.after.always(async () => {
  await browser?.close();
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

const HTML = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

/** One request to `/` exactly as given (no redirect followed, no Accept added). */
const home = (method: string, headers: Record<string, string> = {}, body?: string) => rawRequest({ port: Number(new URL(base).port), method, path: "/", headers, body });

test("GET / from a browser that is not signed in: a small page with the brand and a Sign in link, under the pages' headers", async (t) => {
  const res = await home("GET", { accept: HTML });
  t.is(res.status, 200);
  t.regex(String(res.headers["content-type"]), /^text\/html; charset=utf-8/);
  const csp = String(res.headers["content-security-policy"]);
  t.regex(csp, /default-src 'none'/);
  t.regex(csp, /style-src 'nonce-[A-Za-z0-9+/=]+'/);
  t.regex(csp, /frame-ancestors 'none'/);
  t.notRegex(csp, /script-src/, "no script");
  t.is(res.headers["cache-control"], "no-store");
  t.is(res.headers["x-frame-options"], "DENY");
  t.regex(String(res.headers.vary), /Accept/);
  const nonce = /'nonce-([^']+)'/.exec(csp)![1];
  t.true(res.text.includes(`<style nonce="${nonce}">`));
  t.regex(res.text, /<title>slotflow<\/title>/);
  t.regex(res.text, /<h1 id="home-title">slotflow<\/h1>/);
  t.regex(res.text, /<a class="sign-in" href="\/auth\/login">Sign in<\/a>/);
  t.notRegex(res.text, /<script/);
  t.notRegex(res.text, /single-use link/, "no responder footer");
});

test("GET / from a signed-in browser: 303 to /inbox", async (t) => {
  const jwt = await principalJwt("ann", ["buyer"]);
  const res = await home("GET", { accept: HTML, authorization: `Bearer ${jwt}` });
  t.is(res.status, 303);
  t.is(res.headers.location, "/inbox");
});

test("GET / from a JSON client (or without Accept): 200 JSON saying where to go; HEAD too; other methods 405", async (t) => {
  for (const accept of ["application/json", "*/*", undefined]) {
    const res = await home("GET", accept ? { accept } : {});
    t.is(res.status, 200, String(accept));
    t.regex(String(res.headers["content-type"]), /^application\/json/);
    t.deepEqual(res.body, { name: "slotflow", signIn: "/auth/login", inbox: "/inbox", openapi: "/api/openapi.json" });
  }
  t.is((await home("HEAD", { accept: HTML })).status, 200);
  const post = await home("POST", { "content-type": "application/json" }, "{}");
  t.is(post.status, 405);
  t.is(post.body.type.split("/").pop(), "method-not-allowed");
});

/** A page of a new browser context that records every CSP violation and console error. */
async function watchedPage(): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: DESKTOP });
  context.setDefaultTimeout(15_000);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(m.text());
  });
  await page.addInitScript({ content: `document.addEventListener("securitypolicyviolation", (e) => console.error("CSP violation: " + e.violatedDirective));` });
  return { page, problems };
}

test("in Chromium: the home page renders with its CSP; Sign in signs in and a signed-in / lands on the inbox; signing out from the inbox lands on the home page", async (t) => {
  const { page, problems } = await watchedPage();
  const res = await page.goto(`${base}/`);
  t.is(res?.status(), 200);
  t.is(await page.title(), "slotflow");
  t.is(await page.getByRole("heading", { level: 1 }).innerText(), "slotflow");
  const signIn = page.getByRole("link", { name: "Sign in" });
  // the nonce'd style applied under the CSP: the link is drawn as a button in the accent colour
  await signIn.waitFor();
  const look = await page.evaluate<{ display: string; decoration: string }>(
    `(() => { const s = getComputedStyle(document.querySelector("a.sign-in")); return { display: s.display, decoration: s.textDecorationLine }; })()`,
  );
  t.deepEqual(look, { display: "inline-block", decoration: "none" });
  t.deepEqual(problems, [], "no CSP violation, no console error");

  await signIn.click();
  await page.waitForURL((u) => u.pathname === "/auth/login");
  await page.getByLabel("User id").fill("hana");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((u) => u.pathname === "/inbox");
  t.regex(await page.locator(".who").innerText(), /Signed in as hana/);

  await page.goto(`${base}/`);
  t.is(new URL(page.url()).pathname, "/inbox", "signed in: / is the inbox");

  // the inbox's own Sign out form, under the inbox page's CSP
  await Promise.all([page.waitForURL((u) => u.pathname === "/"), page.getByRole("button", { name: "Sign out" }).click()]);
  t.is(await page.getByRole("heading", { level: 1 }).innerText(), "slotflow");
  t.true(await page.getByRole("link", { name: "Sign in" }).isVisible());
  t.is((await page.context().request.get(`${base}/auth/whoami`)).status(), 401);
  t.deepEqual(problems, [], "no CSP violation on the way");
  await page.context().close();
});
