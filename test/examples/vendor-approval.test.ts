/**
 * examples/vendor-approval.flow through the engine on real PostgreSQL (testing kit): the link
 * minted on entry, the email that carries it, approval and cancellation through the link,
 * re-minting on a corrected address, the ordinary path's gates, `Requires`, and expiry.
 */
import test from "ava";
import { RefusalError, Workflow } from "../../src/testing/index.js";
import { sql } from "../helpers/db.js";
import { useKitDatabase } from "../helpers/kit.js";

useKitDatabase(test, "vendor");

const input = (amount = 1200) => ({ vendor: { name: "Acme", contactEmail: "ap@acme.example" }, amount });

test.serial("entering Review mints a link onto the vendor row and emails it", async (t) => {
  const wf = await Workflow.deploy("examples/vendor-approval.flow");
  const run = await wf.start(input());
  t.is(run.state, "Review");
  t.is(run.status, "running");
  const url = run.entities.vendor.approvalUrl as string;
  t.regex(url, /^http:\/\/slotflow\.test\/api\/workflow\/callback\/sfl_[A-Za-z0-9_-]{49}$/);
  const [mail] = await run.outbox();
  t.is(mail.to, "ap@acme.example");
  t.is(mail.subject, "Approve Acme?");
  t.true(mail.body!.endsWith(url));
  t.deepEqual(
    run.slots.map((s) => [s.alias, s.status]),
    [
      ["decision", "open"],
      ["fixEmail", "open"],
    ],
  );
});

test.serial("the vendor approves through the link: the run ends in Approved with the note kept", async (t) => {
  const wf = await Workflow.deploy("examples/vendor-approval.flow");
  const run = await wf.start(input());
  await Workflow.Redeem(run.entities.vendor.approvalUrl as string, { ok: true, note: "verified" });
  await run.refresh();
  t.is(run.state, "Approved");
  t.is(run.status, "finished");
  t.is(run.entities.vendor.reviewNote, "verified");
  const [link] = await sql(process.env.DATABASE_URL!, "SELECT l.status FROM links l JOIN slots s ON s.id = l.slot_id WHERE l.run_id = $1 AND s.alias = 'decision'", [run.id]);
  t.is(link.status, "burned");
});

test.serial("a refusal through the link routes to Cancelled (the default arm)", async (t) => {
  const run = await (await Workflow.deploy("examples/vendor-approval.flow")).start(input());
  await Workflow.Redeem(run.entities.vendor.approvalUrl as string, { ok: false, note: "no" });
  await run.refresh();
  t.is(run.state, "Cancelled");
});

test.serial("a corrected address re-mints: the old link is retired, the new one works", async (t) => {
  const run = await (await Workflow.deploy("examples/vendor-approval.flow")).start(input());
  const first = run.entities.vendor.approvalUrl as string;
  // v0.5 constraints: @email refuses anything but one plain address, naming the rule; nothing changes
  const bad = await t.throwsAsync(run.raise("fixEmail", { email: "billing@acme.example, x@evil.example" }, { as: { id: "olga", roles: ["finance"] } }), { instanceOf: RefusalError });
  t.is(bad!.code, "invalid-body");
  t.like((bad!.extra as { errors: unknown[] }).errors[0], { name: "email", rule: "@email" });
  t.is(run.entities.vendor.approvalUrl, first);
  await run.raise("fixEmail", { email: "billing@acme.example" }, { as: { id: "olga", roles: ["finance"] } });
  const second = run.entities.vendor.approvalUrl as string;
  t.not(first, second);
  t.is(run.entities.vendor.contactEmail, "billing@acme.example");
  const mails = await run.outbox();
  t.is(mails.length, 2);
  t.is(mails[1].to, "billing@acme.example");
  t.is(mails[1].body, `Open this link to answer: ${second}`);
  const err = await t.throwsAsync(Workflow.Redeem(first, { ok: true, note: "x" }), { instanceOf: RefusalError });
  t.is(err!.code, "link-retired");
  await Workflow.Redeem(second, { ok: true, note: "x" });
  t.is((await run.refresh()).state, "Approved");
});

test.serial("the link cannot be re-routed by someone who may not decide: ops may not correct the address (issue 38 L7)", async (t) => {
  const run = await (await Workflow.deploy("examples/vendor-approval.flow")).start(input());
  const first = run.entities.vendor.approvalUrl as string;
  const refused = await t.throwsAsync(run.raise("fixEmail", { email: "olga@ops.example" }, { as: { id: "olga", roles: ["ops"] } }), { instanceOf: RefusalError });
  t.is(refused!.code, "not-a-candidate");
  await run.refresh();
  t.is(run.entities.vendor.approvalUrl, first, "no new link was minted");
  t.deepEqual((await run.outbox()).map((m) => m.to), ["ap@acme.example"], "nothing was mailed to ops");
  // the corrector must be one who may decide anyway
  const fix = run.slots.find((s) => s.alias === "fixEmail");
  t.is(fix?.status, "open");
});

test.serial("Candidates is enforced on the ordinary path and bypassed through the link (spec §1, bypassed gates, rule 1)", async (t) => {
  const run = await (await Workflow.deploy("examples/vendor-approval.flow")).start(input());
  const notCandidate = await t.throwsAsync(run.raise("decision", { ok: true, note: "x" }, { as: { id: "eve", roles: ["ops"] } }), { instanceOf: RefusalError });
  t.is(notCandidate!.code, "not-a-candidate");
  // The link has no principal: neither Candidates nor Authorize is evaluated.
  await Workflow.Redeem(run.entities.vendor.approvalUrl as string, { ok: true, note: "via link" });
  t.is((await run.refresh()).state, "Approved");
});

test.serial("Requires holds on both paths: an amount over the limit refuses the deposit and keeps the link live", async (t) => {
  const run = await (await Workflow.deploy("examples/vendor-approval.flow")).start(input(60_000));
  const url = run.entities.vendor.approvalUrl as string;
  const viaLink = await t.throwsAsync(Workflow.Redeem(url, { ok: true, note: "x" }), { instanceOf: RefusalError });
  t.is(viaLink!.code, "requires-failed");
  const viaRaise = await t.throwsAsync(run.raise("decision", { ok: true, note: "x" }, { as: { id: "fin", roles: ["finance"] } }), { instanceOf: RefusalError });
  t.is(viaRaise!.code, "requires-failed");
  // The author's wording (`Requires: … else "…"`, issue 30 item 8), evaluated over the run's data, on both paths.
  const wording = "Orders over 50000 EUR need the board's approval; this one is 60000 EUR.";
  t.is(viaLink!.message, wording);
  t.is(viaRaise!.message, wording);
  const [link] = await sql(process.env.DATABASE_URL!, "SELECT status FROM links WHERE run_id = $1", [run.id]);
  t.is(link.status, "live");
  t.is((await run.refresh()).state, "Review");
});

test.serial("a finance principal approves through the ordinary path; the link then answers link-dead (completed)", async (t) => {
  const run = await (await Workflow.deploy("examples/vendor-approval.flow")).start(input());
  await run.raise("decision", { ok: true, note: "ok by finance" }, { as: { id: "fin", roles: ["finance"] } });
  t.is(run.state, "Approved");
  const err = await t.throwsAsync(Workflow.Redeem(run.entities.vendor.approvalUrl as string, { ok: true, note: "late" }), { instanceOf: RefusalError });
  t.is(err!.code, "link-dead");
  t.is(err!.extra.reason, "completed");
});

test.serial("a body that does not match the event is refused with what the response takes, and changes nothing", async (t) => {
  const run = await (await Workflow.deploy("examples/vendor-approval.flow")).start(input());
  const url = run.entities.vendor.approvalUrl as string;
  const err = await t.throwsAsync(Workflow.Redeem(url, { ok: "yes", extra: 1 }), { instanceOf: RefusalError });
  t.is(err!.code, "invalid-body");
  t.deepEqual(err!.extra.expects, { ok: "boolean", note: "string" });
  t.regex(err!.message, /"ok" \(boolean\), "note" \(string\)/);
  await Workflow.Redeem(url, { ok: true, note: "now right" });
  t.is((await run.refresh()).state, "Approved");
});

test.serial("the deadline passing kills the link even before the sweeper runs, and expiry cancels the run", async (t) => {
  const run = await (await Workflow.deploy("examples/vendor-approval.flow")).start(input());
  await sql(process.env.DATABASE_URL!, "UPDATE slots SET deadline = now() - interval '1 second' WHERE run_id = $1 AND alias = 'decision'", [run.id]);
  const err = await t.throwsAsync(Workflow.Redeem(run.entities.vendor.approvalUrl as string, { ok: true, note: "late" }), { instanceOf: RefusalError });
  t.is(err!.code, "link-dead");
  t.is(err!.extra.reason, "expired");
  t.is((await run.refresh()).state, "Review");
});
