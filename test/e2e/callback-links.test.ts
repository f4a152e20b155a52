/**
 * Single-use callback links end to end (callback-links spec; HTTP API "The callback endpoint"),
 * over real HTTP against one real `slotflow serve` process on real PostgreSQL and Redis. Links
 * reach the tests the way they reach people: in emails, printed by the terminal mail transport.
 *
 * Fixtures: test/fixtures/callback-{basic,lifetime,gates,deadline}.flow.
 * Covered here: single use under concurrency, every way a link ends, the gates a link does not
 * bypass (After, Requires) and the ones it does (Candidates, [Authorize]), hostile tokens, body
 * validation, methods other than POST, and that no token is ever stored or logged.
 * Multi-process concurrency, idempotent apply and dependency faults: callback-scale.test.ts.
 * Rate and size limits set by the environment: callback-limits.test.ts.
 */
import test from "ava";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { dropDatabase, sql } from "../helpers/db.js";
import {
  assertOneWinner,
  deployFixture,
  eventsOn,
  portOf,
  postLink,
  principalJwt,
  rawRequest,
  showRun,
  slotStatus,
  startRun,
  uniqueTitle,
  type Answer,
} from "../helpers/callback.js";
import { linkIn, linksIn, parseEmails, tokenOf, waitForEmail } from "../helpers/mail.js";
import { redisText } from "../helpers/redis-text.js";
import { ADMIN_TOKEN, eventually, request, startCluster, type Cluster } from "../helpers/server.js";

let cluster: Cluster;
let base: string;

test.before(async () => {
  cluster = await startCluster("cblinks");
  base = cluster.baseUrl;
  for (const file of ["callback-basic.flow", "callback-lifetime.flow", "callback-gates.flow", "callback-deadline.flow"]) {
    await deployFixture(base, file);
  }
});

test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

/** Starts a run of `workflow` for a job with a unique title; `link(alias)` waits for that alias's email. */
async function begin(workflow: string, prefix: string, extra: Record<string, unknown> = {}, job: Record<string, unknown> = {}) {
  const title = uniqueTitle(prefix);
  const contact = `${title}@example.test`;
  const runId = await startRun(base, workflow, { job: { title, contact, ...job }, ...extra });
  return {
    runId,
    title,
    contact,
    link: async (alias: string) => {
      const mail = await waitForEmail(() => cluster.output(), `${alias} ${title}`);
      return linkIn(mail);
    },
    show: () => showRun(base, runId),
  };
}

const basic = (prefix: string) => begin("CbBasic", prefix, {}, { handled: 0 });
const lifetime = (prefix: string) => begin("CbLifetime", prefix, {}, { events: 0 });
const gates = (prefix: string, limit = 100) => begin("CbGates", prefix, { limit });

function problem(t: import("ava").ExecutionContext, res: Answer, status: number, code: string, what = ""): void {
  t.is(res.status, status, `${what} ${res.text}`);
  t.is(res.body?.code, code, `${what} ${res.text}`);
  t.is(res.body?.type, `https://slotflow.dev/problems/${code}`, what);
  t.regex(res.headers.get("content-type") ?? "", /^application\/problem\+json/, what);
}

function completed(t: import("ava").ExecutionContext, res: Answer, what = ""): void {
  t.is(res.status, 200, `${what} ${res.text}`);
  t.is(res.body?.status, "completed", what);
  t.regex(String(res.body?.receipt), /^[\w-]+\.[\w-]+\.[\w-]+$/, `${what}: v0.4, a completion carries its receipt`);
}

// --- 1. single use under concurrency -------------------------------------------------------------

for (const round of [1, 2, 3]) {
  test.serial(`of 25 simultaneous posts of one link exactly one completes the slot and every other poster gets 410 link-burned (round ${round})`, async (t) => {
    const run = await basic(`race${round}`);
    const url = await run.link("answer");
    const answers = await Promise.all(Array.from({ length: 25 }, (_, i) => postLink(url, { ok: true, note: `poster-${i}` })));
    const winner = assertOneWinner(t, answers);
    const shown = await run.show();
    t.is(eventsOn(shown, "answer").length, 1, "the slot's event was applied once");
    t.is(shown.entities.job.handled, 1, "the handler ran once");
    t.is(shown.entities.job.note, `poster-${winner}`, "the winner's arguments were the ones applied");
    t.is(slotStatus(shown, "answer"), "completed");
    problem(t, await postLink(url, { ok: true, note: "late" }), 410, "link-burned", "a later poster");
  });
}

// --- 3. slot lifetime ----------------------------------------------------------------------------

test.serial("a link whose slot was completed through the ordinary path answers 410 link-dead with reason completed", async (t) => {
  const run = await lifetime("done");
  const url = await run.link("reply");
  const raised = await request(base, "POST", `/api/runs/${run.runId}/slots/reply/events`, {
    token: await principalJwt("clara", ["clerk"]),
    json: { text: "by the clerk" },
  });
  t.is(raised.status, 200, raised.text);
  const res = await postLink(url, { text: "through the link" });
  problem(t, res, 410, "link-dead");
  t.is(res.body.reason, "completed");
  const shown = await run.show();
  t.is(shown.entities.job.text, "by the clerk");
  t.is(shown.entities.job.events, 1);
});

test.serial("a link whose slot was cancelled by leaving its state answers 410 link-dead with reason cancelled", async (t) => {
  const run = await lifetime("cancel");
  const url = await run.link("reply");
  completed(t, await postLink(await run.link("move"), {}), "move");
  t.is((await run.show()).state, "Elsewhere");
  const res = await postLink(url, { text: "too late" });
  problem(t, res, 410, "link-dead");
  t.is(res.body.reason, "cancelled");
  const shown = await run.show();
  t.is(shown.entities.job.text, null);
  t.is(shown.entities.job.events, 0);
});

test.serial("a link whose slot was withdrawn by drop slot answers 410 link-dead with reason dropped", async (t) => {
  const run = await lifetime("drop");
  const url = await run.link("reply");
  completed(t, await postLink(await run.link("withdraw"), {}), "withdraw");
  const before = await run.show();
  t.is(before.state, "Open");
  t.is(slotStatus(before, "reply"), "dropped");
  const res = await postLink(url, { text: "too late" });
  problem(t, res, 410, "link-dead");
  t.is(res.body.reason, "dropped");
  t.is((await run.show()).entities.job.text, null);
});

test.serial("a link of a run that has finished answers 410 link-dead with reason run-finished", async (t) => {
  const run = await lifetime("finish");
  const url = await run.link("reply");
  completed(t, await postLink(await run.link("finish"), {}), "finish");
  const before = await run.show();
  t.is(before.status, "finished");
  t.is(before.state, "Done");
  const res = await postLink(url, { text: "too late" });
  problem(t, res, 410, "link-dead");
  t.is(res.body.reason, "run-finished");
  t.is((await run.show()).entities.job.text, null);
});

test.serial("minting again retires the previous link: it answers 410 link-retired while the new link completes the slot", async (t) => {
  const run = await lifetime("remint");
  const first = await run.link("reply");
  const fixed = `fixed-${run.contact}`;
  completed(t, await postLink(await run.link("resend"), { email: fixed }), "resend");
  const mail = await waitForEmail(() => cluster.output(), `reply again ${run.title}`);
  t.is(mail.to, fixed);
  const second = linkIn(mail);
  t.not(tokenOf(second), tokenOf(first));
  const old = await postLink(first, { text: "old link" });
  problem(t, old, 410, "link-retired");
  t.is((await run.show()).entities.job.text, null, "the retired link changed nothing");
  completed(t, await postLink(second, { text: "new link" }), "the new link");
  const shown = await run.show();
  t.is(shown.entities.job.text, "new link");
  t.is(eventsOn(shown, "reply").length, 1);
  problem(t, await postLink(first, { text: "old link again" }), 410, "link-retired", "the retired link after the slot completed");
});

test.serial("a link whose deadline has passed answers 410 link-dead with reason expired, after the expiry handler ran", async (t) => {
  const run = await begin("CbDeadline", "expiry");
  const url = await run.link("quick");
  const expired = await eventually(async () => {
    const shown = await run.show();
    return slotStatus(shown, "quick") === "expired" ? shown : null;
  }, 15_000);
  t.is(expired.entities.job.quickExpired, true, "on quick.expired ran");
  const res = await postLink(url, { text: "too late" });
  problem(t, res, 410, "link-dead");
  t.is(res.body.reason, "expired");
  t.is((await run.show()).entities.job.text, null);
});

// --- 4. gates ------------------------------------------------------------------------------------

test.serial("a link to a slot still waiting on its After predecessor answers 409 slot-not-open, stays live, and completes the slot once the predecessor is done", async (t) => {
  const run = await gates("after");
  const url = await run.link("second");
  problem(t, await postLink(url, {}), 409, "slot-not-open", "first post");
  problem(t, await postLink(url, {}), 409, "slot-not-open", "second post: not burned by the first");
  const waiting = await run.show();
  t.is(slotStatus(waiting, "second"), "waiting");
  t.is(waiting.entities.job.secondDone, null);
  const raised = await request(base, "POST", `/api/runs/${run.runId}/slots/first/events`, { token: await principalJwt("clara", ["clerk"]), json: {} });
  t.is(raised.status, 200, raised.text);
  t.is(slotStatus(await run.show(), "second"), "open");
  completed(t, await postLink(url, {}), "after the predecessor completed");
  const shown = await run.show();
  t.is(shown.entities.job.secondDone, true);
  t.is(slotStatus(shown, "second"), "completed");
});

test.serial("a deposit whose Requires does not hold answers 409 requires-failed and the link stays live", async (t) => {
  const run = await gates("requires", 100);
  const url = await run.link("offer");
  problem(t, await postLink(url, { amount: 101 }), 409, "requires-failed", "amount above the run's limit");
  problem(t, await postLink(url, { amount: 5000 }), 409, "requires-failed", "again: the link was not spent");
  const refused = await run.show();
  t.is(refused.entities.job.amount, null);
  t.is(slotStatus(refused, "offer"), "open");
  completed(t, await postLink(url, { amount: 100 }), "amount within the limit");
  t.is((await run.show()).entities.job.amount, 100);
});

test.serial("Requires reads the run's own parameter: the same amount is accepted on a run with a higher limit", async (t) => {
  const run = await gates("requires-hi", 1000);
  completed(t, await postLink(await run.link("offer"), { amount: 101 }));
  t.is((await run.show()).entities.job.amount, 101);
});

test.serial("unknown, malformed and hostile tokens get 404 and never a 5xx, and do not touch a live link", async (t) => {
  const run = await basic("tokens");
  const url = await run.link("answer");
  const token = tokenOf(url);
  const flip = token.slice(0, -1) + (token.endsWith("A") ? "B" : "A");
  const matching = [
    "a",
    "A".repeat(42),
    "A".repeat(43),
    randomBytes(32).toString("base64url"),
    flip,
    `${token}A`,
    token.slice(1),
    "x".repeat(5000),
    "%E2%9C%93%F0%9F%98%80",
    encodeURIComponent("ü".repeat(43)),
    "..",
    "%2E%2E",
    "%00",
    `${token.slice(0, 42)}%00`,
    "%2F",
    "%ZZ",
    "%",
    "%E0%A4%A",
    "abc%20def",
    "'%3B--",
    "%3Cscript%3E",
  ];
  const port = portOf(base);
  const json = { "content-type": "application/json" };
  for (const segment of matching) {
    const res = await rawRequest({ port, method: "POST", path: `/api/workflow/callback/${segment}`, headers: json, body: '{"ok":true,"note":"x"}' });
    t.is(res.status, 404, `token ${JSON.stringify(segment.slice(0, 60))}: ${res.text.slice(0, 300)}`);
    t.is(res.body?.code, "link-not-found", `token ${JSON.stringify(segment.slice(0, 60))}`);
  }
  for (const path of ["/api/workflow/callback/", "/api/workflow/callback", `/api/workflow/callback/${token}/more`]) {
    const res = await rawRequest({ port, method: "POST", path, headers: json, body: '{"ok":true,"note":"x"}' });
    t.true(res.status === 404 || res.status === 405, `${path.replace(token, "<token>")} answered ${res.status}: ${res.text.slice(0, 300)}`);
  }
  const shown = await run.show();
  t.is(shown.entities.job.handled, 0, "no probe reached the slot");
  completed(t, await postLink(url, { ok: true, note: "the real one" }), "the live link afterwards");
});

// --- 5. bodies -----------------------------------------------------------------------------------

const validTyped = { count: 3, amount: 2.5, comment: null, due: "2026-11-21T09:30:00+01:00", tags: ["a", "b"] };

test.serial("a body lacking a declared parameter is refused 422 invalid-body with a detail saying what the response takes and an expects map", async (t) => {
  const run = await basic("missing");
  const url = await run.link("typed");
  const { tags: _omitted, ...lacking } = validTyped;
  const res = await postLink(url, lacking);
  problem(t, res, 422, "invalid-body");
  t.is(typeof res.body.detail, "string");
  for (const name of ["count", "amount", "comment", "due", "tags"]) t.true(res.body.detail.includes(name), `detail names ${name}: ${res.body.detail}`);
  t.deepEqual(Object.keys(res.body.expects).sort(), ["amount", "comment", "count", "due", "tags"]);
  t.regex(res.body.expects.count, /integer/);
  t.regex(res.body.expects.amount, /number/);
  t.regex(res.body.expects.comment, /string/);
  t.regex(res.body.expects.comment, /null/);
  t.regex(res.body.expects.due, /string/);
  t.regex(res.body.expects.tags, /array/);
  t.notRegex(res.body.expects.count, /null/, "a required int does not take null");
  t.is((await run.show()).entities.job.handled, 0);
});

test.serial("wrong types, absent optional parameters and undeclared properties are each refused 422 invalid-body; the link then completes the slot with the values given", async (t) => {
  const run = await basic("types");
  const url = await run.link("typed");
  const bad: [string, unknown][] = [
    ["an int given 1.5", { ...validTyped, count: 1.5 }],
    ["an int given a string", { ...validTyped, count: "3" }],
    ["an int beyond 2^53-1", { ...validTyped, count: 2 ** 53 }],
    ["a decimal given a string", { ...validTyped, amount: "2.5" }],
    ["a datetime without an offset", { ...validTyped, due: "2026-11-21T09:30:00" }],
    ["a datetime that is not a date", { ...validTyped, due: "tomorrow" }],
    ["a list with a number element", { ...validTyped, tags: ["a", 1] }],
    ["a list given a string", { ...validTyped, tags: "a" }],
    ["a string? left out", (({ comment: _c, ...rest }) => rest)(validTyped)],
    ["a required parameter given null", { ...validTyped, count: null }],
    ["an undeclared property", { ...validTyped, extra: 1 }],
    ["a property differing only in case", { ...validTyped, Count: 3 }],
    ["no body", undefined],
    ["an array", [validTyped]],
    ["a bare string", "count"],
    ["null", null],
  ];
  for (const [what, body] of bad) {
    const res =
      body === undefined
        ? await postLink(url, undefined)
        : await postLink(url, undefined, { body: JSON.stringify(body), headers: { "content-type": "application/json" } });
    problem(t, res, 422, "invalid-body", what);
    t.deepEqual(Object.keys(res.body?.expects ?? {}).sort(), ["amount", "comment", "count", "due", "tags"], what);
  }
  const answer = await run.link("answer");
  problem(t, await postLink(answer, { ok: "true", note: "x" }), 422, "invalid-body", "a bool given the string \"true\"");
  problem(t, await postLink(answer, { ok: 1, note: "x" }), 422, "invalid-body", "a bool given 1");
  problem(t, await postLink(answer, { ok: true, note: null }), 422, "invalid-body", "a string given null");
  const unchanged = await run.show();
  t.is(unchanged.entities.job.handled, 0, "no refused body changed the run");
  t.is(eventsOn(unchanged, "typed").length, 0);

  completed(t, await postLink(url, validTyped), "the valid body");
  const job = (await run.show()).entities.job;
  t.is(job.count, 3);
  t.is(job.amount, 2.5);
  t.is(job.comment, null, "a string? accepts null");
  t.is(Date.parse(job.due), Date.parse(validTyped.due));
  t.deepEqual(job.tags, ["a", "b"]);
  t.is(job.handled, 1);
});

test.serial("a handler that fails at run time answers 500 handler-failed, records an incident, applies nothing, and the link stays live", async (t) => {
  const run = await basic("fault");
  const url = await run.link("typed");
  const res = await postLink(url, { ...validTyped, comment: "c".repeat(21) });
  problem(t, res, 500, "handler-failed");
  const shown = await run.show();
  t.is(shown.entities.job.handled, 0, "nothing of the failed step was kept");
  t.is(shown.entities.job.count, null);
  t.is(slotStatus(shown, "typed"), "open");
  t.is(shown.incidents.length, 1);
  t.is(shown.incidents[0]?.code, "handler-failed");
  t.regex(shown.incidents[0]?.message ?? "", /maxLength|at most 20/);
  completed(t, await postLink(url, { ...validTyped, comment: "c".repeat(20) }), "a body the handler accepts");
  t.is((await run.show()).entities.job.comment, "c".repeat(20));
});

test.serial("__proto__ and constructor keys are refused 422 invalid-body and change nothing", async (t) => {
  const run = await basic("proto");
  const url = await run.link("answer");
  const json = { "content-type": "application/json" };
  const hostile = [
    '{"__proto__": {"ok": true, "note": "from the prototype"}}',
    '{"__proto__": {"note": "from the prototype"}, "ok": true}',
    '{"ok": true, "note": "x", "__proto__": {"polluted": true}}',
    '{"constructor": {"prototype": {"polluted": true}}, "ok": true, "note": "x"}',
    '{"ok": true, "constructor": "x"}',
  ];
  for (const body of hostile) {
    const res = await postLink(url, undefined, { body, headers: json });
    problem(t, res, 422, "invalid-body", body);
  }
  const shown = await run.show();
  t.is(shown.entities.job.handled, 0);
  t.is(shown.entities.job.note, null);
  t.is(slotStatus(shown, "answer"), "open");
  completed(t, await postLink(url, { ok: false, note: "plain" }), "a plain body afterwards");
  t.is((await run.show()).entities.job.note, "plain");
});

test.serial("malformed JSON gets 400 malformed-json, a non-JSON content type 415 unsupported-media-type, a body over 64 KiB 413 payload-too-large; the link then still works", async (t) => {
  const run = await basic("shape");
  const url = await run.link("answer");
  problem(t, await postLink(url, undefined, { body: '{"ok": tru', headers: { "content-type": "application/json" } }), 400, "malformed-json");
  problem(t, await postLink(url, undefined, { body: "{'ok': true}", headers: { "content-type": "application/json" } }), 400, "malformed-json", "single quotes");
  problem(t, await postLink(url, undefined, { text: JSON.stringify({ ok: true, note: "x" }) }), 415, "unsupported-media-type", "text/plain");
  problem(t, await postLink(url, undefined, { body: "ok=true&note=x", headers: { "content-type": "application/x-www-form-urlencoded" } }), 415, "unsupported-media-type", "a form");
  const big = JSON.stringify({ ok: true, note: "x".repeat(70 * 1024) });
  problem(t, await postLink(url, undefined, { body: big, headers: { "content-type": "application/json" } }), 413, "payload-too-large");
  t.is((await run.show()).entities.job.handled, 0);
  completed(t, await postLink(url, { ok: true, note: "fine" }), "afterwards");
  t.is((await run.show()).entities.job.note, "fine");
});

test.serial("an event with no parameters is completed by a POST with no body", async (t) => {
  const run = await basic("nobody");
  const url = await run.link("ping");
  completed(t, await postLink(url, undefined));
  const shown = await run.show();
  t.is(shown.entities.job.pinged, true);
  t.is(eventsOn(shown, "ping").length, 1);
});

test.serial("an event with no parameters refuses a property (422) and is completed by {}", async (t) => {
  const run = await basic("emptyobj");
  const url = await run.link("ping");
  const res = await postLink(url, { x: 1 });
  problem(t, res, 422, "invalid-body");
  t.deepEqual(res.body.expects, {});
  t.is((await run.show()).entities.job.pinged, null);
  completed(t, await postLink(url, {}));
  t.is((await run.show()).entities.job.pinged, true);
});

// --- 6. methods ----------------------------------------------------------------------------------

test.serial("GET, HEAD, PUT, PATCH, DELETE and OPTIONS answer 405 with Allow: POST, alike for a live and an unknown token, and spend nothing", async (t) => {
  const run = await basic("methods");
  const url = await run.link("answer");
  const unknown = `${new URL(url).origin}/api/workflow/callback/${randomBytes(32).toString("base64url")}`;
  for (const method of ["GET", "HEAD", "PUT", "PATCH", "DELETE", "OPTIONS"]) {
    const withBody = method === "PUT" || method === "PATCH";
    const send = (u: string) => postLink(u, withBody ? { ok: true, note: method } : undefined, { method });
    const [live, none] = [await send(url), await send(unknown)];
    for (const [which, res] of [["live", live], ["unknown", none]] as const) {
      t.is(res.status, 405, `${method} ${which}: ${res.text}`);
      t.is(res.headers.get("allow"), "POST", `${method} ${which}`);
    }
    if (method !== "HEAD") {
      t.is(live.body?.code, "method-not-allowed", method);
      t.deepEqual(live.body, none.body, `${method}: the answer does not tell a live token from an unknown one`);
    }
  }
  const shown = await run.show();
  t.is(shown.entities.job.handled, 0);
  t.is(slotStatus(shown, "answer"), "open");
  completed(t, await postLink(url, { ok: true, note: "after the probes" }), "POST afterwards");
});

// --- 9. the ordinary path vs the link on an [Authorize] event ------------------------------------

test.serial("on an [Authorize] event the ordinary path refuses (401 without a token, 403 not-a-candidate outside the pool, 403 authorize-denied for a candidate the predicate rejects) while the slot's link completes it", async (t) => {
  const run = await gates("authorize");
  const url = await run.link("sanction");
  const path = `/api/runs/${run.runId}/slots/sanction/events`;
  const body = { ok: true };
  problem(t, await request(base, "POST", path, { json: body }), 401, "unauthorized", "no token");
  problem(t, await request(base, "POST", path, { json: body, token: await principalJwt("olaf", ["outsider", "boss"]) }), 403, "not-a-candidate", "outside the Candidates pool");
  problem(t, await request(base, "POST", path, { json: body, token: await principalJwt("sam", ["staff"]) }), 403, "authorize-denied", "a candidate the predicate rejects");
  const refused = await run.show();
  t.is(slotStatus(refused, "sanction"), "open");
  t.is(refused.entities.job.sanctioned, null);
  completed(t, await postLink(url, body), "the link: [Authorize] skipped, Candidates bypassed");
  const shown = await run.show();
  t.is(shown.entities.job.sanctioned, true);
  t.is(slotStatus(shown, "sanction"), "completed");
  t.is(eventsOn(shown, "sanction")[0]?.data.via, "link");

  // control: a principal both in the pool and accepted by the predicate is let through
  const other = await gates("authorize-ok");
  const ok = await request(base, "POST", `/api/runs/${other.runId}/slots/sanction/events`, { json: body, token: await principalJwt("bo", ["staff", "boss"]) });
  t.is(ok.status, 200, ok.text);
  t.is((await other.show()).entities.job.sanctioned, true);
});

// --- 7. never stored -----------------------------------------------------------------------------

test.serial("no token of any link mailed in this file is in the database, in Redis under the cluster's prefix, in any log line, or in the API's views", async (t) => {
  // one more full run with several links, taken to its end
  const run = await lifetime("stored");
  const reply = await run.link("reply");
  completed(t, await postLink(await run.link("resend"), { email: `again-${run.contact}` }));
  const again = linkIn(await waitForEmail(() => cluster.output(), `reply again ${run.title}`));
  problem(t, await postLink(reply, { text: "x" }), 410, "link-retired");
  completed(t, await postLink(again, { text: "done" }));
  completed(t, await postLink(await run.link("finish"), {}));
  t.is((await run.show()).status, "finished");

  // every message has been delivered: its outbox row keeps to, subject and status, not the body
  const outbox = await eventually(async () => {
    const res = await request(base, "GET", `/api/runs/${run.runId}/outbox`, { token: ADMIN_TOKEN });
    return res.status === 200 && res.body.length === 6 && res.body.every((m: { status: string }) => m.status === "sent") ? res.body : null;
  });
  const subjects = ["reply", "resend", "withdraw", "move", "finish"].map((a) => `${a} ${run.title}`).concat(`reply again ${run.title}`);
  t.deepEqual(outbox.map((m: { subject: string }) => m.subject).sort(), [...subjects].sort());
  for (const m of outbox) {
    t.is(m.body, null, `${m.subject}: a delivered body is dropped`);
    t.is(m.to, m.subject.startsWith("reply again") ? `again-${run.contact}` : run.contact);
    t.is(m.status, "sent");
  }

  await eventually(async () => cluster.output().some((l) => l.includes('"msg":"email printed (SMTP_URL is not set)"')));
  const tokens = [...new Set(parseEmails(cluster.output()).flatMap(linksIn).map(tokenOf))];
  t.true(tokens.length >= 40, `tokens seen in emails: ${tokens.length}`);
  const leaks = (where: string, text: string) => tokens.filter((tok) => text.includes(tok)).map((tok) => `${where}: ${tok.slice(0, 6)}…`);
  const found: string[] = [];

  // the database
  const dump = execFileSync("pg_dump", ["--data-only", cluster.databaseUrl], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  t.true(dump.includes(run.runId), "the dump holds this file's runs");
  found.push(...leaks("pg_dump", dump));
  const [links] = await sql<{ n: string }>(cluster.databaseUrl, "SELECT count(*) AS n FROM links");
  t.true(Number(links.n) >= tokens.length, "every mailed link has a stored (hashed) record");

  // Redis under this cluster's prefix: every key and value
  const entries = await redisText(cluster.env.REDIS_URL!, `${cluster.env.SLOTFLOW_QUEUE_PREFIX}:`);
  t.true(entries.length > 0);
  for (const entry of entries) found.push(...leaks("redis", entry));

  // every JSON log line of the cluster
  const logs = cluster.output().filter((l) => l.startsWith("{"));
  t.true(logs.some((l) => l.includes("/api/workflow/callback/[redacted]")), "the access log records callback requests, redacted");
  for (const line of logs) found.push(...leaks("log", line));

  // the API's own views of this run
  const view = await request(base, "GET", `/api/runs/${run.runId}`, { token: ADMIN_TOKEN });
  t.true(view.text.includes("/api/workflow/callback/[redacted]"), "a stored URL is shown redacted");
  found.push(...leaks("GET /api/runs", view.text));
  found.push(...leaks("GET /outbox", JSON.stringify(outbox)));

  t.deepEqual(found, [], "tokens found outside the emails");
});
