/**
 * The task page and "who answered" over HTTP (interfaces.md v0.4 "People inside the company":
 * `GET`/`POST /inbox/tasks/{runId}/{alias}[?element=N]`, "Who answered"), against one real
 * `slotflow serve` on PostgreSQL and Redis. Principals sign in with HS256 bearer JWTs.
 * Fixtures: test/fixtures/task-page.flow, test/fixtures/callback-gates.flow ([Authorize]).
 */
import test from "ava";
import { dropDatabase } from "../helpers/db.js";
import { deployFixture, eventsOn, postLink, principalJwt, showRun, startRun, uniqueTitle } from "../helpers/callback.js";
import { linkIn, waitForEmail } from "../helpers/mail.js";
import { ADMIN_TOKEN, request, startCluster, type Cluster } from "../helpers/server.js";

let cluster: Cluster;
let base: string;

test.before(async () => {
  cluster = await startCluster("taskpage");
  base = cluster.baseUrl;
  await deployFixture(base, "task-page.flow");
  await deployFixture(base, "callback-gates.flow");
});

test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

async function begin(prefix: string, maxQty = 100) {
  const title = uniqueTitle(prefix);
  const runId = await startRun(base, "TkPage", { job: { title, contact: `${title}@example.test`, vendor: "Acme <Tools>", maxQty }, reviewers: ["ann", "ben"] });
  return { runId, title, path: (alias: string) => `/inbox/tasks/${runId}/${alias}` };
}

/** One request that does not follow redirects; `form` is sent as a web form. */
async function call(method: string, path: string, opts: { jwt?: string; form?: Record<string, string> | URLSearchParams; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { accept: "text/html", ...opts.headers };
  if (opts.jwt) headers.authorization = `Bearer ${opts.jwt}`;
  let body: string | undefined;
  if (opts.form) {
    headers["content-type"] ??= "application/x-www-form-urlencoded";
    body = new URLSearchParams(opts.form as Record<string, string>).toString();
  }
  const res = await fetch(new URL(path, base), { method, headers, body, redirect: "manual" });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const ORDER = {
  ok: "true",
  note: "Two boxes.",
  qty: "3",
  price: "2.5",
  due: "2026-12-01T09:30",
  "due.offset": "+01:00",
  lead: "3",
  "lead.unit": "D",
  "tags.r1": "urgent",
  gift: "null",
  csrf: "",
};

test("Who answered: a raise by a principal records {via: principal, id, email} on the slot and in the history; a deposit records {via: link}; the console's run page shows both", async (t) => {
  const run = await begin("who");
  const alice = await principalJwt("alice", ["buyer"]);
  const raised = await request(base, "POST", `/api/runs/${run.runId}/slots/order/events`, {
    token: alice,
    json: { ok: true, note: "n", qty: 2, price: 1.5, due: "2026-12-01T09:30:00Z", lead: "PT3H", tags: [], gift: null },
  });
  t.is(raised.status, 200, raised.text);
  const link = linkIn(await waitForEmail(() => cluster.output(), `note ${run.title}`));
  const deposited = await postLink(link, { text: "hello" });
  t.is(deposited.status, 200, deposited.text);

  const view = await showRun(base, run.runId);
  const slot = (alias: string) => view.slots.find((s) => s.alias === alias) as unknown as { answeredBy: unknown; status: string };
  t.deepEqual(slot("order").answeredBy, { via: "principal", id: "alice", email: "alice@example.test" });
  // v0.5 (issue 43 item 2): a link answer names the address slotflow mailed the link to
  t.deepEqual(slot("remark").answeredBy, { via: "link", recipient: `${run.title}@example.test` });
  t.is((view.slots.find((s) => s.alias === "later") as unknown as { answeredBy: unknown }).answeredBy, null);
  t.deepEqual(eventsOn(view, "order")[0]?.data.answeredBy, { via: "principal", id: "alice", email: "alice@example.test" });
  t.is(eventsOn(view, "order")[0]?.data.principal, "alice");
  t.deepEqual(eventsOn(view, "remark")[0]?.data.answeredBy, { via: "link", recipient: `${run.title}@example.test` });
  t.notRegex(JSON.stringify(view.history), /sfl_|callback\/[A-Za-z0-9_-]{20,}/);

  const basic = `Basic ${Buffer.from(`op:${ADMIN_TOKEN}`).toString("base64")}`;
  const page = await fetch(new URL(`/console/runs/${run.runId}`, base), { headers: { authorization: basic } });
  const html = await page.text();
  t.is(page.status, 200);
  t.regex(html, /<h2 id="answered-h">Answered<\/h2>/);
  t.regex(html, /data-answered="order"><strong>order<\/strong> \(Confirm\) — answered by principal alice \(alice@example\.test\) at/);
  t.regex(html, /data-answered="remark"><strong>remark<\/strong> \(Note\) — answered through its link \(sent to who-[0-9a-f]+@example\.test\) at/);
});

test("GET a task page: 303 to sign-in without a principal; 404 for an unknown run, alias or element", async (t) => {
  const run = await begin("get404");
  const anon = await call("GET", run.path("order"));
  t.is(anon.status, 303);
  t.is(anon.headers.get("location"), `/auth/login?returnTo=${encodeURIComponent(run.path("order"))}`);
  const jwt = await principalJwt("bob", ["buyer"]);
  for (const path of [
    `/inbox/tasks/00000000-0000-4000-8000-000000000000/order`,
    `/inbox/tasks/not-a-uuid/order`,
    run.path("nope"),
    `${run.path("order")}?element=x`,
    `${run.path("order")}?element=2`,
  ]) {
    const res = await call("GET", path, { jwt });
    t.is(res.status, 404, path);
    t.regex(res.text, /<h1>No such task<\/h1>/, path);
  }
});

test("GET a task page as a candidate: title, intro, the responder page's labelled form, who may answer, a CSRF field, no token, no script; a non-candidate gets a 403 page saying why", async (t) => {
  const run = await begin("get");
  const res = await call("GET", run.path("order"), { jwt: await principalJwt("carol", ["buyer"]) });
  t.is(res.status, 200, res.text);
  t.regex(res.headers.get("content-type") ?? "", /^text\/html/);
  t.regex(res.headers.get("content-security-policy") ?? "", /form-action 'self'/);
  t.is(res.headers.get("cache-control"), "no-store");
  t.regex(res.text, /<h1>Confirm order for Acme &lt;Tools&gt;<\/h1>/);
  t.regex(res.text, /Please confirm order get-[0-9a-f]+\./);
  t.regex(res.text, /<label for="f-qty">Quantity you can deliver<\/label>/);
  t.regex(res.text, /<legend>Can you deliver this order\?<\/legend><p class="help" id="help-ok">Yes confirms the order\.<\/p>/);
  t.regex(res.text, /<input id="f-tags-r1" type="text" autocomplete="off" name="tags\.r1"/);
  t.regex(res.text, /<dd id="candidates">anyone with the role “buyer”<\/dd>/);
  t.regex(res.text, /<form id="answer" method="post" action="\/inbox\/tasks\/[0-9a-f-]{36}\/order" novalidate>/);
  t.regex(res.text, /<input type="hidden" name="csrf" value="">/);
  t.notRegex(res.text, /<script/);
  t.notRegex(res.text, /sfl_|callback\//);

  const note = await call("GET", run.path("remark"), { jwt: await principalJwt("dave", []) });
  t.is(note.status, 200);
  t.regex(note.text, /<dd id="candidates">anyone signed in<\/dd>/);
  t.notRegex(note.text, /sfl_|callback\//, "the remark slot's link never reaches its task page");

  const later = await call("GET", run.path("later"), { jwt: await principalJwt("dave", []) });
  t.is(later.status, 200);
  t.regex(later.text, /Not open yet/);
  t.notRegex(later.text, /<form/);

  const refused = await call("GET", run.path("order"), { jwt: await principalJwt("erin", ["clerk"]) });
  t.is(refused.status, 403);
  t.regex(refused.text, /data-refused="not-a-candidate"/);
  t.regex(refused.text, /This task may be answered by anyone with the role “buyer”; you are signed in as erin@example\.test \(your roles: clerk\)\./);
  t.notRegex(refused.text, /<form/);
});

test("POST the form: the ordinary raise as this principal, 303 back; the page then says 'Answered by you at …', another principal reads who answered", async (t) => {
  const run = await begin("post");
  const frank = await principalJwt("frank", ["buyer"]);
  const res = await call("POST", run.path("order"), { jwt: frank, form: ORDER, headers: { origin: base, "sec-fetch-site": "same-origin" } });
  t.is(res.status, 303, res.text);
  t.is(res.headers.get("location"), run.path("order"));
  const view = await showRun(base, run.runId);
  const slot = view.slots.find((s) => s.alias === "order") as unknown as { status: string; answeredBy: unknown };
  t.is(slot.status, "completed");
  t.deepEqual(slot.answeredBy, { via: "principal", id: "frank", email: "frank@example.test" });
  t.deepEqual(eventsOn(view, "order")[0]?.data.answeredBy, { via: "principal", id: "frank", email: "frank@example.test" });
  t.is(view.entities.job?.qty, 3);
  t.deepEqual(view.entities.job?.tags, ["urgent"]);

  const after = await call("GET", run.path("order"), { jwt: frank });
  t.is(after.status, 200);
  t.regex(after.text, /data-status="completed">Answered by you at \d{1,2} \w+ \d{4} at \d\d:\d\d UTC\./);
  t.notRegex(after.text, /<form/);
  const other = await call("GET", run.path("order"), { jwt: await principalJwt("gina", ["buyer"]) });
  t.regex(other.text, /Answered by frank@example\.test at /);

  // issue 43 item 4: a plain link back to the inbox; what was answered, by whom and when
  t.regex(after.text, /<nav class="back" aria-label="Inbox"><a id="back-to-inbox" href="\/inbox">← Back to your inbox<\/a><\/nav>/);
  t.regex(after.text, /<h2 id="answer-heading">What was answered<\/h2><dl class="answer" id="answer">/);
  t.regex(after.text, /<dt>Quantity you can deliver<\/dt><dd><data class="num" value="3">3<\/data><\/dd>/);
  t.regex(after.text, /<dt>Can you deliver this order\?<\/dt><dd>Yes<\/dd>/);
  t.regex(after.text, /<dt>Message for the buyer<\/dt><dd>Two boxes\.<\/dd>/);
  t.regex(after.text, /<dt>Delivery date and time<\/dt><dd><time data-dt datetime="2026-12-01T08:30:00\.000Z">1 December 2026 at 08:30 UTC<\/time><\/dd>/);
  t.regex(after.text, /<dt>Tags<\/dt><dd><ul class="values"><li>urgent<\/li><\/ul><\/dd>/);
  t.regex(other.text, /What was answered/);
  const de = await call("GET", `${run.path("order")}?lang=de`, { jwt: frank });
  t.regex(de.text, /<a id="back-to-inbox" href="\/inbox\?lang=de">← Zurück zum Posteingang<\/a>/);
  t.regex(de.text, /<dt>Can you deliver this order\?<\/dt><dd>Ja<\/dd>/, "the author's label, the page's Yes");

  // the done view (issue 43 item 4): what frank answered lately, newest first, with the values
  const done = await request(base, "GET", "/api/inbox?view=done", { token: frank });
  t.is(done.status, 200, done.text);
  const mine = (done.body.tasks as { runId: string; alias: string; status: string; title: string; answer: Record<string, unknown>; answeredAt: string; taskUrl: string }[]).filter((x) => x.runId === run.runId);
  t.is(mine.length, 1);
  t.is(mine[0]?.alias, "order");
  t.is(mine[0]?.status, "completed");
  t.is(mine[0]?.title, "Confirm order for Acme <Tools>");
  t.is(mine[0]?.answer.qty, 3);
  t.deepEqual(mine[0]?.answer.tags, ["urgent"]);
  t.regex(mine[0]?.answeredAt ?? "", /^\d{4}-\d\d-\d\dT/);
  t.is(mine[0]?.taskUrl, `${base}${run.path("order")}`);
  t.is(done.body.nextCursor, null);
  const notMine = await request(base, "GET", "/api/inbox?view=done", { token: await principalJwt("gina", ["buyer"]) });
  t.false((notMine.body.tasks as { runId: string }[]).some((x) => x.runId === run.runId), "only the answerer's own answers");
  const badView = await request(base, "GET", "/api/inbox?view=closed", { token: frank });
  t.is(badView.status, 400);
  t.is(badView.body.code, "invalid-query");
  t.is(badView.body.parameter, "view");
  const donePage = await call("GET", "/inbox?view=done", { jwt: frank });
  t.is(donePage.status, 200, donePage.text);
  t.regex(donePage.text, /<h1>Answered in the last 30 days<\/h1>/);
  t.regex(donePage.text, /<a href="\/inbox\?view=done" aria-current="page">Done \(last 30 days\)<\/a>/);
  t.regex(donePage.text, new RegExp(`<a href="/inbox/tasks/${run.runId}/order">Confirm order for Acme &lt;Tools&gt;</a>`));
  t.regex(donePage.text, /<dt>Your answer<\/dt><dd><dl class="answer"><dt>Can you deliver this order\?<\/dt><dd>Yes<\/dd>/);
  t.notRegex(donePage.text, /<script/);
  const badPage = await call("GET", "/inbox?view=closed", { jwt: frank });
  t.is(badPage.status, 400);
  t.regex(badPage.text, /\?view: one of open, done\./);

  const again = await call("POST", run.path("order"), { jwt: frank, form: ORDER });
  t.is(again.status, 409, "a second answer to a closed task: the page as it stands, never a 5xx");
  t.regex(again.text, /Answered by you at /);
});

test("POST refusals: 422 with each refusal beside its field and the values kept; 409 with the Requires else words; nothing applied", async (t) => {
  const run = await begin("refuse", 5);
  const jwt = await principalJwt("hana", ["buyer"]);
  const bad = await call("POST", run.path("order"), { jwt, form: { ...ORDER, qty: "lots", note: "" , ok: "" } });
  t.is(bad.status, 422, bad.text);
  t.regex(bad.text, /<p class="outcome error" id="outcome" role="alert">Please check the fields marked below\.<\/p>/);
  t.regex(bad.text, /<p class="error" id="err-qty">“Quantity you can deliver” is not a valid answer: please check it\.<\/p>/);
  t.regex(bad.text, /<input id="f-qty" type="number"[^>]* name="qty"[^>]* aria-invalid="true" value="lots"/);
  t.regex(bad.text, /<p class="error" id="err-ok">“Can you deliver this order\?” is required: please answer it\.<\/p>/);
  t.regex(bad.text, /<input id="f-price" type="number"[^>]* name="price"[^>]* value="2\.5"/);
  t.regex(bad.text, /<option value="\+01:00" selected>UTC\+01:00<\/option>/);
  t.regex(bad.text, /<input id="f-tags-r1" type="text" autocomplete="off" name="tags\.r1"[^>]* value="urgent"/);

  const over = await call("POST", run.path("order"), { jwt, form: { ...ORDER, qty: "9" } });
  t.is(over.status, 409, over.text);
  t.regex(over.text, /role="alert">We can take at most 5 items; you offered 9\.<\/p>/);
  t.regex(over.text, /value="9"/);

  const view = await showRun(base, run.runId);
  t.is(view.slots.find((s) => s.alias === "order")?.status, "open");
  t.is(eventsOn(view, "order").length, 0);
});

test("POST without script: 'Add an item' and 'Remove item' are submit buttons that show the form again with one row more or less, raising nothing", async (t) => {
  const run = await begin("rows");
  const jwt = await principalJwt("ivan", ["buyer"]);
  const added = await call("POST", run.path("order"), { jwt, form: { ...ORDER, _add: "tags" } });
  t.is(added.status, 200, added.text);
  t.regex(added.text, /name="tags\.r1"[^>]* value="urgent"/);
  t.regex(added.text, /name="tags\.r2" aria-describedby/);
  const removed = await call("POST", run.path("order"), { jwt, form: { ...ORDER, "tags.r2": "b", _remove: "tags.r1" } });
  t.is(removed.status, 200);
  t.notRegex(removed.text, /name="tags\.r1"/);
  t.regex(removed.text, /name="tags\.r2"[^>]* value="b"/);
  t.is((await showRun(base, run.runId)).slots.find((s) => s.alias === "order")?.status, "open");
});

test("POST from another origin, or cross-site, or not a web form: refused, nothing applied", async (t) => {
  const run = await begin("origin");
  const jwt = await principalJwt("judy", ["buyer"]);
  const foreign = await call("POST", run.path("order"), { jwt, form: ORDER, headers: { origin: "https://evil.example" } });
  t.is(foreign.status, 403);
  t.regex(foreign.text, /data-refused="origin"/);
  const cross = await call("POST", run.path("order"), { jwt, form: ORDER, headers: { "sec-fetch-site": "cross-site" } });
  t.is(cross.status, 403);
  const json = await call("POST", run.path("order"), { jwt, headers: { "content-type": "application/json" } });
  t.is(json.status, 415);
  const anon = await call("POST", run.path("order"), { form: ORDER });
  t.is(anon.status, 303);
  t.is((await showRun(base, run.runId)).slots.find((s) => s.alias === "order")?.status, "open");
});

test("The seed's rule 4: the same event is refused on the ordinary path by [Authorize] from the task page, and accepted through its link", async (t) => {
  const title = uniqueTitle("rule4");
  const runId = await startRun(base, "CbGates", { job: { title, contact: `${title}@example.test` }, limit: 10 });
  const staff = await principalJwt("kate", ["staff"]);
  const page = await call("GET", `/inbox/tasks/${runId}/sanction`, { jwt: staff });
  t.is(page.status, 403);
  t.regex(page.text, /data-refused="authorize-denied"/);
  t.regex(page.text, /an \[Authorize\] rule of its event Sanction\), and you, kate@example\.test \(your roles: staff\), are not one of them\./);
  const posted = await call("POST", `/inbox/tasks/${runId}/sanction`, { jwt: staff, form: { ok: "true", csrf: "" } });
  t.is(posted.status, 403);
  t.regex(posted.text, /data-refused="authorize-denied"/);
  t.is((await showRun(base, runId)).slots.find((s) => s.alias === "sanction")?.status, "open");

  const link = linkIn(await waitForEmail(() => cluster.output(), `sanction ${title}`));
  const deposited = await postLink(link, { ok: true });
  t.is(deposited.status, 200, deposited.text);
  const view = await showRun(base, runId);
  const slot = view.slots.find((s) => s.alias === "sanction") as unknown as { status: string; answeredBy: unknown };
  t.is(slot.status, "completed");
  t.deepEqual(slot.answeredBy, { via: "link", recipient: `${title}@example.test` });
  t.is(view.entities.job?.sanctioned, true);
  // issue 38 L1: closed, the page still tells kate (who may not answer) nothing of the task or its answerer
  const closed = await call("GET", `/inbox/tasks/${runId}/sanction`, { jwt: staff });
  t.is(closed.status, 403);
  t.regex(closed.text, /data-refused="authorize-denied"/);
  t.notRegex(closed.text, /Answered through its link/);
  const boss = await call("GET", `/inbox/tasks/${runId}/sanction`, { jwt: await principalJwt("bo", ["staff", "boss"]) });
  t.is(boss.status, 200);
  t.regex(boss.text, /Answered through its link at /);
});

test("A fanned-out slot: each element has its own task page (?element=N) with its own candidates; answering one records who answered that element", async (t) => {
  const run = await begin("fan");
  const ann = await principalJwt("ann", []);
  const ben = await principalJwt("ben", []);
  t.is((await call("GET", run.path("sign"), { jwt: ann })).status, 404, "a fanned-out slot needs ?element");
  const page = await call("GET", `${run.path("sign")}?element=0`, { jwt: ann });
  t.is(page.status, 200, page.text);
  t.regex(page.text, /<h1>Sign as ann<\/h1>/);
  t.regex(page.text, /<dd id="candidates">user “ann”<\/dd>/);
  t.regex(page.text, /<form id="answer" method="post" action="\/inbox\/tasks\/[0-9a-f-]{36}\/sign\?element=0" novalidate>/);
  t.is((await call("GET", `${run.path("sign")}?element=1`, { jwt: ann })).status, 403, "ben's element is not ann's");
  const posted = await call("POST", `${run.path("sign")}?element=1`, { jwt: ben, form: { ok: "true", csrf: "" } });
  t.is(posted.status, 303, posted.text);
  t.is(posted.headers.get("location"), `${run.path("sign")}?element=1`);
  const view = await showRun(base, run.runId);
  const el = (n: number) => view.slots.find((s) => s.alias === "sign" && s.element === n) as unknown as { status: string; answeredBy: unknown };
  t.is(el(0).status, "open");
  t.deepEqual(el(1).answeredBy, { via: "principal", id: "ben", email: "ben@example.test" });
  t.deepEqual(eventsOn(view, "sign")[0]?.data, { alias: "sign", element: 1, via: "raise", principal: "ben", answeredBy: { via: "principal", id: "ben", email: "ben@example.test" } });
});
