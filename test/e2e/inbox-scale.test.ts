/**
 * The inbox stays fast (v0.4 "People inside the company"): with many other principals' open slots
 * in the table, a principal's page is index range scans of its own entries — never a scan of the
 * table, never more rows than the page (plus one) per principal — whatever the order, filter or
 * cursor. Asserted on PostgreSQL's own plans (EXPLAIN ANALYZE) of the statements the server sends
 * (src/engine/sql/inbox.ts), then through HTTP. The timings at 1,000,000 slots are the bench's
 * (`npm run bench -- inbox`, docs/performance.md); this test loads a smaller table.
 */
import test from "ava";
import { COUNT_CAP, inboxCountsSql, inboxPageSql, type InboxQuery } from "../../src/engine/sql/inbox.js";
import { dropDatabase, sql } from "../helpers/db.js";
import { deployFixture, principalJwt } from "../helpers/callback.js";
import { loadInbox } from "../helpers/inbox-load.js";
import { request, startCluster, type Cluster } from "../helpers/server.js";

let cluster: Cluster;

const MANY = 3000;
const OTHERS = 60_000;

test.before(async () => {
  cluster = await startCluster("inboxscale");
  await deployFixture(cluster.baseUrl, "inbox.flow");
  await loadInbox(cluster.databaseUrl, {
    workflow: "InboxDemo",
    version: 1,
    tag: "scale",
    groups: [
      { principal: "many", count: MANY },
      { principal: "few", count: 10 },
    ],
    others: OTHERS,
    otherPrincipals: 500,
  });
  // half of every principal's entries filed under another workflow, so the workflow filter selects
  await sql(cluster.databaseUrl, "UPDATE inbox_entries SET workflow_name = 'OtherFlow' WHERE get_byte(uuid_send(slot_id), 15) % 2 = 0");
  await sql(cluster.databaseUrl, "VACUUM ANALYZE inbox_entries");
});

test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Actual Rows": number;
  "Actual Loops": number;
  "Rows Removed by Filter"?: number;
  Plans?: PlanNode[];
}

function nodes(n: PlanNode): PlanNode[] {
  return [n, ...(n.Plans ?? []).flatMap(nodes)];
}

async function plan(text: string, values: unknown[]): Promise<PlanNode[]> {
  // pg sends JS arrays and dates as parameters just as the server's driver does
  const rows = await sql<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(cluster.databaseUrl, `EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values);
  return nodes(rows[0]["QUERY PLAN"][0].Plan);
}

const onEntries = (all: PlanNode[]) => all.filter((n) => n["Relation Name"] === "inbox_entries");

function assertRangeScans(t: import("ava").ExecutionContext, all: PlanNode[], maxRowsPerLoop: number, indexes: string[]): void {
  const scans = onEntries(all);
  t.true(scans.length > 0);
  for (const s of scans) {
    t.regex(s["Node Type"], /^Index (Only )?Scan$/, `inbox_entries read by ${s["Node Type"]}`);
    t.true(indexes.includes(s["Index Name"] ?? ""), `index ${s["Index Name"]}`);
    t.true(s["Actual Rows"] <= maxRowsPerLoop, `${s["Actual Rows"]} rows per loop from ${s["Index Name"]}`);
    t.true((s["Rows Removed by Filter"] ?? 0) <= 1, `${s["Rows Removed by Filter"]} rows read and dropped: the cursor is a range bound, not a filter`);
  }
  for (const n of all.filter((x) => x["Relation Name"] === "slots" || x["Relation Name"] === "runs")) {
    t.is(n["Node Type"], "Index Scan", `${n["Relation Name"]} read by ${n["Node Type"]}`);
    t.is(n["Index Name"], `${n["Relation Name"]}_pkey`, "each task's slot and run by primary key");
    t.true(n["Actual Rows"] <= 1, `${n["Actual Rows"]} rows per probe of ${n["Relation Name"]}`);
  }
}

const principals = ["user:many", "role:finance", "role:nobody-has-this"];

test("the first page and the pages after it are index range scans of at most limit + 1 entries per principal, in each order", async (t) => {
  const base: InboxQuery = { principals, workflow: null, order: "newest", limit: 25, after: null };
  const first = inboxPageSql(base);
  const firstPlan = await plan(first.text, first.values);
  assertRangeScans(t, firstPlan, 26, ["inbox_entries_newest_idx"]);

  // a cursor deep into the list costs the same
  const deep = await sql<{ listed_at: Date; run_id: string; slot_id: string }>(
    cluster.databaseUrl,
    "SELECT listed_at, run_id, slot_id FROM inbox_entries WHERE principal = 'user:many' ORDER BY listed_at DESC, run_id, slot_id OFFSET 2000 LIMIT 1",
  );
  const after = { listedAt: deep[0].listed_at, deadline: null, runId: deep[0].run_id, slotId: deep[0].slot_id };
  const later = inboxPageSql({ ...base, after });
  assertRangeScans(t, await plan(later.text, later.values), 26, ["inbox_entries_newest_idx"]);

  const filtered = inboxPageSql({ ...base, workflow: "InboxDemo" });
  assertRangeScans(t, await plan(filtered.text, filtered.values), 26, ["inbox_entries_workflow_newest_idx"]);

  const byDeadline = inboxPageSql({ ...base, order: "deadline" });
  assertRangeScans(t, await plan(byDeadline.text, byDeadline.values), 26, ["inbox_entries_deadline_idx"]);
  const dl = await sql<{ deadline: Date; run_id: string; slot_id: string }>(
    cluster.databaseUrl,
    "SELECT deadline, run_id, slot_id FROM inbox_entries WHERE principal = 'user:many' AND deadline IS NOT NULL ORDER BY deadline, run_id, slot_id OFFSET 1000 LIMIT 1",
  );
  const dlAfter = inboxPageSql({ ...base, order: "deadline", after: { listedAt: new Date(), deadline: dl[0].deadline, runId: dl[0].run_id, slotId: dl[0].slot_id } });
  assertRangeScans(t, await plan(dlAfter.text, dlAfter.values), 26, ["inbox_entries_deadline_idx"]);
  // past the last deadline: the slots without one, by (run, slot), from the cursor on
  const nul = await sql<{ run_id: string; slot_id: string }>(
    cluster.databaseUrl,
    "SELECT run_id, slot_id FROM inbox_entries WHERE principal = 'user:many' AND deadline IS NULL ORDER BY run_id, slot_id OFFSET 500 LIMIT 1",
  );
  const nulAfter = inboxPageSql({ ...base, order: "deadline", after: { listedAt: new Date(), deadline: null, runId: nul[0].run_id, slotId: nul[0].slot_id } });
  assertRangeScans(t, await plan(nulAfter.text, nulAfter.values), 26, ["inbox_entries_deadline_idx"]);
});

test("the counts walk at most COUNT_CAP + 1 entries per principal (index only), and say when they are capped", async (t) => {
  const counts = inboxCountsSql(principals, null);
  assertRangeScans(t, await plan(counts.text, counts.values), COUNT_CAP + 1, ["inbox_entries_newest_idx"]);
  const token = await principalJwt("many", ["finance"]);
  const res = await request(cluster.baseUrl, "GET", "/api/inbox", { token });
  t.is(res.status, 200);
  t.deepEqual(res.body.counts, { open: null, waiting: null, total: COUNT_CAP, capped: true });
  const few = await request(cluster.baseUrl, "GET", "/api/inbox", { token: await principalJwt("few", []) });
  t.deepEqual(few.body.counts, { open: 10, waiting: 0, total: 10, capped: false });
});

test("through HTTP: a principal with thousands of tasks among many others' gets its page, titles evaluated, every page distinct", async (t) => {
  const token = await principalJwt("many", []);
  const seen = new Set<string>();
  let cursor: string | null = null;
  for (let i = 0; i < 4; i++) {
    const res = await request(cluster.baseUrl, "GET", `/api/inbox?limit=100${cursor ? `&cursor=${cursor}` : ""}`, { token });
    t.is(res.status, 200, res.text);
    t.is(res.body.tasks.length, 100);
    for (const task of res.body.tasks) {
      t.regex(task.title, /^Sign load \d+ as signer-\d+$/);
      seen.add(`${task.runId}/${task.element}`);
    }
    cursor = res.body.nextCursor;
  }
  t.is(seen.size, 400);
  const few = await request(cluster.baseUrl, "GET", "/api/inbox", { token: await principalJwt("few", []) });
  t.is(few.body.tasks.length, 10);
  t.is(few.body.nextCursor, null);
});
