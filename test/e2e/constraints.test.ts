/**
 * Constraints on event parameters, on every door (v0.5, issue 43 items 1 and 6), against one real
 * `slotflow serve` on PostgreSQL and Redis with a Slack stand-in: an empty company name, an
 * incorporation date in the future and a negative revenue are refused
 *   - through the link as JSON: 422 invalid-body, `errors` naming each parameter and rule,
 *     `expects` listing each parameter's type and constraints;
 *   - through the link's responder page in Chromium: the field messages under the fields, and the
 *     page's HTML hints (min, max, minlength, pattern, radio buttons for @oneOf); on a German page
 *     the messages in German (the rule's phrase from the catalogs);
 *   - through the task page (a plain form post): 422 with the field messages;
 *   - through the raise API: 422 with `expects`;
 *   - through a Slack modal: the errors in the modal, by input;
 *   - through MCP: an agent's ask_human question (its built-in `answer @minLength(1)`), answered
 *     empty through its link: 422 with `expects`;
 * and nothing is changed by any of them; a valid answer then completes the slot.
 * A link validates against its minting version's rules (versioning), and a catastrophic-
 * backtracking `@pattern` on a long hostile input is answered (RE2).
 * Fixture: test/fixtures/constraints.flow.
 */
import test from "ava";
import { createHmac } from "node:crypto";
import type { Browser } from "playwright-core";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { launchBrowser } from "../helpers/browser.js";
import { deployFixture, postLink, principalJwt, showRun, startRun, uniqueTitle } from "../helpers/callback.js";
import { dropDatabase, sql } from "../helpers/db.js";
import { linkIn, waitForEmail } from "../helpers/mail.js";
import { ADMIN_TOKEN, eventually, printedLinks, request, startCluster, type Cluster } from "../helpers/server.js";
import { startSlackStandIn, type SlackStandIn } from "../helpers/slack-standin.js";

const BOT_TOKEN = "xoxb-1111-2222-slotflowtestbottoken";
const SIGNING_SECRET = "0a1b2c3d4e5f60718293a4b5c6d7e8f9";
const TEAM = "T0FINANCE";
const MEMBER = "U0ALICE";
const CHANNEL = "C0FINANCE";

let cluster: Cluster;
let base: string;
let slack: SlackStandIn;
let browser: Browser;

test.before(async () => {
  slack = await startSlackStandIn();
  slack.emails.set(MEMBER, "alice@finance.example");
  [cluster, browser] = await Promise.all([startCluster("constraints", { env: { SLOTFLOW_SLACK_API_URL: slack.apiUrl } }), launchBrowser()]);
  base = cluster.baseUrl;
  await deployFixture(base, "constraints.flow");
  const put = await request(base, "PUT", "/api/endpoints/finance-slack", {
    token: ADMIN_TOKEN,
    json: { kind: "slack-app", botToken: BOT_TOKEN, signingSecret: SIGNING_SECRET, channel: CHANNEL, answerAs: { roles: ["finance"] }, allowUsers: [MEMBER] },
  });
  if (put.status !== 201) throw new Error(put.text);
});

test.after.always(async () => {
  await browser?.close();
  await cluster?.stop();
  await slack?.close();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

const BAD = { name: "", incorporated: "2099-01-01", revenue: -5, size: "small", code: null };
const GOOD = { name: "Acme GmbH", incorporated: "2001-05-04", revenue: 1_000_000, size: "large", code: "DE123456" };
const today = () => new Date().toISOString().slice(0, 10);
const EXPECTS = {
  name: "string @minLength(1) @maxLength(200)",
  incorporated: "string (date, YYYY-MM-DD) @max(today)",
  revenue: "number @min(0)",
  size: 'string @oneOf("small", "medium", "large")',
  code: 'string or null @pattern("[A-Z]{2}[0-9]{6}")',
};

/** The three rules BAD breaks, as `[name, rule]`. */
const BROKEN = [
  ["name", "@minLength(1)"],
  ["incorporated", "@max(today)"],
  ["revenue", "@min(0)"],
];

async function begin(prefix: string, mode = "page") {
  const name = uniqueTitle(prefix);
  const runId = await startRun(base, "Constrained", { supplier: { name, mode } });
  const link = linkIn(await waitForEmail(() => cluster.output(), `details for ${name}`));
  return { runId, name, link };
}

const slotOf = async (runId: string, alias: string) => (await sql(cluster.databaseUrl, "SELECT status FROM slots WHERE run_id = $1 AND alias = $2", [runId, alias]))[0]?.status as string;

function signed(payload: unknown): { body: string; headers: Record<string, string> } {
  const body = `payload=${encodeURIComponent(JSON.stringify(payload))}`;
  const ts = String(Math.floor(Date.now() / 1000));
  const sig = `v0=${createHmac("sha256", SIGNING_SECRET).update(`v0:${ts}:${body}`).digest("hex")}`;
  return { body, headers: { "content-type": "application/x-www-form-urlencoded", "x-slack-request-timestamp": ts, "x-slack-signature": sig } };
}
const interact = (req: { body: string; headers: Record<string, string> }) => request(base, "POST", "/api/slack/interactions", { body: req.body, headers: req.headers });

test.serial("an empty name, a future incorporation date and a negative revenue are refused on every door, naming each parameter and rule; nothing changes; a valid answer then completes", async (t) => {
  // --- the link, as JSON ---------------------------------------------------------------------
  const viaLink = await begin("json");
  const json = await postLink(viaLink.link, BAD);
  t.is(json.status, 422, json.text);
  t.is(json.body.code, "invalid-body");
  t.deepEqual(json.body.expects, EXPECTS);
  t.deepEqual(json.body.errors.map((e: { name: string; rule: string }) => [e.name, e.rule]), BROKEN);
  t.like(json.body.errors[1], { problem: `must not be in the future (after ${today()})` });
  t.regex(json.body.detail, /"revenue" must be at least 0 \(@min\(0\)\)/);
  const notOne = await postLink(viaLink.link, { ...GOOD, size: "huge" });
  t.is(notOne.status, 422);
  t.deepEqual(notOne.body.errors, [{ name: "size", problem: 'must be one of "small", "medium", "large"', rule: '@oneOf("small", "medium", "large")' }]);
  t.is(await slotOf(viaLink.runId, "linked"), "open", "nothing changed");

  // --- the link's responder page, in Chromium --------------------------------------------------
  const page = await (await browser.newContext()).newPage();
  await page.goto(viaLink.link);
  const name = page.getByLabel("Company name");
  t.is(await name.getAttribute("minlength"), "1");
  t.is(await name.getAttribute("maxlength"), "200");
  t.is(await page.getByLabel("Incorporated on").getAttribute("max"), today());
  t.is(await page.getByLabel("Annual revenue").getAttribute("min"), "0");
  t.is(await page.getByLabel("Registry code").getAttribute("pattern"), "[A-Z]{2}[0-9]{6}");
  t.deepEqual(await page.getByRole("group", { name: "Size" }).getByRole("radio").evaluateAll((els) => els.map((e) => e.getAttribute("value"))), ["small", "medium", "large"]);
  await name.fill("");
  await page.getByLabel("Incorporated on").fill("2099-01-01");
  await page.getByLabel("Annual revenue").fill("-5");
  await page.getByRole("group", { name: "Size" }).getByLabel("medium").check();
  await page.getByRole("button", { name: "Send answer" }).click();
  await page.locator("#err-revenue:not([hidden])").waitFor();
  t.is(await page.locator("#err-name").innerText(), "“Company name” must not be empty.");
  t.is(await page.locator("#err-incorporated").innerText(), `“Incorporated on” must not be in the future (after ${today()}).`);
  t.is(await page.locator("#err-revenue").innerText(), "“Annual revenue” must be at least 0.");
  t.is(await page.getByLabel("Annual revenue").getAttribute("aria-invalid"), "true");
  t.is(await slotOf(viaLink.runId, "linked"), "open");
  // fixed on the page, the same link completes
  await name.fill(GOOD.name);
  await page.getByLabel("Incorporated on").fill(GOOD.incorporated);
  await page.getByLabel("Annual revenue").fill("12.5");
  await page.getByRole("button", { name: "Send answer" }).click();
  await eventually(async () => (await slotOf(viaLink.runId, "linked")) === "completed");
  await page.context().close();

  // --- the task page (a plain form post) -------------------------------------------------------
  const insider = await begin("task");
  const fiona = await principalJwt("fiona", ["finance"]);
  const form = new URLSearchParams({ name: "", incorporated: "2099-01-01", revenue: "-5", size: "small", code: "", csrf: "" });
  const taskPost = await fetch(new URL(`/inbox/tasks/${insider.runId}/inside`, base), {
    method: "POST",
    headers: { authorization: `Bearer ${fiona}`, accept: "text/html", "content-type": "application/x-www-form-urlencoded" },
    body: form.toString(),
    redirect: "manual",
  });
  const taskHtml = await taskPost.text();
  t.is(taskPost.status, 422, taskHtml);
  t.regex(taskHtml, /<p class="error" id="err-name">“Company name” must not be empty\.<\/p>/);
  t.regex(taskHtml, /<p class="error" id="err-incorporated">“Incorporated on” must not be in the future/);
  t.regex(taskHtml, /<p class="error" id="err-revenue">“Annual revenue” must be at least 0\.<\/p>/);
  t.regex(taskHtml, /id="f-revenue"[^>]* min="0"/);
  t.is(await slotOf(insider.runId, "inside"), "open");

  // --- the raise API ---------------------------------------------------------------------------
  const raised = await request(base, "POST", `/api/runs/${insider.runId}/slots/inside/events`, { token: fiona, json: BAD });
  t.is(raised.status, 422, raised.text);
  t.is(raised.body.code, "invalid-body");
  t.deepEqual(raised.body.expects, EXPECTS);
  t.deepEqual(raised.body.errors.map((e: { name: string; rule: string }) => [e.name, e.rule]), BROKEN);
  t.is(await slotOf(insider.runId, "inside"), "open");
  const fine = await request(base, "POST", `/api/runs/${insider.runId}/slots/inside/events`, { token: fiona, json: GOOD });
  t.is(fine.status, 200, fine.text);

  // --- a Slack modal ---------------------------------------------------------------------------
  const inSlack = await begin("slack", "slack");
  const post = await eventually(async () => slack.of("chat.postMessage").find((c) => String(c.params.text).includes(inSlack.name)));
  const ref = (post.params.blocks as any[]).find((b) => b.type === "actions").elements[0].value as string;
  const click = {
    type: "block_actions",
    team: { id: TEAM, domain: "finance" },
    user: { id: MEMBER, username: "alice", team_id: TEAM },
    api_app_id: "A0SLOTFLOW",
    trigger_id: "trigger-constraints",
    container: { type: "message", message_ts: "1764170000.000001", channel_id: CHANNEL },
    channel: { id: CHANNEL, name: "finance" },
    response_url: slack.responseUrl("constraints"),
    actions: [{ type: "button", action_id: "slotflow_open", block_id: "slotflow_answer", value: ref, action_ts: `${Date.now() / 1000}` }],
  };
  t.is((await interact(signed(click))).status, 200);
  const opened = await eventually(async () => slack.of("views.open").find((c) => c.params.trigger_id === "trigger-constraints"));
  const inputs = (opened.params.view.blocks as any[]).filter((b) => b.type === "input");
  t.deepEqual(inputs.map((b) => b.label.text), ["Company name", "Incorporated on", "Annual revenue", "Size", "Registry code"]);
  const submission = (values: Record<string, unknown>) => ({
    type: "view_submission",
    team: { id: TEAM },
    user: { id: MEMBER, team_id: TEAM },
    view: { id: "V0MODAL", hash: "h", callback_id: "slotflow_answer", private_metadata: ref, state: { values } },
  });
  const refused = await interact(
    signed(
      submission({
        p0: { v: { type: "plain_text_input", value: "" } },
        p1: { v: { type: "datepicker", selected_date: "2099-01-01" } },
        p2: { v: { type: "number_input", value: "-5" } },
        p3: { v: { type: "plain_text_input", value: "small" } },
        p4: { v: { type: "plain_text_input", value: null } },
      }),
    ),
  );
  t.is(refused.status, 200, refused.text);
  t.is(refused.body?.response_action, "errors", refused.text);
  t.deepEqual(refused.body.errors, {
    p0: "Company name must not be empty",
    p1: `Incorporated on must not be in the future (after ${today()})`,
    p2: "Annual revenue must be at least 0",
  });
  t.is(await slotOf(inSlack.runId, "slacked"), "open");

  // --- MCP: an agent's question, answered empty through its link ------------------------------
  const client = new Client({ name: "constraints-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", base), { requestInit: { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } } }));
  try {
    const before = printedLinks(cluster.output()).length;
    const call = client.callTool({ name: "ask_human", arguments: { to: "person@example.com", question: "Which supplier first?", waitSeconds: 60 } });
    const link = await eventually(async () => printedLinks(cluster.output())[before], 30_000);
    const empty = await postLink(link, { answer: "", comment: null });
    t.is(empty.status, 422, empty.text);
    t.is(empty.body.code, "invalid-body");
    t.deepEqual(empty.body.expects, { answer: "string @minLength(1) @maxLength(4000)", comment: "string or null @maxLength(4000)" });
    t.deepEqual(empty.body.errors, [{ name: "answer", problem: "must not be empty", rule: "@minLength(1)" }]);
    t.is((await postLink(link, { answer: "Acme", comment: null })).status, 200);
    t.like(((await call) as any).structuredContent, { status: "answered", answer: "Acme" });
  } finally {
    await client.close();
  }
  const view = await showRun(base, insider.runId);
  t.is(view.state, "Done");
});

test.serial("the responder page in German says each broken rule in German (the day of `today` as German writes it); the JSON keeps the API's English", async (t) => {
  const viaLink = await begin("german");
  const page = await (await browser.newContext({ locale: "de-DE" })).newPage();
  await page.goto(viaLink.link);
  t.is(await page.locator("html").getAttribute("lang"), "de");
  await page.getByLabel("Company name").fill("");
  await page.getByLabel("Incorporated on").fill("2099-01-01");
  await page.getByLabel("Annual revenue").fill("-5");
  await page.getByRole("group", { name: "Size" }).getByLabel("medium").check();
  await page.getByRole("button", { name: "Antwort senden" }).click();
  await page.locator("#err-revenue:not([hidden])").waitFor();
  const day = new Intl.DateTimeFormat("de", { dateStyle: "long", timeZone: "UTC" }).format(new Date(`${today()}T00:00:00Z`));
  t.is(await page.locator("#err-name").innerText(), "„Company name“: darf nicht leer sein.");
  t.is(await page.locator("#err-incorporated").innerText(), `„Incorporated on“: darf nicht in der Zukunft liegen (nach dem ${day}).`);
  t.is(await page.locator("#err-revenue").innerText(), "„Annual revenue“: muss mindestens 0 sein.");
  t.is(await page.locator("#check-fields").innerText(), "Bitte prüfen Sie die unten markierten Felder.");
  t.is(await slotOf(viaLink.runId, "linked"), "open");
  await page.context().close();
  const json = await postLink(viaLink.link, BAD);
  t.like(json.body.errors[2], { problem: "must be at least 0", rule: "@min(0)" });
});

/** Deploys `source` (inline); throws unless the deploy created a version. */
async function deploy(source: string): Promise<number> {
  const res = await request(base, "POST", "/api/workflows", { token: ADMIN_TOKEN, text: source });
  if (res.status !== 201 && res.status !== 200) throw new Error(`deploy answered ${res.status}: ${res.text}`);
  return res.body.version as number;
}

const ruled = (rule: string, title: string) => `workflow ${title}(who: string)
event Pay(amount: int ${rule})
initial state Waiting {
  subscribe Pay(amount) as pay
  enter { send email to who { subject: "pay " + who, body: pay.CallbackUrl() } }
  on pay(amount) -> Done
}
terminal state Done
`;

test.serial("a catastrophic-backtracking @pattern on a long hostile input is answered (RE2: linear time) and refused with its rule", async (t) => {
  await deploy(`workflow Hostile(who: string)
event Code(code: string @pattern("(a+)+b"))
initial state Waiting {
  subscribe Code(code) as c
  enter { send email to who { subject: "hostile " + who, body: c.CallbackUrl() } }
  on c(code) -> Done
}
terminal state Done
`);
  const who = `${uniqueTitle("hostile")}@example.test`;
  const runId = await startRun(base, "Hostile", { who });
  const link = linkIn(await waitForEmail(() => cluster.output(), `hostile ${who}`));
  // "(a+)+b" against "aaa…a!" takes exponential time in a backtracking engine: here it is answered.
  const hostile = await postLink(link, { code: "a".repeat(60_000) + "!" });
  t.is(hostile.status, 422, hostile.text);
  t.deepEqual(hostile.body.errors, [{ name: "code", problem: 'must match the pattern "(a+)+b"', rule: '@pattern("(a+)+b")' }]);
  t.is(await slotOf(runId, "c"), "open");
  t.is((await postLink(link, { code: "a".repeat(60_000) + "b" })).status, 200);
});

test.serial("versioning: a link is held to the rules of the version that minted it; links minted after a redeploy to the new rules", async (t) => {
  const v1 = await deploy(ruled("@min(0)", "Versioned"));
  const early = `${uniqueTitle("early")}@example.test`;
  const earlyRun = await startRun(base, "Versioned", { who: early });
  const earlyLink = linkIn(await waitForEmail(() => cluster.output(), `pay ${early}`));
  const v2 = await deploy(ruled("@min(10)", "Versioned"));
  t.is(v2, v1 + 1, "a change of constraints alone deploys without a map event");
  const late = `${uniqueTitle("late")}@example.test`;
  const lateRun = await startRun(base, "Versioned", { who: late });
  const lateLink = linkIn(await waitForEmail(() => cluster.output(), `pay ${late}`));

  // the early link: v1's @min(0) refuses -1 and accepts 5, though v2 asks for 10
  const below = await postLink(earlyLink, { amount: -1 });
  t.is(below.status, 422);
  t.deepEqual(below.body.expects, { amount: "integer @min(0)" });
  t.is((await postLink(earlyLink, { amount: 5 })).status, 200);
  t.is((await showRun(base, earlyRun)).state, "Done");
  // the late link: v2's @min(10) refuses 5
  const late5 = await postLink(lateLink, { amount: 5 });
  t.is(late5.status, 422);
  t.deepEqual(late5.body.errors, [{ name: "amount", problem: "must be at least 10", rule: "@min(10)" }]);
  t.deepEqual(late5.body.expects, { amount: "integer @min(10)" });
  t.is((await postLink(lateLink, { amount: 10 })).status, 200);
  t.is((await showRun(base, lateRun)).state, "Done");
});
