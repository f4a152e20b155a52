/**
 * Timers on a slot over real web, worker and sweeper processes, PostgreSQL and Redis (issue 43
 * item 3): the sweeper's one query fires a slot timer's row like any timer; the reminder mints a
 * fresh link for the element, the first link then answers 410 `link-retired` over HTTP and the new
 * one completes the slot; the run view shows `slotTimers`, and the console's run page lists them
 * (alias and element, the timer as written, its next firing). Fixture: test/fixtures/slot-timers.flow.
 */
import test from "ava";
import { deployFixture, postLink, showRun, startRun, uniqueTitle } from "../helpers/callback.js";
import { dropDatabase } from "../helpers/db.js";
import { ADMIN_TOKEN, eventually, printedLinks, request, startCluster, type Cluster } from "../helpers/server.js";

const clusters: Cluster[] = [];
test.after.always(async () => {
  for (const c of clusters) {
    await c.stop();
    await dropDatabase(c.databaseUrl).catch(() => undefined);
  }
});

type SlotTimers = { alias: string; element: number | null; index: number; schedule: string; next: string }[];

test.serial("the sweeper fires a per-element reminder; its fresh link works while the first answers 410 link-retired", async (t) => {
  t.timeout(120_000);
  const c = await startCluster("slottimers", { roles: ["web", "worker", "sweeper"] });
  clusters.push(c);
  await deployFixture(c.baseUrl, "slot-timers.flow");
  const before = printedLinks(c.output()).length;
  const started = Date.now();
  const runId = await startRun(c.baseUrl, "SlotTimed", { job: { title: uniqueTitle("s"), reminded: 0 }, directors: ["ann@example.test"] });
  const view = (await showRun(c.baseUrl, runId)) as unknown as { slotTimers: SlotTimers; timers: unknown[] };
  t.deepEqual(view.timers, []);
  t.deepEqual(view.slotTimers.map((x) => [x.alias, x.element, x.index, x.schedule]), [["signoff", 0, 0, "every 1h after 5s"]]);
  t.true(Math.abs(new Date(view.slotTimers[0].next).getTime() - started - 5000) < 5000);
  // the console's run page lists the slot's timer: the element, the timer as written, its next
  // firing (any: the reminder may have fired by now, and the next is then an hour later)
  const operator = { authorization: `Basic ${Buffer.from(`olga:${ADMIN_TOKEN}`).toString("base64")}` };
  const page = await request(c.baseUrl, "GET", `/console/runs/${runId}`, { headers: operator });
  t.is(page.status, 200);
  const list = /<h3 id="slot-timers-h">Timers on slots<\/h3>\s*<ul class="plain" id="slot-timers">(.*?)<\/ul>/s.exec(page.text)?.[1] ?? "";
  t.regex(list, new RegExp(`^<li><code>signoff\\[0\\]</code>: <code>every 1h after 5s</code> — next <time datetime="\\d{4}-[^"]+Z">[^<]+ UTC</time> — <time class="countdown" datetime="[^"]+">[^<]+</time></li>$`));
  const first = await eventually(async () => printedLinks(c.output())[before], 30_000);
  const fired = await eventually(async () => {
    const r = await showRun(c.baseUrl, runId);
    return r.entities.job.reminded === 1 ? r : null;
  }, 30_000);
  t.true(fired.history.some((h) => h.kind === "timer-fired" && (h.data as { alias?: string }).alias === "signoff"));
  const fresh = await eventually(async () => printedLinks(c.output())[before + 1], 30_000);
  t.not(fresh, first);
  const old = await postLink(first, { agree: true });
  t.is(old.status, 410, old.text);
  t.is(old.body.code, "link-retired");
  const ok = await postLink(fresh, { agree: true });
  t.is(ok.status, 200, ok.text);
  const done = await eventually(async () => {
    const r = await showRun(c.baseUrl, runId);
    return r.state === "Done" ? r : null;
  }, 30_000);
  t.deepEqual((done as unknown as { slotTimers: SlotTimers }).slotTimers, []);
});
