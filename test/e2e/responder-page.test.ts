/**
 * The responder page over HTTP (issue 10 §1; HTTP API "The responder page"), against one real
 * `slotflow serve` on real PostgreSQL and Redis: what a GET with `Accept: text/html` answers for
 * live, used, dead, not-yet-open and unknown links, its safety headers, escaping of author and run
 * text, that it never spends the link, that every other GET / HEAD / method keeps 405, and that no
 * token reaches a log line. In-browser behaviour (filling, submitting, errors, axe):
 * responder-browser.test.ts. Fixture: test/fixtures/responder-page.flow.
 */
import test from "ava";
import { dropDatabase } from "../helpers/db.js";
import { deployFixture, portOf, postLink, principalJwt, rawRequest, showRun, slotStatus, startRun, uniqueTitle } from "../helpers/callback.js";
import { linkIn, parseEmails, linksIn, tokenOf, waitForEmail } from "../helpers/mail.js";
import { ADMIN_TOKEN, request, ROOT, startCluster, type Cluster } from "../helpers/server.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";

let cluster: Cluster;
let base: string;

test.before(async () => {
  cluster = await startCluster("rpage");
  base = cluster.baseUrl;
  await deployFixture(base, "responder-page.flow");
  const example = await request(base, "POST", "/api/workflows", { token: ADMIN_TOKEN, text: readFileSync(join(ROOT, "examples", "vendor-approval.flow"), "utf8") });
  if (example.status !== 201) throw new Error(example.text);
});

test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

async function begin(prefix: string, job: Record<string, unknown> = {}) {
  const title = uniqueTitle(prefix);
  const runId = await startRun(base, "RpPage", { job: { title, contact: `${title}@example.test`, vendor: "Acme", maxQty: 100, ...job } });
  return {
    runId,
    title,
    link: async (alias: string) => linkIn(await waitForEmail(() => cluster.output(), `${alias} ${title}`)),
    show: () => showRun(base, runId),
  };
}

const page = (url: string, accept = BROWSER_ACCEPT) => request(new URL(url).origin, "GET", new URL(url).pathname, { headers: { accept } });

const VALID = {
  ok: true, note: "fine", qty: 3, price: 2.5, due: "2026-12-01T09:30:00+01:00", lead: "P3D", tags: ["a"], gift: null, ref: null, grid: [],
};

test.serial("a browser's GET answers the form generated from the event, with the author's wording and run data, and leaves the link live", async (t) => {
  const run = await begin("form");
  const url = await run.link("order");
  const res = await page(url);
  t.is(res.status, 200, res.text);
  t.regex(res.headers.get("content-type") ?? "", /^text\/html; charset=utf-8/);
  t.regex(res.text, /<title>Confirm order for Acme<\/title>/);
  t.regex(res.text, /<h1>Confirm order for Acme<\/h1>/);
  t.true(res.text.includes(`please confirm order ${run.title}.`));
  for (const label of ["Can you deliver this order?", "Message for the buyer", "Quantity you can deliver", "Unit price (EUR)", "Delivery date and time", "Lead time", "Tags", "Gift wrapped?", "Your reference"]) {
    t.true(res.text.includes(label), label);
  }
  t.regex(res.text, /<textarea id="f-note"/, "@multiline gives a text area");
  t.regex(res.text, /id="f-qty" type="number" step="1"/, "int: a number field with step 1");
  t.regex(res.text, /id="f-price" type="number" step="any"/, "decimal: any step");
  t.regex(res.text, /id="f-due" type="datetime-local"/);
  t.regex(res.text, /id="f-due-offset"/, "datetime: the offset is explicit");
  t.regex(res.text, /data-param="lead" data-kind="duration"/);
  t.regex(res.text, /data-param="tags" data-kind="list"/);
  t.regex(res.text, /data-param="grid" data-kind="list"/);
  t.regex(res.text, /data-kind="json"[^>]*><label for="f-grid-__ID__">Item \(as JSON\)/, "a list of lists: rows of JSON");
  t.regex(res.text, /value="null"[^>]*> No answer/, "bool? can be left unanswered");
  t.regex(res.text, /Yes confirms the order\./, "@help");
  t.is((res.text.match(/<script/g) ?? []).length, 1, "one inline script");
  t.regex(res.text, /<noscript>/, "without JavaScript the page says what is needed");
  // The GET spent nothing: the slot is open, and the POST still completes it.
  t.is(slotStatus(await run.show(), "order"), "open");
  const posted = await postLink(url, VALID);
  t.is(posted.status, 200, posted.text);
  t.is((await run.show()).entities.job.qty, 3);
});

test.serial("without Title or labels the page uses the event's and parameters' names", async (t) => {
  const run = await begin("plain");
  const res = await page(await run.link("plain"));
  t.is(res.status, 200);
  t.regex(res.text, /<h1>Answer: Plain<\/h1>/);
  t.regex(res.text, /<legend>Ok<\/legend>/);
});

test.serial("the page is served with safety headers and a CSP whose nonce covers its one script and style", async (t) => {
  const run = await begin("headers");
  const res = await page(await run.link("plain"));
  const csp = res.headers.get("content-security-policy") ?? "";
  const nonce = /script-src 'nonce-([A-Za-z0-9+/=]+)'/.exec(csp)?.[1];
  t.truthy(nonce, csp);
  t.regex(csp, /default-src 'none'/);
  t.regex(csp, /frame-ancestors 'none'/);
  t.regex(csp, /connect-src 'self'/);
  t.notRegex(csp, /https?:|\*|unsafe-inline|unsafe-eval/, "no remote sources, nothing unsafe");
  t.true(res.text.includes(`<script nonce="${nonce}">`));
  t.true(res.text.includes(`<style nonce="${nonce}">`));
  t.notRegex(res.text, /\bsrc=/, "loads nothing from anywhere");
  // issue 42: the only links are the language switcher's, to this same page (`?lang=`)
  const hrefs = [...res.text.matchAll(/\bhref="([^"]*)"/g)].map((m) => m[1]);
  t.deepEqual(hrefs, ["?lang=en", "?lang=de", "?lang=fr", "?lang=es", "?lang=ja", "?lang=ar"], "links only to this page in another language");
  t.is(res.headers.get("referrer-policy"), "no-referrer");
  t.is(res.headers.get("cache-control"), "no-store");
  t.regex(res.headers.get("x-robots-tag") ?? "", /noindex/);
  t.is(res.headers.get("x-content-type-options"), "nosniff");
  t.regex(res.headers.get("vary") ?? "", /accept/i);
  const again = await page(await run.link("order"));
  t.not(/nonce-([^']+)'/.exec(again.headers.get("content-security-policy") ?? "")?.[1], nonce, "a fresh nonce per response");
});

test.serial("author and run text is escaped: an entity value of <script> shows as text", async (t) => {
  const run = await begin("escape", { vendor: `<script>alert("x")</script>&<b>` });
  const res = await page(await run.link("order"));
  t.is(res.status, 200);
  t.true(res.text.includes("Confirm order for &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&lt;b&gt;"));
  t.false(res.text.includes(`<script>alert`));
  t.false(res.text.includes("<b>"));
  t.is((res.text.match(/<script/g) ?? []).length, 1);
});

test.serial("any other GET, HEAD and every other method keep answering 405 Allow: POST and spend nothing", async (t) => {
  const run = await begin("methods");
  const url = await run.link("plain");
  const path = new URL(url).pathname;
  const port = portOf(base);
  for (const accept of ["*/*", "application/json", "application/json, text/html;q=0.5", undefined]) {
    const res = await rawRequest({ port, method: "GET", path, headers: accept ? { accept } : {} });
    t.is(res.status, 405, `GET with Accept ${accept}`);
    t.regex(String(res.headers.vary ?? ""), /accept/i, "a cache must not hand this 405 to a browser");
    t.is(res.headers.allow, "POST");
    t.is(res.body?.code, "method-not-allowed");
  }
  for (const method of ["HEAD", "PUT", "DELETE", "PATCH", "OPTIONS"]) {
    const res = await rawRequest({ port, method, path, headers: { accept: BROWSER_ACCEPT } });
    t.is(res.status, 405, method);
    t.is(res.headers.allow, "POST", method);
  }
  t.is(slotStatus(await run.show(), "plain"), "open");
  const ok = await postLink(url, { ok: false });
  t.is(ok.status, 200, ok.text);
});

test.serial("a used link's page says so with 410; a link whose run finished says it no longer works, with its reason", async (t) => {
  const run = await begin("ended");
  const plain = await run.link("plain");
  const order = await run.link("order");
  t.is((await postLink(plain, { ok: true })).status, 200);
  const used = await page(plain);
  t.is(used.status, 410);
  t.regex(used.headers.get("content-type") ?? "", /^text\/html/);
  t.regex(used.text, /already been used/);
  t.regex(used.text, /data-ended="link-burned"/);
  t.is(used.headers.get("cache-control"), "no-store");
  t.is(used.headers.get("referrer-policy"), "no-referrer");
  const jwt = await principalJwt("op", ["ops"]);
  const closed = await request(base, "POST", `/api/runs/${run.runId}/slots/close/events`, { token: jwt, json: {} });
  t.is(closed.status, 200, closed.text);
  const dead = await page(order);
  t.is(dead.status, 410);
  t.regex(dead.text, /no longer works/);
  t.regex(dead.text, /workflow run has finished/);
});

test.serial("a Requires that does not hold answers 409 with the author's wording (its `else`) over run data and the answer; the link stays live", async (t) => {
  const run = await begin("requires", { maxQty: 12 });
  const url = await run.link("order");
  const res = await postLink(url, { ...VALID, qty: 40 }, { headers: { accept: "application/json" } });
  t.is(res.status, 409, res.text);
  t.is(res.body.code, "requires-failed");
  // The page's script shows a 409's `detail` in its live region (src/web/page/script.ts).
  t.is(res.body.detail, "We can take at most 12 items; you offered 40.");
  t.is(slotStatus(await run.show(), "order"), "open");
  t.is((await page(url)).status, 200, "the page is still served");
  t.is((await postLink(url, { ...VALID, qty: 12 })).status, 200);
});

test.serial("a slot waiting on After answers 409 'not open yet' and its link stays live; once open, a link its Intro reads is shown redacted", async (t) => {
  const run = await begin("later");
  const later = await run.link("later");
  const res = await page(later);
  t.is(res.status, 409);
  t.regex(res.text, /Not open yet/);
  t.is((await postLink(await run.link("order"), VALID)).status, 200);
  const open = await page(later);
  t.is(open.status, 200, "open once order is done");
  t.regex(open.text, /<label[^>]*>Done\?<\/label>|<legend>Done\?<\/legend>/);
  t.true(open.text.includes("The order&#39;s own link was http://127.0.0.1:"), open.text.slice(0, 2000));
  t.true(open.text.includes("/api/workflow/callback/[redacted]"), "a link read by Intro is shown without its token");
  t.false(open.text.includes(tokenOf(await run.link("order"))));
});

test.serial("unknown and mistyped links answer a 404 page", async (t) => {
  const run = await begin("unknown");
  const url = await run.link("plain");
  const token = tokenOf(url);
  const mistyped = url.replace(token, token.slice(0, 10) + (token[10] === "A" ? "B" : "A") + token.slice(11));
  for (const u of [mistyped, url.replace(token, "nothing-like-a-token"), url + "x"]) {
    const res = await page(u);
    t.is(res.status, 404, u.slice(-60));
    t.regex(res.text, /This link does not work/);
  }
  t.is(slotStatus(await run.show(), "plain"), "open");
});

test.serial("the vendor-approval example's page reads the run's data; a link replaced by a newer one answers 410 'was replaced'", async (t) => {
  const title = uniqueTitle("Vendor");
  const runId = await startRun(base, "VendorApproval", { vendor: { name: title, contactEmail: `${title}@old.example` }, amount: 1200 });
  const mail = await waitForEmail(() => cluster.output(), `Approve ${title}?`);
  t.regex(mail.body, /^Open this link to answer: /);
  const first = linkIn(mail);
  const res = await page(first);
  t.is(res.status, 200);
  t.true(res.text.includes(`<h1>Approve ${title}?</h1>`));
  t.true(res.text.includes(`order from ${title} for <data class="num" value="1200">1,200</data> EUR`), "a number the page formats for the reader's language (issue 42: by the server, English here)");
  t.true(res.text.includes("Do you approve this vendor?"));
  t.regex(res.text, /<textarea id="f-note"/);
  const jwt = await principalJwt("fin", ["finance"]); // only finance may correct the address (issue 38 L7)
  const fixed = await request(base, "POST", `/api/runs/${runId}/slots/fixEmail/events`, { token: jwt, json: { email: `${title}@new.example` } });
  t.is(fixed.status, 200, fixed.text);
  const replaced = await page(first);
  t.is(replaced.status, 410);
  t.regex(replaced.text, /This link was replaced/);
  t.regex(replaced.text, /most recent message/);
});

test.serial("no log line of the server holds a token, GETs of pages included", async (t) => {
  const tokens = [...new Set(parseEmails(cluster.output()).flatMap(linksIn).map(tokenOf))];
  t.true(tokens.length >= 10, `tokens seen: ${tokens.length}`);
  const lines = cluster.output().filter((l) => l.startsWith("{"));
  t.true(lines.some((l) => l.includes('"method":"GET"') && l.includes("/api/workflow/callback/[redacted]")), "page GETs are logged, redacted");
  t.deepEqual(lines.filter((l) => tokens.some((tok) => l.includes(tok))), []);
});
