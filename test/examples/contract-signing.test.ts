/**
 * examples/contract-signing.flow on real PostgreSQL: fan-out (one slot per signer, raised with
 * an element index), user() candidates bound to the element, After (the countersign link is
 * live but refused until every signature is in), a milestone firing once, drop slot, and
 * Requires over run data.
 */
import test from "ava";
import { RefusalError, Workflow } from "../../src/testing/index.js";
import { useKitDatabase } from "../helpers/kit.js";

useKitDatabase(test, "contract");

const input = (value = 5000, signers = ["ann", "bob"]) => ({ contract: { title: "NDA", value }, signers });

test.serial("one slot per signer; the countersign slot waits on them, its link refused with slot-not-open until they are done", async (t) => {
  const run = await (await Workflow.deploy("examples/contract-signing.flow")).start(input());
  const bySlot = run.slots.map((s) => `${s.alias}[${s.element ?? "-"}]=${s.status}`);
  t.deepEqual(bySlot.sort(), ["counter[-]=waiting", "signatures[0]=open", "signatures[1]=open", "withdraw[-]=open"]);
  const url = run.entities.contract.counterSignUrl as string;
  const early = await t.throwsAsync(Workflow.Redeem(url, { signedAt: "2026-11-21T10:00:00Z" }), { instanceOf: RefusalError });
  t.is(early!.code, "slot-not-open");

  // Each element admits only its own signer (user(s) with s bound to the element).
  const wrong = await t.throwsAsync(run.raise("signatures", { agree: true }, { as: { id: "bob" }, element: 0 }), { instanceOf: RefusalError });
  t.is(wrong!.code, "not-a-candidate");
  await run.raise("signatures", { agree: true }, { as: { id: "ann" }, element: 0 });
  t.is(run.slots.find((s) => s.alias === "counter")!.status, "waiting");
  t.is((await run.outbox()).length, 0);
  await run.raise("signatures", { agree: true }, { as: { id: "bob" }, element: 1 });
  t.is(run.slots.find((s) => s.alias === "counter")!.status, "open");

  // The milestone fired once, mailing the countersign link minted on entry.
  const mails = await run.outbox();
  t.is(mails.length, 1);
  t.is(mails[0].subject, "NDA is signed");
  t.is(mails[0].body, `Open this link to answer: ${url}`);

  await Workflow.Redeem(url, { signedAt: "2026-11-21T10:00:00+01:00" });
  await run.refresh();
  t.is(run.state, "Executed");
  t.is(run.status, "finished");
});

test.serial("a signer declining sets the status from the element and routes to Declined; other links die", async (t) => {
  const run = await (await Workflow.deploy("examples/contract-signing.flow")).start(input());
  await run.raise("signatures", { agree: false }, { as: { id: "bob" }, element: 1 });
  t.is(run.state, "Declined");
  t.is(run.entities.contract.status, "declined by bob");
  const err = await t.throwsAsync(Workflow.Redeem(run.entities.contract.counterSignUrl as string, { signedAt: "2026-11-21T10:00:00Z" }), { instanceOf: RefusalError });
  t.is(err!.code, "link-dead");
  t.is(err!.extra.reason, "run-finished");
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
  const run = await (await Workflow.deploy("examples/contract-signing.flow")).start(input(2_000_000, ["ann"]));
  await run.raise("signatures", { agree: true }, { as: { id: "ann" }, element: 0 });
  const err = await t.throwsAsync(Workflow.Redeem(run.entities.contract.counterSignUrl as string, { signedAt: "2026-11-21T10:00:00Z" }), { instanceOf: RefusalError });
  t.is(err!.code, "requires-failed");
});

test.serial("a fanned-out slot must be raised with an element index", async (t) => {
  const run = await (await Workflow.deploy("examples/contract-signing.flow")).start(input());
  const err = await t.throwsAsync(run.raise("signatures", { agree: true }, { as: { id: "ann" } }), { instanceOf: RefusalError });
  t.is(err!.code, "not-found");
});
