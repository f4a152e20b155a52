/**
 * Many responders in the engine (v0.4; docs/language.md "Many responders"), through the testing
 * kit on real PostgreSQL: `each { … }` runs once per element after the state's `enter`, each
 * element's link completes that element only, `Quorum: k` closes the slot at k completions and
 * kills the other elements' links with reason "quorum-reached" in the same step, `x.count`,
 * `x.TaskUrl()`, the quorum's bounds as a runtime error, and distinct responders (409
 * already-answered-by-you).
 */
import test from "ava";
import { RefusalError, Workflow } from "../../src/testing/index.js";
import { useKitDatabase } from "../helpers/kit.js";

useKitDatabase(test, "quorum");

const source = (quorum = "Quorum: k") => `workflow Sign(doc: Doc, signers: list<string>, k: int)
entity Doc { log: string?; count: int? }
event Signed(agree: bool)
event Stop()
initial state Collect {
  subscribe Signed(agree) as sigs for each s in signers {
    Candidates: anyone()
    ${quorum}
    each {
      send email to s { subject: "sign " + s, body: sigs.CallbackUrl() + " " + sigs.TaskUrl() }
      doc.log = (doc.log ?? "") + "each " + s + ";"
    }
  }
  subscribe Stop() as stop
  enter {
    doc.log = "enter;"
  }
  on sigs(agree) {
    doc.count = sigs.count
    when (!agree) -> Declined
  }
  milestone Enough when (sigs.done) {
    doc.log = doc.log + "done at " + sigs.count + ";"
  }
  on stop() -> Declined
}
terminal state Declined
`;

const signers = ["a@example.com", "b@example.com", "c@example.com"];
const linkOf = (body: string | null) => body!.split(" ")[0];

test.serial("each runs once per element after enter; each mail carries that element's own link and task URL", async (t) => {
  const run = await (await Workflow.deploy(source())).start({ doc: {}, signers, k: 2 });
  t.is(run.entities.doc.log, "enter;each a@example.com;each b@example.com;each c@example.com;");
  const mails = await run.outbox();
  t.deepEqual(mails.map((m) => m.to), signers);
  const links = mails.map((m) => linkOf(m.body));
  t.is(new Set(links).size, 3);
  for (const [i, m] of mails.entries()) {
    t.regex(m.body!, new RegExp(`/api/workflow/callback/\\S+ \\S+/inbox/tasks/${run.id}/sigs\\?element=${i}$`));
  }
  // Each link completes its own element only.
  await Workflow.Redeem(links[1], { agree: true });
  await run.refresh();
  t.deepEqual(run.slots.filter((s) => s.alias === "sigs").map((s) => `${s.element}=${s.status}`), ["0=open", "1=completed", "2=open"]);
  t.is(run.entities.doc.count, 1);
});

test.serial("Quorum: 2 — two completions make the slot done; the third element is cancelled at once, its link dead with quorum-reached", async (t) => {
  const run = await (await Workflow.deploy(source())).start({ doc: {}, signers, k: 2 });
  const links = (await run.outbox()).map((m) => linkOf(m.body));
  await Workflow.Redeem(links[0], { agree: true });
  await run.refresh();
  t.false(run.entities.doc.log!.toString().includes("done"));
  await Workflow.Redeem(links[2], { agree: true });
  await run.refresh();
  t.is(run.entities.doc.count, 2);
  t.true((run.entities.doc.log as string).endsWith("done at 2;"));
  t.deepEqual(run.slots.filter((s) => s.alias === "sigs").map((s) => `${s.element}=${s.status}`), ["0=completed", "1=cancelled", "2=completed"]);
  t.is(run.state, "Collect");
  const err = await t.throwsAsync(Workflow.Redeem(links[1], { agree: true }), { instanceOf: RefusalError });
  t.is(err!.code, "link-dead");
  t.is(err!.extra.reason, "quorum-reached");
  t.true(run.history.some((h) => h.kind === "quorum-reached"));
});

test.serial("without Quorum every element is needed", async (t) => {
  const run = await (await Workflow.deploy(source("Deadline: 1d"))).start({ doc: {}, signers, k: 2 });
  const links = (await run.outbox()).map((m) => linkOf(m.body));
  await Workflow.Redeem(links[0], { agree: true });
  await Workflow.Redeem(links[1], { agree: true });
  await run.refresh();
  t.false((run.entities.doc.log as string).includes("done"));
  await Workflow.Redeem(links[2], { agree: true });
  await run.refresh();
  t.true((run.entities.doc.log as string).endsWith("done at 3;"));
});

test.serial("a quorum outside 1..elements is a runtime error of the step that creates the slots", async (t) => {
  const wf = await Workflow.deploy(source());
  for (const k of [0, 4]) {
    const err = await t.throwsAsync(wf.start({ doc: {}, signers, k }), { instanceOf: RefusalError });
    t.is(err!.code, "handler-failed");
    t.regex(err!.message, new RegExp(`Quorum of slot "sigs" is ${k}: it must be between 1 and the 3 elements`));
  }
});

test.serial("a principal completes at most one element of a slot: a second is 409 already-answered-by-you, nothing changes", async (t) => {
  const run = await (await Workflow.deploy(source())).start({ doc: {}, signers, k: 3 });
  await run.raise("sigs", { agree: true }, { as: { id: "ann" }, element: 0 });
  const err = await t.throwsAsync(run.raise("sigs", { agree: true }, { as: { id: "ann" }, element: 1 }), { instanceOf: RefusalError });
  t.is(err!.code, "already-answered-by-you");
  t.is(err!.extra.element, 0);
  await run.refresh();
  t.deepEqual(run.slots.filter((s) => s.alias === "sigs").map((s) => s.status), ["completed", "open", "open"]);
  // another principal may answer, and a link holder too
  await run.raise("sigs", { agree: true }, { as: { id: "bob" }, element: 1 });
  t.is(run.entities.doc.count, 2);
});

test.serial("a refusal routes away: the other elements' links die with the run", async (t) => {
  const run = await (await Workflow.deploy(source())).start({ doc: {}, signers, k: 2 });
  const links = (await run.outbox()).map((m) => linkOf(m.body));
  await Workflow.Redeem(links[0], { agree: false });
  await run.refresh();
  t.is(run.state, "Declined");
  const err = await t.throwsAsync(Workflow.Redeem(links[1], { agree: true }), { instanceOf: RefusalError });
  t.is(err!.extra.reason, "run-finished");
});

test.serial("a fanned-out slot an upgrade adds runs its each in the upgrade's step: one link per element, Quorum counted", async (t) => {
  const v1 = `workflow UpEach(doc: Doc, signers: list<string>, k: int)
entity Doc { log: string?; count: int? }
event Signed(agree: bool)
event Stop()
initial state Collect {
  subscribe Stop() as stop
  on stop() -> Declined
}
terminal state Declined
`;
  const wf = await Workflow.deploy(v1);
  const run = await wf.start({ doc: {}, signers, k: 1 });
  t.is((await run.outbox()).length, 0);
  await Workflow.deploy(v1.replace("  on stop() -> Declined\n", `  on stop() -> Declined
  subscribe Signed(agree) as sigs for each s in signers {
    Quorum: k
    each { send email to s { subject: "sign", body: sigs.CallbackUrl() } }
  }
  on sigs(agree) { doc.count = sigs.count }
`));
  await run.refresh();
  t.is(run.version, 2);
  const mails = await run.outbox();
  t.deepEqual(mails.map((m) => m.to), signers);
  await Workflow.Redeem(mails[1].body!, { agree: true });
  await run.refresh();
  t.deepEqual(run.slots.filter((s) => s.alias === "sigs").map((s) => s.status), ["cancelled", "completed", "cancelled"]);
  t.is(run.entities.doc.count, 1);
});
