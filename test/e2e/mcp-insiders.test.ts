/**
 * Agents ask insiders (interfaces.md v0.5 "Answers people can trust", "Agents ask insiders"): the
 * official MCP TypeScript client (@modelcontextprotocol/sdk) calls request_approval with
 * `to: "role:finance"` over Streamable HTTP; a signed-in finance person (an HS256 bearer JWT) finds
 * the question in `GET /api/inbox` and on `/inbox`, headed with the agent's name (its MCP client's
 * `clientInfo.name`, escaped), answers it on the task page (a same-origin form POST), and the
 * agent's call returns the answer and who gave it — no link is minted. `user:ID` reaches that
 * person only. With `via` a slack-app endpoint (Slack's Web API at a local stand-in,
 * test/helpers/slack-standin.ts) the question is also posted there, naming the agent, and a finance
 * member's signed click answers it. A question mailed to an address names the agent in its subject
 * and body, and no one signed in may answer it. Over stdio (`slotflow mcp`) the agent is named
 * from its initialize too. A bad `to` or `via` is a tool error naming it, and starts nothing.
 * On whose behalf (a principal's token) and the name's bounds: test/mcp/insiders.test.ts.
 */
import test from "ava";
import { createHmac } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { dropDatabase } from "../helpers/db.js";
import { principalJwt } from "../helpers/callback.js";
import { cliEntry } from "../helpers/cli-entry.js";
import { ADMIN_TOKEN, ROOT, eventually, printedLinks, request, pageAs, startCluster, type Cluster } from "../helpers/server.js";
import { startSlackStandIn, type SlackStandIn } from "../helpers/slack-standin.js";

const SIGNING_SECRET = "0a1b2c3d4e5f60718293a4b5c6d7e8f9";
const TEAM = "T0FINANCE";
const MEMBER = "U0ALICE";
const CHANNEL = "C0FINANCE";

let cluster: Cluster;
let base: string;
let slack: SlackStandIn;

test.before(async () => {
  slack = await startSlackStandIn();
  slack.emails.set(MEMBER, "alice@finance.example");
  cluster = await startCluster("mcpins", { env: { SLOTFLOW_SLACK_API_URL: slack.apiUrl } });
  base = cluster.baseUrl;
  const endpoints: [string, unknown][] = [
    ["finance-slack", { kind: "slack-app", botToken: "xoxb-1111-2222-mcpinsiders", signingSecret: SIGNING_SECRET, channel: CHANNEL, answerAs: { roles: ["finance"] }, allowUsers: [MEMBER] }],
    ["ops-hook", { kind: "webhook", url: "https://hooks.example.com/ops" }],
  ];
  for (const [name, body] of endpoints) {
    const put = await request(base, "PUT", `/api/endpoints/${name}`, { token: ADMIN_TOKEN, json: body });
    if (put.status !== 201) throw new Error(put.text);
  }
});
test.after.always(async () => {
  await cluster?.stop();
  await slack?.close();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

/** The agent: the official client over HTTP with the admin token, named `name` in initialize. */
async function agent(name: string): Promise<Client> {
  const client = new Client({ name, version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL("/mcp", base), { requestInit: { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } } });
  await client.connect(transport);
  return client;
}

/** A GET or same-origin form POST as a principal (test/helpers/server.ts pageAs). */
const call = (method: string, path: string, jwt: string, form?: Record<string, string>) => pageAs(base, method, path, jwt, form);

type InboxTask = { runId: string; workflow: string; alias: string; title: string; taskUrl: string };
const inbox = async (jwt: string): Promise<InboxTask[]> => {
  const res = await request(base, "GET", "/api/inbox?limit=100", { token: jwt });
  if (res.status !== 200) throw new Error(`inbox: ${res.status} ${res.text}`);
  return res.body.tasks as InboxTask[];
};

const builtinRuns = async () => {
  const runs = async (wf: string) => (await request(base, "GET", `/api/runs?workflow=${wf}&limit=200`, { token: ADMIN_TOKEN })).body.runs.length as number;
  return (await runs("slotflow.RequestApproval")) + (await runs("slotflow.AskHuman"));
};

test.serial("an agent asks role:finance: a finance person sees it in the inbox with the agent's name, answers on the task page, and the call returns the answer and who gave it", async (t) => {
  const client = await agent("Ledger <Bot>");
  try {
    const linksBefore = printedLinks(cluster.output()).length;
    const fiona = await principalJwt("fiona", ["finance"]);
    const sam = await principalJwt("sam", ["sales"]);
    const call$ = client.callTool({ name: "request_approval", arguments: { to: "role:finance", title: "Pay invoice 42?", details: "EUR 1,200 to Acme", waitSeconds: 120 } }, undefined, { timeout: 180_000 });
    call$.catch(() => undefined); // awaited below; a failure before then closes the client, which rejects it

    const task = await eventually(async () => (await inbox(fiona)).find((x) => x.workflow === "slotflow.RequestApproval"), 60_000);
    t.is(task.alias, "answer");
    t.is(task.title, "The AI agent “Ledger <Bot>” asks for your approval: Pay invoice 42?");
    t.is(task.taskUrl, `${base}/inbox/tasks/${task.runId}/answer`);
    t.false((await inbox(sam)).some((x) => x.runId === task.runId), "not in a salesperson's inbox");

    const page = await call("GET", "/inbox", fiona);
    t.is(page.status, 200, page.text);
    t.true(page.text.includes("The AI agent “Ledger &lt;Bot&gt;” asks for your approval: Pay invoice 42?"), "the inbox page names the agent, escaped");
    t.false(page.text.includes("<Bot>"));

    const path = `/inbox/tasks/${task.runId}/answer`;
    const taskPage = await call("GET", path, fiona);
    t.is(taskPage.status, 200, taskPage.text);
    t.regex(taskPage.text, /<h1>The AI agent “Ledger &lt;Bot&gt;” asks for your approval: Pay invoice 42\?<\/h1>/);
    t.regex(taskPage.text, /EUR 1,200 to Acme/);
    t.regex(taskPage.text, /<dd id="candidates">anyone with the role “finance”<\/dd>/);
    t.notRegex(taskPage.text, /sfl_|callback\//, "no link on the page");
    const refused = await call("GET", path, sam);
    t.is(refused.status, 403);
    t.notRegex(refused.text, /Pay invoice 42/);

    const posted = await call("POST", path, fiona, { approved: "true", comment: "paid today", csrf: "" });
    t.is(posted.status, 303, posted.text);
    const result = (await call$) as any;
    t.falsy(result.isError, JSON.stringify(result));
    t.like(result.structuredContent, { status: "answered", runId: task.runId, approved: true, comment: "paid today", answeredBy: { via: "principal", id: "fiona", email: "fiona@example.test" } });
    t.is(printedLinks(cluster.output()).length, linksBefore, "no link was minted or mailed");
    t.false((await inbox(fiona)).some((x) => x.runId === task.runId), "answered: no longer waiting");
  } finally {
    await client.close();
  }
});

test.serial("user:ID asks that person only: another one (even of the same roles) neither lists it nor may answer; get_answer returns the person's answer", async (t) => {
  const client = await agent("Region picker");
  try {
    const uma = await principalJwt("uma", ["ops"]);
    const vic = await principalJwt("vic", ["ops"]);
    const first = (await client.callTool({ name: "ask_human", arguments: { to: "user:uma", question: "Which region?", choices: ["eu", "us"], waitSeconds: 0 } })) as any;
    t.falsy(first.isError, JSON.stringify(first));
    t.is(first.structuredContent.status, "waiting");
    const runId = first.structuredContent.runId as string;

    const task = await eventually(async () => (await inbox(uma)).find((x) => x.runId === runId), 60_000);
    t.is(task.title, "The AI agent “Region picker” asks: Which region?");
    t.false((await inbox(vic)).some((x) => x.runId === runId));
    const path = `/inbox/tasks/${runId}/reply`;
    const page = await call("GET", path, uma);
    t.is(page.status, 200, page.text);
    t.regex(page.text, /<dd id="candidates">user “uma”<\/dd>/, "only her, and nothing else");
    t.is((await call("GET", path, vic)).status, 403);
    const stranger = await call("POST", path, vic, { answer: "us", comment: "", csrf: "" });
    t.is(stranger.status, 403, stranger.text);

    const wrong = await call("POST", path, uma, { answer: "mars", comment: "", csrf: "" });
    t.is(wrong.status, 409, "the choices hold on the task page too (Requires)");
    t.regex(wrong.text, /Answer with one of the choices listed above\./);
    const posted = await call("POST", path, uma, { answer: "eu", comment: "", csrf: "" });
    t.is(posted.status, 303, posted.text);
    const result = (await client.callTool({ name: "get_answer", arguments: { runId, waitSeconds: 60 } }, undefined, { timeout: 120_000 })) as any;
    t.like(result.structuredContent, { status: "answered", answer: "eu", answeredBy: { via: "principal", id: "uma", email: "uma@example.test" } });
  } finally {
    await client.close();
  }
});

test.serial("a bad to or via is a tool error naming it, and starts nothing", async (t) => {
  const client = await agent("Careless agent");
  try {
    const before = await builtinRuns();
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ to: "role:" }, "to", /"role:" followed by a role name of 1 to 200 characters/],
      [{ to: "role: finance" }, "to", /without control characters or surrounding spaces/],
      [{ to: "user:ann\u0007" }, "to", /"user:" followed by a user id/],
      [{ to: `role:${"r".repeat(201)}` }, "to", /1 to 200 characters/],
      [{ to: "group:finance" }, "to", /an email address .*, "role:NAME", "user:ID" or the name of an endpoint/],
      [{ to: "role:finance", via: "no-such-slack" }, "via", /no endpoint is named "no-such-slack"/],
      [{ to: "ann@example.com", via: "no-such-slack" }, "via", /via is taken only with to "role:NAME" or "user:ID"/],
      [{ to: "role:finance", via: "ops-hook" }, "via", /"ops-hook" is a webhook endpoint; via must name a slack-app endpoint/],
    ];
    for (const [args, name, detail] of cases) {
      const result = (await client.callTool({ name: "request_approval", arguments: { title: "Anything?", waitSeconds: 0, ...args } })) as any;
      t.true(result.isError, JSON.stringify(args));
      const problem = JSON.parse(result.content[0].text);
      t.is(problem.code, "invalid-body", JSON.stringify(args));
      t.is(problem.errors[0].name, name, JSON.stringify(args));
      t.regex(problem.detail, detail, JSON.stringify(args));
    }
    t.is(await builtinRuns(), before, "nothing started");
  } finally {
    await client.close();
  }
});

test.serial("with via a slack-app endpoint: the question is also posted to Slack naming the agent, with answer buttons; a finance member's click answers it, and the call says so", async (t) => {
  const client = await agent("Ledger Bot");
  try {
    const started = (await client.callTool({ name: "request_approval", arguments: { to: "role:finance", via: "finance-slack", title: "Refund order 7?", waitSeconds: 0 } })) as any;
    t.falsy(started.isError, JSON.stringify(started));
    const runId = started.structuredContent.runId as string;
    const post = await eventually(async () => slack.of("chat.postMessage").find((c) => String(c.params.text).includes("Refund order 7?")), 60_000);
    t.is(post.params.channel, CHANNEL);
    t.regex(String(post.params.text), /^The AI agent “Ledger Bot” asks for your approval\./);
    const actions = (post.params.blocks as any[]).find((b) => b.type === "actions");
    t.deepEqual(actions.elements.map((e: any) => e.action_id), ["slotflow_yes", "slotflow_no"]);
    t.false(slack.calls.some((c) => /callback\//.test(c.raw)), "no link goes to Slack");

    const payload = {
      type: "block_actions",
      team: { id: TEAM, domain: "finance" },
      user: { id: MEMBER, username: "alice", team_id: TEAM },
      api_app_id: "A0SLOTFLOW",
      trigger_id: "trigger-1",
      container: { type: "message", message_ts: "1764170000.000001", channel_id: CHANNEL },
      channel: { id: CHANNEL, name: "finance" },
      response_url: slack.responseUrl("mcp-1"),
      actions: [{ type: "button", action_id: "slotflow_yes", block_id: "slotflow_answer", value: actions.elements[0].value, action_ts: `${Date.now() / 1000}` }],
    };
    const body = `payload=${encodeURIComponent(JSON.stringify(payload))}`;
    const ts = String(Math.floor(Date.now() / 1000));
    const sig = `v0=${createHmac("sha256", SIGNING_SECRET).update(`v0:${ts}:${body}`).digest("hex")}`;
    const clicked = await request(base, "POST", "/api/slack/interactions", { body, headers: { "content-type": "application/x-www-form-urlencoded", "x-slack-request-timestamp": ts, "x-slack-signature": sig } });
    t.is(clicked.status, 200, clicked.text);
    const result = (await client.callTool({ name: "get_answer", arguments: { runId, waitSeconds: 60 } }, undefined, { timeout: 120_000 })) as any;
    t.like(result.structuredContent, { status: "answered", approved: true, answeredBy: { via: "slack", id: `slack:${TEAM}:${MEMBER}`, email: "alice@finance.example" } });
  } finally {
    await client.close();
  }
});

test.serial("a question mailed to an address names the agent in the subject and the body, on one line; no one signed in may answer it", async (t) => {
  const client = await agent("Mail\r\nBcc: evil@example.com");
  try {
    const started = (await client.callTool({ name: "request_approval", arguments: { to: "ann@example.com", title: "Renew the licence?", waitSeconds: 0 } })) as any;
    t.falsy(started.isError, JSON.stringify(started));
    const mail = await eventually(async () => {
      const out = cluster.output().join("\n");
      const at = out.indexOf("Renew the licence?");
      return at >= 0 ? out.slice(Math.max(0, at - 400), at + 1200) : undefined;
    }, 30_000);
    t.true(mail.includes("The AI agent “Mail Bcc: evil@example.com” asks for your approval: Renew the licence?"), mail);
    t.true(mail.includes("The AI agent “Mail Bcc: evil@example.com” asks for your approval. What follows is the agent's own text"), mail);
    t.false(/\nBcc:/i.test(mail), "the client's name cannot add a header");
    // answered only through the link: a signed-in person's task page says so (and refuses), as for a slot without Candidates
    const page = await call("GET", `/inbox/tasks/${started.structuredContent.runId}/answer`, await principalJwt("fiona", ["finance"]));
    t.is(page.status, 403);
    t.regex(page.text, /This task may be answered by only the person its link was sent to \(through the link\), never someone signed in;/);
  } finally {
    await client.close();
  }
});

test.serial("over stdio (slotflow mcp) the agent is named too: its clientInfo.name from initialize", async (t) => {
  const client = new Client({ name: "Stdio desk agent", version: "1.0.0" });
  const env = Object.fromEntries(Object.entries(cluster.env).filter((e): e is [string, string] => typeof e[1] === "string"));
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [...cliEntry(), "mcp"], cwd: ROOT, env, stderr: "ignore" }));
  try {
    const started = (await client.callTool({ name: "ask_human", arguments: { to: "role:finance", question: "Close the books today?", waitSeconds: 0 } })) as any;
    t.falsy(started.isError, JSON.stringify(started));
    const fiona = await principalJwt("fiona", ["finance"]);
    const task = await eventually(async () => (await inbox(fiona)).find((x) => x.runId === started.structuredContent.runId), 60_000);
    t.is(task.title, "The AI agent “Stdio desk agent” asks: Close the books today?");
  } finally {
    await client.close();
  }
});
