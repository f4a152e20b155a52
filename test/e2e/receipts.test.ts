/**
 * Receipts (v0.4 "Many responders, forwarding, and receipts"; docs/receipts.md): every deposit
 * that completes a slot answers a compact JWS (ES256, `kid` in the header) that anyone verifies
 * against `GET /.well-known/jwks.json` — here with an independent JOSE implementation, Debian's
 * python3-jwcrypto (test/helpers/verify-receipt.py), not the `jose` that signed it.
 *
 * Real `slotflow serve` on real PostgreSQL and Redis, keys from SLOTFLOW_RECEIPT_KEYS: a JWK (whose
 * commas must not split it) newest, then a PEM. The key-removal test restarts the process without
 * the JWK.
 */
import test from "ava";
import { createHash, generateKeyPairSync, randomBytes } from "node:crypto";
import { dropDatabase, sql } from "../helpers/db.js";
import { deployFixture, postLink, startRun, uniqueTitle } from "../helpers/callback.js";
import { linkIn, parseEmails, waitForEmail } from "../helpers/mail.js";
import { ADMIN_TOKEN, request, startCluster, type Cluster } from "../helpers/server.js";
import { verifyReceiptOutside } from "../helpers/receipts.js";
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from "jose";

const JWS = /^[\w-]+\.[\w-]+\.[\w-]+$/;

const jwkKey = { ...(generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ format: "jwk" }) as Record<string, string>), kid: "test-newest" };
const pemKey = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ format: "pem", type: "pkcs8" }) as string;

let cluster: Cluster;
let base: string;

test.before(async () => {
  cluster = await startCluster("receipts", { env: { SLOTFLOW_RECEIPT_KEYS: `${JSON.stringify(jwkKey)},\n${pemKey}` } });
  base = cluster.baseUrl;
  await deployFixture(base, "callback-basic.flow");
});

test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

/** Verifies `receipt` with python3-jwcrypto against the JWKS now published; the payload, or null when it fails. */
const verify = (receipt: string, sub: string) => verifyReceiptOutside(base, receipt, sub);

async function answered(prefix: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const title = uniqueTitle(prefix);
  const runId = await startRun(base, "CbBasic", { job: { title, contact: `${title}@example.test`, handled: 0 } });
  const url = linkIn(await waitForEmail(() => cluster.output(), `answer ${title}`));
  const res = await postLink(url, body, { headers });
  return { runId, url, res, receipt: String(res.body?.receipt) };
}

test.serial("a completing deposit answers a receipt that python3-jwcrypto verifies with the published JWKS", async (t) => {
  const body = { ok: true, note: "signed, sealed" };
  const { runId, res, receipt } = await answered("rc-ok", body);
  t.is(res.status, 200, res.text);
  t.is(res.body.status, "completed");
  t.regex(receipt, JWS);
  const header = JSON.parse(Buffer.from(receipt.split(".")[0]!, "base64url").toString()) as Record<string, unknown>;
  t.like(header, { alg: "ES256", kid: "test-newest" }, "the newest key (first listed) signs");
  const payload = await verify(receipt, `runs/${runId}/slots/answer`);
  t.truthy(payload, "verified by an independent JOSE implementation");
  t.like(payload!, { iss: base, sub: `runs/${runId}/slots/answer`, workflow: "CbBasic", version: 1, event: "Answer", answeredBy: { via: "link" } });
  t.is(typeof payload!.jti, "string");
  t.true(Math.abs((payload!.iat as number) - Date.now() / 1000) < 120);
  // bodySha256: SHA-256 of the RFC 8785 canonical JSON of the accepted body (keys sorted, no blanks)
  t.is(payload!.bodySha256, createHash("sha256").update('{"note":"signed, sealed","ok":true}').digest("hex"));
  // the receipt is kept with the completion
  const rows = await sql<{ receipt: string }>(cluster.databaseUrl, "SELECT receipt FROM slots WHERE run_id = $1 AND alias = 'answer'", [runId]);
  t.is(rows[0]?.receipt, receipt);
});

test.serial("the JWKS publishes every configured key, public halves only, cacheable", async (t) => {
  const res = await fetch(`${base}/.well-known/jwks.json`);
  t.is(res.status, 200);
  t.regex(res.headers.get("cache-control") ?? "", /max-age=\d+/);
  const jwks = (await res.json()) as { keys: Record<string, string>[] };
  t.is(jwks.keys.length, 2);
  t.is(jwks.keys[0]!.kid, "test-newest");
  for (const k of jwks.keys) {
    t.like(k, { kty: "EC", crv: "P-256", alg: "ES256", use: "sig" });
    t.false("d" in k, "never the private part");
  }
});

test.serial("receipts name the slot instance: state and visit beside sub; an earlier visit's receipt does not pass as the final one (jose and python3-jwcrypto)", async (t) => {
  await deployFixture(base, "receipt-visits.flow");
  const title = uniqueTitle("rc-visit");
  const runId = await startRun(base, "RcVisits", { job: { title, contact: `${title}@example.test` } });
  const first = await postLink(linkIn(await waitForEmail(() => cluster.output(), `answer ${title}`)), { ok: false });
  t.is(first.status, 200, first.text);
  // back in Review (Review is visit 1, Recheck 2, Review again 3: the run counts its state entries): a new slot of the same alias, a new link
  // back in Review (Review is visit 1, Recheck 2, Review again 3: the run counts its state entries): a new slot of the same alias, a new link in a second mail (waiting for it: no wall-clock bound)
  let mails = parseEmails(cluster.output()).filter((m) => m.subject === `answer ${title}`);
  for (let i = 0; i < 1200 && mails.length < 2; i++) {
    await new Promise((r) => setTimeout(r, 100));
    mails = parseEmails(cluster.output()).filter((m) => m.subject === `answer ${title}`);
  }
  const second = await postLink(linkIn(mails[mails.length - 1]!), { ok: true });
  t.is(second.status, 200, second.text);
  const sub = `runs/${runId}/slots/answer`;
  const [early, final] = [String(first.body.receipt), String(second.body.receipt)];
  // python3-jwcrypto
  t.like(await verify(early, sub), { sub, state: "Review", visit: 1 });
  t.like(await verify(final, sub), { sub, state: "Review", visit: 3 });
  t.truthy(await verifyReceiptOutside(base, final, sub, { state: "Review", visit: 3 }));
  t.is(await verifyReceiptOutside(base, early, sub, { state: "Review", visit: 3 }), null, "the earlier 'not yet' is not the final decision's receipt");
  // jose
  const keys = createLocalJWKSet((await (await fetch(`${base}/.well-known/jwks.json`)).json()) as JSONWebKeySet);
  const { payload } = await jwtVerify(final, keys, { algorithms: ["ES256"], issuer: base, subject: sub });
  t.like(payload, { state: "Review", visit: 3, event: "Answer" });
  t.like((await jwtVerify(early, keys, { algorithms: ["ES256"], issuer: base, subject: sub })).payload, { state: "Review", visit: 1 });
});

test.serial("a tampered payload fails verification", async (t) => {
  const { runId, receipt } = await answered("rc-tamper", { ok: false, note: "no" });
  const [h, p, s] = receipt.split(".");
  const claims = JSON.parse(Buffer.from(p!, "base64url").toString()) as Record<string, unknown>;
  const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, bodySha256: "0".repeat(64) })).toString("base64url")}.${s}`;
  t.truthy(await verify(receipt, `runs/${runId}/slots/answer`), "the genuine one verifies");
  t.is(await verify(forged, `runs/${runId}/slots/answer`), null);
});

test.serial("a receipt presented for another slot (sub mismatch) fails", async (t) => {
  const { runId, receipt } = await answered("rc-sub", { ok: true, note: "mine" });
  t.truthy(await verify(receipt, `runs/${runId}/slots/answer`));
  t.is(await verify(receipt, `runs/${runId}/slots/typed`), null);
});

test.serial("a retry under the same Idempotency-Key returns the same receipt", async (t) => {
  const key = `rc-${randomBytes(6).toString("hex")}`;
  const { url, res, receipt } = await answered("rc-idem", { ok: true, note: "again" }, { "idempotency-key": key });
  t.is(res.status, 200, res.text);
  const again = await postLink(url, { note: "again", ok: true }, { headers: { "idempotency-key": key } });
  t.is(again.status, 200, again.text);
  t.deepEqual(again.body, { status: "completed", receipt });
});

test.serial("GET /api/runs/{id}/receipts lists a run's receipts to the admin token only", async (t) => {
  const { runId, receipt } = await answered("rc-list", { ok: true, note: "listed" });
  const denied = await request(base, "GET", `/api/runs/${runId}/receipts`);
  t.is(denied.status, 401, denied.text);
  const listed = await request(base, "GET", `/api/runs/${runId}/receipts`, { token: ADMIN_TOKEN });
  t.is(listed.status, 200, listed.text);
  t.is(listed.body.runId, runId);
  t.is(listed.body.receipts.length, 1);
  t.like(listed.body.receipts[0], { alias: "answer", element: null, receipt, answeredBy: { via: "link" } });
  t.is((await request(base, "GET", `/api/runs/00000000-0000-4000-8000-000000000000/receipts`, { token: ADMIN_TOKEN })).status, 404);
  t.is((await request(base, "GET", `/api/runs/nope/receipts`, { token: ADMIN_TOKEN })).status, 404);
});

test.serial("a receipt from a key removed from SLOTFLOW_RECEIPT_KEYS no longer verifies; the remaining key signs", async (t) => {
  const before = await answered("rc-rotate", { ok: true, note: "old key" });
  t.truthy(await verify(before.receipt, `runs/${before.runId}/slots/answer`));
  // restart with the JWK removed: only the PEM key is left
  await Promise.all(cluster.processes.map((p) => p.stop()));
  cluster.processes.splice(0);
  await cluster.spawn("serve", { env: { SLOTFLOW_RECEIPT_KEYS: pemKey } });
  const jwks = (await fetch(`${base}/.well-known/jwks.json`).then((r) => r.json())) as { keys: { kid: string }[] };
  t.is(jwks.keys.length, 1);
  t.not(jwks.keys[0]!.kid, "test-newest");
  t.is(await verify(before.receipt, `runs/${before.runId}/slots/answer`), null);
  const after = await answered("rc-rotated", { ok: true, note: "new key" });
  t.truthy(await verify(after.receipt, `runs/${after.runId}/slots/answer`));
});
