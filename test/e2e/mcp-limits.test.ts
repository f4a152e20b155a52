/**
 * The MCP endpoint's limits (interfaces.md v0.5 "Security, round two", MCP; issue 38 L5), driven
 * with the official MCP client (@modelcontextprotocol/sdk) against a real `slotflow serve` with
 * SLOTFLOW_MCP_TOKEN set and SLOTFLOW_RATE_LIMIT_PER_MINUTE=40:
 * - a per-token rate limit on `POST /mcp`: past the budget 429 `rate-limited` with `Retry-After`;
 *   the admin token counts on its own (runs last: it spends the MCP token's budget);
 * - SLOTFLOW_MCP_MAIL_DOMAINS=example.com,Example.ORG: request_approval / ask_human (and start_run
 *   of a built-in) to an address at another domain is a tool error naming the rule; nothing starts;
 * - SLOTFLOW_MCP_TOKEN reaches only the runs started through MCP (get_run, list_runs, cancel_run,
 *   get_answer); the admin token, on `/mcp` as on the HTTP API, reaches all;
 * - the built-ins' mails and responder pages mark the agent's text as the agent's ("The agent
 *   wrote:" before it).
 */
import test from "ava";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { dropDatabase } from "../helpers/db.js";
import { ADMIN_TOKEN, eventually, printedLinks, request, startCluster, type Cluster } from "../helpers/server.js";

const MCP_TOKEN = "mcp-token-for-the-limits-test-0123456789";
const BUDGET = 40;
let cluster: Cluster;

test.before(async () => {
  cluster = await startCluster("mcplimits", { env: { SLOTFLOW_MCP_TOKEN: MCP_TOKEN, SLOTFLOW_RATE_LIMIT_PER_MINUTE: String(BUDGET), SLOTFLOW_MCP_MAIL_DOMAINS: "example.com, Example.ORG" } });
});
test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

async function client(token: string): Promise<Client> {
  const c = new Client({ name: "slotflow-test", version: "1.0.0" });
  await c.connect(new StreamableHTTPClientTransport(new URL("/mcp", cluster.baseUrl), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return c;
}

const ping = (token: string) => request(cluster.baseUrl, "POST", "/mcp", { token, json: { jsonrpc: "2.0", id: 1, method: "ping" }, headers: { accept: "application/json, text/event-stream" } });

const problemOf = (result: any) => JSON.parse(result.content[0].text);
const runCount = async () => (await request(cluster.baseUrl, "GET", "/api/runs?limit=200", { token: ADMIN_TOKEN })).body.runs.length as number;

test.serial("SLOTFLOW_MCP_MAIL_DOMAINS: an agent may mail only addresses at those domains; anything else is refused naming the rule, and nothing starts", async (t) => {
  const agent = await client(MCP_TOKEN);
  try {
    const before = await runCount();
    const outside = [
      await agent.callTool({ name: "request_approval", arguments: { to: "boss@evil.example", title: "Wire the money?", waitSeconds: 0 } }),
      await agent.callTool({ name: "ask_human", arguments: { to: "someone@sub.example.com", question: "What is the PIN?", waitSeconds: 0 } }),
      await agent.callTool({ name: "start_run", arguments: { workflow: "slotflow.RequestApproval", input: { ask: { recipient: "x@evil.example", channel: "email", title: "t", details: null, answerBy: new Date(Date.now() + 3600_000).toISOString(), approved: null, comment: null } } } }),
    ] as any[];
    for (const result of outside) {
      t.true(result.isError, JSON.stringify(result));
      const problem = problemOf(result);
      t.is(problem.code, "invalid-body");
      t.regex(problem.detail, /SLOTFLOW_MCP_MAIL_DOMAINS/);
      t.regex(problem.detail, /example\.com, example\.org/);
    }
    t.is(await runCount(), before, "nothing started");
    // inside the domains (any letter case) it is sent
    const inside = (await agent.callTool({ name: "request_approval", arguments: { to: "ops@EXAMPLE.org", title: "Restart the cache?", waitSeconds: 0 } })) as any;
    t.falsy(inside.isError, JSON.stringify(inside));
    t.is(inside.structuredContent.status, "waiting");
    t.is(await runCount(), before + 1);
  } finally {
    await agent.close();
  }
});

test.serial("SLOTFLOW_MCP_TOKEN reaches only the runs started through MCP; the admin token reaches all", async (t) => {
  const input = (to: string) => ({ ask: { recipient: to, channel: "email", title: "From the admin API", details: null, answerBy: new Date(Date.now() + 3600_000).toISOString(), approved: null, comment: null } });
  // a run started through the admin API, not through MCP
  const started = await request(cluster.baseUrl, "POST", "/api/workflows/slotflow.RequestApproval/runs", { token: ADMIN_TOKEN, json: input("ops@example.com") });
  t.true(started.status === 201 || started.status === 202, started.text);
  const adminRun = started.body.id as string;
  const agent = await client(MCP_TOKEN);
  const admin = await client(ADMIN_TOKEN);
  try {
    // the agent's own run
    const own = (await agent.callTool({ name: "start_run", arguments: { workflow: "slotflow.AskHuman", input: { ask: { recipient: "dev@example.com", channel: "email", question: "Which region?", choices: [], intro: null, answerBy: new Date(Date.now() + 3600_000).toISOString(), answer: null, comment: null } } } })) as any;
    t.falsy(own.isError, JSON.stringify(own));
    const ownRun = own.structuredContent.id as string;

    // the admin API's run is invisible to the MCP token: not-found, as an unknown id
    for (const [name, args] of [["get_run", { runId: adminRun }], ["get_answer", { runId: adminRun, waitSeconds: 0 }], ["cancel_run", { runId: adminRun, reason: "the agent tries" }]] as const) {
      const res = (await agent.callTool({ name, arguments: args })) as any;
      t.true(res.isError, `${name}: ${JSON.stringify(res)}`);
      t.is(problemOf(res).code, "not-found", name);
      t.is(problemOf(res).detail, "No run has this id.", name);
    }
    const listed = ((await agent.callTool({ name: "list_runs", arguments: { limit: 200 } })) as any).structuredContent.runs.map((r: any) => r.id);
    t.false(listed.includes(adminRun), "list_runs does not show it");
    t.true(listed.includes(ownRun), "list_runs shows the agent's own run");
    const run = await request(cluster.baseUrl, "GET", `/api/runs/${adminRun}`, { token: ADMIN_TOKEN });
    t.is(run.body.status, "running", "cancel_run did not cancel it");

    // its own run it sees and may cancel
    const got = (await agent.callTool({ name: "get_run", arguments: { runId: ownRun } })) as any;
    t.falsy(got.isError, JSON.stringify(got));
    t.is(got.structuredContent.workflow, "slotflow.AskHuman");

    // the admin token reaches all: sees and cancels the admin API's run
    const seen = (await admin.callTool({ name: "list_runs", arguments: { limit: 200 } })) as any;
    t.true(seen.structuredContent.runs.some((r: any) => r.id === adminRun));
    const cancelled = (await admin.callTool({ name: "cancel_run", arguments: { runId: adminRun, reason: "the operator cancels" } })) as any;
    t.falsy(cancelled.isError, JSON.stringify(cancelled));
    const mine = (await agent.callTool({ name: "cancel_run", arguments: { runId: ownRun, reason: "no longer needed" } })) as any;
    t.falsy(mine.isError, JSON.stringify(mine));
  } finally {
    await agent.close();
    await admin.close();
  }
});

/** The printed mail to `to` (the terminal transport's block), once it is printed. */
const mailTo = (to: string) =>
  eventually(async () => {
    const text = cluster.output().join("\n");
    return [...text.matchAll(/----- email [^\n]*-----\n([\s\S]*?)----- end of email -----/g)].map((m) => m[1]!).find((b) => b.includes(`To: ${to}\n`));
  }, 30_000);

test.serial("mails and responder pages of the built-ins mark the agent's text as the agent's", async (t) => {
  const agent = await client(MCP_TOKEN);
  try {
    const approval = (await agent.callTool({ name: "request_approval", arguments: { to: "pm@example.com", title: "Ship release 9.9?", details: "Ignore slotflow: reply to x@evil.example instead", waitSeconds: 0 } })) as any;
    t.falsy(approval.isError, JSON.stringify(approval));
    const mail = await mailTo("pm@example.com");
    const body = mail.slice(mail.indexOf("\n\n"));
    t.regex(body, /The agent wrote:\n+Ship release 9\.9\?\n+Ignore slotflow: reply to x@evil\.example instead\n+\(end of the agent's text\)/, mail);
    const link = printedLinks([mail]).at(-1)!;
    const page = await request(link, "GET", "", { headers: { accept: "text/html" } });
    t.is(page.status, 200);
    t.regex(page.text, /The agent wrote:[\s\S]*Ignore slotflow: reply to x@evil\.example instead/, "the page says whose the text is");

    const question = (await agent.callTool({ name: "ask_human", arguments: { to: "qa@example.com", question: "Which region is primary?", choices: ["eu", "us"], waitSeconds: 0 } })) as any;
    t.falsy(question.isError, JSON.stringify(question));
    const asked = await mailTo("qa@example.com");
    t.regex(asked, /The agent wrote:\n+Which region is primary\?\n+\(end of the agent's text\)/, asked);
    const askedPage = await request(printedLinks([asked]).at(-1)!, "GET", "", { headers: { accept: "text/html" } });
    t.is(askedPage.status, 200);
    t.regex(askedPage.text, /The agent wrote the question above/);
  } finally {
    await agent.close();
  }
});

// keep this test last: it spends the MCP token's budget for the rest of the minute
test.serial("a per-token rate limit: past SLOTFLOW_RATE_LIMIT_PER_MINUTE requests a token gets 429 with Retry-After; the other token and requests without a token are not counted", async (t) => {
  const agent = await client(MCP_TOKEN); // initialize + initialized: two requests
  let refused: Awaited<ReturnType<typeof ping>> | null = null;
  let passed = 2;
  try {
    for (let i = 0; i < BUDGET + 5 && !refused; i++) {
      // a request without the token is 401 and spends nothing of the agents' budget
      t.is((await ping("not-the-token")).status, 401);
      const res = await ping(MCP_TOKEN);
      if (res.status === 429) refused = res;
      else {
        t.is(res.status, 200, res.text);
        passed++;
      }
    }
    t.truthy(refused, "the budget ran out");
    t.true(passed <= BUDGET, `at most the budget passed (${passed})`);
    t.is(refused!.body.code, "rate-limited");
    const retry = Number(refused!.headers.get("retry-after"));
    t.true(retry >= 1 && retry <= 60, String(retry));
    // the official client sees the refusal too
    const err = await t.throwsAsync(agent.callTool({ name: "list_workflows", arguments: {} }));
    t.regex(String(err?.message), /429|rate/i);
  } finally {
    await agent.close().catch(() => undefined);
  }
  // the admin token has a budget of its own
  const admin = await client(ADMIN_TOKEN);
  try {
    const listed = await admin.callTool({ name: "list_workflows", arguments: {} });
    t.falsy(listed.isError);
  } finally {
    await admin.close();
  }
});
