/**
 * examples/purchase-request.flow and its child examples/supplier-onboarding.flow through the
 * engine on real PostgreSQL (testing kit; issue 40 item 5): the credit check is a `call http`
 * answered by `Workflow.mockHttp`, the purchase routes on its typed answer, a new supplier starts
 * the child run, whose link the supplier answers, and the child's result routes the parent and
 * becomes part of the parent's own result. A credit service that keeps failing routes through
 * `on credit.failed` to a person.
 */
import test from "ava";
import { Workflow } from "../../src/testing/index.js";
import { useKitDatabase } from "../helpers/kit.js";

useKitDatabase(test, "purchase-request");

const request = (supplier: string, knownSupplier: boolean) => ({
  request: { item: "40 office chairs", amount: 8200, supplier, supplierEmail: "sales@" + supplier.toLowerCase() + ".example", knownSupplier },
});

/** What the stand-in credit service was asked, by company. */
const asked: { method: string; path: string | null; body: unknown; attempt: number }[] = [];

test.before(() => {
  Workflow.mockHttp("credit-bureau", (req) => {
    asked.push({ method: req.method, path: req.path, body: req.body, attempt: req.attempt });
    const company = (req.body as { company: string }).company;
    if (company === "Shaky") return { body: { score: 310, band: "E" } };
    if (company === "Offline") return { status: 503 };
    return { body: { score: 780, band: "A", since: 1998 } }; // properties Scored does not declare are dropped
  });
});

/** Deploys the child, then the parent (the order `serve --deploy examples` does not promise: a child is looked up when the call starts). */
async function deployParent() {
  await Workflow.deploy("examples/supplier-onboarding.flow");
  return Workflow.deploy("examples/purchase-request.flow");
}

test.serial("a known supplier with a good score is ordered at once; the call is listed with its one attempt", async (t) => {
  const run = await (await deployParent()).start(request("Acme", true));
  t.is(run.state, "Ordered");
  t.deepEqual(run.result, { state: "Ordered", creditScore: 780, note: "credit band A" });
  const [call] = await run.calls();
  t.like(call, { alias: "credit", type: "http", endpoint: "credit-bureau", method: "POST", status: "answered" });
  t.deepEqual(call.attempts.map((a) => a.status), [200]);
  t.like(asked.at(-1), { method: "POST", path: "/v1/score", body: { company: "Acme", amount: 8200 } });
  t.deepEqual(await run.children(), []);
});

test.serial("a low score declines the purchase", async (t) => {
  const run = await (await deployParent()).start(request("Shaky", true));
  t.is(run.state, "Declined");
  t.deepEqual(run.result, { state: "Declined", creditScore: 310, note: "credit band E" });
});

test.serial("a new supplier is onboarded by a child run: the supplier answers its link, the child's result routes the parent", async (t) => {
  const run = await (await deployParent()).start(request("Globex", false));
  t.is(run.state, "Onboarding");
  const [child] = await run.children();
  t.is(child.state, "AwaitingSupplier");
  t.like(child.parent, { runId: run.id, alias: "onboarding" });
  const [mail] = await child.outbox();
  t.is(mail.to, "sales@globex.example");
  const link = /https?:\/\/\S+/.exec(mail.body ?? "")?.[0];
  t.truthy(link, mail.body ?? "");

  await Workflow.Redeem(link!, { iban: "DE89370400440532013000", acceptTerms: true });
  await child.refresh();
  t.is(child.state, "Onboarded");
  t.deepEqual(child.result, { state: "Onboarded", approved: true, note: null });
  await run.refresh();
  t.is(run.state, "Ordered");
  t.deepEqual(run.result, { state: "Ordered", creditScore: 780, note: "supplier onboarded" });
});

test.serial("a supplier who declines the terms: the child ends Declined and so does the purchase", async (t) => {
  const run = await (await deployParent()).start(request("Initech", false));
  const [child] = await run.children();
  const link = /https?:\/\/\S+/.exec((await child.outbox())[0].body ?? "")![0];
  await Workflow.Redeem(link, { iban: "DE89370400440532013000", acceptTerms: false });
  await run.refresh();
  t.is(run.state, "Declined");
  t.deepEqual(run.result, { state: "Declined", creditScore: 780, note: "the supplier declined our terms" });
});

test.serial("the credit service keeps failing: after its attempts the call fails and purchasing decides", async (t) => {
  const run = await (await deployParent()).start(request("Offline", true));
  t.is(run.state, "CreditCheck", "the first attempt answered 503: a retry is scheduled");
  await run.advanceTime("10m");
  t.is(run.state, "ManualReview");
  const [call] = await run.calls();
  t.is(call.status, "failed");
  t.deepEqual(call.attempts.map((a) => a.status), [503, 503, 503]);
  t.regex(run.entities.request.note as string, /^credit check failed: .*503/);
  const told = (await run.outbox()).find((m) => m.to === "purchasing@example.com");
  t.regex(told?.body ?? "", new RegExp(`/inbox/tasks/${run.id}/review$`), "purchasing gets the task page");
  await run.raise("review", { ok: true, note: null }, { as: { id: "pat", roles: ["purchasing"] } });
  t.is(run.state, "Ordered");
  t.like(run.result, { state: "Ordered", creditScore: null });
});
