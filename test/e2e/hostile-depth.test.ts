/**
 * Hostile input, round three (issue 16 items 1–3), over real HTTP against one real `slotflow serve`
 * on PostgreSQL and Redis: deeply nested JSON on every JSON entry point (identity, chunked, gzip),
 * authentication before lookup on the raise path, and a problem document for `Expect: 999-bogus`.
 * Every refusal is a problem document whose status is the status line, and changes nothing.
 * Fixture: test/fixtures/callback-basic.flow.
 */
import test, { type ExecutionContext } from "ava";
import http from "node:http";
import { connect } from "node:net";
import { gzipSync } from "node:zlib";
import { dropDatabase } from "../helpers/db.js";
import { deployFixture, portOf, postLink, principalJwt, showRun, slotStatus, startRun, uniqueTitle, type RawAnswer } from "../helpers/callback.js";
import { linkIn, waitForEmail } from "../helpers/mail.js";
import { ADMIN_TOKEN, request, startCluster, type Cluster } from "../helpers/server.js";

let cluster: Cluster;
let base: string;

test.before(async () => {
  cluster = await startCluster("hostile-depth");
  base = cluster.baseUrl;
  await deployFixture(base, "callback-basic.flow");
});

test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

async function basic(prefix: string) {
  const title = uniqueTitle(prefix);
  const runId = await startRun(base, "CbBasic", { job: { title, contact: `${title}@example.test`, handled: 0 } });
  return { runId, title, link: async (alias: string) => linkIn(await waitForEmail(() => cluster.output(), `${alias} ${title}`)) };
}

/** One POST with `body` framed as `framing` (identity: Content-Length; chunked; gzip: chunked gzip). */
function send(path: string, body: string, framing: "identity" | "chunked" | "gzip", headers: Record<string, string> = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const h: Record<string, string> = { "content-type": "application/json", ...headers };
    let bytes: Buffer = Buffer.from(body);
    if (framing === "identity") h["content-length"] = String(bytes.length);
    if (framing === "gzip") {
      bytes = gzipSync(bytes);
      h["content-encoding"] = "gzip";
    }
    const req = http.request({ host: "127.0.0.1", port: portOf(base), method: "POST", path, headers: h, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: text.slice(0, 600), body: parsed });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    // without Content-Length Node frames the body chunked; write it in pieces
    for (let i = 0; i < bytes.length; i += 1000) req.write(bytes.subarray(i, i + 1000));
    req.end();
  });
}

function problem(t: ExecutionContext, res: RawAnswer, status: number, code: string | null, what: string): void {
  t.is(res.status, status, `${what} ${res.text}`);
  t.is(res.body?.status, status, `${what}: the body's status matches the status line`);
  if (code) t.is(res.body?.code, code, `${what} ${res.text}`);
  t.regex(String(res.headers["content-type"] ?? ""), /^application\/problem\+json/, what);
}

/** `{"ok":true,"note":[[[…]]]}` nested `depth` deep inside `note` (or another property). */
function nested(depth: number, at = "note", extra: Record<string, unknown> = { ok: true }): string {
  return JSON.stringify({ ...extra, [at]: "HOLE" }).replace('"HOLE"', "[".repeat(depth) + "]".repeat(depth));
}

const TOO_DEEP = /deeper than 32 levels \(SLOTFLOW_MAX_INPUT_DEPTH\)/;

test.serial("item 1: a callback body nested 3,000 (or 500, or 33) deep is 422 naming SLOTFLOW_MAX_INPUT_DEPTH, identity, chunked and gzip alike, and the link stays live", async (t) => {
  const run = await basic("deep-callback");
  const url = new URL(await run.link("answer"));
  for (const framing of ["identity", "chunked", "gzip"] as const) {
    for (const [what, body] of [
      ["3,000 deep in note", nested(3000)],
      ["500 deep in note", nested(500)],
      ["33 deep in an undeclared property", nested(32, "extra")],
      ["deep under a duplicated key", nested(3000).replace("{", '{"note":"x",')],
      ["deep objects", JSON.stringify({ ok: true, note: "HOLE" }).replace('"HOLE"', '{"a":'.repeat(3000) + "1" + "}".repeat(3000))],
    ] as const) {
      const res = await send(url.pathname, body, framing);
      problem(t, res, 422, "invalid-body", `${what} (${framing})`);
      t.regex(res.body?.detail ?? "", TOO_DEEP, `${what} (${framing})`);
      t.is(res.body?.limit, 32);
    }
  }
  // brackets inside strings do not count
  const fine = await postLink(url.href, { ok: true, note: "[".repeat(5000) });
  t.is(fine.status, 200, fine.text);
  const shown = await showRun(base, run.runId);
  t.is(shown.entities.job.handled, 1);
  t.is(slotStatus(shown, "answer"), "completed");
});

test.serial("item 1: raise bodies and run input nested 100,000 deep are 422 naming the limit, never 500", async (t) => {
  const run = await basic("deep-raise");
  const jwt = await principalJwt("eve", ["ops"]);
  const deep = nested(100_000);
  for (const framing of ["identity", "chunked", "gzip"] as const) {
    const raise = await send(`/api/runs/${run.runId}/slots/answer/events`, deep, framing, { authorization: `Bearer ${jwt}` });
    problem(t, raise, 422, "invalid-body", `raise (${framing})`);
    t.regex(raise.body?.detail ?? "", TOO_DEEP);
    const start = await send("/api/workflows/CbBasic/runs", nested(100_000, "job", {}), framing, { authorization: `Bearer ${ADMIN_TOKEN}` });
    problem(t, start, 422, "invalid-body", `start (${framing})`);
    t.regex(start.body?.detail ?? "", TOO_DEEP);
  }
  const shown = await showRun(base, run.runId);
  t.is(slotStatus(shown, "answer"), "open");
});

test.serial("item 2: an unsigned or invalid JWT on the raise path is 401 before anything is looked up, whatever the run id and alias", async (t) => {
  const run = await basic("raise-auth");
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
  const unsigned = `${b64({ alg: "none", typ: "JWT" })}.${b64({ sub: "eve", roles: ["ops"] })}.`;
  for (const token of [unsigned, "garbage", null]) {
    for (const path of ["/api/runs/not-a-uuid/slots/%00/events", `/api/runs/${run.runId}/slots/%00/events`, "/api/runs/not-a-uuid/slots/answer/events", `/api/runs/${run.runId}/slots/answer/events`]) {
      const res = await request(base, "POST", path, { json: { ok: true, note: "x" }, headers: token ? { authorization: `Bearer ${token}` } : {} });
      t.is(res.status, 401, `${path} ${res.text}`);
      t.is(res.body?.code, "unauthorized");
    }
  }
  // revoke without the admin token: 401 too, before the alias is judged
  const revoke = await request(base, "POST", `/api/runs/not-a-uuid/slots/%00/link/revoke`);
  t.is(revoke.status, 401, revoke.text);
  // with valid credentials the lookups answer as before
  const jwt = await principalJwt("eve", ["ops"]);
  t.is((await request(base, "POST", "/api/runs/not-a-uuid/slots/%00/events", { json: {}, token: jwt })).status, 404);
});

test.serial("item 3: Expect: 999-bogus answers 417 as a problem document, and the server still serves", async (t) => {
  const text = await new Promise<string>((resolve, reject) => {
    const socket = connect(portOf(base), "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (c) => chunks.push(c));
    socket.on("close", () => resolve(Buffer.concat(chunks).toString("utf8")));
    socket.on("error", reject);
    socket.setTimeout(15_000, () => socket.destroy(new Error("no answer")));
    socket.write("POST /api/workflow/callback/x HTTP/1.1\r\nHost: x\r\nExpect: 999-bogus\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
  });
  t.regex(text, /^HTTP\/1\.1 417 /);
  t.regex(text, /content-type: application\/problem\+json/i);
  const body = JSON.parse(text.split("\r\n\r\n")[1]);
  t.is(body.status, 417);
  t.is(body.type, "about:blank");
  t.truthy(body.detail);
  t.is((await request(base, "GET", "/healthz")).status, 200);
});

test.serial("a chunked body past the size limit answers 413 with Connection: close, so a keep-alive client's next request is answered, not reset", async (t) => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const post = (body?: Buffer) =>
    new Promise<{ status: number; connection?: string }>((resolve, reject) => {
      const req = http.request({ host: "127.0.0.1", port: portOf(base), method: "POST", path: "/api/workflow/callback/no-such-token", headers: { "content-type": "application/json" }, agent }, (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
      });
      req.on("error", reject);
      if (body) for (let i = 0; i < body.length; i += 16_384) req.write(body.subarray(i, i + 16_384));
      req.end();
    });
  const big = await post(Buffer.from(JSON.stringify({ ok: true, note: "x".repeat(200_000) })));
  t.is(big.status, 413);
  t.is(big.connection, "close");
  t.is((await post()).status, 404, "the next request on the agent is answered");
  agent.destroy();
});
