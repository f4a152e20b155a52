/**
 * An agent holding a principal's token (interfaces.md v0.5 "Answers people can trust", "Agents ask
 * insiders": pages and mails name, "when the agent's token is a principal's, on whose behalf it
 * asks"), driven with the official MCP client (@modelcontextprotocol/sdk) over Streamable HTTP
 * against a real `slotflow serve` with SLOTFLOW_MCP_TOKEN set and SLOTFLOW_RATE_LIMIT_PER_MINUTE=40:
 * - `POST /mcp` takes a principal's HS256 JWT (SLOTFLOW_JWT_SECRET), as the inbox and raise APIs
 *   do; a bad, expired or control-character JWT is 401;
 * - that session lists and calls only request_approval, ask_human and get_answer; start_run,
 *   cancel_run, list_runs (and the rest) are tool errors saying why, and start nothing;
 * - its question to `role:finance` names it — "…, on behalf of ID (EMAIL), …" — in the finance
 *   person's inbox entry and on the task page; mailed to an address, in the printed mail and on
 *   the responder page;
 * - get_answer reaches only the questions that principal asked: another principal's token gets
 *   not-found, as for an unknown id;
 * - the rate limit counts per principal: one principal past its budget leaves another's untouched.
 */
import test from "ava";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { signPrincipal } from "../../src/auth/jwt.js";
import { dropDatabase } from "../helpers/db.js";
import { principalJwt } from "../helpers/callback.js";
import { ADMIN_TOKEN, JWT_SECRET, eventually, printedLinks, request, pageAs, startCluster, type Cluster } from "../helpers/server.js";

const MCP_TOKEN = "mcp-token-for-the-behalf-test-0123456789";
const BUDGET = 40;
let cluster: Cluster;
let base: string;

test.before(async () => {
  cluster = await startCluster("mcpbehalf", { env: { SLOTFLOW_MCP_TOKEN: MCP_TOKEN, SLOTFLOW_RATE_LIMIT_PER_MINUTE: String(BUDGET) } });
  base = cluster.baseUrl;
});
test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

/** The official client over HTTP with bearer `token`, named `name` in initialize. */
async function agent(token: string, name = "Desk Agent"): Promise<Client> {
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", base), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

const ping = (token: string) => request(base, "POST", "/mcp", { token, json: { jsonrpc: "2.0", id: 1, method: "ping" }, headers: { accept: "application/json, text/event-stream" } });
const problemOf = (result: any) => JSON.parse(result.content[0].text);
const runCount = async () => (await request(base, "GET", "/api/runs?limit=200", { token: ADMIN_TOKEN })).body.runs.length as number;

type InboxTask = { runId: string; workflow: string; title: string; taskUrl: string };
const inbox = async (jwt: string): Promise<InboxTask[]> => {
  const res = await request(base, "GET", "/api/inbox?limit=100", { token: jwt });
  if (res.status !== 200) throw new Error(`inbox: ${res.status} ${res.text}`);
  return res.body.tasks as InboxTask[];
};

/** A GET or same-origin form POST as a principal (test/helpers/server.ts pageAs). */
const call = (method: string, path: string, jwt: string, form?: Record<string, string>) => pageAs(base, method, path, jwt, form);

/** The printed mail to `to` (the terminal mail transport). */
const mailTo = (to: string) =>
  eventually(async () => {
    const text = cluster.output().join("\n");
    return [...text.matchAll(/----- email [^\n]*-----\n([\s\S]*?)----- end of email -----/g)].map((m) => m[1]!).find((b) => b.includes(`To: ${to}\n`));
  }, 30_000);

test.serial("a bad, expired or control-character principal JWT is 401 on /mcp, before anything else", async (t) => {
  const cases: [string, string][] = [
    ["not a JWT", "not-a-jwt"],
    ["signed with another secret", await signPrincipal("another-secret", { sub: "lee", roles: [] })],
    ["expired", await signPrincipal(JWT_SECRET, { sub: "lee", roles: [] }, -120)],
    ["a control character in the id", await signPrincipal(JWT_SECRET, { sub: "lee\u0007", roles: [] })],
  ];
  for (const [why, token] of cases) {
    const res = await ping(token);
    t.is(res.status, 401, why);
    t.is(res.body.code, "unauthorized", why);
    t.regex(res.body.detail, /neither \$SLOTFLOW_MCP_TOKEN nor \$SLOTFLOW_ADMIN_TOKEN nor a valid principal's JWT/, why);
    t.false(res.text.includes(token), `${why}: the token is not echoed`);
  }
  t.regex((await ping(cases[3]![1])).body.detail, /control character/, "the control character is named");
  t.is((await ping(await principalJwt("lee", []))).status, 200, "a valid principal JWT is taken");
});

test.serial("a principal's session lists only request_approval, ask_human and get_answer; start_run, cancel_run, list_runs and the rest are tool errors saying why, and start nothing", async (t) => {
  const client = await agent(await principalJwt("lee", []));
  try {
    const { tools } = await client.listTools();
    t.deepEqual(tools.map((x) => x.name).sort(), ["ask_human", "get_answer", "request_approval"]);
    const before = await runCount();
    const calls: [string, Record<string, unknown>][] = [
      ["start_run", { workflow: "slotflow.RequestApproval", input: {} }],
      ["cancel_run", { runId: "00000000-0000-4000-8000-000000000000", reason: "no" }],
      ["list_runs", {}],
      ["get_run", { runId: "00000000-0000-4000-8000-000000000000" }],
      ["list_workflows", {}],
    ];
    for (const [name, args] of calls) {
      const result = (await client.callTool({ name, arguments: args })) as any;
      t.true(result.isError, name);
      const problem = problemOf(result);
      t.is(problem.code, "unauthorized", name);
      t.regex(problem.detail, /is not offered to a principal's token: an agent holding a person's token may only ask on their behalf \(request_approval, ask_human, get_answer\)/, name);
    }
    t.is(await runCount(), before, "nothing started");
  } finally {
    await client.close();
  }
  // SLOTFLOW_MCP_TOKEN and the admin token still list every tool
  for (const token of [MCP_TOKEN, ADMIN_TOKEN]) {
    const other = await agent(token);
    try {
      t.true((await other.listTools()).tools.some((x) => x.name === "start_run"));
    } finally {
      await other.close();
    }
  }
});

test.serial("a principal's token asks role:finance: the inbox entry and the task page say on whose behalf; only that principal's get_answer reaches the answer", async (t) => {
  const lee = await agent(await principalJwt("lee", ["engineering"]));
  const mo = await agent(await principalJwt("mo", ["engineering"]));
  try {
    const fiona = await principalJwt("fiona", ["finance"]);
    const started = (await lee.callTool({ name: "request_approval", arguments: { to: "role:finance", title: "Pay invoice 43?", details: "EUR 900 to Acme", waitSeconds: 0 } })) as any;
    t.falsy(started.isError, JSON.stringify(started));
    const runId = started.structuredContent.runId as string;
    const heading = "The AI agent “Desk Agent”, on behalf of lee (lee@example.test), asks for your approval: Pay invoice 43?";

    const task = await eventually(async () => (await inbox(fiona)).find((x) => x.runId === runId), 60_000);
    t.is(task.title, heading);
    const page = await call("GET", "/inbox", fiona);
    t.is(page.status, 200);
    t.true(page.text.includes(heading), "the inbox page says on whose behalf");
    const path = `/inbox/tasks/${runId}/answer`;
    const taskPage = await call("GET", path, fiona);
    t.is(taskPage.status, 200, taskPage.text);
    t.true(taskPage.text.includes(`<h1>${heading}</h1>`), "the task page says on whose behalf");

    // another principal's token: not-found, as an unknown id; the waiting question is untouched
    const foreign = (await mo.callTool({ name: "get_answer", arguments: { runId, waitSeconds: 0 } })) as any;
    t.true(foreign.isError);
    t.is(problemOf(foreign).code, "not-found");
    const waiting = (await lee.callTool({ name: "get_answer", arguments: { runId, waitSeconds: 0 } })) as any;
    t.like(waiting.structuredContent, { status: "waiting", runId });

    t.is((await call("POST", path, fiona, { approved: "true", comment: "paid", csrf: "" })).status, 303);
    const answered = (await lee.callTool({ name: "get_answer", arguments: { runId, waitSeconds: 60 } }, undefined, { timeout: 120_000 })) as any;
    t.like(answered.structuredContent, { status: "answered", runId, approved: true, comment: "paid", answeredBy: { via: "principal", id: "fiona" } });
    const stillForeign = (await mo.callTool({ name: "get_answer", arguments: { runId, waitSeconds: 0 } })) as any;
    t.is(problemOf(stillForeign).code, "not-found", "nor once it is answered");
    // SLOTFLOW_MCP_TOKEN reaches runs started through MCP, as before
    const viaMcpToken = await agent(MCP_TOKEN);
    try {
      const seen = (await viaMcpToken.callTool({ name: "get_answer", arguments: { runId, waitSeconds: 0 } })) as any;
      t.like(seen.structuredContent, { status: "answered", runId });
    } finally {
      await viaMcpToken.close();
    }
  } finally {
    await lee.close();
    await mo.close();
  }
});

test.serial("mailed to an address, the question says on whose behalf in the printed mail and on the responder page", async (t) => {
  const client = await agent(await principalJwt("nia", []), "Mail Agent");
  try {
    const started = (await client.callTool({ name: "ask_human", arguments: { to: "ann@example.com", question: "Renew the licence?", waitSeconds: 0 } })) as any;
    t.falsy(started.isError, JSON.stringify(started));
    const mail = await mailTo("ann@example.com");
    t.true(mail.includes("The AI agent “Mail Agent”, on behalf of nia (nia@example.test), asks you: Renew the licence?"), mail);
    t.true(mail.includes("The AI agent “Mail Agent”, on behalf of nia (nia@example.test), asks you a question."), mail);
    const link = printedLinks([mail]).at(-1)!;
    const page = await request(link, "GET", "", { headers: { accept: "text/html" } });
    t.is(page.status, 200);
    t.true(page.text.includes("The AI agent “Mail Agent”, on behalf of nia (nia@example.test), asks: Renew the licence?"), "the responder page says on whose behalf");
  } finally {
    await client.close();
  }
});

// keep this test last: it spends one principal's budget for the rest of the minute
test.serial("the rate limit counts per principal: past SLOTFLOW_RATE_LIMIT_PER_MINUTE one principal gets 429; another principal and the MCP token do not", async (t) => {
  const spender = await principalJwt("spender", []);
  let refused: Awaited<ReturnType<typeof ping>> | null = null;
  for (let i = 0; i < BUDGET + 5 && !refused; i++) {
    const res = await ping(spender);
    if (res.status === 429) refused = res;
    else t.is(res.status, 200, res.text);
  }
  t.truthy(refused, "the budget ran out");
  t.is(refused!.body.code, "rate-limited");
  // a fresh token of the same principal is the same budget
  t.is((await ping(await principalJwt("spender", ["other"]))).status, 429);
  t.is((await ping(await principalJwt("saver", []))).status, 200, "another principal has its own budget");
  t.is((await ping(MCP_TOKEN)).status, 200, "the MCP token has its own budget");
});
