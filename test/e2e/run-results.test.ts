/**
 * Results at run time (v0.5 Results; issue 40 item 4; interfaces.md "Calls: … results"), over real
 * HTTP against one real `slotflow serve` on real PostgreSQL and Redis:
 *
 * - `result { … }` sets the run's result; the last one before the run finishes counts; a finished
 *   run's result is `{state, …fields}` (without `returns`, `{state}`); `GET /api/runs/{id}` shows it;
 * - `GET /api/runs/{id}/result?waitSeconds=N`: 202 `{id, status: "running"}` while it runs (after
 *   waiting N seconds), 200 `{id, status, state, result}` once ended (finished or cancelled); many
 *   waiters at once are all answered when the run ends; 400 invalid-query for a bad N; 404;
 *   the admin token is required;
 * - a run that declares `returns` and finishes without a result is recorded (`result-missing`).
 */
import test from "ava";
import { dropDatabase } from "../helpers/db.js";
import { postLink, showRun, startRun, uniqueTitle } from "../helpers/callback.js";
import { linkIn, waitForEmail } from "../helpers/mail.js";
import { ADMIN_TOKEN, request, startCluster, type Cluster } from "../helpers/server.js";

let cluster: Cluster;
let base: string;

const SCORING = `workflow Scoring(title: string) returns Scored
event Scored(score: int, band: string, note: string?)
event Go(score: int)
initial state Wait {
  subscribe Go(score) as go
  enter {
    result { score: 0, band: "none" }
    send email to "ops@example.test" { subject: "go " + title, body: go.CallbackUrl() }
  }
  on go(score) {
    result { score: score, band: "first" }
    when (score < 0) -> NoResultPath
    default { result { score: score, band: "last" } } -> Scored
  }
}
terminal state Scored
terminal state NoResultPath`;

const MISSING = `workflow Missing(title: string) returns Scored
event Scored(score: int, band: string)
initial state S { enter { default -> Done } }
terminal state Done`;

const PLAIN = `workflow Plain(title: string)
initial state S { enter { default -> Done } }
terminal state Done`;

test.before(async () => {
  cluster = await startCluster("results");
  base = cluster.baseUrl;
  for (const source of [SCORING, MISSING, PLAIN]) {
    const res = await request(base, "POST", "/api/workflows", { token: ADMIN_TOKEN, text: source });
    if (res.status !== 201) throw new Error(res.text);
  }
});

test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

const result = (id: string, query = "", token = ADMIN_TOKEN) => request(base, "GET", `/api/runs/${id}/result${query}`, { token });

async function scoringRun(prefix: string) {
  const title = uniqueTitle(prefix);
  const runId = await startRun(base, "Scoring", { title });
  return { runId, link: async () => linkIn(await waitForEmail(() => cluster.output(), `go ${title}`)) };
}

test.serial("many waiters on one running run are all answered 200 with the result when it finishes", async (t) => {
  const { runId, link } = await scoringRun("many");
  const url = await link();
  const before = await result(runId);
  t.is(before.status, 202, before.text);
  t.deepEqual(before.body, { id: runId, status: "running" });
  const view = await showRun(base, runId);
  t.is((view as any).result, null, "no result while running");
  const waiters = Array.from({ length: 60 }, () => result(runId, "?waitSeconds=60"));
  // still running after the waiters were sent: they wait (or read it running and wait)
  t.is((await result(runId)).status, 202);
  const answer = await postLink(url, { score: 710 });
  t.is(answer.status, 200, answer.text);
  const answers = await Promise.all(waiters);
  for (const a of answers) {
    t.is(a.status, 200, a.text);
    t.deepEqual(a.body, { id: runId, status: "finished", state: "Scored", result: { state: "Scored", score: 710, band: "last" } });
  }
  const shown = await showRun(base, runId);
  t.deepEqual((shown as any).result, { state: "Scored", score: 710, band: "last" }, "the last result before the finish counts");
});

test.serial("waitSeconds=1 on a run that stays running answers 202 after the wait; waitSeconds=0 at once", async (t) => {
  const { runId } = await scoringRun("stays");
  const waited = await result(runId, "?waitSeconds=1");
  t.is(waited.status, 202);
  t.deepEqual(waited.body, { id: runId, status: "running" });
  t.is((await result(runId, "?waitSeconds=0")).status, 202);
});

test.serial("a run finished at its start: its result at once; without returns {state}; returns without a result is recorded", async (t) => {
  const plain = await startRun(base, "Plain", { title: "p" });
  const p = await result(plain, "?waitSeconds=5");
  t.is(p.status, 200, p.text);
  t.deepEqual(p.body, { id: plain, status: "finished", state: "Done", result: { state: "Done" } });

  const missing = await startRun(base, "Missing", { title: "m" });
  const m = await result(missing, "?waitSeconds=5");
  t.deepEqual(m.body, { id: missing, status: "finished", state: "Done", result: { state: "Done" } });
  const view = await showRun(base, missing);
  const entry = view.history.find((h: any) => h.kind === "result-missing");
  t.deepEqual(entry?.data, { state: "Done", returns: "Scored" });
});

test.serial("a run that finishes through a path without a new result keeps the last one set; a cancelled run answers 200 with result null", async (t) => {
  const a = await scoringRun("neg");
  const answer = await postLink(await a.link(), { score: -1 });
  t.is(answer.status, 200, answer.text);
  t.deepEqual((await result(a.runId)).body.result, { state: "NoResultPath", score: -1, band: "first" });

  const b = await scoringRun("cancel");
  const waiting = result(b.runId, "?waitSeconds=60");
  const cancelled = await request(base, "POST", `/api/runs/${b.runId}/cancel`, { token: ADMIN_TOKEN, json: { reason: "test" } });
  t.is(cancelled.status, 200, cancelled.text);
  const w = await waiting;
  t.is(w.status, 200, w.text);
  t.deepEqual(w.body, { id: b.runId, status: "cancelled", state: "Wait", result: null });
});

test.serial("bad waitSeconds is 400 invalid-query naming it; unknown run 404; no token 401", async (t) => {
  const { runId } = await scoringRun("bad");
  for (const q of ["?waitSeconds=61", "?waitSeconds=-1", "?waitSeconds=1.5", "?waitSeconds=abc", "?waitSeconds="]) {
    const res = await result(runId, q);
    t.is(res.status, 400, `${q}: ${res.text}`);
    t.is(res.body.code, "invalid-query");
    t.is(res.body.parameter, "waitSeconds");
  }
  t.is((await result("00000000-0000-4000-8000-000000000000")).status, 404);
  t.is((await result("not-a-uuid")).status, 404);
  t.is((await result(runId, "", "")).status, 401);
});
