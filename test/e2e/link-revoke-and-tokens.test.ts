/**
 * Operators end one link, and tokens a secret scanner can find (issue 10 §2 and §3), over real
 * HTTP against one real `slotflow serve` on real PostgreSQL and Redis.
 *
 * Revocation: `POST /api/runs/{id}/slots/{alias}/link/revoke` and `slotflow revoke RUN ALIAS` end
 * the slot's live link with reason `revoked` (410 link-dead), leave the run and the slot as they
 * were, are recorded in the history, answer 404 when there is no live link (`?element=` of a slot
 * that is not fanned out names none),
 * and the workflow can mint a new link afterwards.
 * Tokens: `sfl_` + 256 random bits + a checksum; a checksum-invalid token answers 404 without a
 * database query (proved by a web process whose PostgreSQL is unreachable); links minted in the
 * old format keep working; the gitleaks rule in docs/http-api.md finds a generated token.
 * Fixtures: test/fixtures/callback-basic.flow, examples/vendor-approval.flow.
 */
import test from "ava";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { checkTokenFormat, hashToken, newToken } from "../../src/engine/sealing/token.js";
import { dropDatabase, sql } from "../helpers/db.js";
import { deployFixture, eventsOn, postLink, principalJwt, showRun, slotStatus, startRun, uniqueTitle } from "../helpers/callback.js";
import { kill, spawnWithEnv, TcpProxy } from "../helpers/faults.js";
import { linkIn, parseEmails, tokenOf, waitForEmail } from "../helpers/mail.js";
import { ADMIN_TOKEN, eventually, freePort, request, ROOT, startCluster, type Cluster } from "../helpers/server.js";
import { cliEntry } from "../helpers/cli-entry.js";

const run = promisify(execFile);

let cluster: Cluster;
let base: string;

test.before(async () => {
  cluster = await startCluster("revoke");
  base = cluster.baseUrl;
  await deployFixture(base, "callback-basic.flow");
  const source = readFileSync(`${ROOT}/examples/vendor-approval.flow`, "utf8");
  const res = await request(base, "POST", "/api/workflows", { token: ADMIN_TOKEN, text: source });
  if (res.status !== 201) throw new Error(res.text);
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
    link: async (alias: string) => linkIn(await waitForEmail(() => cluster.output(), `${alias} ${title}`)),
    show: () => showRun(base, runId),
  };
}

const revoke = (runId: string, alias: string, query = "", token = ADMIN_TOKEN) =>
  request(base, "POST", `/api/runs/${runId}/slots/${alias}/link/revoke${query}`, { token });

// --- 2. revocation -----------------------------------------------------------------------------------

test.serial("revoking a slot's live link: 200, the link then answers 410 link-dead (revoked), the run and slot are untouched, the history says so", async (t) => {
  const r = await basic("revoke");
  const url = await r.link("answer");
  const before = await r.show();
  const res = await revoke(r.runId, "answer");
  t.is(res.status, 200, res.text);
  t.deepEqual(res.body, { revoked: true });
  const after = await r.show();
  t.is(after.state, before.state);
  t.is(after.status, "running");
  t.is(slotStatus(after, "answer"), "open", "the slot stays open");
  t.deepEqual(after.entities.job, before.entities.job);
  t.true(after.history.some((h) => h.kind === "link-revoked" && h.data.alias === "answer"));
  const posted = await postLink(url, { ok: true, note: "too late" });
  t.is(posted.status, 410, posted.text);
  t.is(posted.body.code, "link-dead");
  t.is(posted.body.reason, "revoked");
  t.is(eventsOn(await r.show(), "answer").length, 0);
  const page = await request(base, "GET", new URL(url).pathname, { headers: { accept: "text/html" } });
  t.is(page.status, 410);
  t.regex(page.text, /revoked/);
  // Other links of the run are not touched.
  t.is((await postLink(await r.link("ping"))).status, 200);
});

test.serial("404 when there is no live link (revoked already, used, unknown alias or run, ?element= of a slot not fanned out); the admin token is required", async (t) => {
  const r = await basic("revoke404");
  await r.link("answer");
  t.is((await revoke(r.runId, "answer")).status, 200);
  const again = await revoke(r.runId, "answer");
  t.is(again.status, 404, again.text);
  t.is(again.body.code, "not-found");
  t.is((await postLink(await r.link("ping"))).status, 200);
  t.is((await revoke(r.runId, "ping")).status, 404, "a burned link is not live");
  t.is((await revoke(r.runId, "close")).status, 404, "a slot that never had a link");
  t.is((await revoke(r.runId, "nope")).status, 404);
  t.is((await revoke("00000000-0000-4000-8000-000000000000", "answer")).status, 404);
  t.is((await revoke("not-a-uuid", "answer")).status, 404);
  const element = await revoke(r.runId, "typed", "?element=0");
  t.is(element.status, 404);
  t.regex(element.body.detail, /element/);
  t.is(slotStatus(await r.show(), "typed"), "open");
  t.is((await postLink(await r.link("typed"), { count: 1, amount: 1, comment: null, due: "2026-01-01T00:00:00Z", tags: [] })).status, 200, "the refused revoke changed nothing");
  const anon = await revoke(r.runId, "typed", "", "");
  t.is(anon.status, 401);
});

test.serial("after a revoke the workflow can mint a new link for the slot, and the new one works", async (t) => {
  const title = uniqueTitle("Remint");
  const runId = await startRun(base, "VendorApproval", { vendor: { name: title, contactEmail: `${title}@old.example` }, amount: 100 });
  const first = linkIn(await waitForEmail(() => cluster.output(), `Approve ${title}?`));
  t.is((await revoke(runId, "decision")).status, 200);
  const jwt = await principalJwt("fin", ["finance"]); // only finance may correct the address (issue 38 L7)
  const fixed = await request(base, "POST", `/api/runs/${runId}/slots/fixEmail/events`, { token: jwt, json: { email: `${title}@new.example` } });
  t.is(fixed.status, 200, fixed.text);
  const second = linkIn(
    await eventually(async () => parseEmails(cluster.output()).find((m) => m.subject === `Approve ${title}?` && m.to === `${title}@new.example`)),
  );
  t.not(second, first);
  t.is((await postLink(first, { ok: true, note: "old" })).body.reason, "revoked");
  const ok = await postLink(second, { ok: true, note: "new" });
  t.is(ok.status, 200, ok.text);
  t.is((await showRun(base, runId)).state, "Approved");
});

test.serial("`slotflow revoke RUN ALIAS` revokes through the server and exits non-zero when there is nothing to revoke", async (t) => {
  const r = await basic("cli");
  const url = await r.link("answer");
  const env = { ...process.env, SLOTFLOW_ADMIN_TOKEN: ADMIN_TOKEN, BASE_URL: base };
  const cli = [...cliEntry(), "revoke", r.runId, "answer"];
  const out = await run(process.execPath, cli, { cwd: ROOT, env });
  t.deepEqual(JSON.parse(out.stdout), { revoked: true });
  t.is((await postLink(url, { ok: true, note: "x" })).body.reason, "revoked");
  const err = await t.throwsAsync(run(process.execPath, cli, { cwd: ROOT, env }));
  t.is((err as { code?: number }).code, 1);
  t.regex((err as { stdout?: string }).stdout ?? "", /not-found/);
});

// --- 3. token format -----------------------------------------------------------------------------------

test.serial("minted tokens are sfl_ + 256 random bits (base64url) + a checksum that holds", async (t) => {
  const r = await basic("format");
  const token = tokenOf(await r.link("answer"));
  t.regex(token, /^sfl_[A-Za-z0-9_-]{49}$/);
  t.is(checkTokenFormat(token), "current");
  t.is(Buffer.from(token.slice(4, 47), "base64url").length, 32);
  const rows = await sql<{ token_sha256: string }>(cluster.databaseUrl, "SELECT token_sha256 FROM links WHERE run_id = $1", [r.runId]);
  t.true(rows.some((row) => row.token_sha256 === hashToken(token)), "only the hash is stored");
  t.false(JSON.stringify(rows).includes(token));
});

test.serial("a token whose checksum does not hold is refused 404 with no database query: a web process without PostgreSQL still answers it", async (t) => {
  const r = await basic("checksum");
  const url = await r.link("answer");
  const token = tokenOf(url);
  const i = 20;
  const typo = token.slice(0, i) + (token[i] === "a" ? "b" : "a") + token.slice(i + 1);
  t.is(checkTokenFormat(typo), "invalid");
  const unknownButValid = newToken();
  const port = await freePort();
  // A process cannot start without PostgreSQL (issue 9 §3): it loses it after start-up instead.
  const direct = new URL(cluster.databaseUrl);
  const proxy = new TcpProxy(Number(direct.port || 5432), direct.hostname);
  const via = new URL(cluster.databaseUrl);
  via.hostname = "127.0.0.1";
  via.port = String(await proxy.start());
  const web = await spawnWithEnv(cluster, "web", { port, env: { DATABASE_URL: via.toString() } });
  try {
    await proxy.cut();
    const origin = `http://127.0.0.1:${port}`;
    const mistyped = await postLink(url.replace(token, typo), { ok: true, note: "x" }, { origin });
    t.is(mistyped.status, 404, mistyped.text);
    t.is(mistyped.body.code, "link-not-found");
    const page = await request(origin, "GET", `/api/workflow/callback/${typo}`, { headers: { accept: "text/html" } });
    t.is(page.status, 404, "the page too");
    // The same server needs the database for a token whose checksum holds: so the 404 above made no query.
    const valid = await postLink(url.replace(token, unknownButValid), { ok: true, note: "x" }, { origin });
    t.is(valid.status, 503, valid.text);
  } finally {
    await kill(web);
    await proxy.cut();
  }
  t.is((await postLink(url, { ok: true, note: "fine" })).status, 200, "the real link was never touched");
});

test.serial("links minted in the old format (43 characters, no prefix) keep working", async (t) => {
  const r = await basic("legacy");
  await r.link("answer");
  const legacy = randomBytes(32).toString("base64url");
  t.is(checkTokenFormat(legacy), "legacy");
  // Stand in for a link minted before the sfl_ format: only its hash was ever stored.
  const updated = await sql(cluster.databaseUrl, "UPDATE links SET token_sha256 = $1 WHERE run_id = $2 AND status = 'live' AND slot_id = (SELECT id FROM slots WHERE run_id = $2 AND alias = 'answer') RETURNING id", [hashToken(legacy), r.runId]);
  t.is(updated.length, 1);
  // ... and its row in the token table, where a token resolves (issue 20 item 2)
  const keyed = await sql(cluster.databaseUrl, "UPDATE link_tokens SET token_sha256 = $1 WHERE run_id = $2 AND link_id = $3 RETURNING link_id", [hashToken(legacy), r.runId, updated[0].id]);
  t.is(keyed.length, 1);
  const page = await request(base, "GET", `/api/workflow/callback/${legacy}`, { headers: { accept: "text/html" } });
  t.is(page.status, 200);
  const res = await postLink(`${base}/api/workflow/callback/${legacy}`, { ok: true, note: "old link" });
  t.is(res.status, 200, res.text);
  t.is((await r.show()).entities.job.note, "old link");
});

test("the gitleaks rule in docs/http-api.md finds generated tokens in URLs and text, and nothing else", (t) => {
  const docs = readFileSync(`${ROOT}/docs/http-api.md`, "utf8");
  const block = /```toml\n([\s\S]*?)```/.exec(docs)?.[1] ?? "";
  t.regex(block, /\[\[rules\]\]/);
  t.regex(block, /keywords = \["sfl_"\]/);
  const pattern = /regex = '''(.+)'''/.exec(block)?.[1];
  t.truthy(pattern, block);
  const group = Number(/secretGroup = (\d+)/.exec(block)?.[1] ?? 0);
  const rule = new RegExp(pattern!, "g");
  for (let i = 0; i < 50; i++) {
    const token = newToken();
    const text = `Open this link to answer: https://flows.example.com/api/workflow/callback/${token}\nthanks`;
    const found = [...text.matchAll(rule)].map((m) => m[group]);
    t.deepEqual(found, [token]);
    t.deepEqual([...`"${token}"`.matchAll(rule)].map((m) => m[group]), [token]);
  }
  for (const other of [randomBytes(32).toString("base64url"), `sfl_${"a".repeat(48)}`, "sfl_short", `xsfl_${"a".repeat(49)}`, `sfl_${"a".repeat(50)}`]) {
    t.deepEqual([...other.matchAll(rule)], [], other);
  }
});

test("the OpenAPI document describes the responder page, revocation and the token format", async (t) => {
  const doc = (await request(base, "GET", "/api/openapi.json")).body;
  const callback = doc.paths["/api/workflow/callback/{token}"];
  t.truthy(callback.get.responses["200"].content["text/html"]);
  t.truthy(callback.get.responses["200"].headers["Content-Security-Policy"]);
  t.deepEqual(Object.keys(callback.get.responses).sort(), ["200", "404", "405", "409", "410", "429", "503"]);
  t.regex(callback.parameters[0].description, /sfl_/);
  const revoke = doc.paths["/api/runs/{id}/slots/{alias}/link/revoke"].post;
  t.truthy(revoke.responses["200"]);
  t.truthy(revoke.responses["404"]);
  t.regex(doc.components.schemas.Problem.properties.reason.description, /revoked/);
});
