/**
 * Forwarding a link (v0.4 "Many responders, forwarding, and receipts"; docs/responder-page.md "Send
 * this to someone else"): `POST {base_url}/api/workflow/callback/{token}/forward` with
 * `{"email": "…"}` on a `Forwardable: true` slot retires the link (410 link-retired, reason
 * "forwarded"), mints a new one for the same slot and mails it with the slot's title; at most 5
 * forwards per slot; recorded in the history with the address, never a token.
 *
 * Real `slotflow serve` on real PostgreSQL and Redis; mail printed to the terminal and read back.
 */
import test from "ava";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { redisText } from "../helpers/redis-text.js";
import { dropDatabase, sql } from "../helpers/db.js";
import { deployFixture, postLink, showRun, startRun, uniqueTitle, type Answer } from "../helpers/callback.js";
import { linkIn, linksIn, parseEmails, tokenOf, waitForEmail, type PrintedEmail } from "../helpers/mail.js";
import { startCluster, type Cluster } from "../helpers/server.js";
import { verifyReceiptOutside } from "../helpers/receipts.js";
import { ROOT } from "../helpers/root.js";

let cluster: Cluster;
let base: string;

test.before(async () => {
  cluster = await startCluster("forwarding");
  base = cluster.baseUrl;
  await deployFixture(base, "forwarding.flow");
});

test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

async function fwdRun(prefix: string) {
  const title = uniqueTitle(prefix);
  const runId = await startRun(base, "Fwd", { job: { title, contact: `${title}@example.test`, handled: 0 } });
  const link = async (alias: "review" | "fixed") => linkIn(await waitForEmail(() => cluster.output(), `${alias} ${title}`));
  return { runId, title, link };
}

/** The mail to `to` with `subject`, waiting up to 15 s. */
async function mailTo(to: string, subject: string): Promise<PrintedEmail> {
  const until = Date.now() + 15_000;
  for (;;) {
    const found = parseEmails(cluster.output()).find((m) => m.to === to && m.subject === subject);
    if (found) return found;
    if (Date.now() > until) throw new Error(`no mail to ${to} with subject "${subject}"`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const forward = (url: string, body: unknown) => postLink(`${url}/forward`, body);

function problem(t: import("ava").ExecutionContext, res: Answer, status: number, code: string): void {
  t.is(res.status, status, res.text);
  t.is(res.body?.code, code, res.text);
  t.regex(res.headers.get("content-type") ?? "", /^application\/problem\+json/);
}

test.serial("forward: the old link is retired as forwarded, a new one is mailed with the slot's title, and answering through it works", async (t) => {
  const { runId, title, link } = await fwdRun("fw-ok");
  const old = await link("review");
  const res = await forward(old, { email: `deputy-${title}@example.test` });
  t.is(res.status, 200, res.text);
  t.deepEqual(res.body, { status: "forwarded" });

  const again = await postLink(old, { ok: true, note: "from the first holder" });
  problem(t, again, 410, "link-retired");
  t.is(again.body.reason, "forwarded");

  const mail = await mailTo(`deputy-${title}@example.test`, `Review ${title}`);
  const fresh = linkIn(mail);
  t.not(fresh, old);
  const answered = await postLink(fresh, { ok: true, note: "from the deputy" });
  t.is(answered.status, 200, answered.text);
  t.is(answered.body.status, "completed");

  const run = await showRun(base, runId);
  t.is(run.entities.job.note, "from the deputy");
  const fwd = run.history.filter((h) => h.kind === "link-forwarded");
  t.is(fwd.length, 1);
  t.like(fwd[0]!.data, { alias: "review", to: `deputy-${title}@example.test` });
  // the history names the address, never a token (neither in the API view nor in the rows)
  const rows = await sql<{ data: string }>(cluster.databaseUrl, "SELECT data::text AS data FROM history WHERE run_id = $1", [runId]);
  for (const token of [tokenOf(old), tokenOf(fresh)]) {
    t.false(JSON.stringify(run.history).includes(token));
    t.false(rows.some((r) => r.data.includes(token)));
  }
  const slot = await sql<{ forwards: number }>(cluster.databaseUrl, "SELECT forwards FROM slots WHERE run_id = $1 AND alias = 'review'", [runId]);
  t.is(slot[0]?.forwards, 1);
});

test.serial("at most 5 forwards per slot: the 6th is 409 forward-limit and changes nothing", async (t) => {
  const { runId, title, link } = await fwdRun("fw-limit");
  let current = await link("review");
  for (let i = 1; i <= 5; i++) {
    const res = await forward(current, { email: `hop${i}-${title}@example.test` });
    t.is(res.status, 200, `forward ${i}: ${res.text}`);
    current = linkIn(await mailTo(`hop${i}-${title}@example.test`, `Review ${title}`));
  }
  const sixth = await forward(current, { email: `hop6-${title}@example.test` });
  problem(t, sixth, 409, "forward-limit");
  const slot = await sql<{ forwards: number }>(cluster.databaseUrl, "SELECT forwards FROM slots WHERE run_id = $1 AND alias = 'review'", [runId]);
  t.is(slot[0]?.forwards, 5);
  // the link stays live and answers
  t.is((await postLink(current, { ok: false, note: "the last holder" })).status, 200);
});

test.serial("a bad address is 422 invalid-body and the link stays live", async (t) => {
  const { link } = await fwdRun("fw-bad");
  const url = await link("review");
  for (const email of ["not an address", "a@b.example, c@d.example", "Name <a@b.example>", ""]) {
    const res = await forward(url, { email });
    problem(t, res, 422, "invalid-body");
    t.is(res.body.errors[0].name, "email");
  }
  problem(t, await forward(url, { email: "ok@example.test", cc: "x@example.test" }), 422, "invalid-body");
  problem(t, await forward(url, undefined), 422, "invalid-body");
  t.is((await postLink(url, { ok: true, note: "still mine" })).status, 200);
});

test.serial("a slot without Forwardable is 409 not-forwardable; unknown and ended links are 404 / 410 as for a deposit", async (t) => {
  const { link } = await fwdRun("fw-no");
  const fixed = await link("fixed");
  problem(t, await forward(fixed, { email: "someone@example.test" }), 409, "not-forwardable");
  const review = await link("review");
  t.is((await postLink(review, { ok: true, note: "done" })).status, 200);
  problem(t, await forward(review, { email: "someone@example.test" }), 410, "link-burned");
  problem(t, await forward(`${base}/api/workflow/callback/sfl_${"A".repeat(49)}`, { email: "someone@example.test" }), 404, "link-not-found");
  const get = await postLink(`${review}/forward`, undefined, { method: "GET" });
  t.is(get.status, 405);
  t.is(get.headers.get("allow"), "POST");
});

test.serial("two concurrent forwards of one link: exactly one wins, the other finds it retired; one mail is sent", async (t) => {
  const { runId, title, link } = await fwdRun("fw-race");
  const url = await link("review");
  const answers = await Promise.all([
    forward(url, { email: `left-${title}@example.test` }),
    forward(url, { email: `right-${title}@example.test` }),
  ]);
  const winners = answers.filter((a) => a.status === 200);
  t.is(winners.length, 1, JSON.stringify(answers.map((a) => [a.status, a.body])));
  const loser = answers.find((a) => a.status !== 200)!;
  problem(t, loser, 410, "link-retired");
  t.is(loser.body.reason, "forwarded");
  const slot = await sql<{ forwards: number }>(cluster.databaseUrl, "SELECT forwards FROM slots WHERE run_id = $1 AND alias = 'review'", [runId]);
  t.is(slot[0]?.forwards, 1);
  const winner = answers[0]!.status === 200 ? "left" : "right";
  await mailTo(`${winner}-${title}@example.test`, `Review ${title}`);
  await new Promise((r) => setTimeout(r, 500));
  const other = winner === "left" ? "right" : "left";
  t.false(parseEmails(cluster.output()).some((m) => m.to === `${other}-${title}@example.test`));
});

test.serial("the page's form post needs this origin and the page's CSRF token: otherwise 403 and nothing forwarded", async (t) => {
  const { runId, title, link } = await fwdRun("fw-csrf");
  const url = await link("review");
  const page = await fetch(url, { headers: { accept: "text/html" } }).then((r) => r.text());
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1];
  t.truthy(csrf, "the page carries the form's CSRF token");
  const post = (form: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(`${url}/forward`, { method: "POST", redirect: "manual", headers: { "content-type": "application/x-www-form-urlencoded", ...headers }, body: new URLSearchParams(form).toString() });
  const email = `x-${title}@example.test`;
  t.is((await post({ email, csrf: "wrong" })).status, 403);
  t.is((await post({ email })).status, 403);
  t.is((await post({ email, csrf: csrf! }, { origin: "https://evil.example" })).status, 403);
  const slot = await sql<{ forwards: number }>(cluster.databaseUrl, "SELECT forwards FROM slots WHERE run_id = $1 AND alias = 'review'", [runId]);
  t.is(slot[0]?.forwards, 0);
  const ok = await post({ email, csrf: csrf! }, { origin: "null" });
  t.is(ok.status, 303);
  t.is(new URL(ok.headers.get("location")!, url).pathname, new URL(url).pathname);
});

test.serial("no token of a forwarded or minted link is in the database, in Redis under the cluster's prefix, or in any log line", async (t) => {
  const { title, link } = await fwdRun("fw-leak");
  const url = await link("review");
  t.is((await forward(url, { email: `leak-${title}@example.test` })).status, 200);
  await mailTo(`leak-${title}@example.test`, `Review ${title}`);
  const tokens = [...new Set(parseEmails(cluster.output()).flatMap((m) => linksIn(m)).map(tokenOf))];
  t.true(tokens.length >= 10, `tokens seen in emails: ${tokens.length}`);
  const leaks = (where: string, text: string) => tokens.filter((tok) => text.includes(tok)).map((tok) => `${where}: ${tok.slice(0, 6)}…`);
  const found: string[] = [];
  found.push(...leaks("pg_dump", execFileSync("pg_dump", ["--data-only", cluster.databaseUrl], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 })));
  for (const entry of await redisText(cluster.env.REDIS_URL!, `${cluster.env.SLOTFLOW_QUEUE_PREFIX}:`)) found.push(...leaks("redis", entry));
  const logs = cluster.output().filter((l) => l.startsWith("{"));
  t.true(logs.some((l) => l.includes("/api/workflow/callback/[redacted]/forward")), "the access log records forwards, redacted");
  for (const line of logs) found.push(...leaks("log", line));
  t.deepEqual(found, []);
});

test.serial("examples/contract-signing.flow: a signer forwards their own link; the colleague's answer counts toward the quorum of two, the forwarded link is retired, the third dies quorum-reached", async (t) => {
  const source = readFileSync(join(ROOT, "examples", "contract-signing.flow"), "utf8");
  const deployed = await fetch(`${base}/api/workflows`, {
    method: "POST",
    headers: { authorization: `Bearer ${cluster.env.SLOTFLOW_ADMIN_TOKEN}`, "content-type": "text/plain", "x-slotflow-filename": "contract-signing.flow" },
    body: source,
  });
  t.true(deployed.ok, await deployed.clone().text());
  const title = uniqueTitle("nda");
  const signers = ["ann", "bob", "cem"].map((n) => `${n}-${title}@example.test`);
  const runId = await startRun(base, "ContractSigning", { contract: { title, value: 5000 }, signers });
  const linkOf = async (to: string) => linkIn(await mailTo(to, `Please sign ${title}`));
  const [ann, bob, cem] = await Promise.all(signers.map(linkOf));

  const deputy = `deputy-${title}@example.test`;
  t.is((await forward(ann!, { email: deputy })).status, 200);
  const passedOn = linkIn(await mailTo(deputy, `Sign ${title}`));
  const byDeputy = await postLink(passedOn, { agree: true });
  t.is(byDeputy.status, 200);
  const byBob = await postLink(bob!, { agree: true });
  t.is(byBob.status, 200);
  // each signer who answered holds a receipt that a JOSE library outside slotflow verifies
  t.like(await verifyReceiptOutside(base, byDeputy.body.receipt, `runs/${runId}/slots/signatures/0`), { workflow: "ContractSigning", event: "Sign" });
  t.like(await verifyReceiptOutside(base, byBob.body.receipt, `runs/${runId}/slots/signatures/1`), { workflow: "ContractSigning", event: "Sign" });
  t.is(await verifyReceiptOutside(base, byBob.body.receipt, `runs/${runId}/slots/signatures/0`), null, "a receipt is for its own element only");

  const retired = await postLink(ann!, { agree: true });
  problem(t, retired, 410, "link-retired");
  t.is(retired.body.reason, "forwarded");
  const late = await postLink(cem!, { agree: true });
  problem(t, late, 410, "link-dead");
  t.is(late.body.reason, "quorum-reached");

  const run = await showRun(base, runId);
  t.deepEqual(run.slots.filter((s) => s.alias === "signatures").map((s) => s.status), ["completed", "completed", "cancelled"]);
  t.is(run.slots.find((s) => s.alias === "counter")?.status, "open");
  t.like(run.history.find((h) => h.kind === "link-forwarded")?.data, { alias: "signatures", element: 0, to: deputy });
});
