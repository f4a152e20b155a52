/**
 * examples/contract-signing.flow on real PostgreSQL: many responders (v0.4) — each outside signer
 * is mailed a link of their own from `each { … }`, two of three signatures are enough (`Quorum: 2`,
 * the third link then answers link-dead with reason quorum-reached), one refusal is a veto —
 * and After (the countersign link is live but refused until the quorum is in), a milestone
 * firing once, drop slot, and Requires over run data.
 */
import test from "ava";
import { decodeJwt } from "jose";
import { RefusalError, Workflow, type TestRun } from "../../src/testing/index.js";
import { useKitDatabase } from "../helpers/kit.js";

useKitDatabase(test, "contract");

const SIGNERS = ["ann@example.com", "bob@example.com", "cem@example.com"];
const input = (value = 5000, signers = SIGNERS) => ({ contract: { title: "NDA", value }, signers });

/** Each signer's own link, from the mail `each` sent them. */
async function signerLinks(run: TestRun): Promise<Map<string, string>> {
  const mails = (await run.outbox()).filter((m) => m.subject === "Please sign NDA");
  return new Map(mails.map((m) => [m.to, /https?:\/\/\S+\/api\/workflow\/callback\/\S+/.exec(m.body!)![0]]));
}

test.serial("three signers each receive their own link; two answer, the contract is executed, the third link answers quorum-reached", async (t) => {
  const run = await (await Workflow.deploy("examples/contract-signing.flow")).start(input());
  const bySlot = run.slots.map((s) => `${s.alias}[${s.element ?? "-"}]=${s.status}`);
  t.deepEqual(bySlot.sort(), ["counter[-]=waiting", "signatures[0]=open", "signatures[1]=open", "signatures[2]=open", "withdraw[-]=open"]);
  const links = await signerLinks(run);
  t.deepEqual([...links.keys()], SIGNERS);
  t.is(new Set(links.values()).size, 3, "one link per signer");

  const url = run.entities.contract.counterSignUrl as string;
  const early = await t.throwsAsync(Workflow.Redeem(url, { signedAt: "2026-11-21T10:00:00Z" }), { instanceOf: RefusalError });
  t.is(early!.code, "slot-not-open");

  const signed = await Workflow.Redeem(links.get("cem@example.com")!, { agree: true });
  // the kit answers with the receipt a server would give (v0.4 "Receipts"): this element's slot
  t.like(decodeJwt(signed.receipt!), { sub: `runs/${run.id}/slots/signatures/2`, workflow: "ContractSigning", event: "Sign", state: "Collecting", visit: 1 });
  await run.refresh();
  t.is(run.slots.find((s) => s.alias === "counter")!.status, "waiting");
  t.deepEqual(run.slots.filter((s) => s.alias === "signatures").map((s) => s.status), ["open", "open", "completed"]);
  await Workflow.Redeem(links.get("ann@example.com")!, { agree: true });
  await run.refresh();
  t.is(run.slots.find((s) => s.alias === "counter")!.status, "open");
  t.deepEqual(run.slots.filter((s) => s.alias === "signatures").map((s) => s.status), ["completed", "cancelled", "completed"]);

  // The milestone fired once, mailing the countersign link minted on entry.
  const legal = (await run.outbox()).filter((m) => m.to === "legal@example.com");
  t.is(legal.length, 1);
  t.is(legal[0].subject, "NDA is signed");
  t.is(legal[0].body, `Open this link to answer: ${url}`);

  await Workflow.Redeem(url, { signedAt: "2026-11-21T10:00:00+01:00" });
  await run.refresh();
  t.is(run.state, "Executed");
  t.is(run.status, "finished");

  const late = await t.throwsAsync(Workflow.Redeem(links.get("bob@example.com")!, { agree: true }), { instanceOf: RefusalError });
  t.is(late!.code, "link-dead");
  t.is(late!.extra.reason, "quorum-reached");
});

test.serial("one refusal is a veto: the status names the signer, the run is Declined, the other links die", async (t) => {
  const run = await (await Workflow.deploy("examples/contract-signing.flow")).start(input());
  const links = await signerLinks(run);
  await Workflow.Redeem(links.get("bob@example.com")!, { agree: false });
  await run.refresh();
  t.is(run.state, "Declined");
  t.is(run.entities.contract.status, "declined by bob@example.com");
  for (const url of [links.get("ann@example.com")!, links.get("cem@example.com")!, run.entities.contract.counterSignUrl as string]) {
    const err = await t.throwsAsync(Workflow.Redeem(url, { agree: true }), { instanceOf: RefusalError });
    t.is(err!.code, "link-dead");
    t.is(err!.extra.reason, "run-finished");
  }
});

test.serial("a refusal that is the second answer still vetoes: the quorum closes the third element, then the handler declines", async (t) => {
  const run = await (await Workflow.deploy("examples/contract-signing.flow")).start(input());
  const links = await signerLinks(run);
  await Workflow.Redeem(links.get("ann@example.com")!, { agree: true });
  await Workflow.Redeem(links.get("bob@example.com")!, { agree: false });
  await run.refresh();
  t.is(run.state, "Declined");
  const err = await t.throwsAsync(Workflow.Redeem(links.get("cem@example.com")!, { agree: true }), { instanceOf: RefusalError });
  t.is(err!.extra.reason, "quorum-reached");
  t.is((await run.outbox()).filter((m) => m.to === "legal@example.com").length, 0, "the milestone did not fire: the run left the state");
});

test.serial("withdraw drops the countersign slot: its link answers link-dead (dropped)", async (t) => {
  const run = await (await Workflow.deploy("examples/contract-signing.flow")).start(input());
  const url = run.entities.contract.counterSignUrl as string;
  await run.raise("withdraw", { reason: "deal off" }, { as: { id: "lee", roles: ["legal"] } });
  t.is(run.state, "Declined");
  t.is(run.entities.contract.status, "withdrawn: deal off");
  t.is(run.slots.find((s) => s.alias === "counter")!.status, "dropped");
  const err = await t.throwsAsync(Workflow.Redeem(url, { signedAt: "2026-11-21T10:00:00Z" }), { instanceOf: RefusalError });
  t.is(err!.code, "link-dead");
  t.is(err!.extra.reason, "dropped");
});

test.serial("Requires over run data refuses the countersign of a contract worth a million or more", async (t) => {
  const run = await (await Workflow.deploy("examples/contract-signing.flow")).start(input(2_000_000, SIGNERS.slice(0, 2)));
  for (const link of (await signerLinks(run)).values()) await Workflow.Redeem(link, { agree: true });
  const err = await t.throwsAsync(Workflow.Redeem(run.entities.contract.counterSignUrl as string, { signedAt: "2026-11-21T10:00:00Z" }), { instanceOf: RefusalError });
  t.is(err!.code, "requires-failed");
});

test.serial("issue 38 M2 (the audit's scenario): insiders cannot sign the outside signers' elements, and a user with no role cannot countersign", async (t) => {
  const run = await (await Workflow.deploy("examples/contract-signing.flow")).start(input());
  // v0.4 let two `legal` users complete the signers' quorum and anyone signed in countersign: no more
  for (const [id, element] of [["lee", 0], ["lou", 1]] as const) {
    const err = await t.throwsAsync(run.raise("signatures", { agree: true }, { as: { id, roles: ["legal"] }, element }), { instanceOf: RefusalError });
    t.is(err!.code, "not-a-candidate", `${id} (legal) on element ${element}`);
    t.regex(err!.message, /answered only through its link/);
  }
  const bare = await t.throwsAsync(run.raise("signatures", { agree: true }, { as: { id: "ann" } }), { instanceOf: RefusalError });
  t.is(bare!.code, "not-found", "a fanned-out slot must still be named with an element index");
  await run.refresh();
  t.deepEqual(run.slots.filter((s) => s.alias === "signatures").map((s) => s.status), ["open", "open", "open"], "no element was answered");
  // the signers sign through their links; the countersign opens — and still refuses every principal
  const links = await signerLinks(run);
  await Workflow.Redeem(links.get("ann@example.com")!, { agree: true });
  await Workflow.Redeem(links.get("bob@example.com")!, { agree: true });
  await run.refresh();
  t.is(run.slots.find((s) => s.alias === "counter")!.status, "open");
  for (const who of [{ id: "nobody", roles: [] }, { id: "lee", roles: ["legal"] }]) {
    const err = await t.throwsAsync(run.raise("counter", { signedAt: "2026-11-21T10:00:00Z" }, { as: who }), { instanceOf: RefusalError });
    t.is(err!.code, "not-a-candidate", who.id);
  }
  await run.refresh();
  t.is(run.state, "Collecting", "not Executed without the countersign link");
  await Workflow.Redeem(run.entities.contract.counterSignUrl as string, { signedAt: "2026-11-21T10:00:00Z" });
  await run.refresh();
  t.is(run.state, "Executed");
});

test.serial("fewer than two signers is a runtime error of the start: the quorum cannot be met", async (t) => {
  const err = await t.throwsAsync((await Workflow.deploy("examples/contract-signing.flow")).start(input(5000, ["ann@example.com"])), { instanceOf: RefusalError });
  t.is(err!.code, "handler-failed");
  t.regex(err!.message, /Quorum of slot "signatures" is 2: it must be between 1 and the 1 elements/);
});

test.serial("issue 43 item 3: every 3 days each signer who has not signed is reminded with a fresh link; the old link answers link-retired", async (t) => {
  const run = await (await Workflow.deploy("examples/contract-signing.flow")).start(input());
  const first = await signerLinks(run);
  await Workflow.Redeem(first.get("ann@example.com")!, { agree: true });
  await run.advanceTime("3d");
  const reminders = (await run.outbox()).filter((m) => m.subject === "Reminder: please sign NDA");
  t.deepEqual(reminders.map((m) => m.to).sort(), ["bob@example.com", "cem@example.com"], "ann has signed: no reminder for her");
  const fresh = new Map(reminders.map((m) => [m.to, /https?:\/\/\S+\/api\/workflow\/callback\/\S+/.exec(m.body!)![0]]));
  const old = await t.throwsAsync(Workflow.Redeem(first.get("bob@example.com")!, { agree: true }), { instanceOf: RefusalError });
  t.is(old!.code, "link-retired");
  await Workflow.Redeem(fresh.get("bob@example.com")!, { agree: true });
  await run.refresh();
  t.deepEqual(run.slots.filter((s) => s.alias === "signatures").map((s) => s.status), ["completed", "completed", "cancelled"]);
  t.deepEqual(run.slotTimers, [], "the quorum stopped cem's reminders");
  await run.advanceTime("3d");
  t.is((await run.outbox()).filter((m) => m.subject === "Reminder: please sign NDA").length, 2);
});
