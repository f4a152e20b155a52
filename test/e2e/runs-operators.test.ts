/**
 * Runs for operators (issue 23 item 1; interfaces.md "Runs for operators"), over real HTTP against
 * one real `slotflow serve` on real PostgreSQL and Redis:
 *
 * - `GET /api/runs`: newest first; the documented JSON names; `waiting` with each open or waiting
 *   slot, its link's status (never a token) and since when it is open (`openedAt`, from
 *   slots.opened_at; null while waiting); every filter (workflow, version, status, state,
 *   waiting, createdAfter, createdBefore, limit); keyset pagination that neither repeats nor skips a
 *   run while runs are created between pages; malformed parameters answer 400 invalid-query; the
 *   admin token is required.
 * - `POST /api/runs/{id}/cancel`: 200 `{id, status: "cancelled"}`; the run cancelled, its open and
 *   waiting slots cancelled, its live links dead (410 link-dead, reason run-cancelled), its unsent
 *   messages withdrawn, a history entry with the reason and the actor; 409 run-finished once ended;
 *   422 without a reason or with one over 500 characters; 404 for an unknown run; a deposit and a
 *   cancel racing on one run give one winner and the loser a clear answer.
 * - The CLI: `slotflow runs` prints a table with the filters and a SINCE column (when the slot it
 *   waits on opened); `slotflow cancel RUN --reason TEXT`.
 * Fixtures: test/fixtures/callback-basic.flow, examples/vendor-approval.flow.
 */
import test from "ava";
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { runsTable } from "../../src/cli/runs-table.js";
import { dropDatabase, sql } from "../helpers/db.js";
import { deployFixture, postLink, showRun, startRun, uniqueTitle } from "../helpers/callback.js";
import { linkIn, waitForEmail } from "../helpers/mail.js";
import { ADMIN_TOKEN, ROOT, request, startCluster, type Cluster } from "../helpers/server.js";
import { cliEntry } from "../helpers/cli-entry.js";

const execFileP = promisify(execFile);

let cluster: Cluster;
let base: string;

test.before(async () => {
  cluster = await startCluster("runsops");
  base = cluster.baseUrl;
  await deployFixture(base, "callback-basic.flow");
  const source = readFileSync(`${ROOT}/examples/vendor-approval.flow`, "utf8");
  const res = await request(base, "POST", "/api/workflows", { token: ADMIN_TOKEN, text: source });
  if (res.status !== 201) throw new Error(res.text);
});

test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

const list = (query = "", token = ADMIN_TOKEN) => request(base, "GET", `/api/runs${query}`, { token });
const cancel = (id: string, json: unknown, token = ADMIN_TOKEN) => request(base, "POST", `/api/runs/${id}/cancel`, { token, json });

async function vendorRun(prefix: string) {
  const name = uniqueTitle(prefix);
  const runId = await startRun(base, "VendorApproval", { vendor: { name, contactEmail: `${name}@example.test` }, amount: 10 });
  return { runId, name, link: async () => linkIn(await waitForEmail(() => cluster.output(), `Approve ${name}?`)) };
}

async function basicRun(prefix: string) {
  const title = uniqueTitle(prefix);
  const runId = await startRun(base, "CbBasic", { job: { title, contact: `${title}@example.test`, handled: 0 } });
  return { runId, title, link: async (alias: string) => linkIn(await waitForEmail(() => cluster.output(), `${alias} ${title}`)) };
}

/** Every token (`sfl_…`) anywhere in a text. */
const tokensIn = (text: string) => text.match(/sfl_[A-Za-z0-9_-]{20,}/g) ?? [];

// --- GET /api/runs ----------------------------------------------------------------------------------

test.serial("GET /api/runs: newest first, the documented names, what each run waits on with its link status and never a token", async (t) => {
  const a = await vendorRun("list-a");
  const b = await basicRun("list-b");
  const answerUrl = await b.link("answer");
  await a.link();
  const res = await list("?limit=200");
  t.is(res.status, 200, res.text);
  t.deepEqual(Object.keys(res.body).sort(), ["nextCursor", "runs"]);
  const ids = res.body.runs.map((r: any) => r.id);
  t.true(ids.indexOf(b.runId) < ids.indexOf(a.runId), "the newer run comes first");
  const runB = res.body.runs.find((r: any) => r.id === b.runId);
  t.deepEqual(Object.keys(runB).sort(), ["createdAt", "endedAt", "id", "state", "status", "updatedAt", "version", "waiting", "workflow"]);
  t.like(runB, { workflow: "CbBasic", version: 1, state: "Waiting", status: "running", endedAt: null });
  t.deepEqual(
    runB.waiting.map((w: any) => [w.alias, w.element, w.status, w.link]),
    [["answer", null, "open", "live"], ["close", null, "open", "none"], ["ping", null, "open", "live"], ["typed", null, "open", "live"]],
  );
  const runA = res.body.runs.find((r: any) => r.id === a.runId);
  const decision = runA.waiting.find((w: any) => w.alias === "decision");
  t.is(decision.link, "live");
  t.true(Date.parse(decision.deadline) > Date.now() + 6 * 86_400_000, "the 7d deadline is shown");
  // since when each slot waits (issue 23 "Done when"): openedAt, the slot's opened_at as an ISO instant
  for (const w of [...runA.waiting, ...runB.waiting]) t.deepEqual(Object.keys(w).sort(), ["alias", "deadline", "element", "link", "openedAt", "status"]);
  const shownA = await showRun(base, a.runId);
  t.is(decision.openedAt, shownA.slots.find((s) => s.alias === "decision")?.openedAt, "openedAt is the slot's opened_at");
  t.regex(decision.openedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.true(Date.parse(decision.openedAt) >= Date.parse(runA.createdAt) - 1000 && Date.parse(decision.openedAt) <= Date.now());
  t.true(runB.waiting.every((w: any) => typeof w.openedAt === "string"), "every open slot has an openedAt");
  const since = new Date(Date.now() - 3 * 86_400_000).toISOString();
  await sql(cluster.databaseUrl, "UPDATE slots SET opened_at = $1 WHERE run_id = $2 AND alias = 'decision'", [since, a.runId]);
  const moved = (await list("?waiting=decision&limit=200")).body.runs.find((r: any) => r.id === a.runId);
  t.is(moved.waiting.find((w: any) => w.alias === "decision").openedAt, since, "read from slots.opened_at, not from the run's age");
  t.deepEqual(tokensIn(res.text), []);
  t.false(res.text.includes(new URL(answerUrl).pathname.split("/").pop()!));
  // a burned link shows as burned while its slot... is closed: the slot leaves `waiting`
  const posted = await postLink(answerUrl, { ok: true, note: "n" });
  t.is(posted.status, 200, posted.text);
  const after = (await list("?limit=200")).body.runs.find((r: any) => r.id === b.runId);
  t.false(after.waiting.some((w: any) => w.alias === "answer"));
});

test.serial("GET /api/runs: each filter narrows the list (workflow, version, status, state, waiting, createdAfter/Before, limit)", async (t) => {
  const v = await vendorRun("filter-v");
  const b = await basicRun("filter-b");
  await v.link();
  const byWorkflow = await list("?workflow=CbBasic&limit=200");
  t.true(byWorkflow.body.runs.every((r: any) => r.workflow === "CbBasic"));
  t.true(byWorkflow.body.runs.some((r: any) => r.id === b.runId));
  t.false(byWorkflow.body.runs.some((r: any) => r.id === v.runId));
  t.is((await list("?workflow=CbBasic&version=2")).body.runs.length, 0);
  t.true((await list("?workflow=CbBasic&version=1&limit=200")).body.runs.some((r: any) => r.id === b.runId));
  const waiting = await list("?waiting=decision&limit=200");
  t.true(waiting.body.runs.every((r: any) => r.waiting.some((w: any) => w.alias === "decision")));
  t.true(waiting.body.runs.some((r: any) => r.id === v.runId));
  t.false(waiting.body.runs.some((r: any) => r.id === b.runId));
  const byState = await list("?state=Review&limit=200");
  t.true(byState.body.runs.length > 0 && byState.body.runs.every((r: any) => r.state === "Review"));
  // cancel one and filter by status
  t.is((await cancel(v.runId, { reason: "filter test" })).status, 200);
  const cancelled = await list("?status=cancelled&limit=200");
  t.true(cancelled.body.runs.some((r: any) => r.id === v.runId));
  t.true(cancelled.body.runs.every((r: any) => r.status === "cancelled" && r.endedAt !== null));
  t.false((await list("?status=running&limit=200")).body.runs.some((r: any) => r.id === v.runId));
  t.false((await list("?waiting=decision&limit=200")).body.runs.some((r: any) => r.id === v.runId), "a cancelled run waits on nothing");
  // time window
  const created = (await list("?limit=1")).body.runs[0].createdAt as string;
  const future = new Date(Date.now() + 3_600_000).toISOString();
  t.is((await list(`?createdAfter=${encodeURIComponent(future)}`)).body.runs.length, 0);
  const before = await list(`?createdBefore=${encodeURIComponent(created)}&limit=200`);
  t.true(before.body.runs.every((r: any) => Date.parse(r.createdAt) < Date.parse(created)));
  const limited = await list("?limit=1");
  t.is(limited.body.runs.length, 1);
  t.is(typeof limited.body.nextCursor, "string");
});

test.serial("GET /api/runs: keyset pages neither repeat nor skip a run while new runs are created between pages; default limit 50", async (t) => {
  const wf = "CbBasic";
  const existing: string[] = [];
  for (let i = 0; i < 5; i++) existing.push((await basicRun(`page-${i}`)).runId);
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  const all = (await list(`?workflow=${wf}&limit=200`)).body.runs.map((r: any) => r.id) as string[];
  do {
    const res = await list(`?workflow=${wf}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    t.is(res.status, 200, res.text);
    t.true(res.body.runs.length <= 2);
    seen.push(...res.body.runs.map((r: any) => r.id));
    cursor = res.body.nextCursor;
    if (pages++ < 2) await basicRun(`page-new-${pages}`); // a newer run appears between pages
  } while (cursor);
  t.deepEqual(seen, all, "exactly the runs that existed when paging began, in order, once each");
  t.is(new Set(seen).size, seen.length);
  for (const id of existing) t.true(seen.includes(id));
  // default limit
  for (let i = 0; i < 46; i++) await sql(cluster.databaseUrl, "INSERT INTO runs (id, workflow_name, version, state, status, input, created_at, updated_at) VALUES ($1, 'CbBasic', 1, 'Done', 'finished', '{}', now() - interval '1 day', now())", [randomUUID()]);
  const def = await list();
  t.is(def.body.runs.length, 50);
  t.is(typeof def.body.nextCursor, "string");
});

test.serial("GET /api/runs: malformed parameters answer 400 invalid-query naming the parameter; no token answers 401", async (t) => {
  for (const [query, param] of [
    ["?limit=0", "limit"], ["?limit=201", "limit"], ["?limit=x", "limit"], ["?status=stuck", "status"], ["?version=0", "version"],
    ["?createdAfter=yesterday", "createdAfter"], ["?cursor=bm9wZQ", "cursor"], ["?workflow=a-b", "workflow"], ["?waiting=a&waiting=b", "waiting"],
  ] as const) {
    const res = await list(query);
    t.is(res.status, 400, `${query}: ${res.text}`);
    t.is(res.body.code, "invalid-query");
    t.is(res.body.parameter, param);
  }
  t.is((await request(base, "GET", "/api/runs")).status, 401);
});

// --- POST /api/runs/{id}/cancel --------------------------------------------------------------------

test.serial("cancel: 200; the run cancelled, its slots cancelled, live links dead (run-cancelled), unsent messages withdrawn, history with reason and actor", async (t) => {
  const b = await basicRun("cancel");
  const url = await b.link("answer");
  await b.link("ping");
  // a message not yet sent (as if the mailer had not reached it)
  const pendingId = randomUUID();
  await sql(cluster.databaseUrl, `INSERT INTO outbox (id, run_id, "to", subject, body, status) VALUES ($1, $2, '"x@example.test"', '"s"', '"b"', 'pending')`, [pendingId, b.runId]);
  const res = await cancel(b.runId, { reason: "the vendor left" });
  t.is(res.status, 200, res.text);
  t.deepEqual(res.body, { id: b.runId, status: "cancelled" });
  const run = await showRun(base, b.runId);
  t.is(run.status, "cancelled");
  t.true(run.slots.every((s) => s.status === "cancelled"));
  const entry = run.history.find((h) => h.kind === "run-cancelled");
  t.like(entry?.data, { reason: "the vendor left", actor: "admin-token (api)" });
  t.true(run.history.some((h) => h.kind === "link-dead" && h.data.reason === "run-cancelled"));
  const posted = await postLink(url, { ok: true, note: "late" });
  t.is(posted.status, 410, posted.text);
  t.is(posted.body.code, "link-dead");
  t.is(posted.body.reason, "run-cancelled");
  const [row] = await sql<{ status: string; body: string | null }>(cluster.databaseUrl, "SELECT status, body FROM outbox WHERE id = $1", [pendingId]);
  t.deepEqual(row, { status: "withdrawn", body: null });
  const sent = await sql<{ n: string }>(cluster.databaseUrl, "SELECT count(*) AS n FROM outbox WHERE run_id = $1 AND status = 'sent'", [b.runId]);
  t.true(Number(sent[0].n) >= 2, "messages already sent stay sent");
  const links = await sql<{ status: string; end_reason: string }>(cluster.databaseUrl, "SELECT status, end_reason FROM links WHERE run_id = $1", [b.runId]);
  t.true(links.length >= 3 && links.every((l) => l.status === "dead" && l.end_reason === "run-cancelled"));
  // once ended: 409 run-finished, nothing changes
  const again = await cancel(b.runId, { reason: "twice" });
  t.is(again.status, 409, again.text);
  t.is(again.body.code, "run-finished");
  t.is((await showRun(base, b.runId)).history.filter((h) => h.kind === "run-cancelled").length, 1);
});

test.serial("cancel: 422 without a reason or with one over 500 characters (nothing changes); 404 unknown run; 401 without the token", async (t) => {
  const b = await basicRun("cancel-bad");
  for (const body of [{}, { reason: "" }, { reason: "   " }, { reason: 7 }, { reason: "x".repeat(501) }]) {
    const res = await cancel(b.runId, body);
    t.is(res.status, 422, `${JSON.stringify(body).slice(0, 40)}: ${res.text}`);
    t.is(res.body.code, "invalid-body");
  }
  t.is((await request(base, "POST", `/api/runs/${b.runId}/cancel`, { token: ADMIN_TOKEN })).status, 422);
  t.is((await showRun(base, b.runId)).status, "running");
  t.is((await cancel(b.runId, { reason: "x".repeat(500) })).status, 200);
  t.is((await cancel(randomUUID(), { reason: "r" })).status, 404);
  t.is((await cancel("not-a-uuid", { reason: "r" })).status, 404);
  t.is((await cancel(b.runId, { reason: "r" }, "wrong")).status, 401);
});

test.serial("cancel: an unknown member is 422 invalid-body naming it and what a cancel takes, like every admin body (nothing changes)", async (t) => {
  const b = await basicRun("cancel-extra");
  const res = await cancel(b.runId, { reason: "the vendor left", force: true });
  t.is(res.status, 422, res.text);
  t.is(res.headers.get("content-type"), "application/problem+json");
  t.is(res.body.code, "invalid-body");
  t.is(res.body.detail, 'Unknown member "force": a cancel takes only "reason" (a string of 1 to 500 characters).');
  t.deepEqual(res.body.expects, { reason: "string" });
  t.deepEqual(res.body.errors, [{ name: "force", problem: 'is not a member of a cancel body (it takes "reason" only)' }]);
  // __proto__ is an ordinary undeclared member (docs/http-api.md "Request bodies"); every unknown one is named
  const proto = await request(base, "POST", `/api/runs/${b.runId}/cancel`, { token: ADMIN_TOKEN, body: '{"reason":"r","__proto__":{"x":1},"note":"n"}', headers: { "content-type": "application/json" } });
  t.is(proto.status, 422, proto.text);
  t.is(proto.body.detail, 'Unknown members "__proto__", "note": a cancel takes only "reason" (a string of 1 to 500 characters).');
  t.deepEqual(proto.body.errors.map((e: { name: string }) => e.name), ["__proto__", "note"]);
  // no reason and an unknown member: both said
  const both = await cancel(b.runId, { why: "typo for reason" });
  t.is(both.status, 422, both.text);
  t.deepEqual(both.body.errors, [
    { name: "why", problem: 'is not a member of a cancel body (it takes "reason" only)' },
    { name: "reason", problem: "is required: a string of 1 to 500 characters" },
  ]);
  t.is((await showRun(base, b.runId)).status, "running");
  t.is((await cancel(b.runId, { reason: "the vendor left" })).status, 200);
});

test.serial("cancel racing a deposit that ends the run: exactly one wins, the loser gets 409 run-finished or 410 link-dead (run-cancelled)", async (t) => {
  for (let i = 0; i < 4; i++) {
    const v = await vendorRun(`race-${i}`);
    const url = await v.link();
    const [dep, can] = await Promise.all([postLink(url, { ok: true, note: "race" }), cancel(v.runId, { reason: "race" })]);
    const run = await showRun(base, v.runId);
    if (dep.status === 200) {
      t.is(can.status, 409, can.text);
      t.is(can.body.code, "run-finished");
      t.is(run.status, "finished");
    } else {
      t.is(can.status, 200, can.text);
      t.is(dep.status, 410, dep.text);
      t.is(dep.body.reason, "run-cancelled");
      t.is(run.status, "cancelled");
    }
  }
});

// --- CLI ------------------------------------------------------------------------------------------

test.serial("CLI: `slotflow runs` prints a table (with --waiting/--status filters); `slotflow cancel RUN --reason TEXT` cancels", async (t) => {
  const v = await vendorRun("cli");
  await v.link();
  const env = { ...cluster.env, BASE_URL: base };
  const cli = (...args: string[]): Promise<{ stdout: string; stderr: string; code?: number }> =>
    execFileP(process.execPath, [...cliEntry(), ...args], { cwd: ROOT, env }).catch((e) => e as { stdout: string; stderr: string; code: number });
  const table = await cli("runs", "--waiting", "decision", "--status", "running");
  const lines = table.stdout.trim().split("\n");
  t.regex(lines[0], /^ID\s+WORKFLOW\s+V\s+STATE\s+STATUS\s+CREATED\s+SINCE\s+WAITING ON$/);
  const row = lines.find((l) => l.startsWith(v.runId));
  t.truthy(row, table.stdout);
  t.regex(row!, /VendorApproval\s+1\s+Review\s+running\s+.*decision \(open, link live, due /);
  // SINCE: when the slot it waits on opened (slots.opened_at), in UTC like CREATED
  const since = new Date(Date.now() - 2 * 86_400_000 - 3_723_000);
  await sql(cluster.databaseUrl, "UPDATE slots SET opened_at = $1 WHERE run_id = $2 AND alias = 'decision'", [since, v.runId]);
  const again1 = (await cli("runs", "--waiting", "decision", "--status", "running")).stdout.trim().split("\n");
  const sinceAt = again1[0].indexOf("SINCE");
  const row1 = again1.find((l) => l.startsWith(v.runId))!;
  t.is(row1.slice(sinceAt).split(/\s{2,}/)[0], since.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z"), row1);
  t.regex(row1, /running\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ\s+decision \(open, link live, due /);
  t.deepEqual(tokensIn(table.stdout), []);
  const cancelled = await cli("cancel", v.runId, "--reason", "from the CLI");
  t.is(JSON.parse(cancelled.stdout).status, "cancelled", cancelled.stdout);
  const again = await cli("cancel", v.runId, "--reason", "again");
  t.is(again.code, 1);
  t.regex(again.stdout, /run-finished/);
  const none = await cli("runs", "--waiting", "decision", "--workflow", "VendorApproval", "--workflow-version", "1", "--created-after", new Date(Date.now() + 60_000).toISOString());
  const v2 = await cli("runs", "--workflow", "VendorApproval", "--workflow-version", "2");
  t.regex(v2.stdout, /\(no runs match\)/, "--workflow-version filters (no version 2 is deployed)");
  t.regex(none.stdout, /\(no runs match\)/);
  const bad = await cli("runs", "--status", "stuck");
  t.is(bad.code, 1);
  t.regex(bad.stdout, /invalid-query/);
});

test("CLI table: SINCE is the earliest opening among the slots a run waits on, of the --waiting alias when given; '-' when none has opened", (t) => {
  const slot = (alias: string, status: string, openedAt: string | null) => ({ alias, element: null, status, openedAt, deadline: null, link: "none" });
  const run = (id: string, waiting: ReturnType<typeof slot>[]) => ({ id, workflow: "W", version: 1, state: "S", status: "running", createdAt: "2026-11-20T09:00:00.000Z", waiting });
  const body = {
    runs: [
      run("r1", [slot("decision", "open", "2026-11-22T10:00:00.000Z"), slot("fixEmail", "open", "2026-11-21T08:30:00.000Z")]),
      run("r2", [slot("counter", "waiting", null)]),
      run("r3", []),
    ],
    nextCursor: null,
  };
  const cells = (lines: string[]) => {
    const at = lines[0].indexOf("SINCE");
    return lines.slice(1).map((l) => l.slice(at).split(/\s{2,}/)[0]);
  };
  t.regex(runsTable(body)[0], /^ID\s+WORKFLOW\s+V\s+STATE\s+STATUS\s+CREATED\s+SINCE\s+WAITING ON$/);
  t.deepEqual(cells(runsTable(body)), ["2026-11-21 08:30:00Z", "-", "-"]);
  t.deepEqual(cells(runsTable(body, { waiting: "decision" })), ["2026-11-22 10:00:00Z", "-", "-"]);
  t.regex(runsTable(body)[2], /^r2\s+W\s+1\s+S\s+running\s+2026-11-20 09:00:00Z\s+-\s+counter \(waiting, link none\)$/);
});
