/**
 * Deliveries in process against a real database and a real receiver on 127.0.0.1 (issue 18):
 * a delivery is written only if its step commits, its payload sealed with its links' hashes beside
 * it; the SSRF guard refuses loopback, private, link-local and metadata addresses after DNS
 * resolution and on every attempt (the e2e suite runs with it lifted); the retry schedule.
 *
 * The SSRF cases use `https://` URLs (issue 18): an `http://` endpoint is refused for its scheme
 * before any address is looked at, so only an https URL reaches the address checks — the IP
 * literal check and the lookup wired into undici. Receivers count connections, not just requests,
 * since a TLS hello sent to them would never become a recorded request.
 */
import test from "ava";
import { createHash } from "node:crypto";
import { loadConfig, DEFAULT_DELIVERY_RETRY_MS } from "../../src/config.js";
import { createDb, type Db } from "../../src/db.js";
import { setEndpoint, validateEndpointBody } from "../../src/endpoints/endpoints.js";
import { Sealer } from "../../src/engine/sealing/seal.js";
import type { LookupAddress } from "node:dns";
import { fetch } from "undici";
import { checkLiteralHost, deliveryAgent, guardedLookup, guardedLookupWith, isRefusedAddress, refusalReason, type Resolver } from "../../src/outbox/address-guard.js";
import { attemptDelivery, redeliver, retryDelayMs } from "../../src/outbox/deliveries.js";
import { parseRetryAfter } from "../../src/channels/http-post.js";
import { Workflow } from "../../src/testing/index.js";
import { sql } from "../helpers/db.js";
import { useKitDatabase } from "../helpers/kit.js";
import { startReceiver, type Receiver } from "../helpers/receiver.js";

useKitDatabase(test, "deliveries");

/** A delivery row as a job names it (its id and its run id). */
type Ref = { deliveryId: string; runId: string };

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
/** A receiver on ::1, for the IPv6 loopback cases. */
let rx6: Receiver;

/** Set up on first use: the kit's database exists only once its own before hook has run. */
let ready: Promise<void> | null = null;
const setup = () =>
  (ready ??= (async () => {
    rx = await startReceiver();
    rx6 = await startReceiver("::1");
    db = createDb(process.env.DATABASE_URL!, 2);
    sealer = new Sealer(loadConfig(process.env, { secrets: ["SLOTFLOW_SEAL_KEY"] }).sealKeys);
    await Workflow.deploy(SOURCE);
  })());

test.after.always(async () => {
  await rx?.close();
  await rx6?.close();
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
  const [row] = await sql<Ref>(process.env.DATABASE_URL!, "SELECT id AS \"deliveryId\", run_id AS \"runId\" FROM deliveries WHERE run_id = $1", [run.id]);
  const deps = { db, sealer, allowPrivate: false, retryMs: [0, 0, 0] };
  t.like(await attemptDelivery(deps, row), { kind: "retry", attempt: 1 });
  t.like(await attemptDelivery(deps, row), { kind: "retry", attempt: 2 });
  t.is(rx.at("/ssrf").length, 0, "nothing reached the receiver");
  const attempts = await sql(process.env.DATABASE_URL!, "SELECT error, status_code FROM delivery_attempts WHERE delivery_id = $1 ORDER BY id", [row.deliveryId]);
  t.is(attempts.length, 2);
  for (const a of attempts) {
    t.regex(String(a.error), /refused/);
    t.is(a.status_code, null);
  }
  // an http:// name is refused for its scheme too, before any lookup (the https cases below reach the address checks)
  await setEndpoint(db, sealer, "local", "webhook", new URL(`${rx.url.replace("127.0.0.1", "localhost")}/ssrf`));
  t.like(await attemptDelivery(deps, row), { kind: "failed", reason: "gave up after 3 attempts" });
  t.is(rx.at("/ssrf").length, 0);
  const [third] = await sql(process.env.DATABASE_URL!, "SELECT error FROM delivery_attempts WHERE delivery_id = $1 AND attempt = 3", [row.deliveryId]);
  t.regex(String(third.error), /^refused: http:\/\//);
  // an http:// endpoint (set while private addresses were allowed) is refused too
  await setEndpoint(db, sealer, "local", "webhook", new URL("http://93.184.216.34/hook"));
  const run1 = await (await Workflow.deploy(SOURCE)).start({ job: { title: "http" } });
  const [row1] = await sql<Ref>(process.env.DATABASE_URL!, "SELECT id AS \"deliveryId\", run_id AS \"runId\" FROM deliveries WHERE run_id = $1", [run1.id]);
  t.like(await attemptDelivery({ ...deps, retryMs: [0] }, row1), { kind: "failed", reason: "gave up after 1 attempts" });
  const [last] = await sql(process.env.DATABASE_URL!, "SELECT error FROM delivery_attempts WHERE delivery_id = $1", [row1.deliveryId]);
  t.regex(String(last.error), /refused: http:/);
  // allowed (development, tests): delivered
  const run2 = await (await Workflow.deploy(SOURCE)).start({ job: { title: "ok2" } });
  await setEndpoint(db, sealer, "local", "webhook", new URL(`${rx.url}/ssrf`));
  const [row2] = await sql<Ref>(process.env.DATABASE_URL!, "SELECT id AS \"deliveryId\", run_id AS \"runId\" FROM deliveries WHERE run_id = $1", [run2.id]);
  t.like(await attemptDelivery({ ...deps, allowPrivate: true }, row2), { kind: "sent" });
  t.is(rx.at("/ssrf").length, 1);
});

/** SOURCE with a `send message` to the same endpoint: a message hands a person its link. */
const MESSAGE_SOURCE = SOURCE.replace("workflow Notify(", "workflow NotifyMessage(").replace('send webhook to "local" { type: "job.created", url: job.url, title: job.title }', 'send message to "local" { text: job.title, link: job.url }');

test.serial("a pending message ends the moment its link does: the deposit fails it in its own step, saying why, payload dropped (issue 18 item 4)", async (t) => {
  await setup();
  const url = process.env.DATABASE_URL!;
  await setEndpoint(db, sealer, "local", "webhook", new URL(`${rx.url}/down`));
  rx.reply("/down", { status: 503 });
  const deps = { db, sealer, allowPrivate: true, retryMs: [0, 3_600_000] };
  const run = await (await Workflow.deploy(MESSAGE_SOURCE)).start({ job: { title: "later" } });
  const [row] = await sql<Ref>(url, "SELECT id AS \"deliveryId\", run_id AS \"runId\" FROM deliveries WHERE run_id = $1", [run.id]);
  // the endpoint is down: the next attempt is an hour away
  t.like(await attemptDelivery(deps, row), { kind: "retry", attempt: 1 });
  t.like((await sql(url, "SELECT status, next_attempt_at > now() + interval '50 minutes' AS later FROM deliveries WHERE id = $1", [row.deliveryId]))[0], { status: "pending", later: true });
  // another run's delivery, whose link stays live, is not touched
  const other = await (await Workflow.deploy(MESSAGE_SOURCE)).start({ job: { title: "other" } });

  // the responder answers: the link is burned, and in the same step the delivery stops for good
  await Workflow.Redeem(String(run.entities.job.url), { ok: true });
  const [ended] = await sql(url, "SELECT status, end_reason, payload, next_attempt_at FROM deliveries WHERE id = $1", [row.deliveryId]);
  t.deepEqual(ended, { status: "failed", end_reason: "link burned", payload: null, next_attempt_at: null });
  t.like((await sql(url, "SELECT status FROM deliveries WHERE run_id = $1", [other.id]))[0], { status: "pending" });
  // a late job for the old attempt does nothing
  t.like(await attemptDelivery(deps, row), { kind: "skipped" });
  t.is(rx.at("/down").length, 1, "one attempt reached the endpoint, before the link was burned");
  t.deepEqual(await redeliver(db, row.runId, row.deliveryId), { ok: false, code: "link-not-live", reason: "link no longer live" });
});

test.serial("a webhook is data (issue 38): its retries go on after the link it carries is burned, and it is delivered", async (t) => {
  await setup();
  const url = process.env.DATABASE_URL!;
  await setEndpoint(db, sealer, "local", "webhook", new URL(`${rx.url}/flaky`));
  rx.reply("/flaky", (n) => ({ status: n === 1 ? 503 : 204 }));
  const deps = { db, sealer, allowPrivate: true, retryMs: [0, 0, 0] };
  const run = await (await Workflow.deploy(SOURCE)).start({ job: { title: "flaky" } });
  const [row] = await sql<Ref>(url, "SELECT id AS \"deliveryId\", run_id AS \"runId\" FROM deliveries WHERE run_id = $1", [run.id]);
  t.like(await attemptDelivery(deps, row), { kind: "retry", attempt: 1 });
  await Workflow.Redeem(String(run.entities.job.url), { ok: true });
  t.like((await sql(url, "SELECT status, end_reason FROM deliveries WHERE id = $1", [row.deliveryId]))[0], { status: "pending", end_reason: null }, "the burn does not end a webhook");
  t.like(await attemptDelivery(deps, row), { kind: "sent" });
  const got = rx.at("/flaky");
  t.is(got.length, 2);
  t.is(got[1].headers["webhook-id"], got[0].headers["webhook-id"]);
  t.is(JSON.parse(got[1].body).data.url, run.entities.job.url);
});

/** The workflow: the supplier's row holds its (soon burned) link; the terminal state tells the ERP. */
const ONBOARD = `workflow Onboard(supplier: Supplier)
entity Supplier { name: string; link: string? @maxLength(400) }
event Decide(ok: bool)
initial state Waiting {
  subscribe Decide(ok) as decide
  enter { supplier.link = decide.CallbackUrl() }
  on decide(ok) -> Approved
}
terminal state Approved {
  enter { send webhook to "erp" { type: "supplier.onboarded", supplier: supplier } }
}
`;

test.serial("a webhook carrying a link burned when its step commits reaches a real receiver, and is redelivered with the same webhook-id (issue 38)", async (t) => {
  await setup();
  const url = process.env.DATABASE_URL!;
  await setEndpoint(db, sealer, "erp", "webhook", new URL(`${rx.url}/erp`));
  const run = await (await Workflow.deploy(ONBOARD)).start({ supplier: { name: "Acme" } });
  const link = String(run.entities.supplier.link);
  await Workflow.Redeem(link, { ok: true });
  await run.refresh();
  t.is(run.state, "Approved");
  t.false(run.history.some((h) => h.kind === "message-withdrawn"));
  const [entry] = await run.outbox();
  t.like(entry, { channel: "webhook", endpoint: "erp", subject: "supplier.onboarded", status: "pending", lastError: null });
  const [row] = await sql<Ref>(url, "SELECT id AS \"deliveryId\", run_id AS \"runId\" FROM deliveries WHERE run_id = $1", [run.id]);
  const deps = { db, sealer, allowPrivate: true, retryMs: [0] };
  t.like(await attemptDelivery(deps, row), { kind: "sent" });
  const [first] = rx.at("/erp");
  t.like(JSON.parse(first.body), { type: "supplier.onboarded", data: { supplier: { name: "Acme", link } } });
  t.like((await run.outbox())[0], { status: "sent" });
  // redelivery: the same message again, whatever the link's state
  t.deepEqual(await redeliver(db, row.runId, row.deliveryId), { ok: true });
  t.like(await attemptDelivery(deps, row), { kind: "sent" });
  const got = rx.at("/erp");
  t.is(got.length, 2);
  t.is(got[1].headers["webhook-id"], first.headers["webhook-id"]);
  t.is(got[1].body.replace(/"timestamp":"[^"]*"/, ""), first.body.replace(/"timestamp":"[^"]*"/, ""), "the same sealed message");
});

/** Starts a run, points "local" at `url`, makes one attempt (the last of its schedule) and returns the attempt's error. */
async function refusedAttempt(t: import("ava").ExecutionContext, url: string, resolve?: Resolver): Promise<string> {
  await setEndpoint(db, sealer, "local", "webhook", new URL(url));
  const run = await (await Workflow.deploy(SOURCE)).start({ job: { title: "https" } });
  const [row] = await sql<Ref>(process.env.DATABASE_URL!, "SELECT id AS \"deliveryId\", run_id AS \"runId\" FROM deliveries WHERE run_id = $1", [run.id]);
  t.like(await attemptDelivery({ db, sealer, allowPrivate: false, retryMs: [0], resolve }, row), { kind: "failed", reason: "gave up after 1 attempts" }, url);
  const attempts = await sql(process.env.DATABASE_URL!, "SELECT error, status_code FROM delivery_attempts WHERE delivery_id = $1", [row.deliveryId]);
  t.is(attempts.length, 1);
  t.is(attempts[0].status_code, null);
  return String(attempts[0].error);
}

/** A resolver standing in for DNS: answers `answers` for every name, and counts the questions. */
function fakeResolver(answers: LookupAddress[]): Resolver & { asked: string[] } {
  const asked: string[] = [];
  const resolve = ((hostname, _options, callback) => {
    asked.push(hostname);
    queueMicrotask(() => callback(null, answers));
  }) as Resolver & { asked: string[] };
  resolve.asked = asked;
  return resolve;
}

test.serial("the SSRF guard refuses https:// endpoints at loopback, link-local and metadata addresses, and nothing is connected to (issue 18)", async (t) => {
  await setup();
  const before = { v4: rx.connections, v6: rx6.connections };
  // IP literals in the URL: refused before connecting, the reason naming the address
  t.regex(await refusedAttempt(t, `https://127.0.0.1:${rx.port}/hook`), /^refused: 127\.0\.0\.1 is a loopback address$/);
  t.regex(await refusedAttempt(t, `https://[::1]:${rx6.port}/hook`), /^refused: ::1 is a loopback address$/);
  t.regex(await refusedAttempt(t, `https://[::ffff:127.0.0.1]:${rx.port}/hook`), /^refused: ::ffff:7f00:1 is the IPv4-mapped form of 127\.0\.0\.1, a loopback address$/);
  t.regex(await refusedAttempt(t, `https://[::127.0.0.1]:${rx.port}/hook`), /IPv4-compatible form of 127\.0\.0\.1, a loopback address/);
  t.regex(await refusedAttempt(t, "https://169.254.169.254/latest/meta-data/"), /^refused: 169\.254\.169\.254 is a link-local address/);
  t.regex(await refusedAttempt(t, "https://2130706433/"), /^refused: 127\.0\.0\.1 is a loopback address$/, "URL parsing normalises a decimal IPv4 literal");
  // `localhost.` (a trailing dot) is the same name as `localhost`: refused by name, never sent to a DNS server
  t.regex(await refusedAttempt(t, `https://localhost.:${rx.port}/hook`), /^refused: localhost\. is a loopback name$/);
  t.regex(await refusedAttempt(t, `https://hooks.LOCALHOST.:${rx.port}/hook`), /^refused: hooks\.localhost\. is a loopback name$/);
  // names that pass every name check and resolve to loopback: refused by the lookup wired into undici
  const v4 = fakeResolver([{ address: "127.0.0.1", family: 4 }]);
  t.regex(await refusedAttempt(t, `https://rebind.example.test:${rx.port}/hook`, v4), /^refused: rebind\.example\.test resolves to 127\.0\.0\.1, a loopback address$/);
  t.deepEqual(v4.asked, ["rebind.example.test"], "the name was resolved at connect time");
  const v6 = fakeResolver([{ address: "::1", family: 6 }]);
  t.regex(await refusedAttempt(t, `https://six.example.test:${rx6.port}/hook`, v6), /^refused: six\.example\.test resolves to ::1, a loopback address$/);
  const mapped = fakeResolver([{ address: "::ffff:127.0.0.1", family: 6 }]);
  t.regex(await refusedAttempt(t, `https://mapped.example.test:${rx.port}/hook`, mapped), /resolves to ::ffff:127\.0\.0\.1, the IPv4-mapped form of 127\.0\.0\.1, a loopback address$/);
  t.deepEqual({ v4: rx.connections, v6: rx6.connections }, before, "no receiver was connected to");
  t.is(rx.at("/hook").length + rx6.at("/hook").length, 0);
  // control: with private addresses allowed, the same https URL does connect (and fails its TLS
  // handshake with this plain-HTTP receiver), so the counts above would have seen a connection
  await setEndpoint(db, sealer, "local", "webhook", new URL(`https://127.0.0.1:${rx.port}/hook`));
  const run = await (await Workflow.deploy(SOURCE)).start({ job: { title: "ctl" } });
  const [row] = await sql<Ref>(process.env.DATABASE_URL!, "SELECT id AS \"deliveryId\", run_id AS \"runId\" FROM deliveries WHERE run_id = $1", [run.id]);
  t.like(await attemptDelivery({ db, sealer, allowPrivate: true, retryMs: [0] }, row), { kind: "failed" });
  t.is(rx.connections, before.v4 + 1);
  const [ctl] = await sql(process.env.DATABASE_URL!, "SELECT error FROM delivery_attempts WHERE delivery_id = $1", [row.deliveryId]);
  t.notRegex(String(ctl.error), /refused/);
  await setEndpoint(db, sealer, "local", "webhook", new URL(`${rx.url}/ssrf`));
});

test.serial("the SSRF guard resolves again on every attempt", async (t) => {
  await setup();
  const resolve = fakeResolver([{ address: "127.0.0.1", family: 4 }]);
  await setEndpoint(db, sealer, "local", "webhook", new URL(`https://again.example.test:${rx.port}/hook`));
  const run = await (await Workflow.deploy(SOURCE)).start({ job: { title: "again" } });
  const [row] = await sql<Ref>(process.env.DATABASE_URL!, "SELECT id AS \"deliveryId\", run_id AS \"runId\" FROM deliveries WHERE run_id = $1", [run.id]);
  const deps = { db, sealer, allowPrivate: false, retryMs: [0, 0], resolve };
  const before = rx.connections;
  t.like(await attemptDelivery(deps, row), { kind: "retry", attempt: 1 });
  t.like(await attemptDelivery(deps, row), { kind: "failed", reason: "gave up after 2 attempts" });
  t.deepEqual(resolve.asked, ["again.example.test", "again.example.test"]);
  t.is(rx.connections, before);
  await setEndpoint(db, sealer, "local", "webhook", new URL(`${rx.url}/ssrf`));
});

test.serial("the delivery agent refuses a name the system resolver maps to loopback, with no name check involved", async (t) => {
  await setup();
  // `localhost` is in every hosts file, so this asks no DNS server; checkLiteralHost is skipped on purpose
  const before = rx.connections;
  const agent = deliveryAgent(false);
  try {
    const err = await t.throwsAsync(fetch(`https://localhost:${rx.port}/hook`, { method: "POST", body: "{}", dispatcher: agent, signal: AbortSignal.timeout(5000) }));
    const cause = (err as { cause?: Error }).cause;
    t.is(cause?.name, "AddressRefusedError");
    t.regex(String(cause?.message), /^refused: localhost resolves to (127\.0\.0\.1|::1), a loopback address$/);
  } finally {
    await agent.close();
  }
  t.is(rx.connections, before);
});

test.serial("a send webhook to a chat endpoint fails at once, saying why (no retry can help)", async (t) => {
  await setup();
  await setEndpoint(db, sealer, "local", "slack", new URL(`${rx.url}/slack-misfit`));
  const run = await (await Workflow.deploy(SOURCE)).start({ job: { title: "mis" } });
  const [row] = await sql<Ref>(process.env.DATABASE_URL!, "SELECT id AS \"deliveryId\", run_id AS \"runId\" FROM deliveries WHERE run_id = $1", [run.id]);
  const result = await attemptDelivery({ db, sealer, allowPrivate: true, retryMs: [0, 0] }, row);
  t.like(result, { kind: "failed" });
  t.regex((result as { reason: string }).reason, /send webhook cannot go to a slack endpoint/);
  t.is(rx.at("/slack-misfit").length, 0);
  await setEndpoint(db, sealer, "local", "webhook", new URL(`${rx.url}/ssrf`));
});

test("refused addresses: loopback, private, CGNAT, link-local and metadata, unspecified, multicast, and the IPv6 forms that embed one", (t) => {
  for (const a of ["127.0.0.1", "127.1.2.3", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "224.0.0.1", "255.255.255.255", "::1", "::", "fe80::1", "fd00::1", "fd00:ec2::254", "ff02::1", "::ffff:127.0.0.1", "::ffff:7f00:1", "::ffff:a9fe:a9fe", "64:ff9b::a9fe:a9fe"]) {
    t.true(isRefusedAddress(a), a);
  }
  // issue 18: IPv6 spellings of a refused IPv4 address beyond ::ffff:0:0/96, a zone index, and
  // the IPv6 ranges that are not global
  for (const a of ["0:0:0:0:0:ffff:7f00:1", "::FFFF:7F00:1", "::7f00:1", "::127.0.0.1", "::a9fe:a9fe", "::ffff:0:7f00:1", "::ffff:0:10.0.0.1", "2002:7f00:1::", "2002:a9fe:a9fe::1", "64:ff9b:1::a9fe:a9fe", "2001:0:4136:e378:8000:63bf:80ff:fffe", "fe80::1%eth0", "fec0::1", "100::1", "2001:db8::1", "[::1]"]) {
    t.true(isRefusedAddress(a), a);
  }
  for (const a of ["93.184.216.34", "8.8.8.8", "172.32.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:5db8:d822::1", "2a00:1450:4001:80b::200e"]) t.false(isRefusedAddress(a), a);
  t.is(refusalReason("169.254.169.254"), "a link-local address (the cloud metadata service)");
  t.is(refusalReason("10.1.2.3"), "a private address");
  t.is(refusalReason("2002:a9fe:a9fe::1"), "the 6to4 form of 169.254.169.254, a link-local address (the cloud metadata service)");
  t.is(refusalReason("not-an-address"), "not an IP address");
  t.is(refusalReason("8.8.8.8"), null);
});

test("the IP-literal and name checks: refused addresses and loopback names, with or without a trailing dot", (t) => {
  for (const [url, reason] of [
    ["https://127.0.0.1/", /127\.0\.0\.1 is a loopback address/],
    ["https://[::ffff:127.0.0.1]/", /IPv4-mapped form of 127\.0\.0\.1/],
    ["https://[::ffff:0:127.0.0.1]/", /IPv4-translated form of 127\.0\.0\.1/],
    ["https://[64:ff9b:1::a9fe:a9fe]/", /local-use NAT64/],
    ["https://0x7f.1/", /127\.0\.0\.1 is a loopback address/],
    ["https://localhost/", /localhost is a loopback name/],
    ["https://localhost./", /localhost\. is a loopback name/],
    ["https://localhost../", /loopback name/],
    ["https://a.b.localhost./", /loopback name/],
  ] as const) {
    t.throws(() => checkLiteralHost(new URL(url), false), { name: "AddressRefusedError", message: reason }, url);
  }
  for (const url of ["https://example.com/", "https://example.com./", "https://localhost.example.com/", "https://8.8.8.8/"]) t.notThrows(() => checkLiteralHost(new URL(url), false), url);
  t.notThrows(() => checkLiteralHost(new URL("http://localhost./"), true));
});

test("the guarded lookup refuses a name that resolves to loopback", async (t) => {
  const err = await new Promise<Error | null>((resolve) => guardedLookup("localhost", {}, (e) => resolve(e)));
  t.is(err?.name, "AddressRefusedError");
  t.regex(String(err?.message), /^refused: localhost resolves to (127\.0\.0\.1|::1), a loopback address$/);
});

test("the guarded lookup refuses a name when any of its addresses is refused, and passes public answers through", async (t) => {
  const ask = (answers: LookupAddress[], all: boolean) =>
    new Promise<{ err: Error | null; result: unknown }>((resolve) =>
      guardedLookupWith(fakeResolver(answers))("mixed.example.test", { all }, (err, address, family) => resolve({ err, result: all ? address : [address, family] })),
    );
  const mixed = await ask([{ address: "93.184.216.34", family: 4 }, { address: "10.0.0.7", family: 4 }], true);
  t.regex(String(mixed.err?.message), /^refused: mixed\.example\.test resolves to 10\.0\.0\.7, a private address$/);
  const metadata = await ask([{ address: "2606:4700:4700::1111", family: 6 }, { address: "fd00:ec2::254", family: 6 }], false);
  t.regex(String(metadata.err?.message), /resolves to fd00:ec2::254, a private address/);
  const none = await ask([], true);
  t.regex(String(none.err?.message), /^refused: mixed\.example\.test resolves to no address$/);
  const pub = await ask([{ address: "93.184.216.34", family: 4 }, { address: "2606:4700:4700::1111", family: 6 }], true);
  t.is(pub.err, null);
  t.deepEqual(pub.result, [{ address: "93.184.216.34", family: 4 }, { address: "2606:4700:4700::1111", family: 6 }]);
  const one = await ask([{ address: "93.184.216.34", family: 4 }], false);
  t.deepEqual(one.result, ["93.184.216.34", 4]);
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
  const { resealAll } = await import("../../src/engine/sealing/reseal.js");
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

test.serial("two workers attempting one delivery at once send it once: claim, send, mark; a claimed delivery is skipped (issue 22)", async (t) => {
  await setup();
  // an endpoint of its own: the reseal test above moved "local"'s secret to a key this sealer lacks
  await setEndpoint(db, sealer, "twice", "webhook", new URL(`${rx.url}/twice`));
  const twice = await Workflow.deploy(SOURCE.replace('send webhook to "local"', 'send webhook to "twice"'));
  const run = await twice.start({ job: { title: "twice" } });
  const [row] = await sql<Ref>(process.env.DATABASE_URL!, "SELECT id AS \"deliveryId\", run_id AS \"runId\" FROM deliveries WHERE run_id = $1", [run.id]);
  const deps = { db, sealer, allowPrivate: true, retryMs: [0, 0, 0] };
  const results = await Promise.all([attemptDelivery(deps, row), attemptDelivery(deps, row)]);
  t.deepEqual(results.map((r) => r.kind).sort(), ["sent", "skipped"]);
  t.is(rx.at("/twice").length, 1);
  const [after] = await sql(process.env.DATABASE_URL!, "SELECT status, attempts, next_attempt_at FROM deliveries WHERE id = $1", [row.deliveryId]);
  t.like(after, { status: "sent", attempts: 1, next_attempt_at: null });
  t.is((await sql(process.env.DATABASE_URL!, "SELECT 1 FROM delivery_attempts WHERE delivery_id = $1", [row.deliveryId])).length, 1);
  // a pending delivery whose attempt another worker holds (next_attempt_at moved past the attempt) is skipped
  const run2 = await twice.start({ job: { title: "held" } });
  const [held] = await sql<Ref>(process.env.DATABASE_URL!, "SELECT id AS \"deliveryId\", run_id AS \"runId\" FROM deliveries WHERE run_id = $1", [run2.id]);
  await sql(process.env.DATABASE_URL!, "UPDATE deliveries SET next_attempt_at = now() + interval '1 minute' WHERE id = $1", [held.deliveryId]);
  t.deepEqual(await attemptDelivery(deps, held), { kind: "skipped" });
  await sql(process.env.DATABASE_URL!, "UPDATE deliveries SET next_attempt_at = now() WHERE id = $1", [held.deliveryId]);
  t.like(await attemptDelivery(deps, held), { kind: "sent" });
});
