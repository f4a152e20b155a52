/**
 * `Workflow.Redeem(url, args, { idempotencyKey })` behaves as a POST with that `Idempotency-Key`
 * header (HTTP API "Idempotent retries"): a retry of the same request resolves "completed" again,
 * the same key with other args is `idempotency-key-reused`, and another key is `link-burned`.
 */
import test from "ava";
import { RefusalError, Workflow } from "slotflow/testing";
import { useKitDatabase } from "../helpers/kit.js";

useKitDatabase(test, "kitidem");

test("a retried Redeem with its Idempotency-Key resolves completed once; other args or keys are refused", async (t) => {
  const wf = await Workflow.deploy("test/fixtures/purchase-order.flow");
  const run = await wf.start({ order: { item: "3 crates", supplierEmail: "sales@supplier.example" } });
  const [mail] = await run.outbox();

  const first = await Workflow.Redeem(mail.body!, { reference: "SUP-1" }, { idempotencyKey: "k-1" });
  t.is(first.status, "completed");
  t.regex(first.receipt ?? "", /^[\w-]+\.[\w-]+\.[\w-]+$/, "the first answer carries its receipt (v0.4)");
  t.deepEqual(await Workflow.Redeem(mail.body!, { reference: "SUP-1" }, { idempotencyKey: "k-1" }), { status: "completed" }, "a same-key retry applies nothing in the kit");
  await run.refresh();
  t.is(run.entities.order.reference, "SUP-1");

  const reused = await t.throwsAsync(Workflow.Redeem(mail.body!, { reference: "SUP-2" }, { idempotencyKey: "k-1" }), { instanceOf: RefusalError });
  t.is(reused!.code, "idempotency-key-reused");
  const other = await t.throwsAsync(Workflow.Redeem(mail.body!, { reference: "SUP-1" }, { idempotencyKey: "k-2" }), { instanceOf: RefusalError });
  t.is(other!.code, "link-burned");
  const bad = await t.throwsAsync(Workflow.Redeem(mail.body!, { reference: "SUP-1" }, { idempotencyKey: "" }), { instanceOf: RefusalError });
  t.is(bad!.code, "invalid-idempotency-key");
});
