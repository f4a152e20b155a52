/**
 * People inside the company answer too (v0.4 "People inside the company"), end to end and in one
 * place: a person in the finance role signs in through a real OpenID provider (panva's
 * oidc-provider, test/helpers/oidc-issuer.ts), sees the vendor-approval task waiting on them in
 * `/inbox`, answers it on its task page in Chromium, and the run records who answered
 * (`answeredBy` on the slot and in the history). Someone outside finance signing in through the same
 * provider sees no such task and gets the task page's 403.
 *
 * The parts have their own suites (sign-in-oidc, inbox-page, task-browser); this file is the whole
 * path a new insider takes, with examples/vendor-approval.flow as shipped.
 */
import test from "ava";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { launchBrowser } from "../helpers/browser.js";
import { dropDatabase } from "../helpers/db.js";
import { CLIENT_ID, signInAtIssuer, startIssuer, type TestIssuer } from "../helpers/oidc-issuer.js";
import { ADMIN_TOKEN, startCluster, type Cluster } from "../helpers/server.js";
import { ROOT } from "../helpers/root.js";


let idp: TestIssuer;
let cluster: Cluster;
let base: string;
let browser: Browser;

test.before(async () => {
  idp = await startIssuer();
  [cluster, browser] = await Promise.all([
    startCluster("insider", {
      env: {
        SLOTFLOW_OIDC_ISSUER: idp.issuer,
        SLOTFLOW_OIDC_CLIENT_ID: CLIENT_ID,
        SLOTFLOW_OIDC_ROLES_CLAIM: "realm_access.roles",
        SLOTFLOW_SESSION_SECRET: "insider-session-key-0123456789abcdef0123",
      },
    }),
    launchBrowser(),
  ]);
  base = cluster.baseUrl;
  idp.register(base);
  const deployed = await fetch(`${base}/api/workflows`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "text/plain", "x-slotflow-filename": "vendor-approval.flow" },
    body: readFileSync(join(ROOT, "examples", "vendor-approval.flow"), "utf8"),
  });
  if (!deployed.ok) throw new Error(`deploy answered ${deployed.status}: ${await deployed.text()}`);
});

test.after.always(async () => {
  await browser?.close();
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
  await idp?.close();
});

async function admin(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`);
  return res.json();
}

async function startVendorRun(vendor: string): Promise<string> {
  const run = await admin("POST", "/api/workflows/VendorApproval/runs", { vendor: { name: vendor, contactEmail: "ap@vendor.example" }, amount: 1200 });
  return run.id as string;
}

/** A new browser context that opens `path`, is sent to sign in at the provider as `login`, and lands back on `path`. */
async function signedInAt(login: string, path: string): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${base}${path}`);
  if (!page.url().startsWith(idp.issuer)) throw new Error(`expected the provider's login page, got ${page.url()}`);
  await signInAtIssuer(page, base, login);
  return page;
}

test.serial("a finance member signs in through the OpenID provider, finds the vendor approval in the inbox, answers it in the browser, and the run records who answered", async (t) => {
  const runId = await startVendorRun("Acme Insider");
  const page = await signedInAt("fiona", "/inbox");
  t.is(new URL(page.url()).pathname, "/inbox");
  t.regex(await page.locator("body").innerText(), /Signed in as fiona@example\.test/);

  const task = page.getByRole("link", { name: /Approve Acme Insider\?/ });
  t.is(await task.getAttribute("href"), `/inbox/tasks/${runId}/decision`);
  await Promise.all([page.waitForNavigation(), task.click()]);
  t.is(await page.getByRole("heading", { level: 1 }).innerText(), "Approve Acme Insider?");

  await page.getByRole("group", { name: "Do you approve this vendor?" }).getByLabel("Yes").check();
  await page.getByLabel("Note for our finance team").fill("Known supplier, bank details checked.");
  await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Send answer" }).click()]);
  t.regex(await page.locator("body").innerText(), /Answered by you at/);

  const run = await admin("GET", `/api/runs/${runId}`);
  t.is(run.state, "Approved");
  const decision = run.slots.find((s: { alias: string }) => s.alias === "decision");
  t.deepEqual(decision.answeredBy, { via: "principal", id: "fiona", email: "fiona@example.test" });
  const event = run.history.find((h: { kind: string }) => h.kind === "event");
  t.deepEqual(event.data.answeredBy, { via: "principal", id: "fiona", email: "fiona@example.test" });
  t.is(run.entities.vendor.reviewNote, "Known supplier, bank details checked.");
  await page.context().close();
});

test.serial("someone outside finance signs in through the same provider: the task is not in their inbox, and its page is a 403 saying why", async (t) => {
  const runId = await startVendorRun("Acme Outsider");
  const page = await signedInAt("sales-sam", `/inbox/tasks/${runId}/decision`);
  const answer = await page.goto(`${base}/inbox/tasks/${runId}/decision`);
  t.is(answer?.status(), 403);
  t.is(await page.getByRole("heading", { level: 1 }).innerText(), "You cannot answer this task");
  await page.goto(`${base}/inbox`);
  t.false((await page.locator("body").innerText()).includes("Approve Acme Outsider?"));
  const run = await admin("GET", `/api/runs/${runId}`);
  t.is(run.state, "Review");
  await page.context().close();
});
