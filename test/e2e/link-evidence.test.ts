/**
 * Who answered, through a link (v0.5 "Answers people can trust", issue 43 items 2 and 6), with
 * examples/contract-signing.flow as shipped, over real HTTP on PostgreSQL and Redis: a signer (Ann)
 * forwards her element's link to her deputy, who signs; Bob signs his own. Then
 *   - the forward mail names Ann as the one who passed the request on;
 *   - `answeredBy` is `{via: "link", element: 0, recipient: deputy, forwardedBy: Ann}` for the
 *     deputy's element and `{via: "link", element: 1, recipient: Bob}` for Bob's — on the run view's
 *     slots, in the history's event entries, in the receipts list;
 *   - the deputy's receipt, verified by python3-jwcrypto (an implementation slotflow does not use)
 *     against the published key set, carries that evidence;
 *   - the console's Responders panel and its "Answered" list say which signer and which deputy.
 */
import test from "ava";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { postLink, showRun, startRun, uniqueTitle } from "../helpers/callback.js";
import { dropDatabase } from "../helpers/db.js";
import { linkIn, parseEmails, type PrintedEmail } from "../helpers/mail.js";
import { verifyReceiptOutside } from "../helpers/receipts.js";
import { ADMIN_TOKEN, request, ROOT, startCluster, type Cluster } from "../helpers/server.js";

let cluster: Cluster;
let base: string;

test.before(async () => {
  cluster = await startCluster("evidence");
  base = cluster.baseUrl;
  const deployed = await request(base, "POST", "/api/workflows", { token: ADMIN_TOKEN, text: readFileSync(join(ROOT, "examples", "contract-signing.flow"), "utf8") });
  if (deployed.status !== 201) throw new Error(deployed.text);
});

test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

async function mailTo(to: string, subject: string): Promise<PrintedEmail> {
  const until = Date.now() + 30_000;
  for (;;) {
    const found = parseEmails(cluster.output()).find((m) => m.to === to && m.subject === subject);
    if (found) return found;
    if (Date.now() > until) throw new Error(`no mail to ${to} with subject "${subject}"`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test("a forwarded element's evidence: the forward mail names who passed it on; answeredBy names recipient and forwarder in the run view, the receipt (verified outside) and the console", async (t) => {
  const title = uniqueTitle("nda");
  const [ann, bob, cem] = ["ann", "bob", "cem"].map((n) => `${n}-${title}@example.test`) as [string, string, string];
  const runId = await startRun(base, "ContractSigning", { contract: { title, value: 5000 }, signers: [ann, bob, cem] });
  const annLink = linkIn(await mailTo(ann, `Please sign ${title}`));
  const bobLink = linkIn(await mailTo(bob, `Please sign ${title}`));

  const deputy = `deputy-${title}@example.test`;
  t.is((await postLink(`${annLink}/forward`, { email: deputy })).status, 200);
  const passedOn = await mailTo(deputy, `Sign ${title}`);
  t.regex(passedOn.body, new RegExp(`^${ann.replace(/[.]/g, "\\.")} passed this request on to you:`, "m"));
  t.notRegex(passedOn.body, /Someone passed/);

  const byDeputy = await postLink(linkIn(passedOn), { agree: true });
  t.is(byDeputy.status, 200, byDeputy.text);
  const byBob = await postLink(bobLink, { agree: true });
  t.is(byBob.status, 200, byBob.text);

  const deputyEvidence = { via: "link", element: 0, recipient: deputy, forwardedBy: ann };
  const bobEvidence = { via: "link", element: 1, recipient: bob };
  // the receipt, verified by python3-jwcrypto against the published key set
  const payload = await verifyReceiptOutside(base, byDeputy.body.receipt, `runs/${runId}/slots/signatures/0`);
  t.truthy(payload, `the receipt verifies outside slotflow: ${byDeputy.text}`);
  t.deepEqual(payload!.answeredBy, deputyEvidence);
  t.deepEqual((await verifyReceiptOutside(base, byBob.body.receipt, `runs/${runId}/slots/signatures/1`))!.answeredBy, bobEvidence);

  // the run view: slots and history; the receipts list
  const run = await showRun(base, runId);
  const slotsView = run.slots as unknown as { alias: string; element: number | null; answeredBy: unknown }[];
  t.deepEqual(slotsView.find((s) => s.alias === "signatures" && s.element === 0)?.answeredBy, deputyEvidence);
  t.deepEqual(slotsView.find((s) => s.alias === "signatures" && s.element === 1)?.answeredBy, bobEvidence);
  const events = run.history.filter((h) => h.kind === "event").map((h) => (h.data as { answeredBy: unknown }).answeredBy);
  t.deepEqual(events, [deputyEvidence, bobEvidence]);
  const receipts = await request(base, "GET", `/api/runs/${runId}/receipts`, { token: ADMIN_TOKEN });
  t.deepEqual(receipts.body.receipts.map((r: { answeredBy: unknown }) => r.answeredBy), [deputyEvidence, bobEvidence]);

  // the console: the Responders panel and the Answered list
  const basic = `Basic ${Buffer.from(`op:${ADMIN_TOKEN}`).toString("base64")}`;
  const page = await fetch(new URL(`/console/runs/${runId}`, base), { headers: { authorization: basic } });
  const html = await page.text();
  t.is(page.status, 200);
  const esc = (s: string) => s.replace(/[.]/g, "\\.");
  t.regex(html, new RegExp(`<tr data-element="signatures\\[0\\]">.*through its link \\(sent to ${esc(deputy)}, forwarded by ${esc(ann)}\\)`));
  t.regex(html, new RegExp(`<tr data-element="signatures\\[1\\]">.*through its link \\(sent to ${esc(bob)}\\)`));
  t.regex(html, new RegExp(`data-answered="signatures\\[0\\]">.*answered through its link \\(sent to ${esc(deputy)}, forwarded by ${esc(ann)}\\)`));
});
