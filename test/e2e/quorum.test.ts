/**
 * Many responders over real HTTP (v0.4 "Many responders"; docs/language.md "Many responders"),
 * against a web process and a worker on real PostgreSQL and Redis. Links reach the test in the
 * mails the `each { … }` block sends, one per element.
 *
 * - Races: five responders answer the five elements of a `Quorum: 2` slot at once; exactly two
 *   complete and three get 410 `link-dead` with `reason: "quorum-reached"` — 200 times over.
 * - Each element's link is bound to that element; `POST /api/runs/{id}/slots/{alias}/link/revoke
 *   ?element=N` revokes one element's link alone.
 * - A principal completes at most one element (409 `already-answered-by-you`).
 * - `x.TaskUrl()` names `{BASE_URL}/inbox/tasks/{runId}/{alias}?element=N`.
 * Fixture: test/fixtures/quorum-race.flow.
 */
import test from "ava";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { cliEntry } from "../helpers/cli-entry.js";
import { dropDatabase } from "../helpers/db.js";
import { deployFixture, postLink, principalJwt, showRun, startRun, uniqueTitle, type Answer } from "../helpers/callback.js";
import { linkIn, parseEmails, type PrintedEmail } from "../helpers/mail.js";
import { ADMIN_TOKEN, request, ROOT, startCluster, type Cluster } from "../helpers/server.js";

let cluster: Cluster;
let base: string;

test.before(async () => {
  cluster = await startCluster("quorum", { roles: ["web", "worker"], env: { SLOTFLOW_RATE_LIMIT_PER_MINUTE: "1000000" } });
  base = cluster.baseUrl;
  await deployFixture(base, "quorum-race.flow");
});

test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

/**
 * Reads printed mails incrementally (each process's output from where the last read stopped), so
 * that waiting for the mails of one run among a thousand stays cheap.
 */
class MailReader {
  private readonly seen = new Map<string, PrintedEmail>();
  private readonly read = new Map<number, number>();

  private pull(): void {
    cluster.processes.forEach((p, i) => {
      const from = this.read.get(i) ?? 0;
      const lines = p.output.slice(from);
      const mails = parseEmails(lines);
      // resume after the last complete block
      const lastEnd = lines.lastIndexOf("----- end of email -----");
      if (lastEnd >= 0) this.read.set(i, from + lastEnd + 1);
      for (const m of mails) this.seen.set(m.subject, m);
    });
  }

  /** The mails with these subjects, waiting (polling every 10 ms) up to `ms`. */
  async wait(subjects: string[], ms = 15_000): Promise<PrintedEmail[]> {
    const until = Date.now() + ms;
    for (;;) {
      this.pull();
      const found = subjects.map((s) => this.seen.get(s));
      if (found.every((m) => m !== undefined)) return found as PrintedEmail[];
      if (Date.now() > until) throw new Error(`mails not seen within ${ms} ms: ${subjects.filter((s) => !this.seen.has(s)).join(", ")}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

const mails = new MailReader();
const people = (n: number) => Array.from({ length: n }, (_, i) => `p${i}@example.test`);

/** Starts a run asking `n` people, `k` of whom are enough; resolves its id and each element's mail. */
async function ask(n: number, k: number) {
  const title = uniqueTitle("q");
  const runId = await startRun(base, "QuorumRace", { job: { title }, people: people(n), k });
  const sent = await mails.wait(people(n).map((p) => `answer ${title} ${p}`));
  return { runId, links: sent.map(linkIn), bodies: sent.map((m) => m.body) };
}

test.serial("five responders answer a Quorum: 2 slot at once: exactly two complete, three get 410 quorum-reached — 200 times", async (t) => {
  const rounds = 200;
  let failures = 0;
  for (let round = 0; round < rounds; round++) {
    const { runId, links } = await ask(5, 2);
    const answers: Answer[] = await Promise.all(links.map((url) => postLink(url, { ok: true })));
    const won = answers.filter((a) => a.status === 200 && a.body?.status === "completed").length;
    const refused = answers.filter((a) => a.status === 410 && a.body?.code === "link-dead" && a.body?.reason === "quorum-reached").length;
    if (won !== 2 || refused !== 3) {
      failures++;
      t.fail(`round ${round} (run ${runId}): ${answers.map((a) => `${a.status} ${a.body?.code ?? a.body?.status} ${a.body?.reason ?? ""}`).join(" | ")}`);
    }
  }
  t.is(failures, 0);
});

test.serial("after a race the run shows two completed elements, three cancelled, and is finished; a loser's page says enough others answered", async (t) => {
  const { runId, links } = await ask(5, 2);
  const answers = await Promise.all(links.map((url) => postLink(url, { ok: true })));
  const loser = links[answers.findIndex((a) => a.status === 410)];
  const page = await request(base, "GET", new URL(loser).pathname, { headers: { accept: "text/html" } });
  t.is(page.status, 410);
  t.regex(page.text, /enough others have already answered/);
  const run = await showRun(base, runId);
  t.is(run.status, "finished");
  t.deepEqual(run.slots.filter((s) => s.alias === "answers").map((s) => s.status).sort(), ["cancelled", "cancelled", "cancelled", "completed", "completed"]);
  t.is(run.history.filter((h) => h.kind === "quorum-reached").length, 1);
});

test.serial("each mail carries its element's task URL; each link completes its own element only", async (t) => {
  const { runId, links, bodies } = await ask(3, 3);
  bodies.forEach((body, i) => t.true(body.endsWith(` ${base}/inbox/tasks/${runId}/answers?element=${i}`), body));
  const res = await postLink(links[2], { ok: true });
  t.is(res.status, 200, res.text);
  const run = await showRun(base, runId);
  t.deepEqual(run.slots.filter((s) => s.alias === "answers").map((s) => `${s.element}=${s.status}`), ["0=open", "1=open", "2=completed"]);
});

test.serial("revoke ?element=N ends that element's link alone (410 revoked); the others still work", async (t) => {
  const { runId, links } = await ask(3, 2);
  const revoke = (q: string) => request(base, "POST", `/api/runs/${runId}/slots/answers/link/revoke${q}`, { token: ADMIN_TOKEN });
  const res = await revoke("?element=1");
  t.is(res.status, 200, res.text);
  t.deepEqual(res.body, { revoked: true });
  t.is((await revoke("?element=1")).status, 404, "no live link any more");
  t.is((await revoke("")).status, 404, "a fanned-out slot has no link of its own");
  t.is((await revoke("?element=9")).status, 404);
  t.is((await revoke("?element=-1")).status, 404);
  const dead = await postLink(links[1], { ok: true });
  t.is(dead.status, 410, dead.text);
  t.is(dead.body.reason, "revoked");
  t.is((await postLink(links[0], { ok: true })).status, 200);
  const run = await showRun(base, runId);
  t.like(run.history.find((h) => h.kind === "link-revoked")?.data, { alias: "answers", element: 1 });
});

test.serial("a principal completes at most one element: a second raise is 409 already-answered-by-you", async (t) => {
  const { runId, links } = await ask(3, 3);
  const jwt = await principalJwt("ann", []);
  const raise = (element: number) => request(base, "POST", `/api/runs/${runId}/slots/answers/events?element=${element}`, { token: jwt, json: { ok: true } });
  const first = await raise(0);
  t.is(first.status, 200, first.text);
  const second = await raise(1);
  t.is(second.status, 409, second.text);
  t.is(second.body.code, "already-answered-by-you");
  t.is(second.body.type, "https://slotflow.dev/problems/already-answered-by-you");
  // the element is still open: someone else answers it through its link
  t.is((await postLink(links[1], { ok: true })).status, 200);
});

test.serial("`slotflow revoke RUN ALIAS --element N` revokes that element's link through the server", async (t) => {
  const { runId, links } = await ask(2, 1);
  const env = { ...process.env, SLOTFLOW_ADMIN_TOKEN: ADMIN_TOKEN, BASE_URL: base };
  const out = await promisify(execFile)(process.execPath, [...cliEntry(), "revoke", runId, "answers", "--element", "0"], { cwd: ROOT, env });
  t.deepEqual(JSON.parse(out.stdout), { revoked: true });
  t.is((await postLink(links[0], { ok: true })).body.reason, "revoked");
  t.is((await postLink(links[1], { ok: true })).status, 200);
});
