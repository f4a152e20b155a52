/**
 * Calls through the real queues and workers (issue 40 item 2): one real `slotflow serve` on real
 * PostgreSQL and Redis, a real local HTTP callee verifying each request's Standard Webhooks
 * signature with the `standardwebhooks` library. The workflow's compiled form is the one the
 * language produces for `call http "bureau" as credit returns Scored { Path, Input, Deadline }`
 * (lang/compiled.ts CompiledCall), built from a compiled `subscribe` with the same handlers, so
 * this file proves the runtime — the command worker enqueueing the attempt after commit, the calls
 * worker, the `call` command, retries on their delay, the sweeper's expiry cancelling a call under
 * way, metrics — whatever the front-end does (test/calls/calls-e2e.test.ts drives a `.flow`).
 */
import test from "ava";
import { createServer } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { Webhook } from "standardwebhooks";
import { dropDatabase, sql } from "../helpers/db.js";
import { ADMIN_TOKEN, eventually, request, startCluster, type Cluster } from "../helpers/server.js";

const SOURCE = `workflow Check(company: string, mode: string, wait: duration, c: Case)
entity Case {
  note: string?
}
event Scored(score: int, band: string)
event Other()
initial state Checking {
  subscribe Scored(score, band) as credit { Deadline: wait }
  subscribe Other() as other { Deadline: wait }
  enter {
    c.note = "/score/" + mode
    c.note = company
  }
  on credit(score, band) {
    c.note = band
    when (score >= 700) -> Good
    default -> Manual
  }
  on credit.expired -> Expired
  on other.expired -> Failed
}
terminal state Good
terminal state Manual
terminal state Failed
terminal state Expired
`;

/** The compiled `subscribe` made into the call the language compiles (lang/compiled.ts CompiledCall). */
function asCall(compiled: any): any {
  const state = compiled.states.Checking;
  const [pathAssign, companyAssign] = state.enter[0];
  const credit = state.slots.find((s: { alias: string }) => s.alias === "credit");
  credit.kind = "call";
  credit.call = { callee: { type: "http", endpoint: "bureau", method: "POST" }, path: pathAssign.value, input: [{ name: "company", value: companyAssign.value }], timeout: null, attempts: null };
  state.slots = state.slots.filter((s: { alias: string }) => s.alias !== "other");
  state.failed = { credit: state.expired.other };
  delete state.expired.other;
  state.enter = [];
  return compiled;
}

let cluster: Cluster;
let secret = "";
const seen: { path: string; key: string; verified: boolean }[] = [];
const hits = new Map<string, number>();
const sockets = new Set<Socket>();
const callee = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    let verified = true;
    try {
      new Webhook(secret).verify(body, req.headers as Record<string, string>);
    } catch {
      verified = false;
    }
    const path = req.url ?? "/";
    seen.push({ path, key: String(req.headers["idempotency-key"]), verified });
    const n = (hits.get(path) ?? 0) + 1;
    hits.set(path, n);
    const json = (status: number, v: unknown, h: Record<string, string> = {}) => res.writeHead(status, { "content-type": "application/json", ...h }).end(JSON.stringify(v));
    if (!verified) return json(401, {});
    const mode = path.split("/").pop();
    if (mode === "good") return json(200, { score: 720, band: "A", extra: "dropped" });
    if (mode === "flaky") return n === 1 ? json(503, {}, { "retry-after": "1" }) : json(200, { score: 600, band: "C" });
    if (mode === "refuse") return json(422, {});
    if (mode === "slow") return; // never answers
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
  cluster = await startCluster("calls-worker", { env: { SLOTFLOW_ENDPOINTS_ALLOW_PRIVATE: "1" } });
  const port = (callee.address() as AddressInfo).port;
  const put = await api("PUT", "/api/endpoints/bureau", { kind: "http", url: `http://127.0.0.1:${port}/v1`, headers: { Authorization: "Bearer sk_worker_credential" } });
  if (put.status !== 201) throw new Error(put.text);
  secret = put.body.secret;
  const deployed = await request(cluster.baseUrl, "POST", "/api/workflows", { token: ADMIN_TOKEN, text: SOURCE });
  if (deployed.status !== 201) throw new Error(deployed.text);
  const [row] = await sql(cluster.databaseUrl, "SELECT compiled FROM workflow_versions WHERE workflow_name = 'Check'");
  await sql(cluster.databaseUrl, "UPDATE workflow_versions SET compiled = $1 WHERE workflow_name = 'Check'", [JSON.stringify(asCall(row.compiled))]);
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
const ended = (id: string) =>
  eventually(async () => {
    const run = (await api("GET", `/api/runs/${id}`)).body;
    return run.status === "finished" ? run : null;
  }, 60_000);
const callKinds = (run: { history: { kind: string }[] }) => run.history.map((h) => h.kind).filter((k) => k.startsWith("call-"));

test.serial("the worker makes the call after the step commits; the answer completes the slot and the run routes on it", async (t) => {
  const id = await start("good");
  const run = await ended(id);
  t.is(run.state, "Good");
  t.is(run.entities.c.note, "A");
  const slot = run.slots.find((s: { alias: string }) => s.alias === "credit");
  t.like(slot, { kind: "call", status: "completed", callStatus: "answered", attempts: 1, callee: { type: "http", endpoint: "bureau", method: "POST", path: "/score/good" } });
  t.deepEqual(seen.filter((s) => s.path === "/v1/score/good").map((s) => [s.key, s.verified]), [[slot.callId, true]]);
  t.deepEqual(callKinds(run), ["call-started", "call-attempt", "call-answered"]);
  t.false(JSON.stringify(run).includes("sk_worker_credential"));
});

test.serial("a 503 is retried after its Retry-After with the same Idempotency-Key", async (t) => {
  const id = await start("flaky");
  const run = await ended(id);
  t.is(run.state, "Manual");
  const reqs = seen.filter((s) => s.path === "/v1/score/flaky");
  t.is(reqs.length, 2);
  t.is(reqs[0].key, reqs[1].key);
  t.deepEqual(callKinds(run), ["call-started", "call-attempt", "call-attempt", "call-answered"]);
});

test.serial("a 422 fails the call at once: on x.failed runs", async (t) => {
  const id = await start("refuse");
  const run = await ended(id);
  t.is(run.state, "Failed");
  t.like(run.slots.find((s: { alias: string }) => s.alias === "credit"), { status: "failed", error: "HTTP 422 from bureau", httpStatus: 422 });
});

test.serial("a slow callee: the Deadline passes, on x.expired runs, the call is cancelled", async (t) => {
  const id = await start("slow");
  const run = await ended(id);
  t.is(run.state, "Expired");
  t.like(run.slots.find((s: { alias: string }) => s.alias === "credit"), { status: "expired", callStatus: "cancelled" });
  t.true(callKinds(run).includes("call-cancelled"));
  const [row] = await sql(cluster.databaseUrl, "SELECT status FROM calls WHERE run_id = $1", [id]);
  t.is(row.status, "cancelled");
});

test.serial("metrics count answered, retried, failed and cancelled calls, and attempt durations", async (t) => {
  const text = (await request(cluster.baseUrl, "GET", "/metrics", { token: ADMIN_TOKEN })).text;
  for (const outcome of ["answered", "retried", "failed", "cancelled"]) t.regex(text, new RegExp(`slotflow_calls_total\\{type="http",outcome="${outcome}"\\} [1-9]`), outcome);
  t.regex(text, /slotflow_call_duration_seconds_count\{type="http"\} [1-9]/);
});
