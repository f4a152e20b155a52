/**
 * Deliveries in process against a real database and a real receiver on 127.0.0.1 (issue 18):
 * a delivery is written only if its step commits, its payload sealed with its links' hashes beside
 * it; the SSRF guard refuses loopback, private, link-local and metadata addresses after DNS
 * resolution and on every attempt (the e2e suite runs with it lifted); the retry schedule.
 */
import test from "ava";
import { createHash } from "node:crypto";
import { loadConfig, DEFAULT_DELIVERY_RETRY_MS } from "../../src/config.js";
import { createDb, type Db } from "../../src/db.js";
import { setEndpoint, validateEndpointBody } from "../../src/endpoints/endpoints.js";
import { Sealer } from "../../src/engine/seal.js";
import { guardedLookup, isRefusedAddress } from "../../src/outbox/address-guard.js";
import { attemptDelivery, parseRetryAfter, retryDelayMs } from "../../src/outbox/deliveries.js";
import { Workflow } from "../../src/testing/index.js";
import { sql } from "../helpers/db.js";
import { useKitDatabase } from "../helpers/kit.js";
import { startReceiver, type Receiver } from "../helpers/receiver.js";

useKitDatabase(test, "deliveries");

const SOURCE = `workflow Notify(job: Job)
entity Job { title: string @maxLength(10); url: string? @maxLength(400) }
event Answer(ok: bool)
initial state Waiting {
  subscribe Answer(ok) as answer
  enter {
    job.url = answer.CallbackUrl()
    send webhook to "local" { type: "job.created", url: job.url, title: job.title }
    job.title = job.title + "-seen"
  }
  on answer(ok) -> Done
}
terminal state Done
`;

let db: Db;
let sealer: Sealer;
let rx: Receiver;

/** Set up on first use: the kit's database exists only once its own before hook has run. */
let ready: Promise<void> | null = null;
const setup = () =>
  (ready ??= (async () => {
    rx = await startReceiver();
    db = createDb(process.env.DATABASE_URL!, 2);
    sealer = new Sealer(loadConfig(process.env, { secrets: ["SLOTFLOW_SEAL_KEY"] }).sealKeys);
    await Workflow.deploy(SOURCE);
  })());

test.after.always(async () => {
  await rx?.close();
  await db?.$disconnect();
});

test.serial("a delivery exists only if its step commits; its payload is sealed, the SHA-256 of its link kept beside it", async (t) => {
  await setup();
  // "0123456-seen" breaks @maxLength(10) after the send: the step fails, nothing is queued
  await t.throwsAsync((await Workflow.deploy(SOURCE)).start({ job: { title: "0123456" } }), { code: "handler-failed" });
  t.is((await sql(process.env.DATABASE_URL!, "SELECT id FROM deliveries")).length, 0);
  const run = await (await Workflow.deploy(SOURCE)).start({ job: { title: "ok" } });
  const rows = await sql(process.env.DATABASE_URL!, "SELECT * FROM deliveries WHERE run_id = $1", [run.id]);
  t.is(rows.length, 1);
  const token = String(run.entities.job.url).split("/").pop()!;
  t.false(JSON.stringify(rows).includes(token));
  t.true(String(rows[0].payload).includes("$sealed"));
  t.deepEqual(rows[0].link_sha256, [createHash("sha256").update(token).digest("hex")]);
  t.like(rows[0], { status: "pending", endpoint: "local", statement: "webhook", attempts: 0 });
});

test.serial("the SSRF guard refuses a loopback endpoint on every attempt unless private addresses are allowed", async (t) => {
  await setup();
  await setEndpoint(db, sealer, "local", "webhook", new URL(`${rx.url}/ssrf`));
  const run = await (await Workflow.deploy(SOURCE)).start({ job: { title: "ssrf" } });
  const [row] = await sql(process.env.DATABASE_URL!, "SELECT id FROM deliveries WHERE run_id = $1", [run.id]);
  const deps = { db, sealer, allowPrivate: false, retryMs: [0, 0, 0] };
  t.like(await attemptDelivery(deps, row.id), { kind: "retry", attempt: 1 });
  t.like(await attemptDelivery(deps, row.id), { kind: "retry", attempt: 2 });
  t.is(rx.at("/ssrf").length, 0, "nothing reached the receiver");
  const attempts = await sql(process.env.DATABASE_URL!, "SELECT error, status_code FROM delivery_attempts WHERE delivery_id = $1 ORDER BY id", [row.id]);
  t.is(attempts.length, 2);
  for (const a of attempts) {
    t.regex(String(a.error), /refused/);
    t.is(a.status_code, null);
  }
  // a host name resolving to loopback is refused after DNS resolution too
  await setEndpoint(db, sealer, "local", "webhook", new URL(`${rx.url.replace("127.0.0.1", "localhost")}/ssrf`));
  t.like(await attemptDelivery(deps, row.id), { kind: "failed", reason: "gave up after 3 attempts" });
  t.is(rx.at("/ssrf").length, 0);
  // an http:// endpoint (set while private addresses were allowed) is refused too
  await setEndpoint(db, sealer, "local", "webhook", new URL("http://93.184.216.34/hook"));
  const run1 = await (await Workflow.deploy(SOURCE)).start({ job: { title: "http" } });
  const [row1] = await sql(process.env.DATABASE_URL!, "SELECT id FROM deliveries WHERE run_id = $1", [run1.id]);
  t.like(await attemptDelivery({ ...deps, retryMs: [0] }, row1.id), { kind: "failed", reason: "gave up after 1 attempts" });
  const [last] = await sql(process.env.DATABASE_URL!, "SELECT error FROM delivery_attempts WHERE delivery_id = $1", [row1.id]);
  t.regex(String(last.error), /refused: http:/);
  // allowed (development, tests): delivered
  const run2 = await (await Workflow.deploy(SOURCE)).start({ job: { title: "ok2" } });
  await setEndpoint(db, sealer, "local", "webhook", new URL(`${rx.url}/ssrf`));
  const [row2] = await sql(process.env.DATABASE_URL!, "SELECT id FROM deliveries WHERE run_id = $1", [run2.id]);
  t.like(await attemptDelivery({ ...deps, allowPrivate: true }, row2.id), { kind: "sent" });
  t.is(rx.at("/ssrf").length, 1);
});

test.serial("a send webhook to a chat endpoint fails at once, saying why (no retry can help)", async (t) => {
  await setup();
  await setEndpoint(db, sealer, "local", "slack", new URL(`${rx.url}/slack-misfit`));
  const run = await (await Workflow.deploy(SOURCE)).start({ job: { title: "mis" } });
  const [row] = await sql(process.env.DATABASE_URL!, "SELECT id FROM deliveries WHERE run_id = $1", [run.id]);
  const result = await attemptDelivery({ db, sealer, allowPrivate: true, retryMs: [0, 0] }, row.id);
  t.like(result, { kind: "failed" });
  t.regex((result as { reason: string }).reason, /send webhook cannot go to a slack endpoint/);
  t.is(rx.at("/slack-misfit").length, 0);
  await setEndpoint(db, sealer, "local", "webhook", new URL(`${rx.url}/ssrf`));
});

test("refused addresses: loopback, private, CGNAT, link-local and metadata, unspecified, multicast, and their IPv4-mapped forms", (t) => {
  for (const a of ["127.0.0.1", "127.1.2.3", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "224.0.0.1", "255.255.255.255", "::1", "::", "fe80::1", "fd00::1", "fd00:ec2::254", "ff02::1", "::ffff:127.0.0.1", "::ffff:7f00:1", "::ffff:a9fe:a9fe", "64:ff9b::a9fe:a9fe"]) {
    t.true(isRefusedAddress(a), a);
  }
  for (const a of ["93.184.216.34", "8.8.8.8", "172.32.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"]) t.false(isRefusedAddress(a), a);
});

test("the guarded lookup refuses a name that resolves to loopback", async (t) => {
  const err = await new Promise<Error | null>((resolve) => guardedLookup("localhost", {}, (e) => resolve(e)));
  t.is(err?.name, "AddressRefusedError");
});

test("endpoint URLs: https only, http only when private addresses are allowed", (t) => {
  t.throws(() => validateEndpointBody({ kind: "webhook", url: "http://example.com/x" }, false), { message: /https/ });
  t.is(validateEndpointBody({ kind: "webhook", url: "http://127.0.0.1:9/x" }, true).url.host, "127.0.0.1:9");
  t.is(validateEndpointBody({ kind: "slack", url: "https://hooks.slack.com/services/T/B/X" }, false).kind, "slack");
});

test("the retry schedule: Standard Webhooks' delays with ±10 % jitter, then none; Retry-After in seconds or as a date", (t) => {
  t.deepEqual(DEFAULT_DELIVERY_RETRY_MS.map((ms) => ms / 1000), [0, 5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400]);
  t.is(retryDelayMs(DEFAULT_DELIVERY_RETRY_MS, 1, () => 0.5), 5000);
  t.is(retryDelayMs(DEFAULT_DELIVERY_RETRY_MS, 2, () => 0), 270_000);
  t.is(retryDelayMs(DEFAULT_DELIVERY_RETRY_MS, 2, () => 1), 330_000);
  t.is(retryDelayMs(DEFAULT_DELIVERY_RETRY_MS, 10, () => 0.5), null);
  t.is(parseRetryAfter("120"), 120_000);
  t.is(parseRetryAfter(new Date(61_000).toUTCString(), 1_000), 60_000);
  t.is(parseRetryAfter("soon"), null);
  t.is(parseRetryAfter(null), null);
});

test.serial("slotflow reseal moves endpoints' URL and secrets and deliveries' payloads to the newest key", async (t) => {
  await setup();
  const { resealAll } = await import("../../src/engine/reseal.js");
  const created = await setEndpoint(db, sealer, "reseal-me", "webhook", new URL("https://example.com/hook"));
  await (await Workflow.deploy(SOURCE)).start({ job: { title: "rs" } });
  const ring = new Sealer(["fresh-key", ...loadConfig(process.env, { secrets: ["SLOTFLOW_SEAL_KEY"] }).sealKeys]);
  const report = await resealAll(db, ring);
  t.true(report.resealed > 0);
  t.is(report.unreadable, 0);
  const fresh = new Sealer("fresh-key");
  const [ep] = await sql(process.env.DATABASE_URL!, "SELECT url, secret FROM endpoints WHERE name = 'reseal-me'");
  t.is(fresh.openText(ep.url), "https://example.com/hook");
  t.is(fresh.openText(ep.secret), created.secret!);
  for (const d of await sql(process.env.DATABASE_URL!, "SELECT payload FROM deliveries WHERE payload IS NOT NULL")) {
    t.notThrows(() => fresh.openText(d.payload));
  }
});
