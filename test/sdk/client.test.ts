/**
 * `slotflow/client` at run time (issue 41 item 2) against ONE real `slotflow serve` (PostgreSQL,
 * Redis): typed start, the link's deposit (with its Idempotency-Key, replayed), the inbox and the
 * ordinary raise of a principal, the long-polled typed result, list, cancel, SlotflowProblem with
 * RFC 9457 members; and `slotflow types --url` (item 1) writes, from the server's deployed
 * workflows, the same declarations as from the .flow file. Retries of a 503 are tested in process
 * with a stand-in `fetch` (a real server answers 503 only when its database or Redis fails).
 *
 * And the OpenAPI document per workflow (item 4), on the same server: `@readme/openapi-parser`
 * validates the served document; `openapi-typescript` (v6) turns it into types that `tsc` compiles
 * with a real call written against them, which then runs against the server.
 */
import test from "ava";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { transform } from "esbuild";
import { promisify } from "node:util";
import { validate, compileErrors } from "@readme/openapi-parser";
import { createClient, SlotflowProblem, type RunId } from "slotflow/client";
import { typesCommand } from "../../src/cli/types.js";
import { signPrincipal } from "../../src/auth/jwt.js";
import { comparedPart } from "../../src/sdk/types.js";
import { dropDatabase } from "../helpers/db.js";
import { tsc } from "./tsc.js";
import { ADMIN_TOKEN, eventually, JWT_SECRET, printedLinks, request, ROOT, startCluster, type Cluster } from "../helpers/server.js";
import type { Workflows } from "./fixtures/workflows.js";

const FIXTURES = join(ROOT, "test", "sdk", "fixtures/");
const input = { customer: { name: "Ada", email: "ada@example.com" }, amount: 12.5, note: null };
let cluster: Cluster;

test.before(async () => {
  cluster = await startCluster("sdk-client");
  const deployed = await request(cluster.baseUrl, "POST", "/api/workflows", { token: ADMIN_TOKEN, text: readFileSync(join(FIXTURES, "order.flow"), "utf8") });
  if (deployed.status !== 201) throw new Error(`deploy: ${deployed.status} ${deployed.text}`);
});

test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

const client = () => createClient<Workflows>({ url: cluster.baseUrl, token: ADMIN_TOKEN });

test.serial("a run from start to its typed result: deposit, inbox, raise, long-polled result, list", async (t) => {
  const slotflow = client();
  const run = await slotflow.start("Order", input);
  t.is(run.status, "running");
  const shown = await slotflow.runs.get(run.id);
  t.is(shown.workflow, "Order");
  t.is(shown.state, "Confirming");

  // the confirmation link, as the terminal mail transport printed it
  const link = await eventually(async () => printedLinks(cluster.output()).at(-1));
  const refused = await t.throwsAsync(slotflow.deposit(link, { code: "ab" }), { instanceOf: SlotflowProblem });
  t.is(refused.status, 422);
  t.is(refused.code, "invalid-body");
  t.is(refused.type, "https://slotflow.dev/problems/invalid-body");
  t.truthy(refused.body.expects);
  t.notRegex(refused.message, /sfl_/, "the link's token is never in an error");
  const key = `deposit-${run.id}`;
  const first = await slotflow.deposit(link, { code: "AB12" }, { idempotencyKey: key });
  t.is(first.status, "completed");
  const again = await slotflow.deposit(link, { code: "AB12" }, { idempotencyKey: key });
  t.deepEqual(again, first, "the same key and body: the first outcome again");

  const approver = await signPrincipal(JWT_SECRET, { sub: "ann", roles: ["approver"] });
  const inbox = await eventually(async () => {
    const page = await slotflow.inbox({ principalToken: approver, workflow: "Order" });
    return page.tasks.some((task) => task.runId === run.id) ? page : null;
  });
  t.is(inbox.tasks.find((task) => task.runId === run.id)?.alias, "decision");
  const raised = await slotflow.raise(run.id, "decision", { approved: true, score: 91, reason: "ok" }, { principalToken: approver });
  t.true(raised.status === "completed" || raised.status === "accepted");

  const ended = await slotflow.runs.result(run.id, { waitSeconds: 60 });
  if (ended.status !== "finished") return t.fail(`not finished: ${JSON.stringify(ended)}`);
  t.deepEqual(ended.result, { state: "Approved", approved: true, score: 91, reason: "ok" });
  // view "done": the answer ann gave, typed as InboxDonePage (issue 41 item 2 × issue 43 item 4)
  const done = await slotflow.inbox({ principalToken: approver, view: "done", workflow: "Order" });
  const answered = done.tasks.find((task) => task.runId === run.id);
  t.like(answered, { alias: "decision", status: "completed", answer: { approved: true, score: 91, reason: "ok" } });
  t.false("counts" in done, "the done view has no counts");
  const page = await slotflow.runs.list({ workflow: "Order", status: "finished" });
  t.true(page.runs.some((r) => r.id === run.id));
});

test.serial("cancel, a cancelled run's result, and refusals as SlotflowProblem", async (t) => {
  const slotflow = client();
  const run = await slotflow.start("Order", input);
  const waiting = await slotflow.runs.result(run.id, { waitSeconds: 0 });
  t.is(waiting.status, "running");
  const cancelled = await slotflow.runs.cancel(run.id, "the customer withdrew");
  t.true(cancelled.status === "cancelled" || cancelled.status === "accepted");
  const ended = await slotflow.runs.result(run.id, { waitSeconds: 30 });
  t.like(ended, { status: "cancelled", result: null });

  const missing = await t.throwsAsync(slotflow.runs.get("00000000-0000-4000-8000-000000000000"), { instanceOf: SlotflowProblem });
  t.like(missing, { status: 404, code: "not-found", title: "Not found" });
  const loose = createClient({ url: cluster.baseUrl, token: ADMIN_TOKEN });
  const invalid = await t.throwsAsync(loose.start("Order", { amount: "x" }), { instanceOf: SlotflowProblem });
  t.is(invalid.code, "invalid-body");
  const unauthorized = await t.throwsAsync(createClient({ url: cluster.baseUrl, token: "wrong" }).runs.list(), { instanceOf: SlotflowProblem });
  t.is(unauthorized.code, "unauthorized");
});

test.serial("slotflow types --url writes what slotflow types writes from the file", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "slotflow-types-url-"));
  const said: string[] = [];
  const out = join(dir, "server.ts");
  t.is(await typesCommand([], { out, url: cluster.baseUrl, token: ADMIN_TOKEN }, (l) => void said.push(l), (l) => void said.push(l)), 0, said.join("\n"));
  const fromServer = readFileSync(out, "utf8");
  t.regex(fromServer, /workflow Order \(version 1\)/);
  t.regex(fromServer, /"slotflow\.RequestApproval": \{/, "built-in workflows too, their names quoted");
  const compiled = await tsc([out]);
  t.is(compiled.code, 0, compiled.output);
  // the built-in workflows are deployed too; Order's member is the file's, but for its version
  const member = (text: string) => comparedPart(text)!.match(/\n {2}Order: \{\n[\s\S]*?\n {2}\};\n/)![0];
  t.is(member(fromServer), member(readFileSync(join(FIXTURES, "workflows.ts"), "utf8")));
});

test("a 503 is retried with the same Idempotency-Key for a deposit, never for a start", async (t) => {
  const seen: { url: string; key: string | null }[] = [];
  let answers = [503, 200];
  const fake: typeof fetch = async (url, init) => {
    const headers = new Headers(init?.headers);
    seen.push({ url: String(url), key: headers.get("idempotency-key") });
    const status = answers.shift() ?? 200;
    const body = status === 503 ? { type: "https://slotflow.dev/problems/unavailable", title: "Unavailable", status, code: "unavailable" } : { status: "completed" };
    return new Response(JSON.stringify(body), { status, headers: { "retry-after": "0", "content-type": "application/json" } });
  };
  const slotflow = createClient({ url: "http://slotflow.invalid", token: "t", fetch: fake });
  t.deepEqual(await slotflow.deposit("http://slotflow.invalid/api/workflow/callback/sfl_abc", { ok: true }), { status: "completed" });
  t.is(seen.length, 2);
  t.truthy(seen[0].key);
  t.is(seen[1].key, seen[0].key);

  seen.length = 0;
  answers = [503, 201];
  const refused = await t.throwsAsync(slotflow.start("X", {}), { instanceOf: SlotflowProblem });
  t.is(refused.code, "unavailable");
  t.is(seen.length, 1, "a start takes no Idempotency-Key: its 503 is thrown, never sent twice");
  t.notRegex(refused.message, /sfl_/);
  const id = "00000000-0000-4000-8000-000000000000" as RunId<"X">;
  t.truthy(id);
});

const exec = promisify(execFile);

test.serial("GET /api/openapi.json: each workflow's operation and schemas, valid, and openapi-typescript's types compile against a real call", async (t) => {
  const served = await request(cluster.baseUrl, "GET", "/api/openapi.json");
  t.is(served.status, 200);
  const doc = served.body;
  const validation = await validate(structuredClone(doc));
  t.true(validation.valid, validation.valid ? "" : compileErrors(validation));

  const start = doc.paths["/api/workflows/Order/runs"].post;
  t.is(start.operationId, "startOrder");
  t.is(start.requestBody.content["application/json"].schema.$ref, "#/components/schemas/Order.run-input");
  t.like(doc.components.schemas["Order.Decided"].properties.score, { type: "integer", minimum: 0, maximum: 100 });
  t.deepEqual(doc.components.schemas["Order.Decided"].properties.reason.enum, ["ok", "risk"]);
  t.like(doc.components.schemas["Order.Confirm"].properties.code, { minLength: 4, pattern: "^(?:[A-Z0-9]+)$" });
  t.deepEqual(doc.components.schemas["Order.run-result"].properties.state.enum, ["Approved", "Rejected"]);
  const ids: string[] = [];
  for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (method === "parameters") continue;
      t.truthy(op.operationId, `${method} ${path} has an operationId`);
      ids.push(op.operationId);
      for (const [status, response] of Object.entries<any>(op.responses)) {
        for (const [type, media] of Object.entries<any>(response.content ?? {})) t.truthy(media.schema, `${method} ${path} ${status} ${type} has a schema`);
      }
    }
  }
  t.is(new Set(ids).size, ids.length, "operationIds are unique");

  const dir = mkdtempSync(join(tmpdir(), "slotflow-openapi-"));
  writeFileSync(join(dir, "openapi.json"), served.text);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
  await exec(join(ROOT, "node_modules", ".bin", "openapi-typescript"), [join(dir, "openapi.json"), "--output", join(dir, "api.ts")], { cwd: ROOT });
  writeFileSync(
    join(dir, "call.ts"),
    `import type { components, paths } from "./api.js";
type Start = paths["/api/workflows/Order/runs"]["post"];
type StartBody = Start["requestBody"]["content"]["application/json"];
type Started = Start["responses"]["201"]["content"]["application/json"];
type Decided = components["schemas"]["Order.Decided"];
type Result = components["schemas"]["Order.run-result"];

export async function startOrder(base: string, token: string): Promise<string> {
  const body: StartBody = { customer: { name: "Ada", email: "ada@example.com" }, amount: 12.5, note: null };
  // @ts-expect-error amount is a number
  const wrong: StartBody = { customer: { name: "Ada", email: "ada@example.com" }, amount: "12.5", note: null };
  // @ts-expect-error reason is one of "ok", "risk"
  const refused: Decided = { approved: true, score: 1, reason: "maybe" };
  const result: Result = { state: "Approved", approved: true, score: 90, reason: "ok" };
  void wrong, refused, result;
  const res = await fetch(base + "/api/workflows/Order/runs", {
    method: "POST",
    headers: { authorization: "Bearer " + token, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const started = (await res.json()) as Started;
  return started.id;
}
`,
  );
  const compiled = await tsc([join(dir, "call.ts")]);
  t.is(compiled.code, 0, compiled.output);
  // run what tsc accepted: its types stripped by esbuild (the test process has no TypeScript loader under npm test)
  const js = await transform(readFileSync(join(dir, "call.ts"), "utf8"), { loader: "ts", format: "esm" });
  writeFileSync(join(dir, "call.mjs"), js.code);
  const { startOrder } = (await import(pathToFileURL(join(dir, "call.mjs")).href)) as { startOrder: (base: string, token: string) => Promise<string> };
  const id = await startOrder(cluster.baseUrl, ADMIN_TOKEN);
  t.regex(id, /^[0-9a-f-]{36}$/);
});
