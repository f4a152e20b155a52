/**
 * The author's test shown in docs/testing.md, kept here so the documentation stays true.
 * It asserts, together, the ordinary path's refusal of a principal that the [Authorize] predicate
 * rejects and the bypass of that predicate through the link (callback-links spec §1, bypassed
 * gates, rule 4).
 */
import test from "ava";
import { RefusalError, Workflow } from "slotflow/testing";
import { useKitDatabase } from "../helpers/kit.js";

useKitDatabase(test, "kit");

test("a buyer is refused by [Authorize]; the supplier's link bypasses it", async (t) => {
  const wf = await Workflow.deploy("test/fixtures/purchase-order.flow");
  const run = await wf.start({ order: { item: "200 pallets", supplierEmail: "sales@supplier.example" } });

  // The ordinary path enforces the predicate: a buyer is a candidate but not a buyer lead.
  const denied = await t.throwsAsync(run.raise("confirm", { reference: "PO-1" }, { as: { id: "bo", roles: ["buyer"] } }), {
    instanceOf: RefusalError,
  });
  t.is(denied!.code, "authorize-denied");
  t.is(run.state, "Waiting");

  // The link carries no principal: Candidates and [Authorize] are not evaluated.
  const [mail] = await run.outbox();
  t.is(mail.to, "sales@supplier.example");
  await Workflow.Redeem(mail.body!, { reference: "SUP-778" });

  await run.refresh();
  t.is(run.state, "Confirmed");
  t.is(run.entities.order.reference, "SUP-778");

  // Single use: the same link again is refused.
  const again = await t.throwsAsync(Workflow.Redeem(mail.body!, { reference: "SUP-779" }), { instanceOf: RefusalError });
  t.is(again!.code, "link-burned");
});
