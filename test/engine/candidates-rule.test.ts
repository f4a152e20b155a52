/**
 * Who may answer a slot without Candidates, at the engine on real PostgreSQL (issue 38 M2;
 * docs/language.md "Who may answer"):
 * - since v0.5 such a slot is answered only through its link: the raise (worker, under the run
 *   lock) and the web's early check both refuse 403 not-a-candidate, whatever the principal holds;
 * - `Candidates: anyone()` admits any signed-in principal, roles or none;
 * - a version deployed before v0.5 (its compiled form without `withoutCandidates`) keeps the v0.4
 *   meaning for its runs; deploying the same source again makes a new version with the new
 *   meaning, and the live runs move to it;
 * - neither kind of slot is in anyone's inbox (only role()/user() name people for the inbox).
 */
import { randomUUID } from "node:crypto";
import test from "ava";
import { plainReader } from "../../src/web/page/reader.js";
import { createDb, type Db } from "../../src/db.js";
import { applyCommand, type EngineDeps } from "../../src/engine/commands/apply.js";
import { prepareRaise } from "../../src/engine/commands/prepare.js";
import type { Command } from "../../src/engine/commands/types.js";
import { deploy } from "../../src/engine/versions/deploy.js";
import { Sealer } from "../../src/engine/sealing/seal.js";
import { showRun } from "../../src/engine/views/views.js";
import { inboxPage } from "../../src/engine/views/inbox.js";
import { compile } from "../../src/lang/compile.js";
import { taskView } from "../../src/engine/views/task.js";
import { refusedDocument } from "../../src/web/task/document.js";
import { dropDatabase, freshDatabase } from "../helpers/db.js";

const FLOW = (name: string) => `workflow ${name}(owner: Owner)
entity Owner { email: string; url: string? }
event Answer(ok: bool)
initial state Open {
  subscribe Answer(ok) as bare
  subscribe Answer(ok) as open {
    Candidates: anyone()
  }
  subscribe Answer(ok) as staff {
    Candidates: role("staff")
    Title: "Secret title for " + owner.email
    Intro: "Secret intro"
  }
  enter {
    owner.url = bare.CallbackUrl()
    send email to owner.email { subject: "Answer", body: owner.url ?? "" }
  }
  on bare(ok) -> Done
}
terminal state Done
`;

/** The v0.4 source (no anyone(): a v0.4 compiler did not know it). */
const OLD_FLOW = `workflow Old(owner: Owner)
entity Owner { email: string }
event Answer(ok: bool)
initial state Open {
  subscribe Answer(ok) as bare
  subscribe Answer(ok) as other
  on bare(ok) -> Done
}
terminal state Done
`;

let url = "";
let db: Db;
let deps: EngineDeps;
const sealer = new Sealer("test-seal-key-candidates-rule");

test.before(async () => {
  url = await freshDatabase("candrule");
  db = createDb(url, 4);
  deps = { db, sealer, baseUrl: "http://slotflow.test" };
  await deploy(db, FLOW("Door"));
});
test.after.always(async () => {
  await db?.$disconnect();
  if (url) await dropDatabase(url);
});

const staffer = { id: "ann", email: "ann@example.test", roles: ["staff", "legal", "admin"] };
const nobody = { id: "nobody", email: null, roles: [] as string[] };

async function start(workflow: string, version: number, input: Record<string, unknown> = { owner: { email: "vendor@example.test", url: null } }): Promise<string> {
  const runId = randomUUID();
  const started = await applyCommand(deps, { kind: "start", commandId: randomUUID(), runId, workflow, version, input });
  if (!started.outcome.ok) throw new Error(JSON.stringify(started.outcome.refusal));
  return runId;
}

function raise(runId: string, alias: string, principal: { id: string; email: string | null; roles: string[] }): Extract<Command, { kind: "raise" }> {
  return { kind: "raise", commandId: randomUUID(), runId, alias, element: null, args: { ok: true }, principal };
}

test("a slot without Candidates refuses every principal, at the worker and at the web's early check; its status is unchanged", async (t) => {
  const runId = await start("Door", 1);
  for (const who of [staffer, nobody]) {
    const applied = await applyCommand(deps, raise(runId, "bare", who));
    t.false(applied.outcome.ok, who.id);
    if (!applied.outcome.ok) {
      t.is(applied.outcome.refusal.code, "not-a-candidate");
      t.regex(applied.outcome.refusal.detail, /answered only through its link/);
    }
    const early = await prepareRaise(deps, runId, "bare", null, { ok: true }, who);
    t.false(early.ok);
    if (!early.ok) t.is(early.refusal.code, "not-a-candidate", "refused before the body is looked at");
  }
  const bodyless = await prepareRaise(deps, runId, "bare", null, { wrong: 1 }, nobody);
  t.false(bodyless.ok);
  if (!bodyless.ok) t.is(bodyless.refusal.code, "not-a-candidate", "a non-candidate never learns the event's signature");
  const view = await showRun(db, sealer, runId);
  t.is(view!.state, "Open");
  t.is(view!.slots.find((s) => s.alias === "bare")!.status, "open");
});

test("Candidates: anyone() admits any signed-in principal, with roles or none", async (t) => {
  for (const who of [nobody, staffer]) {
    const runId = await start("Door", 1);
    const early = await prepareRaise(deps, runId, "open", null, { ok: true }, who);
    t.true(early.ok, who.id);
    const applied = await applyCommand(deps, raise(runId, "open", who));
    t.true(applied.outcome.ok, who.id);
    const view = await showRun(db, sealer, runId);
    t.like(view!.slots.find((s) => s.alias === "open"), { status: "completed", answeredBy: { via: "principal", id: who.id } });
  }
});

test("neither a slot without Candidates nor one with anyone() is in anybody's inbox; a role() slot is", async (t) => {
  const runId = await start("Door", 1);
  const filter = { workflow: "Door", order: "newest" as const, limit: 100, after: null };
  for (const who of [staffer, nobody, { id: "x", roles: ["anyone", ""] }]) {
    const page = await inboxPage(deps, who, filter);
    const mine = page.tasks.filter((task) => task.runId === runId).map((task) => task.alias);
    t.deepEqual(mine, who === staffer ? ["staff"] : [], who.id);
  }
});

test("a version deployed before v0.5 keeps the v0.4 meaning; the same source deployed again is a new version with the new one", async (t) => {
  // a v0.4 deploy: its compiled form has no withoutCandidates
  const old = await deploy(db, OLD_FLOW, "old.flow", {
    compile: (source, file) => {
      const r = compile(source, file);
      if (r.workflow) delete (r.workflow as { withoutCandidates?: string }).withoutCandidates;
      return r;
    },
  });
  t.is(old.version, 1);
  const before = await start("Old", 1, { owner: { email: "o@example.test" } });
  const applied = await applyCommand(deps, raise(before, "other", nobody));
  t.true(applied.outcome.ok, "v0.4: any signed-in principal answers a slot without Candidates");
  const early = await prepareRaise(deps, before, "bare", null, { ok: true }, nobody);
  t.true(early.ok);

  // the same source under v0.5: not "unchanged" — a new version, and the live run moves to it
  const again = await deploy(db, OLD_FLOW, "old.flow");
  t.like(again, { version: 2, created: true, upgradedRuns: 1 });
  const moved = await applyCommand(deps, raise(before, "bare", nobody));
  t.false(moved.outcome.ok);
  if (!moved.outcome.ok) t.is(moved.outcome.refusal.code, "not-a-candidate");
  const after = await start("Old", 2, { owner: { email: "o@example.test" } });
  const refused = await applyCommand(deps, raise(after, "other", staffer));
  t.false(refused.outcome.ok);
  // and now the same source is unchanged
  t.like(await deploy(db, OLD_FLOW, "old.flow"), { version: 2, created: false });
});

test("L1: a principal who may not answer a slot gets no Title, Intro or answerer, open or closed; the 403 page shows none", async (t) => {
  const runId = await start("Door", 1, { owner: { email: "vendor-secret@example.test", url: null } });
  const viewOf = (alias: string, who: { id: string; email: string | null; roles: string[] }) => taskView(deps, runId, alias, null, who);
  // open: refused, nothing of the task
  const open = (await viewOf("staff", nobody))!;
  t.is(open.refusal?.code, "not-a-candidate");
  t.is(open.title, null);
  t.is(open.intro, null);
  t.is((await viewOf("staff", staffer))!.title, "Secret title for vendor-secret@example.test");
  // closed (answered by the staffer): still refused, no answerer
  t.true((await applyCommand(deps, raise(runId, "staff", staffer))).outcome.ok);
  const closed = (await viewOf("staff", nobody))!;
  t.is(closed.slot.status, "completed");
  t.is(closed.refusal?.code, "not-a-candidate");
  t.is(closed.title, null);
  t.is(closed.intro, null);
  t.is(closed.slot.answeredBy, null);
  const mine = (await viewOf("staff", staffer))!;
  t.is(mine.refusal, null);
  t.like(mine.slot.answeredBy, { id: "ann" });
  t.is(mine.intro, "Secret intro");
  // a link-only slot refuses everybody, the staffer too
  t.is((await viewOf("bare", staffer))!.refusal?.code, "not-a-candidate");
  t.is((await viewOf("bare", staffer))!.access, "link-only");
  const page = refusedDocument({ nonce: "nonce", reader: plainReader() }, { principal: { id: "nobody", email: null, roles: [] }, development: false, csrf: "x" } as unknown as Parameters<typeof refusedDocument>[1], closed, "not-a-candidate");
  t.notRegex(page, /Secret|vendor-secret|ann@example/);
  t.regex(page, /anyone with the role “staff”/);
});
