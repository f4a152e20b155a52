/**
 * The operators' console over HTTP (issue 23 item 2; interfaces.md "The console"), against one real
 * `slotflow serve` with SLOTFLOW_VIEWER_TOKEN set: sign-in (401 with `WWW-Authenticate: Basic`,
 * operator, viewer), `/console` → 303 `/console/runs`, the safety headers, the runs list with its
 * filters from the URL and since when each slot waits, a run's page (Waiting on first with "Waiting
 * since", escaped author text, no token, states SVG),
 * a workflow's page (versions, the source coloured by the VS Code extension's grammar with
 * `<script>` in it inert, diff), and the actions as plain form POSTs
 * (303, reason and actor in the history) with their refusals: a viewer's POST anywhere under
 * /console is 403, a missing or wrong CSRF token is 403, a POST from another origin is 403, a
 * missing reason changes nothing. (The same flows in Chromium: console-browser.test.ts.)
 * Fixtures: examples/vendor-approval.flow (two versions), contract-signing.flow, and
 * purchase-approval.flow with a block comment and a string holding `<script>`.
 */
import test from "ava";
import { readFileSync } from "node:fs";
import { dropDatabase, sql } from "../helpers/db.js";
import { postLink, showRun, startRun, uniqueTitle } from "../helpers/callback.js";
import { linkIn, parseEmails, tokenOf, waitForEmail } from "../helpers/mail.js";
import { startReceiver, type Receiver } from "../helpers/receiver.js";
import { ADMIN_TOKEN, eventually, request, ROOT, startCluster, type Cluster } from "../helpers/server.js";

const VIEWER_TOKEN = "test-viewer-token";
let cluster: Cluster;
let base: string;
/** A webhook receiver (issue 30 item 3: the console's outbox shows every channel). */
let rx: Receiver;

const basic = (user: string, pass: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}` });
const OPERATOR = basic("olga", ADMIN_TOKEN);
const VIEWER = basic("vic", VIEWER_TOKEN);
const SOURCE = readFileSync(`${ROOT}/examples/vendor-approval.flow`, "utf8");

test.before(async () => {
  rx = await startReceiver();
  // deliveries to the receiver on 127.0.0.1: two attempts 200 ms apart, the third ten minutes later
  cluster = await startCluster("console", {
    env: { SLOTFLOW_VIEWER_TOKEN: VIEWER_TOKEN, SLOTFLOW_ENDPOINTS_ALLOW_PRIVATE: "1", SLOTFLOW_DELIVERY_RETRY_MS: "0,200,600000" },
  });
  base = cluster.baseUrl;
  for (const text of [SOURCE, SOURCE.replace("Deadline: 7d", "Deadline: 6d")]) {
    const res = await request(base, "POST", "/api/workflows", { token: ADMIN_TOKEN, text });
    if (res.status !== 201) throw new Error(res.text);
  }
});

test.after.always(async () => {
  await cluster?.stop();
  await rx?.close();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

async function vendorRun(prefix: string, name = uniqueTitle(prefix)) {
  const runId = await startRun(base, "VendorApproval", { vendor: { name, contactEmail: `x@example.test` }, amount: 10 });
  const url = linkIn(await waitForEmail(() => cluster.output(), `Approve ${name}?`));
  return { runId, name, url };
}

const get = (path: string, headers: Record<string, string> = OPERATOR) => request(base, "GET", path, { headers });
const post = (path: string, form: Record<string, string>, headers: Record<string, string> = OPERATOR) =>
  fetch(new URL(path, base), { method: "POST", redirect: "manual", headers: { ...headers, "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(form).toString() });

/** The CSRF token in a page's forms. */
const csrfIn = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? "";

test.serial("sign-in: no or wrong credentials answer 401 with WWW-Authenticate: Basic; the admin token is an operator, the viewer token a viewer", async (t) => {
  for (const headers of [{}, basic("x", "wrong"), { authorization: `Bearer ${ADMIN_TOKEN}` }]) {
    const res = await get("/console/runs", headers);
    t.is(res.status, 401);
    t.regex(res.headers.get("www-authenticate") ?? "", /^Basic realm="slotflow console"/);
  }
  const op = await get("/console/runs");
  t.is(op.status, 200);
  t.regex(op.text, /olga · operator/);
  const viewer = await get("/console/runs", VIEWER);
  t.is(viewer.status, 200);
  t.regex(viewer.text, /viewer \(read-only\)/);
  const root = await fetch(new URL("/console", base), { headers: OPERATOR, redirect: "manual" });
  t.is(root.status, 303);
  t.is(root.headers.get("location"), "/console/runs");
});

test.serial("every console page has the responder page's safety headers, a CSP nonce, noindex, and loads nothing from elsewhere", async (t) => {
  const { runId } = await vendorRun("headers");
  for (const path of ["/console/runs", `/console/runs/${runId}`, "/console/workflows/VendorApproval", "/console/runs/00000000-0000-4000-8000-000000000000"]) {
    const res = await get(path);
    const csp = res.headers.get("content-security-policy") ?? "";
    t.regex(csp, /default-src 'none'/, path);
    t.regex(csp, /script-src 'nonce-[A-Za-z0-9+/=]+'/);
    t.regex(csp, /form-action 'self'/);
    t.regex(csp, /frame-ancestors 'none'/);
    t.is(res.headers.get("x-robots-tag"), "noindex, nofollow");
    t.is(res.headers.get("referrer-policy"), "no-referrer");
    t.is(res.headers.get("cache-control"), "no-store");
    t.is(res.headers.get("x-content-type-options"), "nosniff");
    t.is(res.headers.get("x-frame-options"), "DENY");
    t.regex(res.text, /<meta name="robots" content="noindex, nofollow">/);
    t.notRegex(res.text, /(src|href)="(https?:)?\/\/(?!127\.0\.0\.1)/, "no remote resource");
    const nonce = /'nonce-([^']+)'/.exec(csp)![1];
    for (const tag of res.text.match(/<(script|style)\b[^>]*>/g) ?? []) t.true(tag.includes(`nonce="${nonce}"`), tag);
  }
});

test.serial("runs list: filters from the URL, counts per status, what each run waits on; 400 for a malformed filter", async (t) => {
  const a = await vendorRun("list");
  const res = await get("/console/runs?workflow=VendorApproval&status=running&waiting=decision");
  t.is(res.status, 200);
  t.true(res.text.includes(`href="/console/runs/${a.runId}"`));
  t.regex(res.text, /<option selected>VendorApproval<\/option>/);
  t.regex(res.text, /<input id="f-waiting" name="waiting" value="decision"/);
  t.regex(res.text, /running: \d+/);
  t.regex(res.text, /<strong>decision<\/strong> <span class="badge open">open<\/span> <span class="badge live">link live<\/span>/);
  t.regex(res.text, /class="countdown" datetime="[^"]+"[^>]*>in 5 d 23 h/);
  // since when it waits: the slot's opened_at, not the run's age
  const opened = new Date(Date.now() - (2 * 86_400 + 3 * 3600 + 120) * 1000);
  await sql(cluster.databaseUrl, "UPDATE slots SET opened_at = $1 WHERE run_id = $2 AND alias = 'decision'", [opened, a.runId]);
  const since = (await get("/console/runs?workflow=VendorApproval&status=running&waiting=decision")).text;
  const row = since.slice(since.indexOf(`href="/console/runs/${a.runId}"`), since.indexOf("</tr>", since.indexOf(`href="/console/runs/${a.runId}"`)));
  t.true(
    row.includes(`<span class="badge live">link live</span> <span class="muted">waiting since <time class="since" datetime="${opened.toISOString()}" title="${opened.toISOString().slice(0, 19).replace("T", " ")} UTC">2 d 3 h ago</time></span>`),
    row,
  );
  const none = await get("/console/runs?waiting=nosuchalias");
  t.regex(none.text, /No runs match these filters/);
  const bad = await get("/console/runs?status=stuck");
  t.is(bad.status, 400);
  t.regex(bad.text, /\?status: one of running, finished, cancelled/);
  // pagination: a "Next page" link carrying the cursor
  await vendorRun("list2");
  const first = await get("/console/runs?limit=1");
  const next = /href="(\/console\/runs\?[^"]*cursor=[^"]+)" rel="next"/.exec(first.text);
  t.truthy(next, "a next page link");
  const second = await get(next![1].replaceAll("&amp;", "&"));
  t.is(second.status, 200);
  t.regex(second.text, /First page/);
});

test.serial("a run's page: Waiting on first (event, parameters, deadline and countdown, After, Requires, link status), the states SVG, history, entities redacted, outbox; escaped; never a token", async (t) => {
  const r = await vendorRun("page", `<img src=x onerror=alert(1)>${uniqueTitle("esc")}`);
  const res = await get(`/console/runs/${r.runId}`);
  t.is(res.status, 200);
  const text = res.text;
  const order = ["Waiting on", 'id="graph-h"', "<h2>History", "<h2>Incidents", "<h2>Tracked entities", "<h2>Outbox"].map((s) => text.indexOf(s));
  t.deepEqual([...order].sort((x, y) => x - y), order, "sections in order, Waiting on first");
  t.true(order.every((i) => i > 0));
  t.regex(text, /<code>Approve\(ok: bool, note: string\)<\/code>/);
  t.regex(text, /<dt>Deadline<\/dt><dd><time datetime="[^"]+">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC<\/time> — <time class="countdown"/);
  t.regex(text, /<dt>Requires<\/dt><dd><code>amount &lt;= 50000<\/code>/);
  t.regex(text, /<dt>After<\/dt>/);
  t.regex(text, /link live/);
  const opened = (await showRun(base, r.runId)).slots.find((s) => s.alias === "decision")!.openedAt!;
  t.true(
    text.includes(`<dt>Waiting since</dt><dd><time datetime="${opened}">${opened.slice(0, 19).replace("T", " ")} UTC</time> — <span class="since">`),
    "the panel says since when the slot is open",
  );
  await sql(cluster.databaseUrl, "UPDATE slots SET opened_at = now() - interval '50 hours' WHERE run_id = $1 AND alias = 'decision'", [r.runId]);
  t.regex((await get(`/console/runs/${r.runId}`)).text, /<dt>Waiting since<\/dt><dd><time datetime="[^"]+">[^<]+ UTC<\/time> — <span class="since">2 d 2 h ago<\/span><\/dd>/);
  t.regex(text, /<svg [^>]*role="img"[^>]*aria-labelledby="graph-title graph-desc"/);
  t.regex(text, /<g class="node current" data-state="Review">/);
  t.regex(text, /state-entered/);
  t.regex(text, /\[redacted\]/, "the approval URL on the tracked row is shown redacted");
  t.false(text.includes(tokenOf(r.url)), "the live token is not in the page");
  t.notRegex(text, /sfl_[A-Za-z0-9_-]{20,}/);
  t.false(text.includes("<img src=x"), "author text is escaped");
  t.true(text.includes("&lt;img src=x onerror=alert(1)&gt;"));
  t.is((await get("/console/runs/not-a-uuid")).status, 404);
  t.is((await get("/console/runs/00000000-0000-4000-8000-000000000000")).status, 404);
});

test.serial("a run waiting on After and a fan-out: each element with its value, the waiting slot's predecessors not done, its live link (API and page)", async (t) => {
  const deployed = await request(base, "POST", "/api/workflows", { token: ADMIN_TOKEN, text: readFileSync(`${ROOT}/examples/contract-signing.flow`, "utf8") });
  t.true(deployed.status === 201 || deployed.status === 200, deployed.text);
  const runId = await startRun(base, "ContractSigning", { contract: { title: "Lease", value: 5000, status: null, counterSignUrl: null }, signers: ["ann@example.test", "bob@example.test"] });
  const api = await request(base, "GET", "/api/runs?workflow=ContractSigning&waiting=counter", { token: ADMIN_TOKEN });
  const listed = api.body.runs.find((r: any) => r.id === runId);
  // each element has its own link (v0.4: minted in the example's `each { … }`)
  t.deepEqual(
    listed.waiting.map((w: any) => [w.alias, w.element, w.status, w.link]),
    [["counter", null, "waiting", "live"], ["signatures", 0, "open", "live"], ["signatures", 1, "open", "live"], ["withdraw", null, "open", "none"]],
  );
  t.deepEqual(listed.waiting.map((w: any) => typeof w.openedAt), ["object", "string", "string", "string"]);
  t.is(listed.waiting[0].openedAt, null, "a slot still waiting on its After predecessors has not opened: openedAt null");
  const page = (await get(`/console/runs/${runId}`)).text;
  t.regex(page, /<h3 id="slot-r-counter-x">counter <span class="badge waiting">waiting<\/span> <span class="badge live">link live<\/span>/);
  t.regex(page, /<dt>After<\/dt><dd><ul class="plain"><li>signatures: not done yet<\/li><\/ul>/);
  t.regex(page, /<dt>Waiting since<\/dt><dd><span class="muted">not open yet<\/span><\/dd>/, "a waiting slot has no opening time");
  const list = (await get("/console/runs?workflow=ContractSigning&waiting=counter")).text;
  t.regex(list, /<strong>counter<\/strong> <span class="badge waiting">waiting<\/span> <span class="badge live">link live<\/span><\/li>/, "no 'waiting since' for a slot not open yet");
  t.regex(list, /<strong>signatures<\/strong>\[0\] <span class="badge open">open<\/span> <span class="badge live">link live<\/span> <span class="muted">waiting since <time class="since"/);
  t.regex(page, /signatures\[1\] <span class="badge open">open/);
  t.regex(page, /<dt>Element<\/dt><dd><code>&quot;bob@example.test&quot;<\/code>/);
  t.regex(page, /<dt>Requires<\/dt><dd><code>contract.value &lt; 1000000<\/code>/);
  t.regex(page, /its After predecessors completing, then an answer through the link/);
});

test.serial("a workflow's page: versions, the highlighted source, the states, and the diff between two versions", async (t) => {
  const res = await get("/console/workflows/VendorApproval");
  t.is(res.status, 200);
  t.regex(res.text, /version 2<\/a> \(current\)/);
  t.regex(res.text, /<span class="kw">workflow<\/span> <span class="name">VendorApproval<\/span>/);
  t.regex(res.text, /<span class="del">-    Deadline: 7d<\/span>/);
  t.regex(res.text, /<span class="add">\+    Deadline: 6d<\/span>/);
  t.regex(res.text, /<svg /);
  const v1 = await get("/console/workflows/VendorApproval?version=1&from=1&to=1");
  t.regex(v1.text, /Pick two different versions/);
  t.is((await get("/console/workflows/NoSuch")).status, 404);
  t.is((await get("/console/workflows/VendorApproval?version=9")).status, 404);
});

test.serial("a workflow version's source is coloured by the VS Code extension's grammar: block comments, every/after, durations, state names; <script> in a comment or string stays text (issue 21 item 3)", async (t) => {
  const source = `/* Reviewed by <b>legal</b>: <script>alert("comment")</script> */\n${readFileSync(`${ROOT}/examples/purchase-approval.flow`, "utf8").replace('"approved automatically"', '"approved <script>alert(1)</script> automatically"')}`;
  const deployed = await request(base, "POST", "/api/workflows", { token: ADMIN_TOKEN, text: source });
  t.true(deployed.status === 201 || deployed.status === 200, deployed.text);
  const res = await get("/console/workflows/PurchaseApproval");
  t.is(res.status, 200);
  const from = res.text.indexOf("<code>", res.text.indexOf('<pre class="src"')) + "<code>".length;
  const code = res.text.slice(from, res.text.indexOf("</code></pre>", from));
  t.true(code.length > 1000, "the source's markup");
  t.true(code.includes('<span class="com">/* Reviewed by &lt;b&gt;legal&lt;/b&gt;: &lt;script&gt;alert(&quot;comment&quot;)&lt;/script&gt; */</span>'), "the block comment, escaped");
  t.true(code.includes('<span class="kw">every</span> <span class="num">2d</span> <span class="kw">after</span> <span class="num">1d</span>'), "every … after … with durations");
  t.true(code.includes('<span class="kw">after</span> <span class="num">5d</span>'));
  t.true(code.includes('<span class="com">// A reminder one day after entry, then every two days; each carries a fresh link.</span>'), "keywords inside a line comment stay comment");
  t.true(code.includes('<span class="str">&quot;approved &lt;script&gt;alert(1)&lt;/script&gt; automatically&quot;</span>'), "the string, escaped");
  t.true(code.includes('-&gt; <span class="name">Escalated</span>'), "a state name after ->");
  t.true(code.includes('<span class="kw">state</span> <span class="name">Review</span>'));
  t.false(/<script>alert/.test(res.text), "no live script from the source");
  t.notRegex(code, /<(?!\/?span\b)/, "no tag in the source but the highlighter's spans");
  t.notRegex(code, /\sstyle=/, "classes, no inline styles (the CSP allows none)");
});

test.serial("Responders (v0.4): each element of a fanned-out slot with its own link's state and who answered, the quorum, and a per-element revoke", async (t) => {
  const deployed = await request(base, "POST", "/api/workflows", { token: ADMIN_TOKEN, text: readFileSync(`${ROOT}/examples/contract-signing.flow`, "utf8") });
  t.true(deployed.status === 201 || deployed.status === 200, deployed.text);
  const title = uniqueTitle("Resp");
  const signers = ["a", "b", "c"].map((x) => `${x}-${title}@example.test`);
  const runId = await startRun(base, "ContractSigning", { contract: { title, value: 5000, status: null, counterSignUrl: null }, signers });
  const links = await Promise.all(signers.map(async (to) => linkIn(await eventually(async () => parseEmails(cluster.output()).find((m) => m.to === to)))));
  t.is((await postLink(links[0], { agree: true })).status, 200);
  const page = (await get(`/console/runs/${runId}`)).text;
  t.regex(page, /<h2 id="responders-h">Responders<\/h2>/);
  t.regex(page, /signatures <span class="muted">— 1 of 3 completed; needs Quorum <code>2<\/code><\/span>/);
  t.regex(page, /<tr data-element="signatures\[0\]">.*?<span class="badge completed">completed<\/span>.*?link burned.*?<td data-label="Answered">through its link \(sent to [^)<]+@[^)<]+\)<\/td>/s, "v0.5: whom slotflow mailed the link to");
  t.regex(page, /<tr data-element="signatures\[1\]">.*?<span class="badge open">open<\/span>.*?link live/s);
  t.false(links.some((l) => page.includes(new URL(l).pathname.split("/").pop()!)), "never a token");
  // an operator revokes element 1's link alone
  const csrf = csrfIn(page);
  const revoked = await post(`/console/runs/${runId}/slots/signatures/revoke?element=1`, { csrf, reason: "wrong signer" });
  t.is(revoked.headers.get("location"), `/console/runs/${runId}?done=revoked`);
  const dead = await postLink(links[1], { agree: true });
  t.is(dead.body.reason, "revoked");
  t.is((await post(`/console/runs/${runId}/slots/signatures/revoke?element=x`, { csrf, reason: "r" })).status, 404);
  // the quorum: element 2 completes it, element 1's slot is cancelled
  t.is((await postLink(links[2], { agree: true })).status, 200);
  const after = (await get(`/console/runs/${runId}`)).text;
  t.regex(after, /— 2 of 3 completed; needs Quorum/);
  t.regex(after, /<dt>After<\/dt><dd><ul class="plain"><li>signatures: done<\/li><\/ul>/, "the quorum satisfies After");
  t.regex(after, /<tr data-element="signatures\[1\]">.*?<span class="badge cancelled">cancelled<\/span>.*?link dead \(revoked\)/s);
  const viewer = (await get(`/console/runs/${runId}`, VIEWER)).text;
  t.false(viewer.includes("Revoke link of signatures["), "a viewer sees no form");
});

test.serial("operator actions: revoke a link and cancel the run by form POST → 303, each with its reason and actor in the history", async (t) => {
  const r = await vendorRun("act");
  const csrf = csrfIn((await get(`/console/runs/${r.runId}`)).text);
  t.truthy(csrf);
  const noReason = await post(`/console/runs/${r.runId}/slots/decision/revoke`, { csrf, reason: "  " });
  t.is(noReason.status, 303);
  t.is(noReason.headers.get("location"), `/console/runs/${r.runId}?error=reason`);
  t.is((await showRun(base, r.runId)).history.filter((h) => h.kind === "link-revoked").length, 0, "nothing changed");
  const revoked = await post(`/console/runs/${r.runId}/slots/decision/revoke`, { csrf, reason: "sent to the wrong person" });
  t.is(revoked.status, 303);
  t.is(revoked.headers.get("location"), `/console/runs/${r.runId}?done=revoked`);
  const dead = await postLink(r.url, { ok: true, note: "n" });
  t.is(dead.status, 410);
  t.is(dead.body.reason, "revoked");
  const again = await post(`/console/runs/${r.runId}/slots/decision/revoke`, { csrf, reason: "again" });
  t.is(again.headers.get("location"), `/console/runs/${r.runId}?error=no-link`);
  const cancelled = await post(`/console/runs/${r.runId}/cancel`, { csrf, reason: "vendor withdrew" });
  t.is(cancelled.status, 303);
  t.is(cancelled.headers.get("location"), `/console/runs/${r.runId}?done=cancelled`);
  const run = await showRun(base, r.runId);
  t.is(run.status, "cancelled");
  t.like(run.history.find((h) => h.kind === "link-revoked")?.data, { alias: "decision", reason: "sent to the wrong person", actor: 'console operator "olga"' });
  t.like(run.history.find((h) => h.kind === "run-cancelled")?.data, { reason: "vendor withdrew", actor: 'console operator "olga"' });
  const page = await get(`/console/runs/${r.runId}?done=cancelled`);
  t.regex(page.text, /The run was cancelled\./);
  t.regex(page.text, /The run has been cancelled; it waits on nothing/);
  const twice = await post(`/console/runs/${r.runId}/cancel`, { csrf, reason: "twice" });
  t.is(twice.headers.get("location"), `/console/runs/${r.runId}?error=run-finished`);
  t.regex((await get(`/console/runs/${r.runId}?error=<script>`)).text, /<h1>Run/, "an unknown notice is ignored");
});

test.serial("refusals: a viewer's POST anywhere under /console is 403; a missing or wrong CSRF token, another origin, or no sign-in change nothing", async (t) => {
  const r = await vendorRun("refuse");
  const csrf = csrfIn((await get(`/console/runs/${r.runId}`)).text);
  const viewerPage = await get(`/console/runs/${r.runId}`, VIEWER);
  t.notRegex(viewerPage.text, /<form class="action"/, "a viewer gets no action forms");
  t.regex(viewerPage.text, /you can look, not act/);
  const viewerCsrf = csrfIn(viewerPage.text);
  t.is(viewerCsrf, "");
  for (const path of [`/console/runs/${r.runId}/cancel`, `/console/runs/${r.runId}/slots/decision/revoke`, "/console/runs", "/console/anything"]) {
    t.is((await post(path, { csrf, reason: "viewer" }, VIEWER)).status, 403, path);
  }
  t.is((await post(`/console/runs/${r.runId}/cancel`, { reason: "no csrf" })).status, 403, "no csrf");
  t.is((await post(`/console/runs/${r.runId}/cancel`, { csrf: `${csrf}x`, reason: "bad csrf" })).status, 403, "bad csrf");
  t.is((await post(`/console/runs/${r.runId}/cancel`, { csrf: csrfIn((await get(`/console/runs/${r.runId}`, basic("mallory", ADMIN_TOKEN))).text), reason: "another user's token" })).status, 403, "mallory");
  t.is((await post(`/console/runs/${r.runId}/cancel`, { csrf, reason: "cross-site" }, { ...OPERATOR, origin: "https://evil.example" })).status, 403, "cross-site");
  t.is((await post(`/console/runs/${r.runId}/cancel`, { csrf, reason: "anon" }, {})).status, 401);
  const run = await showRun(base, r.runId);
  t.is(run.status, "running", "nothing was applied");
  t.false(run.history.some((h) => h.kind === "run-cancelled"));
  const ok = await postLink(r.url, { ok: true, note: "still live" });
  t.is(ok.status, 200, ok.text);
});

test.serial("no log line holds the viewer token, the admin token, a CSRF token or a link's token", async (t) => {
  const log = cluster.output().join("\n");
  t.false(log.includes(VIEWER_TOKEN));
  t.false(log.includes(ADMIN_TOKEN));
  const runPath = /href="(\/console\/runs\/[0-9a-f-]{36})"/.exec((await get("/console/runs?status=running")).text)![1];
  const csrf = csrfIn((await get(runPath)).text);
  t.truthy(csrf);
  t.false(log.includes(csrf));
  t.regex(log, /"msg":"run cancelled"/, "the cancel was logged (without secrets)");
  t.notRegex(log.split("\n").filter((l) => l.startsWith("{")).join("\n"), /sfl_[A-Za-z0-9_-]{20,}/);
});

/** The text of a run page's "Waiting on" panel (its HTML). */
const panelOf = (page: string) => page.slice(page.indexOf('<h2 id="waiting-h">'), page.indexOf('id="graph-h"'));
const utcText = (iso: string) => `${iso.slice(0, 19).replace("T", " ")} UTC`;

test.serial("a run's Waiting-on panel lists each pending timer with its next firing as a date and a countdown, and where it may move (issue 30 item 2)", async (t) => {
  const source = readFileSync(`${ROOT}/examples/purchase-approval.flow`, "utf8");
  const deployed = await request(base, "POST", "/api/workflows", { token: ADMIN_TOKEN, text: source });
  t.true(deployed.status === 201 || deployed.status === 200, deployed.text);
  const request_ = { item: "Desk", amount: 5000, approverEmail: "buyer@example.test", approvalUrl: null, reminders: 0, escalated: false, note: null };
  const runId = await startRun(base, "PurchaseApproval", { request: request_, autoApproveUpTo: 100 });
  const api = (await request(base, "GET", `/api/runs/${runId}`, { token: ADMIN_TOKEN })).body;
  t.is(api.state, "Review");
  const timers = api.timers as { index: number; schedule: string; next: string }[];
  t.deepEqual(timers.map((x) => x.schedule), ["every 2d after 1d", "after 5d"]);
  const panel = panelOf((await get(`/console/runs/${runId}`)).text);
  t.regex(panel, /<h3 id="timers-h">Timers<\/h3>/);
  for (const [timer, due, moves] of [
    [timers[0], "in 23 h 59 min", "stays in Review"],
    [timers[1], "in 4 d 23 h", "may move to Escalated"],
  ] as const) {
    t.true(
      panel.includes(`<code>${timer.schedule}</code> — next <time datetime="${timer.next}">${utcText(timer.next)}</time> — <time class="countdown" datetime="${timer.next}">${due}</time>`),
      `${timer.schedule} with its next firing in the panel`,
    );
    t.true(panel.includes(moves), moves);
  }
  t.regex(panel, /<dt>Deadline<\/dt><dd><time datetime="[^"]+">[^<]+ UTC<\/time> — <time class="countdown"[^>]*>in 6 d 23 h<\/time>/, "the slot's own deadline stays");
  // the states graph draws the timer and the routing on entry as labelled edges (issue 30 item 1)
  const wfPage = (await get("/console/workflows/PurchaseApproval")).text;
  const svg = wfPage.slice(wfPage.indexOf("<svg"), wfPage.indexOf("</svg>"));
  const labels = [...svg.matchAll(/<g class="edge"><path [^>]*\/><text [^>]*>([^<]+)<\/text><\/g>/g)].map((m) => m[1]).sort();
  t.deepEqual(labels, ["after 5d", "decision", "decision", "decision.expired", "enter", "enter", "financeDecision", "financeDecision", "financeDecision.expired"]);
  // the run's path Triage → Review is drawn as a taken edge
  t.regex((await get(`/console/runs/${runId}`)).text, /<g class="edge taken"><path [^>]*\/><text [^>]*>enter<\/text><\/g>/);
});

test.serial("the outbox shows every channel: webhook deliveries with attempts, last status and next attempt, and why a delivery ended or was withdrawn (issue 30 item 3)", async (t) => {
  const source = readFileSync(`${ROOT}/test/fixtures/channels.flow`, "utf8");
  const deployed = await request(base, "POST", "/api/workflows", { token: ADMIN_TOKEN, text: source });
  t.true(deployed.status === 201 || deployed.status === 200, deployed.text);
  const portal = await request(base, "PUT", "/api/endpoints/portal", { token: ADMIN_TOKEN, json: { kind: "webhook", url: `${rx.url}/portal` } });
  t.true(portal.status === 201 || portal.status === 200, portal.text);
  rx.reply("/portal", { status: 503 });
  const runId = await startRun(base, "Channels", { job: { title: uniqueTitle("hook"), mode: "webhook", answerUrl: null } });
  const delivery = await eventually(async () => {
    const outbox = (await request(base, "GET", `/api/runs/${runId}/outbox`, { token: ADMIN_TOKEN })).body as any[];
    return outbox.find((m) => m.channel === "webhook" && m.attempts === 2 && m.lastStatusCode === 503);
  }, 20_000);
  const outboxOf = (page: string) => page.slice(page.indexOf("<h2>Outbox"));
  const rowOf = (page: string, id: string) => {
    const at = outboxOf(page).indexOf(`data-message="${id}"`);
    return at < 0 ? "" : outboxOf(page).slice(at, outboxOf(page).indexOf("</tr>", at));
  };
  let row = rowOf((await get(`/console/runs/${runId}`)).text, delivery.id);
  t.regex(row, /<td(?: data-label="[^"]*")?>webhook<\/td><td(?: data-label="[^"]*")?>portal<\/td>/, row);
  t.regex(row, /<td(?: data-label="[^"]*")?><span class="badge pending">pending<\/span><\/td><td(?: data-label="[^"]*")?>2<\/td><td(?: data-label="[^"]*")?>HTTP 503<\/td>/, row);
  t.regex(row, /next attempt <time class="countdown" datetime="[^"]+">in (9|10|11) min \d+ s<\/time>/, row);
  // cancelled: the pending delivery is withdrawn, and the page says why
  const cancelled = await request(base, "POST", `/api/runs/${runId}/cancel`, { token: ADMIN_TOKEN, json: { reason: "no longer needed" } });
  t.is(cancelled.status, 200, cancelled.text);
  row = rowOf((await get(`/console/runs/${runId}`)).text, delivery.id);
  t.regex(row, /<span class="badge failed">failed<\/span>/, row);
  t.true(row.includes("withdrawn: the run was cancelled"), row);
  // a delivery to an endpoint that does not exist: failed, with its reason
  const missing = await startRun(base, "Channels", { job: { title: uniqueTitle("missing"), mode: "missing", answerUrl: null } });
  const failed = await eventually(async () => {
    const outbox = (await request(base, "GET", `/api/runs/${missing}/outbox`, { token: ADMIN_TOKEN })).body as any[];
    return outbox.find((m) => m.channel === "message" && m.status === "failed");
  }, 20_000);
  row = rowOf((await get(`/console/runs/${missing}`)).text, failed.id);
  t.regex(row, /<td(?: data-label="[^"]*")?>message<\/td><td(?: data-label="[^"]*")?>nowhere<\/td>/, row);
  t.true(failed.endReason.includes("nowhere") && new RegExp(`<td(?: data-label="[^"]*")?>${failed.endReason.replaceAll('"', "&quot;").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}</td>`).test(row), row);
  // mail is listed as before, now with its channel
  const mail = await vendorRun("outbox");
  const mailPage = outboxOf((await get(`/console/runs/${mail.runId}`)).text);
  t.regex(mailPage, /<td(?: data-label="[^"]*")?>email<\/td><td(?: data-label="[^"]*")?>x@example\.test<\/td><td(?: data-label="[^"]*")?>Approve outbox-[0-9a-f]+\?<\/td>/);
  t.false(mailPage.includes(tokenOf(mail.url)));
});

test.serial("counts per status ignore the status filter (issue 30 item 4)", async (t) => {
  await vendorRun("counts");
  const ended = await vendorRun("counts-cancelled");
  t.is((await request(base, "POST", `/api/runs/${ended.runId}/cancel`, { token: ADMIN_TOKEN, json: { reason: "counts" } })).status, 200);
  const counted = (page: string) => Object.fromEntries([...page.matchAll(/>(all|running|finished|cancelled): (\d+)</g)].map((m) => [m[1], Number(m[2])]));
  const all = counted((await get("/console/runs")).text);
  t.true(all.running > 0 && all.cancelled > 0, JSON.stringify(all));
  for (const status of ["running", "finished", "cancelled"]) {
    t.deepEqual(counted((await get(`/console/runs?status=${status}`)).text), all, status);
  }
  const api = (await request(base, "GET", "/api/runs?status=running&limit=200", { token: ADMIN_TOKEN })).body;
  t.is(api.runs.length, all.running, "the running count is the API's");
});
