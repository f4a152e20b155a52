/**
 * Links across deploys (callback-links spec §3 last row, §7 last row, §9; language reference
 * "Versioning"): a deploy that changes an event without a mapping is refused; with a mapping,
 * live runs are upgraded and a link minted under the older version keeps working, its body read
 * against the minting version's signature and translated forward. The version-1 fixture stays in
 * test/fixtures so that links minted under it are replayed against every later engine.
 */
import test from "ava";
import { RefusalError, Workflow } from "../../src/testing/index.js";
import { useKitDatabase } from "../helpers/kit.js";

useKitDatabase(test, "versioning");

const V1 = "test/fixtures/versioning/quote-v1.flow";
const V2 = "test/fixtures/versioning/quote-v2.flow";
const V2_UNMAPPED = "test/fixtures/versioning/quote-v2-unmapped.flow";

test.serial("deploying the same source again creates no version", async (t) => {
  const a = await Workflow.deploy(V1);
  const b = await Workflow.deploy(V1);
  t.is(a.version, 1);
  t.is(b.version, 1);
});

test.serial("a deploy that changes an event's parameters without a mapping is refused, naming both signatures", async (t) => {
  const err = await t.throwsAsync(Workflow.deploy(V2_UNMAPPED), { instanceOf: RefusalError });
  t.is(err!.code, "version-conflict");
  t.regex(err!.message, /event Accept changed from \(ok: bool\) to \(accepted: bool, note: string\?\)/);
});

test.serial("a link minted under version 1 still completes its slot after version 2 is deployed, its body translated forward", async (t) => {
  const v1 = await Workflow.deploy(V1);
  const run = await v1.start({ quote: { customer: "Initech" } });
  const oldLink = run.entities.quote.acceptUrl as string;

  const v2 = await Workflow.deploy(V2);
  t.is(v2.version, 2);
  await run.refresh();
  t.is(run.version, 2, "the live run was upgraded");

  // The body is read against the signature at the minting version: the new shape is refused...
  const wrongShape = await t.throwsAsync(Workflow.Redeem(oldLink, { accepted: true, note: null }), { instanceOf: RefusalError });
  t.is(wrongShape!.code, "invalid-body");
  t.deepEqual(wrongShape!.extra.expects, { ok: "boolean" });
  // ...and the old shape is translated through `map event` and handled by version 2's handler.
  await Workflow.Redeem(oldLink, { ok: true });
  await run.refresh();
  t.is(run.state, "Won");
  t.is(run.entities.quote.outcome, "accepted=true / answered through a version 1 link");
});

test.serial("runs started after the deploy mint links that take the new shape", async (t) => {
  await Workflow.deploy(V1).catch(() => undefined);
  const current = await Workflow.deploy(V2);
  const run = await current.start({ quote: { customer: "Globex" } });
  const err = await t.throwsAsync(Workflow.Redeem(run.entities.quote.acceptUrl as string, { ok: true }), { instanceOf: RefusalError });
  t.is(err!.code, "invalid-body");
  await Workflow.Redeem(run.entities.quote.acceptUrl as string, { accepted: false, note: "too dear" });
  await run.refresh();
  t.is(run.state, "Lost");
  t.is(run.entities.quote.outcome, "accepted=false / too dear");
});
