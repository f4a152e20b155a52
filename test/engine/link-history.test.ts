/**
 * The run's history records every end of a link, at the moment it is decided (issue 9 §5 "Run
 * history records every end of a link"): retired by a re-mint, burned by a deposit, dead by
 * completion, cancel, expiry, drop or the run finishing — by link id and slot, never by token.
 * And the run view shows a fanned-out slot's element value beside its index.
 *
 * Through the testing kit (the engine in process, real PostgreSQL). Fixture: test/fixtures/link-ends.flow.
 */
import test from "ava";
import { Workflow, type TestRun } from "../../src/testing/index.js";
import { sql } from "../helpers/db.js";
import { useKitDatabase } from "../helpers/kit.js";

useKitDatabase(test, "linkhist");

const anyone = { as: { id: "someone" } };
let deployed: Promise<Workflow> | null = null;
/** Deployed on first use, once the kit's database exists (ava runs `before` hooks concurrently). */
const workflow = () => (deployed ??= Workflow.deploy("test/fixtures/link-ends.flow"));

async function begin(reviewers: string[] = []): Promise<TestRun> {
  return (await workflow()).start({ job: { title: "t" }, reviewers });
}

const tokenOf = (url: unknown) => new URL(String(url)).pathname.split("/").pop()!;

/** The history entries about links, as [kind, alias, reason?]. */
function linkEnds(run: TestRun): [string, string, string?][] {
  return run.history
    .filter((h) => h.kind.startsWith("link-") && h.kind !== "link-minted")
    .map((h) => {
      const data = h.data as { alias: string; reason?: string };
      return data.reason ? [h.kind, data.alias, data.reason] : [h.kind, data.alias];
    });
}

/** The link id minted for `alias` (the n-th mint of that alias). */
function mintedId(run: TestRun, alias: string, n = 0): string {
  const mints = run.history.filter((h) => h.kind === "link-minted" && (h.data as { alias: string }).alias === alias);
  return (mints[n].data as { linkId: string }).linkId;
}

test("minting again records the previous link as retired, naming the link that replaced it", async (t) => {
  const run = await begin();
  const first = run.entities.job.replyUrl;
  await run.raise("remint", undefined, anyone);
  t.deepEqual(linkEnds(run), [["link-retired", "reply"]]);
  const retired = run.history.find((h) => h.kind === "link-retired")!.data as { linkId: string; by: string };
  t.is(retired.linkId, mintedId(run, "reply", 0));
  t.is(retired.by, mintedId(run, "reply", 1));
  const refused = await t.throwsAsync(Workflow.Redeem(String(first), { text: "x" }));
  t.is((refused as { code?: string }).code, "link-retired");
});

test("a deposit records its link burned, and the slot's completion kills no other link", async (t) => {
  const run = await begin();
  await Workflow.Redeem(String(run.entities.job.replyUrl), { text: "yes" });
  await run.refresh();
  t.deepEqual(linkEnds(run), [["link-burned", "reply"]]);
  t.is((run.history.find((h) => h.kind === "link-burned")!.data as { linkId: string }).linkId, mintedId(run, "reply"));
});

test("a slot completed on the ordinary path records its link dead (completed)", async (t) => {
  const run = await begin();
  await run.raise("reply", { text: "done" }, anyone);
  t.deepEqual(linkEnds(run), [["link-dead", "reply", "completed"]]);
});

test("drop slot records the link dead (dropped)", async (t) => {
  const run = await begin();
  await run.raise("withdraw", undefined, anyone);
  t.deepEqual(linkEnds(run), [["link-dead", "reply", "dropped"]]);
});

test("leaving the state records every live link dead (cancelled)", async (t) => {
  const run = await begin();
  await run.raise("move", undefined, anyone);
  t.deepEqual(linkEnds(run).sort(), [
    ["link-dead", "other", "cancelled"],
    ["link-dead", "reply", "cancelled"],
  ]);
});

test("finishing the run records every live link dead (run-finished)", async (t) => {
  const run = await begin();
  await run.raise("finish", undefined, anyone);
  t.is(run.status, "finished");
  t.deepEqual(linkEnds(run).sort(), [
    ["link-dead", "other", "run-finished"],
    ["link-dead", "reply", "run-finished"],
  ]);
});

test("an expiry records the link dead (expired)", async (t) => {
  const run = await begin();
  await sql(process.env.DATABASE_URL!, `UPDATE slots SET deadline = now() - interval '1 second' WHERE run_id = $1 AND alias = 'reply'`, [run.id]);
  t.is(await Workflow.sweep(), 1);
  await run.refresh();
  t.deepEqual(linkEnds(run), [["link-dead", "reply", "expired"]]);
});

test("a refused deposit records nothing", async (t) => {
  const run = await begin();
  const before = run.history.length;
  await t.throwsAsync(Workflow.Redeem(String(run.entities.job.replyUrl), { text: 42 }));
  await run.refresh();
  t.is(run.history.length, before);
});

test("no stored history row carries a token", async (t) => {
  const run = await begin();
  const tokens = [tokenOf(run.entities.job.replyUrl), tokenOf(run.entities.job.otherUrl)];
  await run.raise("remint", undefined, anyone);
  await run.raise("move", undefined, anyone);
  const rows = await sql<{ data: string }>(process.env.DATABASE_URL!, `SELECT data::text AS data FROM history WHERE run_id = $1`, [run.id]);
  t.true(rows.length > 0);
  for (const row of rows) for (const token of tokens) t.false(row.data.includes(token));
});

test("the run view shows each fanned-out slot's element value beside its index", async (t) => {
  const run = await begin(["ann@example.test", "bob@example.test"]);
  const review = run.slots.filter((s) => s.alias === "review").map((s) => [s.element, s.elementValue]);
  t.deepEqual(review, [
    [0, "ann@example.test"],
    [1, "bob@example.test"],
  ]);
  t.is(run.slots.find((s) => s.alias === "reply")!.elementValue, null);
});
