/**
 * Hostile and malformed requests to the public endpoint and the admin API (issue 8 items 1–7),
 * over real HTTP (and raw sockets) against one real `slotflow serve` on PostgreSQL and Redis.
 *
 * Every refusal here is checked to be an honest problem document (status line = `status` member)
 * and to change nothing: the link stays live and completes its slot afterwards.
 * Fixtures: test/fixtures/callback-basic.flow, test/fixtures/edge-subject.flow.
 */
import test, { type ExecutionContext } from "ava";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { connect } from "node:net";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { dropDatabase } from "../helpers/db.js";
import { deployFixture, portOf, postLink, principalJwt, rawRequest, showRun, slotStatus, startRun, uniqueTitle, type Answer, type RawAnswer } from "../helpers/callback.js";
import { linkIn, parseEmails, tokenOf, waitForEmail } from "../helpers/mail.js";
import { ADMIN_TOKEN, eventually, request, startCluster, type Cluster } from "../helpers/server.js";

let cluster: Cluster;
let base: string;

test.before(async () => {
  cluster = await startCluster("hostile");
  base = cluster.baseUrl;
  await deployFixture(base, "callback-basic.flow");
  await deployFixture(base, "edge-subject.flow");
});

test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

async function basic(prefix: string) {
  const title = uniqueTitle(prefix);
  const runId = await startRun(base, "CbBasic", { job: { title, contact: `${title}@example.test`, handled: 0 } });
  return {
    runId,
    title,
    link: async (alias: string) => linkIn(await waitForEmail(() => cluster.output(), `${alias} ${title}`)),
    show: () => showRun(base, runId),
  };
}

/** An honest problem document: status line, `status` member, code and media type agree. */
function problem(t: ExecutionContext, res: Answer | RawAnswer, status: number, code: string | null, what = ""): void {
  t.is(res.status, status, `${what} ${res.text}`);
  t.is(res.body?.status, status, `${what}: the body's status matches the status line`);
  if (code) t.is(res.body?.code, code, `${what} ${res.text}`);
  const type = res.headers instanceof Headers ? res.headers.get("content-type") : res.headers["content-type"];
  t.regex(type ?? "", /^application\/problem\+json/, what);
}

function completed(t: ExecutionContext, res: Answer, what = ""): void {
  t.is(res.status, 200, `${what} ${res.text}`);
  t.is(res.body?.status, "completed", what);
  t.regex(String(res.body?.receipt), /^[\w-]+\.[\w-]+\.[\w-]+$/, `${what}: with its receipt (v0.4)`);
}

/** Sends `bytes` over a fresh TCP connection and returns everything the server wrote back. */
function rawExchange(port: number, bytes: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (c) => chunks.push(c));
    socket.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    socket.on("close", () => resolve(Buffer.concat(chunks).toString("utf8")));
    socket.on("error", (err) => (chunks.length ? resolve(Buffer.concat(chunks).toString("utf8")) : reject(err)));
    socket.setTimeout(15_000, () => socket.destroy(new Error("no answer")));
    socket.write(bytes);
  });
}

function parseRaw(text: string): RawAnswer {
  const [head, ...rest] = text.split("\r\n\r\n");
  const lines = head.split("\r\n");
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(lines[0])?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const l of lines.slice(1)) {
    const i = l.indexOf(":");
    if (i > 0) headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
  }
  const body = rest.join("\r\n\r\n");
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  return { status, headers, text: text.slice(0, 400), body: parsed };
}

// --- item 1: a false Content-Encoding is a 4xx problem ------------------------------------------

test.serial("a body whose Content-Encoding gzip or deflate is false is refused 415 on the callback, run-start, raise and deploy endpoints, and nothing changes", async (t) => {
  const run = await basic("false-gzip");
  const url = await run.link("answer");
  const port = portOf(base);
  const plain = Buffer.from(JSON.stringify({ ok: true, note: "x" }));
  for (const coding of ["gzip", "deflate", "br", "x-unknown"]) {
    const json = { "content-type": "application/json", "content-encoding": coding };
    problem(t, await rawRequest({ port, method: "POST", path: new URL(url).pathname, headers: json, body: plain.toString() }), 415, "unsupported-media-type", `callback ${coding}`);
    problem(
      t,
      await rawRequest({ port, method: "POST", path: "/api/workflows/CbBasic/runs", headers: { ...json, authorization: `Bearer ${ADMIN_TOKEN}` }, body: plain.toString() }),
      415,
      "unsupported-media-type",
      `start ${coding}`,
    );
    problem(
      t,
      await rawRequest({ port, method: "POST", path: `/api/runs/${run.runId}/slots/answer/events`, headers: { ...json, authorization: `Bearer ${await principalJwt("eve", ["x"])}` }, body: plain.toString() }),
      415,
      "unsupported-media-type",
      `raise ${coding}`,
    );
    problem(
      t,
      await rawRequest({ port, method: "POST", path: "/api/workflows", headers: { "content-type": "text/plain", "content-encoding": coding, authorization: `Bearer ${ADMIN_TOKEN}` }, body: "workflow X" }),
      415,
      "unsupported-media-type",
      `deploy ${coding}`,
    );
  }
  // the size limit counts decoded bytes: a small gzip that expands past 64 KiB is 413
  const bomb = gzipSync(Buffer.from(JSON.stringify({ ok: true, note: "x".repeat(200_000) })));
  t.true(bomb.length < 4096);
  problem(t, await postLink(url, undefined, { body: bomb as unknown as string, headers: { "content-type": "application/json", "content-encoding": "gzip" } }), 413, "payload-too-large", "a gzip expanding past the limit");
  const shown = await run.show();
  t.is(shown.entities.job.handled, 0);
  t.is(slotStatus(shown, "answer"), "open");
  // a body truly encoded as it says is read
  completed(t, await postLink(url, undefined, { body: gzipSync(plain) as unknown as string, headers: { "content-type": "application/json", "content-encoding": "gzip" } }), "true gzip");
  t.is((await run.show()).entities.job.note, "x");
  const other = await basic("true-codings");
  completed(t, await postLink(await other.link("typed"), undefined, {
    body: deflateSync(Buffer.from(JSON.stringify({ count: 1, amount: 2.5, comment: null, due: "2026-11-21T09:30:00Z", tags: [] }))) as unknown as string,
    headers: { "content-type": "application/json", "content-encoding": "deflate" },
  }), "true deflate");
  completed(t, await postLink(await other.link("ping"), undefined, { body: brotliCompressSync(Buffer.from("{}")) as unknown as string, headers: { "content-type": "application/json", "content-encoding": "br" } }), "true br");
});

// --- item 2: unknown methods, unmatched routes --------------------------------------------------

test.serial("an unknown method answers a problem whose status matches the status line: 404 for an unknown path, 405 with Allow for a known one, and spends nothing", async (t) => {
  const run = await basic("propfind");
  const url = await run.link("ping");
  const port = portOf(base);
  problem(t, await rawRequest({ port, method: "PROPFIND", path: "/no-such-page" }), 404, "not-found", "PROPFIND /no-such-page");
  // `/` is the home page (v0.5): a known path, so an unknown method on it is 405 like on any other
  const root = await rawRequest({ port, method: "PROPFIND", path: "/" });
  problem(t, root, 405, "method-not-allowed", "PROPFIND /");
  t.is(root.headers.allow, "HEAD, GET");
  problem(t, await rawRequest({ port, method: "DELETE", path: "/nowhere" }), 404, "not-found", "DELETE /nowhere");
  for (const method of ["PROPFIND", "MKCOL", "LOCK", "PURGE"]) {
    const res = await rawRequest({ port, method, path: new URL(url).pathname });
    problem(t, res, 405, "method-not-allowed", `${method} on a live link`);
    t.is(res.headers.allow, "POST", method);
  }
  const onRun = await rawRequest({ port, method: "PROPFIND", path: `/api/runs/${run.runId}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  problem(t, onRun, 405, "method-not-allowed", "PROPFIND on a run");
  t.is(onRun.headers.allow, "HEAD, GET");
  const putDeploy = await request(base, "PUT", "/api/workflows", { token: ADMIN_TOKEN, text: "workflow X" });
  problem(t, putDeploy, 405, "method-not-allowed", "PUT /api/workflows");
  t.is(putDeploy.headers.get("allow"), "POST, HEAD, GET"); // GET: the deployed workflows (v0.5, slotflow types --url)
  problem(t, await request(base, "OPTIONS", "/healthz"), 405, "method-not-allowed", "OPTIONS /healthz");
  // a library's own router (the queue dashboard's) cannot make the status line and body disagree
  const dashboard = { authorization: `Bearer ${ADMIN_TOKEN}` };
  problem(t, await rawRequest({ port, method: "PROPFIND", path: "/admin/queues", headers: dashboard }), 405, "method-not-allowed", "PROPFIND /admin/queues");
  problem(t, await rawRequest({ port, method: "POST", path: "/admin/queues/api/queues/x/nothing", headers: dashboard }), 405, "method-not-allowed", "POST on a dashboard GET path");
  problem(t, await rawRequest({ port, method: "GET", path: "/admin/queues/no/such/page", headers: dashboard }), 404, "not-found", "GET an unknown dashboard path");
  t.is(slotStatus(await run.show(), "ping"), "open");
  completed(t, await postLink(url, undefined), "POST afterwards");
});

// --- item 3: requests Node's parser refuses -----------------------------------------------------

test.serial("requests the HTTP parser refuses get a problem+json 400 or 431, not a bare status", async (t) => {
  const port = portOf(base);
  const cases: [string, string, number][] = [
    ["a bad request line", "GARBAGE\r\n\r\n", 400],
    ["a space in the method", "PO ST /api/workflow/callback/x HTTP/1.1\r\nHost: x\r\n\r\n", 400],
    ["Content-Length and Transfer-Encoding", "POST /api/workflow/callback/x HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400],
    ["a control character in a header", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0001b\r\n\r\n", 400],
    ["oversized headers", `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(40_000)}\r\n\r\n`, 431],
  ];
  for (const [what, bytes, status] of cases) {
    const res = parseRaw(await rawExchange(port, bytes));
    problem(t, res, status, null, what);
    t.is(res.body?.type, "about:blank", what);
  }
  // the server still serves
  t.is((await request(base, "GET", "/healthz")).status, 200);
});

// --- item 4: a body is judged on what was sent ---------------------------------------------------

test.serial("__proto__, constructor and prototype are ordinary undeclared properties at any depth: 422 naming them, never 'no body'", async (t) => {
  const run = await basic("proto-any-depth");
  const ping = await run.link("ping");
  const answer = await run.link("answer");
  const typed = await run.link("typed");
  const json = { "content-type": "application/json" };
  for (const body of ['{"__proto__": {}}', '{"constructor": {}}', '{"prototype": 1}']) {
    const res = await postLink(ping, undefined, { body, headers: json });
    problem(t, res, 422, "invalid-body", `ping ${body}`);
    t.deepEqual(res.body.errors.map((e: { name: string }) => e.name), [Object.keys(JSON.parse(body))[0]], body);
  }
  const full = await postLink(answer, undefined, { body: '{"ok": true, "note": "x", "__proto__": {}}', headers: json });
  problem(t, full, 422, "invalid-body", "a complete body plus __proto__");
  t.deepEqual(full.body.errors.map((e: { name: string }) => e.name), ["__proto__"], "only __proto__ is named, no parameter is missing");
  const nested = await postLink(typed, undefined, {
    body: '{"count": 1, "amount": 1, "comment": null, "due": "2026-11-21T09:30:00Z", "tags": [{"__proto__": {}}]}',
    headers: json,
  });
  problem(t, nested, 422, "invalid-body", "__proto__ inside a list element");
  t.deepEqual(nested.body.errors.map((e: { name: string }) => e.name), ["tags[0]"]);
  const shown = await run.show();
  t.is(shown.entities.job.handled, 0);
  for (const alias of ["ping", "answer", "typed"]) t.is(slotStatus(shown, alias), "open", alias);
  completed(t, await postLink(ping, {}), "ping with {} afterwards");
});

test.serial("+json media types are parsed as JSON; null, whitespace and scalars are judged as bodies, not taken for 'no body'", async (t) => {
  const run = await basic("plus-json");
  const ping = await run.link("ping");
  const answer = await run.link("answer");
  for (const type of ["application/problem+json", "application/merge-patch+json", "application/vnd.example+json"]) {
    const res = await postLink(ping, undefined, { body: '{"x": 1}', headers: { "content-type": type } });
    problem(t, res, 422, "invalid-body", type);
    t.deepEqual(res.body.errors.map((e: { name: string }) => e.name), ["x"], type);
  }
  problem(t, await postLink(ping, undefined, { body: "{", headers: { "content-type": "application/merge-patch+json" } }), 400, "malformed-json", "+json not JSON");
  problem(t, await postLink(ping, undefined, { body: "null", headers: { "content-type": "application/json" } }), 422, "invalid-body", "null for an event without parameters");
  problem(t, await postLink(answer, undefined, { body: "null", headers: { "content-type": "application/json" } }), 422, "invalid-body", "null for an event with parameters");
  problem(t, await postLink(ping, undefined, { body: "   ", headers: { "content-type": "application/json" } }), 400, "malformed-json", "whitespace only");
  problem(t, await postLink(ping, undefined, { body: "[]", headers: { "content-type": "application/json" } }), 422, "invalid-body", "an array");
  problem(t, await postLink(ping, undefined, { body: "{}", headers: { "content-type": "application/json; charset=latin1" } }), 415, "unsupported-media-type", "a charset other than UTF-8");
  const shown = await run.show();
  t.is(shown.entities.job.handled, 0);
  t.is(slotStatus(shown, "ping"), "open");
  completed(t, await postLink(ping, undefined, { body: "{}", headers: { "content-type": "application/merge-patch+json" } }), "{} as merge-patch+json");
  completed(t, await postLink(answer, undefined, { body: '{"ok": true, "note": "p"}', headers: { "content-type": "application/problem+json" } }), "a full body as problem+json");
  t.is((await run.show()).entities.job.note, "p");
});

test.serial("zero bytes is no body however framed: an empty chunked body completes an event without parameters", async (t) => {
  const run = await basic("empty-chunked");
  const ping = await run.link("ping");
  const res = await rawRequest({ port: portOf(base), method: "POST", path: new URL(ping).pathname, headers: { "content-type": "application/json", "transfer-encoding": "chunked" } });
  t.is(res.status, 200, res.text);
  t.is((await run.show()).entities.job.pinged, true);
});

// --- item 5: values PostgreSQL cannot store ------------------------------------------------------

test.serial("U+0000 and unpaired surrogates are refused 422 naming the field, in callback and raise bodies, and nothing changes", async (t) => {
  const run = await basic("unstorable");
  const answer = await run.link("answer");
  const typed = await run.link("typed");
  const json = { "content-type": "application/json" };
  const nul = await postLink(answer, undefined, { body: '{"ok": true, "note": "a\\u0000b"}', headers: json });
  problem(t, nul, 422, "invalid-body", "NUL");
  t.deepEqual(nul.body.errors.map((e: { name: string }) => e.name), ["note"]);
  const lone = await postLink(answer, undefined, { body: '{"ok": true, "note": "\\ud800"}', headers: json });
  problem(t, lone, 422, "invalid-body", "a lone high surrogate");
  t.deepEqual(lone.body.errors.map((e: { name: string }) => e.name), ["note"]);
  const inList = await postLink(typed, undefined, {
    body: '{"count": 1, "amount": 1, "comment": "\\udc00x", "due": "2026-11-21T09:30:00Z", "tags": ["ok", "bad\\u0000"]}',
    headers: json,
  });
  problem(t, inList, 422, "invalid-body", "in a list and an optional string");
  t.deepEqual(inList.body.errors.map((e: { name: string }) => e.name).sort(), ["comment", "tags[1]"]);
  const raised = await request(base, "POST", `/api/runs/${run.runId}/slots/answer/events`, {
    token: await principalJwt("rae", ["anyone"]),
    body: '{"ok": true, "note": "x\\u0000"}',
    headers: json,
  });
  problem(t, raised, 422, "invalid-body", "raise");
  t.deepEqual(raised.body.errors.map((e: { name: string }) => e.name), ["note"]);
  const shown = await run.show();
  t.is(shown.entities.job.handled, 0);
  t.is(shown.incidents.length, 0);
  // a paired surrogate (an emoji) is fine
  completed(t, await postLink(answer, { ok: true, note: "fine \ud83d\ude00" }));
  t.is((await run.show()).entities.job.note, "fine \ud83d\ude00");
});

// --- item 6: a strict, case-sensitive route; structural redaction -------------------------------

test.serial("the callback route is case-sensitive and strict, and the access log writes route templates and redacts unmatched paths", async (t) => {
  const run = await basic("route");
  const url = await run.link("ping");
  const token = tokenOf(url);
  const port = portOf(base);
  const runOf32 = randomBytes(24).toString("base64url");
  const variants = [
    `/API/WORKFLOW/CALLBACK/${token}`,
    `/Api/Workflow/Callback/${token}`,
    `/api/workflow//callback/${token}`,
    `/api/workflow/callback/..;/${token}`,
    `/api/workflow/callback/${token}/`,
    `//api/workflow/callback/${token}`,
    `/api/workflow/callback/${token}/x`,
    `/x/${runOf32}`,
  ];
  for (const path of variants) {
    problem(t, await rawRequest({ port, method: "POST", path, headers: { "content-type": "application/json" }, body: "{}" }), 404, "not-found", path);
  }
  t.is(slotStatus(await run.show(), "ping"), "open", "no variant completed the slot");
  completed(t, await postLink(url, {}), "the exact path");

  const access = await eventually(async () => {
    const lines = cluster.output().filter((l) => l.includes('"msg":"request"')).map((l) => JSON.parse(l) as { method: string; path: string; status: number });
    return lines.some((l) => l.method === "POST" && l.status === 200 && l.path === "/api/workflow/callback/[redacted]") ? lines : null;
  });
  const posted = access.filter((l) => l.method === "POST").map((l) => l.path);
  t.false(posted.some((p) => p.includes(token.slice(0, 20))), JSON.stringify(posted));
  t.true(posted.includes("/API/WORKFLOW/CALLBACK/[redacted]"));
  t.true(posted.includes("/api/workflow//callback/[redacted]"));
  t.true(posted.includes("/x/[redacted]"), "a 32-character run is redacted too");
  for (const line of cluster.output().filter((l) => l.startsWith("{"))) t.false(line.includes(token) || line.includes(runOf32), `a log line holds the token: ${line.slice(0, 200)}`);
});

// --- item 7: a link in a subject is sealed, shown redacted, and sent whole -----------------------

test.serial("a link placed in an email subject is stored sealed, shown redacted by the outbox API, sent whole, and absent from a pg_dump", async (t) => {
  const title = uniqueTitle("subject");
  const runId = await startRun(base, "EdgeSubject", { job: { title, contact: `${title}@example.test` } });
  const mail = await eventually(async () => parseEmails(cluster.output()).find((m) => m.subject.startsWith(`ping ${title} `)));
  const url = /https?:\/\/\S+\/api\/workflow\/callback\/(?:sfl_[A-Za-z0-9_-]{49}|[A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])/.exec(mail.subject)?.[0];
  t.truthy(url, "the sent subject carries the whole link");
  const token = tokenOf(url!);

  const outbox = await request(base, "GET", `/api/runs/${runId}/outbox`, { token: ADMIN_TOKEN });
  t.is(outbox.status, 200);
  t.is(outbox.body.length, 1);
  t.is(outbox.body[0].subject, `ping ${title} ${new URL(url!).origin}/api/workflow/callback/[redacted]`);
  t.is(outbox.body[0].to, `${title}@example.test`);
  t.false(outbox.text.includes(token));
  const view = await request(base, "GET", `/api/runs/${runId}`, { token: ADMIN_TOKEN });
  t.false(view.text.includes(token));

  const dump = execFileSync("pg_dump", ["--data-only", cluster.databaseUrl], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  t.true(dump.includes(runId));
  t.false(dump.includes(token), "pg_dump holds the token");

  completed(t, await postLink(url!, undefined), "the link from the subject works");
  t.is((await showRun(base, runId)).entities.job.pinged, true);
});
