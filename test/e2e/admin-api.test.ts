/**
 * The admin API and the ordinary raise path over real HTTP against a real server: deploy (201,
 * 200 unchanged, 422 with diagnostics), start (201, 404, 422), show, the raise path's statuses,
 * a runtime error recorded as an incident with the link left live, and the CLI's check, token
 * and raise commands.
 */
import test from "ava";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { signPrincipal } from "../../src/auth/jwt.js";
import { dropDatabase } from "../helpers/db.js";
import { linkIn, waitForEmail } from "../helpers/mail.js";
import { ADMIN_TOKEN, JWT_SECRET, ROOT, request, startCluster, type Cluster } from "../helpers/server.js";
import { cliEntry } from "../helpers/cli-entry.js";

const run = promisify(execFile);
let cluster: Cluster;

test.before(async () => {
  cluster = await startCluster("admin");
});
test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

const admin = { token: ADMIN_TOKEN };
const deploy = (path: string) => request(cluster.baseUrl, "POST", "/api/workflows", { ...admin, text: readFileSync(path, "utf8") });

test.serial("deploy answers 201 with the version, then 200 for the same source; GET shows versions and source", async (t) => {
  const first = await deploy("examples/vendor-approval.flow");
  t.is(first.status, 201, first.text);
  t.like(first.body, { name: "VendorApproval", version: 1, created: true });
  t.is(first.body.warnings[0].code, "FLOW312");
  const again = await deploy("examples/vendor-approval.flow");
  t.is(again.status, 200);
  t.like(again.body, { version: 1, created: false });
  const shown = await request(cluster.baseUrl, "GET", "/api/workflows/VendorApproval", admin);
  t.is(shown.status, 200);
  t.is(shown.body.currentVersion, 1);
  t.true(shown.body.source.includes("workflow VendorApproval"));
});

test.serial("deploying a fanned-out CallbackUrl() answers 422 with the diagnostic's code, line and column", async (t) => {
  const source = `workflow Fan(names: list<string>, row: Row)
entity Row {
  url: string?
}
event Sign(ok: bool)
initial state Collect {
  subscribe Sign(ok) as sig for each n in names
  enter {
    row.url = sig.CallbackUrl()
  }
}
terminal state Done
`;
  const res = await request(cluster.baseUrl, "POST", "/api/workflows", { ...admin, text: source });
  t.is(res.status, 422);
  t.is(res.body.code, "invalid-workflow");
  const diag = res.body.diagnostics.find((d: { line: number }) => d.line === 9);
  t.truthy(diag, JSON.stringify(res.body.diagnostics));
  t.is(diag.severity, "error");
  t.regex(diag.code, /^FLOW\d{3}$/);
  t.is(diag.column, 15);
});

test.serial("the admin API needs the admin token", async (t) => {
  const res = await request(cluster.baseUrl, "GET", "/api/workflows/VendorApproval");
  t.is(res.status, 401);
  t.is(res.body.code, "unauthorized");
  const wrong = await request(cluster.baseUrl, "GET", "/api/workflows/VendorApproval", { token: "nope" });
  t.is(wrong.status, 401);
});

test.serial("starting a run: 404 for an unknown workflow, 422 for input that does not match", async (t) => {
  const unknown = await request(cluster.baseUrl, "POST", "/api/workflows/Nope/runs", { ...admin, json: {} });
  t.is(unknown.status, 404);
  const bad = await request(cluster.baseUrl, "POST", "/api/workflows/VendorApproval/runs", { ...admin, json: { vendor: { name: 1 }, amount: "x" } });
  t.is(bad.status, 422);
  t.is(bad.body.code, "invalid-body");
  t.true(bad.body.errors.length >= 2);
});

test.serial("the ordinary raise path: 401, 403 not-a-candidate, 422, 409 requires-failed, 200, then 409 slot-closed", async (t) => {
  const started = await request(cluster.baseUrl, "POST", "/api/workflows/VendorApproval/runs", {
    ...admin,
    json: { vendor: { name: "Raise Co", contactEmail: "r@example.com" }, amount: 99_999 },
  });
  t.is(started.status, 201);
  const path = `/api/runs/${started.body.id}/slots/decision/events`;
  const finance = await signPrincipal(JWT_SECRET, { sub: "fin", roles: ["finance"] });
  const ops = await signPrincipal(JWT_SECRET, { sub: "ops", roles: ["ops"] });
  t.is((await request(cluster.baseUrl, "POST", path, { json: { ok: true, note: "x" } })).status, 401);
  t.is((await request(cluster.baseUrl, "POST", path, { token: "not-a-jwt", json: { ok: true, note: "x" } })).status, 401);
  const notCandidate = await request(cluster.baseUrl, "POST", path, { token: ops, json: { ok: true, note: "x" } });
  t.is(notCandidate.status, 403);
  t.is(notCandidate.body.code, "not-a-candidate");
  const invalid = await request(cluster.baseUrl, "POST", path, { token: finance, json: { ok: "yes" } });
  t.is(invalid.status, 422);
  t.deepEqual(invalid.body.expects, { ok: "boolean", note: "string" });
  const requires = await request(cluster.baseUrl, "POST", path, { token: finance, json: { ok: true, note: "x" } });
  t.is(requires.status, 409);
  t.is(requires.body.code, "requires-failed");
  // Fix the address: the fixEmail slot completes, the run stays in Review.
  // only finance may correct the address (examples/vendor-approval.flow, issue 38 L7)
  const notFixer = await request(cluster.baseUrl, "POST", `/api/runs/${started.body.id}/slots/fixEmail/events`, { token: ops, json: { email: "ops@example.com" } });
  t.is(notFixer.status, 403);
  const fix = await request(cluster.baseUrl, "POST", `/api/runs/${started.body.id}/slots/fixEmail/events`, { token: finance, json: { email: "x@example.com" } });
  t.is(fix.status, 200, fix.text);
  t.like(fix.body, { status: "completed", run: { state: "Review" } });
  const closed = await request(cluster.baseUrl, "POST", `/api/runs/${started.body.id}/slots/fixEmail/events`, { token: finance, json: { email: "y@example.com" } });
  t.is(closed.status, 409);
  t.is(closed.body.code, "slot-closed");
  const unknownAlias = await request(cluster.baseUrl, "POST", `/api/runs/${started.body.id}/slots/nope/events`, { token: ops, json: {} });
  t.is(unknownAlias.status, 404);
});

test.serial("a runtime error refuses the deposit with handler-failed, applies nothing, keeps the link live, and shows an incident", async (t) => {
  t.is((await deploy("test/fixtures/faulty.flow")).status, 201);
  const started = await request(cluster.baseUrl, "POST", "/api/workflows/Faulty/runs", { ...admin, json: { job: { name: "backup" } } });
  t.is(started.status, 201, started.text);
  const link = linkIn(await waitForEmail(() => cluster.output(), "finish backup"));
  const path = new URL(link).pathname;
  const failed = await request(cluster.baseUrl, "POST", path, { json: { note: "finished after a long night" } });
  t.is(failed.status, 500);
  t.is(failed.body.code, "handler-failed");
  t.regex(failed.body.detail, /@maxLength/);
  t.false(failed.text.includes(path.split("/").pop()!));
  const shown = await request(cluster.baseUrl, "GET", `/api/runs/${started.body.id}`, admin);
  t.is(shown.body.state, "Running");
  t.is(shown.body.entities.job.name, "backup", "nothing of the step was kept");
  t.is(shown.body.incidents.length, 1);
  t.is(shown.body.incidents[0].code, "handler-failed");
  t.is(shown.body.slots.find((s: { alias: string }) => s.alias === "finish").status, "open");
  // The link is still live: the same failure again, not a 410.
  t.is((await request(cluster.baseUrl, "POST", path, { json: { note: "finished after a long night" } })).status, 500);
  const done = await request(cluster.baseUrl, "POST", path, { json: { note: "ok" } });
  t.is(done.status, 200);
});

test.serial("unknown routes and runs answer problem+json 404", async (t) => {
  const res = await request(cluster.baseUrl, "GET", "/api/runs/00000000-0000-0000-0000-000000000000", admin);
  t.is(res.status, 404);
  t.is(res.headers.get("content-type"), "application/problem+json");
  t.is((await request(cluster.baseUrl, "GET", "/nope")).status, 404);
});

test.serial("health, readiness, metrics and the OpenAPI document", async (t) => {
  t.is((await request(cluster.baseUrl, "GET", "/healthz")).status, 200);
  const ready = await request(cluster.baseUrl, "GET", "/readyz");
  t.deepEqual(ready.body, { status: "ready", database: true, redis: true });
  const metrics = await request(cluster.baseUrl, "GET", "/metrics");
  t.true(metrics.text.includes("slotflow_http_request_duration_seconds"));
  t.false(/callback\/[A-Za-z0-9_-]{43}/.test(metrics.text));
  const doc = await request(cluster.baseUrl, "GET", "/api/openapi.json");
  t.is(doc.body.openapi, "3.1.0");
  t.truthy(doc.body.paths["/api/workflow/callback/{token}"].post.responses["410"]);
});

test.serial("the CLI: check exits 1 pointing at the line; token and raise drive the ordinary path", async (t) => {
  const cli = (...args: string[]) => run(process.execPath, [...cliEntry(), ...args], { cwd: ROOT, env: cluster.env });
  const bad = await cli("check", "test/fixtures/fanned-callback.flow").catch((e: { code: number; stdout: string }) => e);
  t.is((bad as { code: number }).code, 1);
  t.regex((bad as { stdout: string }).stdout, /fanned-callback\.flow:\d+:\d+: error FLOW\d{3}: /);
  const ok = await cli("check", "examples/vendor-approval.flow");
  t.regex(ok.stdout, /0 errors/);
  const { stdout: jwt } = await cli("token", "--sub", "ann", "--role", "ops");
  t.regex(jwt.trim(), /^[\w-]+\.[\w-]+\.[\w-]+$/);
  const started = await cli("start", "VendorApproval", "--input", JSON.stringify({ vendor: { name: "Cli", contactEmail: "c@example.com" }, amount: 5 }));
  const id = JSON.parse(started.stdout).id as string;
  const raised = await cli("raise", id, "decision", "--args", '{"ok": true, "note": "cli"}', "--as", "fin", "--role", "finance");
  t.is(JSON.parse(raised.stdout).run.state, "Approved");
  const shown = await cli("show", id);
  t.is(JSON.parse(shown.stdout).status, "finished");
});
