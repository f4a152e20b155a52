/**
 * The inbox over HTTP (v0.4 "People inside the company": `GET /api/inbox`; docs/inbox.md), on a
 * real `slotflow serve` with its own PostgreSQL database and Redis: `Candidates` are evaluated when
 * a slot is created and stored on it, `slotflow_step_write` lists the slot in `inbox_entries` for
 * each named user and role, and the API lists, for a principal signed in with a bearer JWT, the
 * open and waiting slots of running runs that name it — once each, in keyset pages, with the
 * title the responder page would show and the predecessors a waiting slot waits on.
 * Fixture: test/fixtures/inbox.flow. The scale and the query plans: inbox-scale.test.ts.
 */
import test from "ava";
import { dropDatabase, sql } from "../helpers/db.js";
import { deployFixture, principalJwt, startRun, uniqueTitle } from "../helpers/callback.js";
import { ADMIN_TOKEN, request, startCluster, type Cluster } from "../helpers/server.js";

let cluster: Cluster;
let base: string;

test.before(async () => {
  cluster = await startCluster("inboxapi");
  base = cluster.baseUrl;
  await deployFixture(base, "inbox.flow");
});

test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

interface Task {
  runId: string;
  workflow: string;
  version: number;
  state: string;
  alias: string;
  element: number | null;
  event: string;
  params: { name: string; type: string; optional: boolean }[];
  title: string;
  status: string;
  openedAt: string | null;
  deadline: string | null;
  waitingOn: string[];
  taskUrl: string;
}
interface Inbox {
  tasks: Task[];
  nextCursor: string | null;
  counts: { open: number; waiting: number; total: number; capped: boolean };
}

/** Starts an InboxDemo run owned by `owner`, to be signed by `signers`. */
async function begin(owner: string, signers: string[] = ["ann", "bob"], team = "finance"): Promise<{ runId: string; title: string }> {
  const title = uniqueTitle("req");
  const runId = await startRun(base, "InboxDemo", { req: { title, owner, shards: 0, team }, signers });
  return { runId, title };
}

async function inbox(sub: string, roles: string[], query = ""): Promise<Inbox> {
  const res = await request(base, "GET", `/api/inbox${query}`, { token: await principalJwt(sub, roles) });
  if (res.status !== 200) throw new Error(`GET /api/inbox${query} answered ${res.status}: ${res.text}`);
  return res.body as Inbox;
}

const ofRun = (box: Inbox, runId: string) => box.tasks.filter((t) => t.runId === runId);

test.serial("Candidates are evaluated when each slot is created and inbox_entries lists it for each named user and role", async (t) => {
  const { runId } = await begin("olga", ["ann", "bob"]);
  const slots = await sql<{ alias: string; element: number | null; status: string; candidate_users: string[] | null; candidate_roles: string[] | null }>(
    cluster.databaseUrl,
    "SELECT alias, element, status, candidate_users, candidate_roles FROM slots WHERE run_id = $1 ORDER BY alias, element",
    [runId],
  );
  const by = (alias: string, element: number | null = null) => slots.find((s) => s.alias === alias && s.element === element);
  t.deepEqual(by("approve")?.candidate_users, ["olga"]);
  t.deepEqual(by("approve")?.candidate_roles, ["finance"]);
  t.deepEqual(by("sign", 0)?.candidate_users, ["ann"], "each fanned-out element evaluates Candidates with its own element");
  t.deepEqual(by("sign", 1)?.candidate_users, ["bob"]);
  t.deepEqual(by("sign", 1)?.candidate_roles, []);
  t.deepEqual(by("review")?.candidate_roles, ["finance"]);
  t.is(by("review")?.status, "waiting");
  t.is(by("free")?.candidate_users, null, "no Candidates: null, listed nowhere");
  t.deepEqual(by("broken")?.candidate_users, [], "Candidates that fail at creation name nobody");

  const entries = await sql<{ alias: string; element: number | null; principal: string; workflow_name: string }>(
    cluster.databaseUrl,
    "SELECT s.alias, s.element, e.principal, e.workflow_name FROM inbox_entries e JOIN slots s ON s.run_id = e.run_id AND s.id = e.slot_id WHERE e.run_id = $1 ORDER BY s.alias, s.element, e.principal",
    [runId],
  );
  t.deepEqual(
    entries.map((e) => `${e.alias}${e.element === null ? "" : `[${e.element}]`} ${e.principal}`),
    ["approve role:finance", "approve user:olga", "review role:finance", "sign[0] user:ann", "sign[1] user:bob"],
  );
  t.true(entries.every((e) => e.workflow_name === "InboxDemo"));
});

test.serial("the API lists what names the principal: by id, by role, each fanned-out element for its own signer; never a slot without Candidates", async (t) => {
  const { runId, title } = await begin("olga", ["ann", "bob"]);

  const olga = ofRun(await inbox("olga", []), runId);
  t.deepEqual(olga.map((x) => x.alias), ["approve"]);
  const approve = olga[0];
  t.is(approve.workflow, "InboxDemo");
  t.is(approve.version, 1);
  t.is(approve.state, "Open");
  t.is(approve.element, null);
  t.is(approve.event, "Approve");
  t.deepEqual(approve.params, [
    { name: "ok", type: "bool", optional: false },
    { name: "note", type: "string", optional: true },
  ]);
  t.is(approve.title, `Approve ${title}`, "the slot's Title, as the responder page computes it");
  t.is(approve.status, "open");
  t.truthy(approve.openedAt);
  const due = new Date(approve.deadline!).getTime() - new Date(approve.openedAt!).getTime();
  t.is(due, 2 * 86_400_000, "Deadline: 2d from when it opened");
  t.deepEqual(approve.waitingOn, []);
  t.is(approve.taskUrl, `${base}/inbox/tasks/${runId}/approve`);

  const ann = ofRun(await inbox("ann", []), runId);
  t.deepEqual(ann.map((x) => [x.alias, x.element, x.title, x.taskUrl]), [["sign", 0, `Sign ${title} as ann`, `${base}/inbox/tasks/${runId}/sign?element=0`]]);
  t.deepEqual(ann[0].params, [{ name: "ok", type: "bool", optional: false }]);
  const bob = ofRun(await inbox("bob", []), runId);
  t.deepEqual(bob.map((x) => [x.alias, x.element]), [["sign", 1]]);

  const fin = ofRun(await inbox("fiona", ["finance"]), runId);
  t.deepEqual(fin.map((x) => x.alias).sort(), ["approve", "review"]);
  const review = fin.find((x) => x.alias === "review")!;
  t.is(review.status, "waiting");
  t.is(review.openedAt, null);
  t.deepEqual(review.waitingOn, ["approve", "sign"]);
  t.is(review.title, "Answer: Review", "without a Title: the responder page's default heading");

  const both = ofRun(await inbox("olga", ["finance", "clerk"]), runId);
  t.deepEqual(both.map((x) => x.alias).sort(), ["approve", "review"], "listed under the id and a role: once");

  t.deepEqual(ofRun(await inbox("zoe", ["clerk"]), runId), [], "a principal no Candidates name sees nothing of the run");
  for (const who of ["olga", "ann", "fiona"]) {
    const aliases = ofRun(await inbox(who, ["finance"]), runId).map((x) => x.alias);
    t.false(aliases.includes("free"));
    t.false(aliases.includes("broken"));
  }
});

test.serial("answering moves the inbox on: the answered slot leaves, the waiting one names what it still waits on; a cancelled run leaves every inbox", async (t) => {
  const { runId } = await begin("olga", ["ann"]);
  const raised = await request(base, "POST", `/api/runs/${runId}/slots/approve/events`, { token: await principalJwt("olga", []), json: { ok: true, note: null } });
  t.is(raised.status, 200, raised.text);
  t.deepEqual(ofRun(await inbox("olga", []), runId), []);
  const review = ofRun(await inbox("fiona", ["finance"]), runId);
  t.deepEqual(review.map((x) => [x.alias, x.status, x.waitingOn]), [["review", "waiting", ["sign"]]]);

  const signed = await request(base, "POST", `/api/runs/${runId}/slots/sign/events?element=0`, { token: await principalJwt("ann", []), json: { ok: true } });
  t.is(signed.status, 200, signed.text);
  const open = ofRun(await inbox("fiona", ["finance"]), runId);
  t.deepEqual(open.map((x) => [x.alias, x.status, x.waitingOn]), [["review", "open", []]]);
  t.truthy(open[0].openedAt);

  const cancelled = await request(base, "POST", `/api/runs/${runId}/cancel`, { token: ADMIN_TOKEN, json: { reason: "test" } });
  t.is(cancelled.status, 200, cancelled.text);
  t.deepEqual(ofRun(await inbox("fiona", ["finance"]), runId), []);
  const left = await sql(cluster.databaseUrl, "SELECT 1 FROM inbox_entries WHERE run_id = $1", [runId]);
  t.is(left.length, 0);
});

test.serial("keyset pages: every task once, in order, newest first or by deadline; counts; the workflow filter", async (t) => {
  const owner = uniqueTitle("pager");
  const runs: string[] = [];
  for (let i = 0; i < 5; i++) runs.push((await begin(owner, [])).runId);
  // each run lists approve for its owner
  const all: Task[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page: Inbox = await inbox(owner, ["inbox-pager-role"], `?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
    t.true(page.tasks.length <= 2);
    all.push(...page.tasks);
    cursor = page.nextCursor;
    pages++;
  } while (cursor && pages < 10);
  t.is(pages, 3);
  t.deepEqual(all.map((x) => x.runId), [...runs].reverse(), "newest first, each once");
  const first = await inbox(owner, [], "?limit=2");
  t.deepEqual(first.counts, { open: 5, waiting: 0, total: 5, capped: false });

  const fin = uniqueTitle("finance");
  const own2 = uniqueTitle("owner");
  const a = await begin(own2, [], fin);
  const b = await begin(own2, [], fin);
  // a principal named by user (approve: a deadline) and by a role (review: none) in two runs
  const byDeadline: Task[] = [];
  cursor = null;
  pages = 0;
  const roles = [fin];
  do {
    const page: Inbox = await inbox(own2, roles, `?order=deadline&limit=1${cursor ? `&cursor=${cursor}` : ""}`);
    byDeadline.push(...page.tasks);
    cursor = page.nextCursor;
    pages++;
  } while (cursor && pages < 10);
  t.deepEqual(
    byDeadline.map((x) => `${x.runId === a.runId ? "a" : "b"} ${x.alias}`),
    ["a approve", "b approve", ...(a.runId < b.runId ? ["a review", "b review"] : ["b review", "a review"])],
    "soonest deadline first, slots without one after them (by run)",
  );
  const counts = (await inbox(own2, roles, "?order=deadline")).counts;
  t.deepEqual(counts, { open: 2, waiting: 2, total: 4, capped: false });

  t.is((await inbox(own2, roles, "?workflow=InboxDemo")).tasks.length, 4);
  const other = await inbox(own2, roles, "?workflow=SomethingElse");
  t.deepEqual(other.tasks, []);
  t.deepEqual(other.counts, { open: 0, waiting: 0, total: 0, capped: false });
});

test.serial("refusals: 401 without a principal, 400 invalid-query naming the parameter — a cursor from elsewhere included", async (t) => {
  const none = await request(base, "GET", "/api/inbox");
  t.is(none.status, 401);
  t.is(none.body.code, "unauthorized");
  t.regex(none.headers.get("content-type") ?? "", /application\/problem\+json/);
  const forged = await request(base, "GET", "/api/inbox", { headers: { authorization: "Bearer not.a.jwt" } });
  t.is(forged.status, 401);
  t.false(forged.text.includes("not.a.jwt"));

  const owner = uniqueTitle("cursor");
  for (let i = 0; i < 3; i++) await begin(owner, []);
  const page = await inbox(owner, [], "?limit=1");
  const cursor = page.nextCursor!;
  t.truthy(cursor);
  const token = await principalJwt(owner, []);
  const ask = (q: string) => request(base, "GET", `/api/inbox${q}`, { token });
  const bad = async (q: string, parameter: string) => {
    const res = await ask(q);
    t.is(res.status, 400, `${q}: ${res.text}`);
    t.is(res.body.code, "invalid-query");
    t.is(res.body.parameter, parameter);
  };
  await bad("?cursor=garbage", "cursor");
  await bad(`?cursor=${cursor}x`, "cursor");
  await bad(`?cursor=${cursor}&order=deadline`, "cursor");
  await bad(`?cursor=${cursor}&workflow=InboxDemo`, "cursor");
  const doc = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  await bad(`?cursor=${Buffer.from(JSON.stringify([doc[0], doc[1], "10000-01-01T00:00:00.000Z", null, doc[4], doc[5]])).toString("base64url")}`, "cursor");
  await bad(`?cursor=${Buffer.from(JSON.stringify([...doc.slice(0, 5), "x"])).toString("base64url")}`, "cursor");
  await bad("?order=oldest", "order");
  await bad("?limit=0", "limit");
  await bad("?limit=101", "limit");
  await bad("?limit=1&limit=2", "limit");
  await bad("?workflow=no%20such", "workflow");
  // hostile cursors: random text, and well-formed JSON of the wrong shapes — 400, never a 5xx
  const shapes: unknown[] = [[], {}, null, 1, "x", [...doc.slice(0, 5)], [...doc, 1], [doc[0], doc[1], doc[2], doc[3], doc[4].toUpperCase(), doc[5]],
    [doc[0], doc[1], "2026-13-01T00:00:00.000Z", null, doc[4], doc[5]], [doc[0], doc[1], doc[2], "not a date", doc[4], doc[5]], [doc[0], doc[1], 5, null, doc[4], doc[5]]];
  for (const shape of shapes) await bad(`?cursor=${Buffer.from(JSON.stringify(shape)).toString("base64url")}`, "cursor");
  for (let i = 0; i < 30; i++) {
    const junk = Buffer.from(Array.from({ length: 1 + ((i * 37) % 300) }, (_, k) => (k * 131 + i * 17) % 256)).toString("base64url");
    await bad(`?cursor=${junk}`, "cursor");
  }
  await bad(`?cursor=${"A".repeat(5000)}`, "cursor");
  const next = await ask(`?limit=1&cursor=${cursor}`);
  t.is(next.status, 200);
  t.is(next.body.tasks.length, 1);
  t.notDeepEqual(next.body.tasks[0].runId, page.tasks[0].runId);
});

test.serial("the OpenAPI document describes GET /api/inbox", async (t) => {
  const doc = await request(base, "GET", "/api/openapi.json");
  const op = doc.body.paths["/api/inbox"]?.get;
  t.truthy(op);
  t.deepEqual(op.security, [{ principalJwt: [] }]);
  t.deepEqual(op.parameters.map((p: { name: string }) => p.name), ["workflow", "order", "limit", "cursor", "view"]);
  t.truthy(op.responses["400"]);
});
