/**
 * What one task-page POST costs the web process in SQL round trips (interfaces.md v0.4 "People
 * inside the company": `POST /inbox/tasks/{runId}/{alias}`): the run is read once for the view
 * (engine/views/task.ts, one statement with the run's current visit), the gate (`Candidates`,
 * `[Authorize]`) is asked once there, and the raise goes to the worker with no second read
 * (engine-client `raiseChecked`); the worker still checks everything under the run lock, in its
 * own process. Counted in a `web` process of its own (test/helpers/sql-count.ts, the benchmarks'
 * counting preload); the worker runs apart. Serial: the counts are per process. Fixtures: test/fixtures/task-page.flow.
 */
import test from "ava";
import { dropDatabase } from "../helpers/db.js";
import { deployFixture, principalJwt, showRun, startRun, uniqueTitle } from "../helpers/callback.js";
import { startCluster, type Cluster, type ServerProcess } from "../helpers/server.js";
import { diff, sqlCounter, type SqlCounts } from "../helpers/sql-count.js";

const counter = sqlCounter();
let cluster: Cluster;
let web: ServerProcess;
let base: string;

test.before(async () => {
  cluster = await startCluster("taskrt", { roles: ["worker"] });
  web = await cluster.spawn("web", { env: counter.env });
  base = cluster.baseUrl;
  await deployFixture(base, "task-page.flow");
});

test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
  counter.remove();
});

const ORDER = { ok: "true", note: "Two boxes.", qty: "3", price: "2.5", due: "2026-12-01T09:30", "due.offset": "+01:00", lead: "3", "lead.unit": "D", "tags.r1": "urgent", gift: "null", csrf: "" };

async function begin(prefix: string) {
  const title = uniqueTitle(prefix);
  const runId = await startRun(base, "TkPage", { job: { title, contact: `${title}@example.test`, vendor: "Acme", maxQty: 100 }, reviewers: ["ann"] });
  return `/inbox/tasks/${runId}/order`;
}

/** One POST of the form, and the statements the web process sent while answering it. */
async function posted(path: string, jwt: string, form: Record<string, string>): Promise<{ status: number; sql: SqlCounts }> {
  const pid = web.child.pid!;
  const before = await counter.read(pid);
  const res = await fetch(new URL(path, base), {
    method: "POST",
    headers: { accept: "text/html", authorization: `Bearer ${jwt}`, "content-type": "application/x-www-form-urlencoded", origin: base, "sec-fetch-site": "same-origin" },
    body: new URLSearchParams(form).toString(),
    redirect: "manual",
  });
  await res.text();
  return { status: res.status, sql: diff(before, await counter.read(pid)) };
}

/** The statements that read the `runs` table (the run's row), whatever else they read. */
const runReads = (c: SqlCounts) => Object.entries(c.byText).reduce((n, [text, k]) => n + (/\bruns\b|"runs"/.test(text) ? k : 0), 0);

test.serial("an applied task-page POST reads the run once and makes one SQL round trip in the web process; the worker applies it", async (t) => {
  const path = await begin("rt");
  const frank = await principalJwt("frank", ["buyer"]);
  // a first POST refused on its body warms the process's version cache (one read per version and process)
  t.is((await posted(path, frank, { ...ORDER, qty: "lots" })).status, 422);
  const res = await posted(path, frank, ORDER);
  t.is(res.status, 303);
  t.is(runReads(res.sql), 1, JSON.stringify(res.sql.byText));
  t.is(res.sql.total, 1, JSON.stringify(res.sql.byText));
  const slot = (await showRun(base, path.split("/")[3]!)).slots.find((s) => s.alias === "order") as unknown as { status: string; answeredBy: unknown };
  t.is(slot.status, "completed");
  t.deepEqual(slot.answeredBy, { via: "principal", id: "frank", email: "frank@example.test" });
});

test.serial("refused task-page POSTs (not a candidate, a body that does not match) cost the web process the view's one read and nothing more", async (t) => {
  const path = await begin("rt-refused");
  const frank = await principalJwt("frank", ["buyer"]);
  const invalid = await posted(path, frank, { ...ORDER, qty: "lots" });
  t.is(invalid.status, 422);
  t.is(invalid.sql.total, 1, JSON.stringify(invalid.sql.byText));
  const outsider = await posted(path, await principalJwt("olga", ["staff"]), ORDER);
  t.is(outsider.status, 403);
  t.is(outsider.sql.total, 1, JSON.stringify(outsider.sql.byText));
  t.is((await showRun(base, path.split("/")[3]!)).slots.find((s) => s.alias === "order")?.status, "open");
});
