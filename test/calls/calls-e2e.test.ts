/**
 * A workflow calls a real local HTTP service (issue 40 item 2, "Done when"), through a real
 * `slotflow serve` on real PostgreSQL and Redis: the callee verifies every request's Standard
 * Webhooks signature with the `standardwebhooks` library, as any callee would; the run routes on
 * the typed answer (extra properties dropped); a retried call carries the same Idempotency-Key;
 * a failure runs `on x.failed` with `x.error`/`x.status`/`x.attempts`; an answer missing a
 * parameter fails the call naming it; a Deadline passing mid-call runs `on x.expired` and the late
 * answer is not applied. The run view shows the call slot, the history its attempts (never a
 * header value), /metrics its counters.
 */
import test from "ava";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { Webhook } from "standardwebhooks";
import { dropDatabase, sql } from "../helpers/db.js";
import { ADMIN_TOKEN, eventually, request, startCluster, type Cluster } from "../helpers/server.js";

const CREDENTIAL = "Bearer sk_live_calls_e2e_credential";
const SOURCE = `workflow Check(company: string, mode: string, wait: duration, c: Case)
entity Case {
  note: string?
  attempts: int?
  status: int?
}
event Scored(score: int, band: string)
initial state Checking {
  call http "bureau" as credit returns Scored {
    Method: POST
    Path: "/score/" + mode
    Input { company: company, mode: mode }
    Timeout: 20s
    Attempts: 3
    Deadline: wait
  }
  on credit(score, band) {
    c.note = band
    when (score >= 700) -> Good
    default -> Manual
  }
  on credit.failed {
    c.note = credit.error
    c.attempts = credit.attempts
    c.status = credit.status
    default -> Failed
  }
  on credit.expired -> Expired
}
terminal state Good
terminal state Manual
terminal state Failed
terminal state Expired
`;

interface Seen {
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
  verified: boolean;
}

let cluster: Cluster;
let secret = "";
const seen: Seen[] = [];
const sockets = new Set<Socket>();
const counts = new Map<string, number>();
const callee = createServer((req: IncomingMessage, res: ServerResponse) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    let verified = false;
    try {
      new Webhook(secret).verify(body, req.headers as Record<string, string>);
      verified = true;
    } catch {
      verified = false;
    }
    const path = req.url ?? "/";
    seen.push({ path, headers: req.headers, body, verified });
    const n = (counts.get(path) ?? 0) + 1;
    counts.set(path, n);
    const json = (status: number, value: unknown, headers: Record<string, string> = {}) =>
      res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(value));
    if (!verified) return json(401, { error: "bad signature" });
    const mode = path.split("/").pop();
    if (mode === "good") return json(200, { score: 720, band: "A", extra: "dropped", nested: { more: true } });
    if (mode === "flaky") return n === 1 ? json(503, { busy: true }, { "retry-after": "1" }) : json(200, { score: 650, band: "C" });
    if (mode === "refuse") return json(422, { error: "unknown company" });
    if (mode === "missing") return json(200, { band: "B" });
    if (mode === "slow") return; // never answers: the Deadline passes first
    json(404, {});
  });
});
callee.on("connection", (s) => {
  sockets.add(s);
  s.on("close", () => sockets.delete(s));
});

const api = (method: string, path: string, json?: unknown) => request(cluster.baseUrl, method, path, { token: ADMIN_TOKEN, json });

test.before(async () => {
  await new Promise<void>((r) => callee.listen(0, "127.0.0.1", () => r()));
  cluster = await startCluster("calls-e2e", { env: { SLOTFLOW_ENDPOINTS_ALLOW_PRIVATE: "1" } });
  const port = (callee.address() as AddressInfo).port;
  const put = await api("PUT", "/api/endpoints/bureau", { kind: "http", url: `http://127.0.0.1:${port}/v1`, headers: { Authorization: CREDENTIAL } });
  if (put.status !== 201) throw new Error(put.text);
  secret = put.body.secret;
  const deployed = await request(cluster.baseUrl, "POST", "/api/workflows", { token: ADMIN_TOKEN, text: SOURCE });
  if (deployed.status !== 201) throw new Error(deployed.text);
});
test.after.always(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((r) => callee.close(() => r()));
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

async function start(mode: string): Promise<string> {
  // only the slow callee's run meets its Deadline: the others get a generous one (no wall-clock bound under load)
  const res = await api("POST", "/api/workflows/Check/runs", { company: "ACME", mode, wait: mode === "slow" ? "PT2S" : "PT10M", c: {} });
  if (res.status !== 201) throw new Error(res.text);
  return res.body.id as string;
}
const show = async (id: string) => (await api("GET", `/api/runs/${id}`)).body;
const ended = (id: string) => eventually(async () => {
  const run = await show(id);
  return run.status === "finished" ? run : null;
}, 60_000);
const kinds = (run: { history: { kind: string }[] }) => run.history.map((h) => h.kind).filter((k) => k.startsWith("call-"));

test.serial("a call to a real service: signed, Path appended, Input as JSON, Idempotency-Key = the call id; the run routes on the typed answer", async (t) => {
  const id = await start("good");
  const run = await ended(id);
  t.is(run.state, "Good");
  t.is(run.entities.c.note, "A");
  const slot = run.slots.find((s: { alias: string }) => s.alias === "credit");
  t.like(slot, { kind: "call", status: "completed", callStatus: "answered", attempts: 1, callee: { type: "http", endpoint: "bureau", method: "POST", path: "/score/good" } });
  t.deepEqual(slot.answeredBy, { via: "call", callId: slot.callId });
  const [req] = seen.filter((s) => s.path === "/v1/score/good");
  t.true(req.verified);
  t.is(req.headers["idempotency-key"], slot.callId);
  t.is(req.headers.authorization, CREDENTIAL);
  t.deepEqual(JSON.parse(req.body), { company: "ACME", mode: "good" });
  t.deepEqual(kinds(run), ["call-started", "call-attempt", "call-answered"]);
  const attempt = run.history.find((h: { kind: string }) => h.kind === "call-attempt");
  t.like(attempt.data, { alias: "credit", attempt: 1, status: 200, error: null });
  t.is(typeof attempt.data.ms, "number");
  // the extra properties were dropped: the slot's args are the event's
  const [row] = await sql(cluster.databaseUrl, "SELECT args FROM slots WHERE run_id = $1 AND alias = 'credit'", [id]);
  t.false(JSON.stringify(row.args).includes("dropped"));
  // never a header value in the run view, the history or the rows
  t.false(JSON.stringify(run).includes("sk_live_calls_e2e_credential"));
  const rows = await sql(cluster.databaseUrl, "SELECT * FROM calls WHERE run_id = $1", [id]);
  t.false(JSON.stringify(rows).includes("sk_live_calls_e2e_credential"));
  t.false(JSON.stringify(rows).includes("ACME"), "the request is sealed at rest");
});

test.serial("a retried call carries the same Idempotency-Key; the second attempt's answer is applied once", async (t) => {
  const id = await start("flaky");
  const run = await ended(id);
  t.is(run.state, "Manual");
  t.is(run.entities.c.note, "C");
  const reqs = seen.filter((s) => s.path === "/v1/score/flaky");
  t.is(reqs.length, 2);
  t.is(reqs[0].headers["idempotency-key"], reqs[1].headers["idempotency-key"]);
  t.true(reqs.every((r) => r.verified));
  t.deepEqual(kinds(run), ["call-started", "call-attempt", "call-attempt", "call-answered"]);
  const attempts = run.history.filter((h: { kind: string }) => h.kind === "call-attempt").map((h: { data: unknown }) => h.data);
  t.like(attempts[0], { attempt: 1, status: 503, error: "HTTP 503 from bureau" });
  t.like(attempts[1], { attempt: 2, status: 200 });
  t.is(run.history.filter((h: { kind: string }) => h.kind === "event").length, 1);
});

test.serial("a status not retried fails the call at once: on x.failed runs with x.error, x.status and x.attempts", async (t) => {
  const id = await start("refuse");
  const run = await ended(id);
  t.is(run.state, "Failed");
  t.like(run.entities.c, { note: "HTTP 422 from bureau", attempts: 1, status: 422 });
  const slot = run.slots.find((s: { alias: string }) => s.alias === "credit");
  t.like(slot, { kind: "call", status: "failed", callStatus: "failed", error: "HTTP 422 from bureau", httpStatus: 422, attempts: 1 });
  t.deepEqual(kinds(run), ["call-started", "call-attempt", "call-failed"]);
  t.is(seen.filter((s) => s.path === "/v1/score/refuse").length, 1);
});

test.serial("an answer missing a declared parameter fails the call, naming it", async (t) => {
  const id = await start("missing");
  const run = await ended(id);
  t.is(run.state, "Failed");
  t.regex(run.entities.c.note, /^invalid-response: "score" /);
});

test.serial("the Deadline passing while the callee is slow runs on x.expired; the call is cancelled", async (t) => {
  const id = await start("slow");
  const run = await ended(id);
  t.is(run.state, "Expired");
  const slot = run.slots.find((s: { alias: string }) => s.alias === "credit");
  t.like(slot, { kind: "call", status: "expired", callStatus: "cancelled" });
  t.true(kinds(run).includes("call-cancelled"));
});

test.serial("metrics: slotflow_calls_total and slotflow_call_duration_seconds", async (t) => {
  const text = (await request(cluster.baseUrl, "GET", "/metrics", { token: ADMIN_TOKEN })).text;
  t.regex(text, /slotflow_calls_total\{type="http",outcome="answered"\} [1-9]/);
  t.regex(text, /slotflow_calls_total\{type="http",outcome="retried"\} [1-9]/);
  t.regex(text, /slotflow_calls_total\{type="http",outcome="failed"\} [1-9]/);
  t.regex(text, /slotflow_call_duration_seconds_count\{type="http"\} [1-9]/);
  t.false(text.includes("sk_live_calls_e2e_credential"));
});

// v0.5 child runs (issue 40 item 3), through the server's workers: the parent's step starts the
// child; the child's own call answers it through the calls worker; the child's end reaches the
// parent as a command (recorded in pending_commands, queued by the command worker).
const CHILD = `workflow Score(company: string) returns Rated
event Scored(score: int, band: string)
event Rated(score: int, band: string)
initial state Checking {
  call http "bureau" as credit returns Scored {
    Path: "/score/good"
    Input { company: company, mode: "good" }
  }
  on credit(score, band) {
    result { score: score, band: band }
    default -> Done
  }
}
terminal state Done
`;
const PARENT = `workflow Buy(company: string)
event Rated(score: int, band: string)
initial state Rating {
  call workflow Score as rating returns Rated {
    Input { company: company }
  }
  on rating(score, band) {
    when (score >= 700) -> Approved
    default -> Manual
  }
  on rating.failed -> Failed
}
terminal state Approved
terminal state Manual
terminal state Failed
`;

test.serial("call workflow: the child's result routes the parent; parent and child linked in both views and by ?parent=", async (t) => {
  for (const text of [CHILD, PARENT]) {
    const deployed = await request(cluster.baseUrl, "POST", "/api/workflows", { token: ADMIN_TOKEN, text });
    t.is(deployed.status, 201, deployed.text);
  }
  const res = await api("POST", "/api/workflows/Buy/runs", { company: "ACME" });
  t.is(res.status, 201, res.text);
  const run = await ended(res.body.id);
  t.is(run.state, "Approved");
  const slot = run.slots.find((s: { alias: string }) => s.alias === "rating");
  t.like(slot, { kind: "call", status: "completed", callStatus: "answered", callee: { type: "workflow", workflow: "Score" } });
  const childId = slot.callee.runId as string;
  const child = await show(childId);
  t.like(child, { workflow: "Score", status: "finished", parent: { runId: run.id, alias: "rating", element: null }, result: { state: "Done", score: 720, band: "A" } });
  t.is(run.parent, null);
  const list = await api("GET", `/api/runs?parent=${run.id}`);
  t.is(list.status, 200);
  t.deepEqual(list.body.runs.map((r: { id: string }) => r.id), [childId]);
  t.is((await api("GET", "/api/runs?parent=nope")).status, 400);
  // the console's run pages link both ways (operators sign in with Basic and the admin token)
  const consolePage = (path: string) => request(cluster.baseUrl, "GET", path, { headers: { authorization: `Basic ${Buffer.from(`olga:${ADMIN_TOKEN}`).toString("base64")}` } });
  const childPage = await consolePage(`/console/runs/${childId}`);
  t.is(childPage.status, 200);
  t.true(childPage.text.includes(`href="/console/runs/${run.id}"`), "the child's page links its parent");
  const parentPage = await consolePage(`/console/runs/${run.id}`);
  t.true(parentPage.text.includes(`href="/console/runs/${childId}"`), "the parent's page links its child");
  t.true(parentPage.text.includes(`href="/console/runs?parent=${run.id}"`));
  const listed = await consolePage(`/console/runs?parent=${run.id}`);
  t.is(listed.status, 200);
  t.true(listed.text.includes(`href="/console/runs/${childId}"`));
});
