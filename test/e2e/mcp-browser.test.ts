/**
 * Agents ask people, the person's side in a real browser (issue 33, "Tested against the real
 * thing"): the official MCP client calls the tools over Streamable HTTP and the person answers the
 * link on the responder page in headless Chromium —
 * - request_approval: the mailed link, answered on the page; the call returns the answer;
 * - ask_human with choices: the page offers them as radio buttons (without choices: a text area);
 * - `to` naming an endpoint: the link is posted there (a Slack endpoint and a webhook endpoint on
 *   a local receiver), no mail is sent; a `to` that is neither an address nor an existing (enabled)
 *   endpoint is a tool error with the problem code, and nothing starts;
 * - a client that cancels its call and closes the connection: the server ends the wait at once
 *   (logged), the run keeps waiting, and get_answer from a new client returns the answer.
 */
import test from "ava";
import AxeBuilder from "@axe-core/playwright";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Browser, Page } from "playwright-core";
import { DESKTOP, launchBrowser } from "../helpers/browser.js";
import { dropDatabase, sql } from "../helpers/db.js";
import { startReceiver, type Receiver } from "../helpers/receiver.js";
import { ADMIN_TOKEN, eventually, printedLinks, request, startCluster, type Cluster } from "../helpers/server.js";

let cluster: Cluster;
let browser: Browser;
let rx: Receiver;

test.before(async () => {
  [cluster, browser, rx] = await Promise.all([startCluster("mcpbrowser", { env: { SLOTFLOW_ENDPOINTS_ALLOW_PRIVATE: "1" } }), launchBrowser(), startReceiver()]);
});
test.after.always(async () => {
  await browser?.close();
  await rx?.close();
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

async function httpClient(): Promise<Client> {
  const client = new Client({ name: "slotflow-browser-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", cluster.baseUrl), { requestInit: { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } } }));
  return client;
}

/** The first link printed after `before` links had been printed (the terminal mail transport). */
const nextLink = (before: number) => eventually(async () => printedLinks(cluster.output())[before], 30_000);
const LINK = /https?:\/\/[^\s"\\]+\/api\/workflow\/callback\/sfl_[A-Za-z0-9_-]{49}/;

async function openPage(url: string): Promise<Page> {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  await page.goto(url);
  return page;
}

async function send(page: Page): Promise<void> {
  await page.getByRole("button", { name: "Send answer" }).click();
  await page.locator("#outcome").filter({ hasText: "Done" }).waitFor({ timeout: 15_000 });
}

const problemOf = (result: any) => JSON.parse(result.content[0].text);
const runsOf = async (workflow: string) => (await request(cluster.baseUrl, "GET", `/api/runs?workflow=${workflow}&limit=200`, { token: ADMIN_TOKEN })).body.runs as { id: string; status: string }[];

test.serial("request_approval: the person answers the mailed link on the responder page; the call returns the answer", async (t) => {
  const client = await httpClient();
  try {
    const before = printedLinks(cluster.output()).length;
    const call = client.callTool({ name: "request_approval", arguments: { to: "approver@example.com", title: "Deploy release 2.0?", details: "It migrates the orders table.", waitSeconds: 90 } }, undefined, { timeout: 120_000 });
    const page = await openPage(await nextLink(before));
    t.is(await page.title(), "The AI agent “slotflow-browser-test” asks for your approval: Deploy release 2.0?", "the page names the agent (its MCP client's name)");
    t.regex(await page.locator("main").innerText(), /It migrates the orders table\./);
    await page.getByRole("group", { name: "Do you approve?" }).getByLabel("Yes").check();
    await page.getByLabel("Comment").fill("Go, after 18:00.");
    await send(page);
    const result = (await call) as any;
    t.falsy(result.isError, JSON.stringify(result));
    t.like(result.structuredContent, { status: "answered", approved: true, comment: "Go, after 18:00." });
    await page.context().close();
  } finally {
    await client.close();
  }
});

test.serial("ask_human with choices: radio buttons on the page, the chosen one is the answer; without choices a text area", async (t) => {
  const client = await httpClient();
  try {
    let before = printedLinks(cluster.output()).length;
    const call = client.callTool({ name: "ask_human", arguments: { to: "person@example.com", question: "Which region should the new cluster run in?", choices: ["eu-west", "us-east", "ap-south"], waitSeconds: 90 } }, undefined, { timeout: 120_000 });
    let page = await openPage(await nextLink(before));
    const group = page.getByRole("group", { name: "Your answer" });
    const radios = await group.getByRole("radio").all();
    t.deepEqual(await Promise.all(radios.map((r) => r.getAttribute("value"))), ["eu-west", "us-east", "ap-south"]);
    t.is(await page.getByRole("textbox", { name: "Your answer" }).count(), 0, "no text field for a question with choices");
    const axe = await new AxeBuilder({ page }).analyze();
    t.deepEqual(axe.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => v.id), [], "axe-core: no serious or critical violation");
    // sending without a choice: refused (422, the answer is required), shown at the group; the link stays usable
    await page.getByRole("button", { name: "Send answer" }).click();
    await page.locator("#err-answer").filter({ hasText: "Your answer" }).waitFor({ timeout: 15_000 });
    await group.getByLabel("us-east").check();
    await send(page);
    t.like(((await call) as any).structuredContent, { status: "answered", answer: "us-east", comment: null });
    await page.context().close();

    before = printedLinks(cluster.output()).length;
    const free = client.callTool({ name: "ask_human", arguments: { to: "person@example.com", question: "Anything else before we start?", waitSeconds: 90 } }, undefined, { timeout: 120_000 });
    page = await openPage(await nextLink(before));
    t.is(await page.getByRole("radio").count(), 0);
    await page.getByRole("textbox", { name: "Your answer" }).fill("Tell the on-call team first.");
    await send(page);
    t.like(((await free) as any).structuredContent, { status: "answered", answer: "Tell the on-call team first." });
    await page.context().close();
  } finally {
    await client.close();
  }
});

test.serial("to naming an endpoint: the link is posted there (Slack, webhook), no mail; the answer comes back", async (t) => {
  for (const [name, kind] of [["ops-chat", "slack"], ["approvals-hook", "webhook"]] as const) {
    const put = await request(cluster.baseUrl, "PUT", `/api/endpoints/${name}`, { token: ADMIN_TOKEN, json: { kind, url: `${rx.url}/${name}` } });
    t.true(put.status === 201 || put.status === 200, put.text);
  }
  const client = await httpClient();
  try {
    const mailsBefore = printedLinks(cluster.output()).length;
    const call = client.callTool({ name: "request_approval", arguments: { to: "ops-chat", title: "Rotate the database password?", waitSeconds: 90 } }, undefined, { timeout: 120_000 });
    const slack = await eventually(async () => rx.at("/ops-chat")[0], 30_000);
    const body = JSON.parse(slack.body);
    t.regex(body.text, /Rotate the database password\?/);
    const link = LINK.exec(slack.body)?.[0];
    t.truthy(link, slack.body);
    const page = await openPage(link!);
    await page.getByRole("group", { name: "Do you approve?" }).getByLabel("No").check();
    await send(page);
    t.like(((await call) as any).structuredContent, { status: "answered", approved: false });
    await page.context().close();

    const asked = client.callTool({ name: "ask_human", arguments: { to: "approvals-hook", question: "Ship on Friday?", choices: ["yes", "no"], waitSeconds: 90 } }, undefined, { timeout: 120_000 });
    const hook = await eventually(async () => rx.at("/approvals-hook")[0], 30_000);
    t.truthy(hook.headers["webhook-signature"], "a signed Standard Webhooks delivery");
    const event = JSON.parse(hook.body);
    t.is(event.type, "slotflow.message");
    t.regex(event.data.text, /Ship on Friday\?/);
    const answered = await fetch(event.data.link, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ answer: "no", comment: "Not before the freeze ends." }) });
    t.is(answered.status, 200, await answered.text());
    t.like(((await asked) as any).structuredContent, { status: "answered", answer: "no", comment: "Not before the freeze ends." });
    t.is(printedLinks(cluster.output()).length, mailsBefore, "nothing was mailed");
  } finally {
    await client.close();
  }
});

test.serial("a to that is neither an address nor an existing, enabled endpoint: a tool error with the problem code, nothing started", async (t) => {
  await request(cluster.baseUrl, "PUT", "/api/endpoints/old-hook", { token: ADMIN_TOKEN, json: { kind: "webhook", url: `${rx.url}/old-hook` } });
  await sql(cluster.databaseUrl, "UPDATE endpoints SET disabled_at = now(), disabled_reason = 'the receiver answered 410 Gone' WHERE name = 'old-hook'");
  const client = await httpClient();
  try {
    const approvals = (await runsOf("slotflow.RequestApproval")).length;
    const questions = (await runsOf("slotflow.AskHuman")).length;
    const unknown = (await client.callTool({ name: "request_approval", arguments: { to: "no-such-endpoint", title: "x" } })) as any;
    t.true(unknown.isError);
    t.like(problemOf(unknown), { code: "invalid-body", errors: [{ name: "to", problem: 'is neither an email address, an endpoint name, "role:NAME" nor "user:ID"' }] });
    t.regex(problemOf(unknown).detail, /no endpoint is named so/);
    const junk = (await client.callTool({ name: "ask_human", arguments: { to: "two words", question: "x?" } })) as any;
    t.like(problemOf(junk), { code: "invalid-body" });
    t.regex(problemOf(junk).detail, /email address .* or the name of an endpoint/);
    const disabled = (await client.callTool({ name: "ask_human", arguments: { to: "old-hook", question: "x?" } })) as any;
    t.like(problemOf(disabled), { code: "invalid-body", errors: [{ name: "to", problem: "names a disabled endpoint" }] });
    t.regex(problemOf(disabled).detail, /410 Gone/);
    t.is((await runsOf("slotflow.RequestApproval")).length, approvals);
    t.is((await runsOf("slotflow.AskHuman")).length, questions);
  } finally {
    await client.close();
  }
});

test.serial("the client cancels its call and closes the connection: the wait ends at once, the run keeps waiting, get_answer resumes", async (t) => {
  let client = await httpClient();
  const before = printedLinks(cluster.output()).length;
  const cancel = new AbortController();
  const call = client.callTool({ name: "request_approval", arguments: { to: "approver@example.com", title: "Scale down the staging cluster?", waitSeconds: 600 } }, undefined, { signal: cancel.signal, timeout: 700_000 });
  const link = await nextLink(before);
  const running = await eventually(async () => (await runsOf("slotflow.RequestApproval")).filter((r) => r.status === "running"));
  t.is(running.length, 1);
  const runId = running[0]!.id;
  cancel.abort();
  await t.throwsAsync(call, { message: /AbortError/ }); // the SDK client rejects at once
  await client.close(); // the HTTP request of the call ends here
  const logged = await eventually(async () => cluster.output().find((l) => l.includes("the caller went away") && l.includes(runId)), 30_000);
  t.truthy(logged, "the server ended the wait when the caller left, not at waitSeconds (600 s)");

  const page = await openPage(link);
  await page.getByRole("group", { name: "Do you approve?" }).getByLabel("Yes").check();
  await send(page);
  await page.context().close();

  client = await httpClient();
  try {
    const resumed = (await client.callTool({ name: "get_answer", arguments: { runId, waitSeconds: 20 } })) as any;
    t.like(resumed.structuredContent, { status: "answered", runId, approved: true });
  } finally {
    await client.close();
  }
});
