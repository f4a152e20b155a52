/**
 * Agents ask people (issue 33): the official MCP TypeScript client (@modelcontextprotocol/sdk)
 * drives slotflow over Streamable HTTP (`POST /mcp` on the web process) and over stdio
 * (`slotflow mcp`): lists the tools, calls request_approval, receives progress notifications, the
 * test answers the mailed link (printed by the terminal mail transport) by POSTing JSON to it, and
 * the call returns the answer; a call that outlives its waitSeconds returns `waiting`, and
 * get_answer after a restart of the server (and from a new stdio process) returns the answer. Bad
 * input is a tool error with the problem code, and starts nothing. A foreign Origin or Host is 403
 * (DNS rebinding). As an MCP task (tasks.ts), the run is the task: tasks/get, tasks/result and
 * tasks/cancel. The person's side in Chromium, endpoints and cancelling: mcp-browser.test.ts.
 */
import test from "ava";
import { request as httpRequest } from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, CreateTaskResultSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { dropDatabase } from "../helpers/db.js";
import { postLink, principalJwt } from "../helpers/callback.js";
import { cliEntry } from "../helpers/cli-entry.js";
import { ADMIN_TOKEN, ROOT, eventually, printedLinks, request, startCluster, type Cluster } from "../helpers/server.js";

let cluster: Cluster;

test.before(async () => {
  cluster = await startCluster("mcp");
});
test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

async function httpClient(token = ADMIN_TOKEN): Promise<Client> {
  const client = new Client({ name: "slotflow-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL("/mcp", cluster.baseUrl), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  return client;
}

async function stdioClient(): Promise<Client> {
  const client = new Client({ name: "slotflow-test", version: "1.0.0" });
  const env = Object.fromEntries(Object.entries(cluster.env).filter((e): e is [string, string] => typeof e[1] === "string"));
  const transport = new StdioClientTransport({ command: process.execPath, args: [...cliEntry(), "mcp"], cwd: ROOT, env, stderr: "ignore" });
  await client.connect(transport);
  return client;
}

/** The first link printed after `before` links had been printed. */
const nextLink = (before: number) => eventually(async () => printedLinks(cluster.output())[before], 30_000);

const problemOf = (result: any) => JSON.parse(result.content[0].text);

const builtinRuns = async () => (await request(cluster.baseUrl, "GET", "/api/runs?workflow=slotflow.RequestApproval&limit=200", { token: ADMIN_TOKEN })).body.runs.length as number;

test.serial("POST /mcp without the token is 401, before anything else", async (t) => {
  const res = await request(cluster.baseUrl, "POST", "/mcp", { json: { jsonrpc: "2.0", id: 1, method: "tools/list" }, headers: { accept: "application/json, text/event-stream" } });
  t.is(res.status, 401);
  t.is(res.body.code, "unauthorized");
  const wrong = await request(cluster.baseUrl, "POST", "/mcp", { token: "nope", json: { jsonrpc: "2.0", id: 1, method: "tools/list" } });
  t.is(wrong.status, 401);
});

test.serial("a JSON-RPC batch of tool calls is refused 400 before any of it runs", async (t) => {
  const before = await builtinRuns();
  const call = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "request_approval", arguments: { to: `b${id}@example.com`, title: "batch", waitSeconds: 0 } } });
  const res = await request(cluster.baseUrl, "POST", "/mcp", { token: ADMIN_TOKEN, json: [call(1), call(2), call(3)], headers: { accept: "application/json, text/event-stream" } });
  t.is(res.status, 400, res.text);
  t.is(res.body.error.code, -32600);
  t.is(await builtinRuns(), before, "nothing started");
});

test.serial("POST /mcp from a page on another site (Origin) or under a foreign Host on a loopback server is 403, even with the token", async (t) => {
  const body = { jsonrpc: "2.0", id: 1, method: "ping" };
  const accept = "application/json, text/event-stream";
  const foreign = await request(cluster.baseUrl, "POST", "/mcp", { token: ADMIN_TOKEN, json: body, headers: { accept, origin: "https://evil.example" } });
  t.is(foreign.status, 403);
  t.is(foreign.body.error.code, -32000);
  t.regex(foreign.body.error.message, /another site \(Origin: https:\/\/evil\.example\)/);
  const rebound = await new Promise<number>((resolve, reject) => {
    // fetch cannot set Host: a raw request, as a browser tricked by DNS rebinding would send it
    const port = Number(new URL(cluster.baseUrl).port);
    const req = httpRequest({ host: "127.0.0.1", port, method: "POST", path: "/mcp", headers: { host: `evil.example:${port}`, authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json", accept } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
  t.is(rebound, 403);
  const own = await request(cluster.baseUrl, "POST", "/mcp", { token: ADMIN_TOKEN, json: body, headers: { accept, origin: new URL(cluster.baseUrl).origin } });
  t.is(own.status, 200, own.text);
});

test.serial("over HTTP: the tools, the built-ins, request_approval with progress, answered through the mailed link", async (t) => {
  const client = await httpClient();
  try {
    const { tools } = await client.listTools();
    t.deepEqual(tools.map((x) => x.name).sort(), ["ask_human", "cancel_run", "get_answer", "get_run", "list_runs", "list_workflows", "request_approval", "start_run"]);
    for (const tool of tools) {
      t.is(tool.inputSchema.type, "object", tool.name);
      t.is(tool.outputSchema?.type, "object", tool.name);
      t.true((tool.description ?? "").length > 40, tool.name);
    }
    const listed = await client.callTool({ name: "list_workflows", arguments: {} });
    const names = (listed.structuredContent as any).workflows.map((w: any) => w.name);
    t.true(names.includes("slotflow.RequestApproval") && names.includes("slotflow.AskHuman"), names.join(","));

    const before = printedLinks(cluster.output()).length;
    const progress: unknown[] = [];
    let resolveFirst!: () => void;
    const firstProgress = new Promise<void>((r) => (resolveFirst = r));
    const call = client.callTool(
      { name: "request_approval", arguments: { to: "approver@example.com", title: "Deploy to production?", details: "Release 1.2.3", waitSeconds: 60 } },
      undefined,
      {
        onprogress: (p) => {
          progress.push(p);
          resolveFirst();
        },
        timeout: 120_000,
      },
    );
    const link = await nextLink(before);
    await firstProgress; // within 15 s of the call (one every 10 s)
    // issue 38 M2: a request to an address is answered only through the link — not by an insider
    const runs = (await request(cluster.baseUrl, "GET", "/api/runs?workflow=slotflow.RequestApproval&status=running&limit=200", { token: ADMIN_TOKEN })).body.runs as { id: string }[];
    for (const run of runs) {
      const insider = await request(cluster.baseUrl, "POST", `/api/runs/${run.id}/slots/answer/events`, { token: await principalJwt("lee", ["legal", "admin"]), json: { approved: true, comment: null } });
      t.is(insider.status, 403, insider.text);
      t.is(insider.body.code, "not-a-candidate");
    }
    const answer = await postLink(link, { approved: true, comment: "go ahead" });
    t.is(answer.status, 200, answer.text);
    const result = (await call) as any;
    t.falsy(result.isError, JSON.stringify(result));
    t.like(result.structuredContent, { status: "answered", approved: true, comment: "go ahead", answeredBy: { via: "link" } });
    t.true(!Number.isNaN(Date.parse(result.structuredContent.answeredAt)));
    t.true(progress.length >= 1);
    t.regex((progress[0] as any).message, new RegExp(`run ${result.structuredContent.runId}`), "every notification names the run, for get_answer");

    // get_run shows the run, never a token or the link
    const run = (await client.callTool({ name: "get_run", arguments: { runId: result.structuredContent.runId } })) as any;
    t.is(run.structuredContent.workflow, "slotflow.RequestApproval");
    t.is(run.structuredContent.state, "Answered");
    const text = JSON.stringify(run);
    t.false(text.includes(new URL(link).pathname.split("/").pop()!));
    t.false(/sfl_[A-Za-z0-9_-]{20,}/.test(text));
  } finally {
    await client.close();
  }
});

test.serial("bad input: clear tool errors with the problem code, nothing started", async (t) => {
  const client = await httpClient();
  try {
    const runsBefore = await builtinRuns();
    const unknown = (await client.callTool({ name: "start_run", arguments: { workflow: "NoSuchFlow", input: {} } })) as any;
    t.true(unknown.isError);
    t.is(problemOf(unknown).code, "not-found");
    const badInput = (await client.callTool({ name: "start_run", arguments: { workflow: "slotflow.RequestApproval", input: { ask: { recipient: 3 } } } })) as any;
    t.true(badInput.isError);
    t.is(problemOf(badInput).code, "invalid-body");
    const badTo = (await client.callTool({ name: "request_approval", arguments: { to: "not an address!", title: "x" } })) as any;
    t.true(badTo.isError);
    t.is(problemOf(badTo).code, "invalid-body");
    t.regex(problemOf(badTo).detail, /email address/);
    const long = (await client.callTool({ name: "request_approval", arguments: { to: "a@example.com", title: "x".repeat(201) } })) as any;
    t.true(long.isError);
    t.regex(problemOf(long).detail, /title is 201 characters long; at most 200/);
    const longQ = (await client.callTool({ name: "ask_human", arguments: { to: "a@example.com", question: "q".repeat(4001) } })) as any;
    t.true(longQ.isError);
    t.is(problemOf(longQ).code, "invalid-body");
    const extra = (await client.callTool({ name: "get_answer", arguments: { runId: "00000000-0000-4000-8000-000000000000", prompt: "secret" } })) as any;
    t.true(extra.isError);
    const missing = (await client.callTool({ name: "get_answer", arguments: { runId: "00000000-0000-4000-8000-000000000000", waitSeconds: 0 } })) as any;
    t.is(problemOf(missing).code, "not-found");
    t.is(await builtinRuns(), runsBefore);
  } finally {
    await client.close();
  }
});

test.serial("over stdio: a call that outlives waitSeconds returns waiting; get_answer after a restart returns the answer", async (t) => {
  let client = await stdioClient();
  const before = printedLinks(cluster.output()).length;
  const first = (await client.callTool({ name: "request_approval", arguments: { to: "approver@example.com", title: "Delete the old backups?", waitSeconds: 1 } })) as any;
  t.falsy(first.isError, JSON.stringify(first));
  t.is(first.structuredContent.status, "waiting");
  const runId = first.structuredContent.runId as string;
  const link = await nextLink(before);
  await client.close();

  // restart the server; the answer comes meanwhile; a new agent process asks again
  const [serve] = cluster.processes;
  await serve.stop();
  cluster.processes.splice(0, 1);
  await cluster.spawn("serve");
  t.is((await postLink(link, { approved: false, comment: null })).status, 200);

  client = await stdioClient();
  try {
    const resumed = (await client.callTool({ name: "get_answer", arguments: { runId, waitSeconds: 20 } })) as any;
    t.like(resumed.structuredContent, { status: "answered", runId, approved: false, comment: null });
  } finally {
    await client.close();
  }
});

test.serial("ask_human with choices: only a choice is accepted; the answer comes back", async (t) => {
  const client = await httpClient();
  try {
    const before = printedLinks(cluster.output()).length;
    const call = client.callTool({ name: "ask_human", arguments: { to: "person@example.com", question: "Which region?", choices: ["eu", "us"], waitSeconds: 30 } });
    const link = await nextLink(before);
    const wrong = await postLink(link, { answer: "asia", comment: null });
    t.is(wrong.status, 409);
    t.is(wrong.body?.code, "requires-failed");
    t.is(wrong.body?.detail, "Answer with one of the choices listed above.");
    t.is((await postLink(link, { answer: "eu", comment: "closest" })).status, 200);
    t.like(((await call) as any).structuredContent, { status: "answered", answer: "eu", comment: "closest" });
  } finally {
    await client.close();
  }
});

test.serial("past timeoutSeconds the answer is expired; list_runs finds the run; cancel_run of an ended run is run-finished", async (t) => {
  const client = await httpClient();
  try {
    const result = (await client.callTool({ name: "request_approval", arguments: { to: "late@example.com", title: "Too late?", timeoutSeconds: 1, waitSeconds: 20 } })) as any;
    t.like(result.structuredContent, { status: "expired" });
    const runId = result.structuredContent.runId as string;
    const listed = (await client.callTool({ name: "list_runs", arguments: { workflow: "slotflow.RequestApproval", state: "Expired" } })) as any;
    t.true(listed.structuredContent.runs.some((r: any) => r.id === runId));
    const badFilter = (await client.callTool({ name: "list_runs", arguments: { status: "sleeping" } })) as any;
    t.is(problemOf(badFilter).code, "invalid-query");
    const cancel = (await client.callTool({ name: "cancel_run", arguments: { runId, reason: "not needed" } })) as any;
    t.true(cancel.isError);
    t.is(problemOf(cancel).code, "run-finished");
  } finally {
    await client.close();
  }
});

test.serial("as an MCP task: a task at once, working until the person answers, then completed with the answer; tasks/cancel cancels the run", async (t) => {
  const client = await httpClient();
  try {
    const { tools } = await client.listTools();
    t.deepEqual(tools.filter((x) => x.execution?.taskSupport === "optional").map((x) => x.name).sort(), ["ask_human", "request_approval"]);

    const before = printedLinks(cluster.output()).length;
    const created = await client.request({ method: "tools/call", params: { name: "request_approval", arguments: { to: "approver@example.com", title: "Run the nightly purge now?" }, task: { ttl: 60_000 } } }, CreateTaskResultSchema);
    const taskId = created.task.taskId;
    t.like(created.task, { status: "working", ttl: null });
    const run = await request(cluster.baseUrl, "GET", `/api/runs/${taskId}`, { token: ADMIN_TOKEN });
    t.is(run.body.workflow, "slotflow.RequestApproval", "the task is the run");
    t.is((await client.experimental.tasks.getTask(taskId)).status, "working");
    const link = await nextLink(before);
    const result = client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema, { timeout: 60_000 }); // waits for the answer
    t.is((await postLink(link, { approved: true, comment: "yes, now" })).status, 200);
    t.like((await result).structuredContent, { status: "answered", runId: taskId, approved: true, comment: "yes, now" });
    t.is((await client.experimental.tasks.getTask(taskId)).status, "completed");

    const second = await client.request({ method: "tools/call", params: { name: "ask_human", arguments: { to: "person@example.com", question: "Which day?", choices: ["mon", "tue"] }, task: {} } }, CreateTaskResultSchema);
    const cancelled = await client.experimental.tasks.cancelTask(second.task.taskId);
    t.is(cancelled.status, "cancelled");
    const gone = await request(cluster.baseUrl, "GET", `/api/runs/${second.task.taskId}`, { token: ADMIN_TOKEN });
    t.is(gone.body.status, "cancelled");
    t.like((await client.experimental.tasks.getTaskResult(second.task.taskId, CallToolResultSchema)).structuredContent, { status: "cancelled" });

    // a refusal of a task request is a JSON-RPC error carrying the problem; nothing starts
    const runsBefore = await builtinRuns();
    const refused = await t.throwsAsync(client.request({ method: "tools/call", params: { name: "request_approval", arguments: { to: "nobody-here", title: "x" }, task: {} } }, CreateTaskResultSchema));
    t.true(refused instanceof McpError);
    t.like((refused as McpError).data, { code: "invalid-body", errors: [{ name: "to" }] });
    t.is(await builtinRuns(), runsBefore);
    const notATask = await t.throwsAsync(client.request({ method: "tools/call", params: { name: "list_workflows", arguments: {}, task: {} } }, CreateTaskResultSchema));
    t.regex(notATask!.message, /does not run as a task/);
    const unknown = await t.throwsAsync(client.experimental.tasks.getTask("00000000-0000-4000-8000-000000000000"));
    t.regex(unknown!.message, /not found/i);
  } finally {
    await client.close();
  }
});
