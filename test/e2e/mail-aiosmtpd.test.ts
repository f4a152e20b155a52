/**
 * SMTP with STARTTLS and AUTH against a real server, through the real path (issue 18 item 6:
 * "documented and tested against a real server (Debian's exim4, postfix or a Python aiosmtpd sink
 * with STARTTLS)"). The server is Debian's `python3-aiosmtpd` (test/fixtures/smtp-sink.py, a
 * separate process): STARTTLS required, AUTH only after it, one user and password accepted, each
 * message it receives written as one JSON line. A `slotflow serve` process (test/helpers/server.ts)
 * has `SMTP_URL=smtp://user:pass@127.0.0.1:PORT?requireTLS=true`, `SLOTFLOW_MAIL_FROM` and the
 * test's CA trusted through `NODE_EXTRA_CA_CERTS` (the mechanism docs/configuration.md gives
 * operators: the mailer verifies the certificate against Node's CAs); the vendor-approval example
 * starts a run whose first step does `send email` with its callback link, and the worker's mailer
 * delivers it from the outbox:
 *
 * - delivered: the session was TLS and authenticated; envelope sender and From are
 *   SLOTFLOW_MAIL_FROM's address (its display name kept), the Message-ID ends in its domain; a
 *   multipart/alternative with a text/plain part carrying the link and a text/html part in which
 *   the link is a button (parsed by `mailparser`); the outbox row is `sent` with that Message-ID
 *   and no body; the link the recipient got answers.
 * - wrong password: nothing reaches the sink; the outbox row is retried to its attempt limit and
 *   ends `failed`, its last_error saying the login was refused and naming neither password; no
 *   log line of the server names one either.
 *
 * The two tests run one after the other (one server process at a time on a loaded CI machine).
 * Needs `/usr/bin/python3` with aiosmtpd (`apt-get install python3-aiosmtpd`; .ci/run installs it;
 * `SLOTFLOW_TEST_PYTHON` names another interpreter) and `openssl`, as test/engine/mail-smtp.test.ts
 * (the mailer alone against the npm `smtp-server`, with DKIM) does.
 */
import test, { type ExecutionContext } from "ava";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { simpleParser } from "mailparser";
import { LINK_BUTTON_LABEL } from "../../src/channels/email/transport.js";
import { uniqueTitle, startRun } from "../helpers/callback.js";
import { dropDatabase, sql } from "../helpers/db.js";
import { linkIn } from "../helpers/mail.js";
import { ADMIN_TOKEN, ROOT, eventually, freePort, request, startCluster, type Cluster } from "../helpers/server.js";

/** One message as the sink writes it (test/fixtures/smtp-sink.py). */
interface SinkMessage {
  mailFrom: string;
  rcptTos: string[];
  data: string;
  tls: boolean;
  tlsVersion: string | null;
  user: string | null;
}

interface Sink {
  port: number;
  child: ChildProcess;
  messages: SinkMessage[];
  stderr: string[];
  stop(): Promise<void>;
}

const PYTHON = process.env.SLOTFLOW_TEST_PYTHON || (existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3");
const USER = "slotflow-relay";
const PASSWORD = `sink-pass-${randomBytes(6).toString("hex")}`;
const WRONG_PASSWORD = `not-the-pass-${randomBytes(6).toString("hex")}`;
const MAIL_FROM = "Approvals <approvals@example.com>";

const dir = mkdtempSync(join(tmpdir(), "slotflow-aiosmtpd-"));
const certFile = join(dir, "cert.pem");
const keyFile = join(dir, "key.pem");
execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", keyFile, "-out", certFile, "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"], { stdio: "ignore" });

/** Spawns the sink on a free port; resolves once it accepts connections. Its stdin is a pipe: it exits when this process does. */
async function startSink(): Promise<Sink> {
  const port = await freePort();
  const child = spawn(PYTHON, [join(ROOT, "test", "fixtures", "smtp-sink.py"), String(port), certFile, keyFile, USER, PASSWORD], { stdio: ["pipe", "pipe", "pipe"] });
  const messages: SinkMessage[] = [];
  const stderr: string[] = [];
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const sink: Sink = {
    port,
    child,
    messages,
    stderr,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(killer);
    },
  };
  return new Promise((resolve, reject) => {
    let buffered = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      buffered += chunk.toString("utf8");
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) {
        let parsed: SinkMessage | { ready: true };
        try {
          parsed = JSON.parse(line) as SinkMessage | { ready: true };
        } catch {
          stderr.push(`(not JSON on stdout) ${line}\n`);
          continue;
        }
        if ("ready" in parsed) resolve(sink);
        else messages.push(parsed);
      }
    });
    child.stderr!.on("data", (chunk: Buffer) => stderr.push(chunk.toString("utf8")));
    child.once("error", reject);
    child.once("exit", (code) =>
      reject(new Error(`the SMTP sink (${PYTHON} test/fixtures/smtp-sink.py) exited with ${code} before it was ready — is python3-aiosmtpd installed (apt-get install python3-aiosmtpd)?\n${stderr.join("")}`)),
    );
    setTimeout(() => reject(new Error(`the SMTP sink was not ready in 20 s:\n${stderr.join("")}`)), 20_000).unref();
  });
}

/**
 * A `slotflow serve` sending through the sink with `password`, the test's CA trusted; the
 * vendor-approval example deployed. Stopped, and its database dropped, when test `t` ends.
 */
async function smtpCluster(t: ExecutionContext, label: string, password: string): Promise<Cluster> {
  const cluster = await startCluster(label, {
    env: {
      SMTP_URL: `smtp://${encodeURIComponent(USER)}:${encodeURIComponent(password)}@127.0.0.1:${sink.port}?requireTLS=true`,
      SLOTFLOW_MAIL_FROM: MAIL_FROM,
      NODE_EXTRA_CA_CERTS: certFile,
    },
  });
  t.teardown(async () => {
    try {
      await cluster.stop();
    } finally {
      await dropDatabase(cluster.databaseUrl);
    }
  });
  const source = readFileSync(join(ROOT, "examples", "vendor-approval.flow"), "utf8");
  const res = await request(cluster.baseUrl, "POST", "/api/workflows", { token: ADMIN_TOKEN, text: source, headers: { "x-slotflow-filename": "vendor-approval.flow" } });
  if (res.status !== 201 && res.status !== 200) throw new Error(`deploy of vendor-approval.flow answered ${res.status}: ${res.text}`);
  return cluster;
}

/** Starts a VendorApproval run whose vendor has a unique name and address; its first step sends the approval email. */
async function startApproval(cluster: Cluster, prefix: string): Promise<{ runId: string; name: string; contact: string }> {
  const name = uniqueTitle(prefix);
  const contact = `${name}@vendor.example`;
  const runId = await startRun(cluster.baseUrl, "VendorApproval", { vendor: { name, contactEmail: contact }, amount: 1200 });
  return { runId, name, contact };
}

interface OutboxRow {
  status: string;
  attempts: number;
  message_id: string | null;
  last_error: string | null;
  body: string | null;
}

const outboxRows = (cluster: Cluster, runId: string) =>
  sql<OutboxRow>(cluster.databaseUrl, "SELECT status, attempts, message_id, last_error, body FROM outbox WHERE run_id = $1::uuid", [runId]);

let sink: Sink;

test.before(async () => {
  sink = await startSink();
});

test.after.always(async () => {
  await sink?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test.serial("a run's email reaches a real STARTTLS + AUTH server (aiosmtpd): TLS, authenticated, From SLOTFLOW_MAIL_FROM, Message-ID of its domain, text and HTML parts with the link; the outbox row is sent", async (t) => {
  t.timeout(180_000);
  const cluster = await smtpCluster(t, "smtp_ok", PASSWORD);
  const { runId, name, contact } = await startApproval(cluster, "tls");

  const got = await eventually(async () => sink.messages.find((m) => m.rcptTos.includes(contact)), 60_000);
  t.true(got.tls, "the session was upgraded by STARTTLS before the message");
  t.regex(got.tlsVersion ?? "", /^TLSv1\.[23]$/);
  t.is(got.user, USER, "the mailer authenticated as the user of SMTP_URL");
  t.is(got.mailFrom, "approvals@example.com", "the envelope sender is SLOTFLOW_MAIL_FROM's address");
  t.deepEqual(got.rcptTos, [contact]);

  const mail = await simpleParser(got.data);
  t.is(mail.from?.value.length, 1);
  t.is(mail.from?.value[0].address, "approvals@example.com");
  t.is(mail.from?.value[0].name, "Approvals");
  t.is(mail.subject, `Approve ${name}?`);
  t.regex(mail.messageId ?? "", /^<[0-9a-f-]{36}@example\.com>$/);
  t.is((mail.headers.get("content-type") as { value: string } | undefined)?.value, "multipart/alternative", "one message, two alternatives");
  const plainAt = got.data.search(/^Content-Type: text\/plain/im);
  const htmlAt = got.data.search(/^Content-Type: text\/html/im);
  t.true(plainAt > 0 && htmlAt > plainAt, "a text/plain part, then the text/html alternative");

  const text = mail.text ?? "";
  const link = linkIn({ to: contact, subject: mail.subject ?? "", body: text });
  t.is(text.replace(/\r\n/g, "\n").trim(), `Open this link to answer: ${link}`, "the text part is the body, unchanged");
  const html = String(mail.html);
  t.true(html.includes(`<a href="${link}"`), "the HTML part links to the callback link");
  t.true(html.includes(`${LINK_BUTTON_LABEL}</a>`), "… as a button");
  t.regex(html, new RegExp(`<a href="${link.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}" style="display:inline-block;`));

  const [row] = await eventually(async () => {
    const rows = await outboxRows(cluster, runId);
    return rows.length === 1 && rows[0].status === "sent" ? rows : undefined;
  }, 30_000);
  t.is(row.status, "sent");
  t.is(row.attempts, 1);
  t.is(row.message_id, mail.messageId ?? null, "the row keeps the Message-ID the server received");
  t.is(row.body, null, "the body (it carries the link) is dropped once sent");
  t.is(row.last_error, null);

  // the link the vendor got answers (a link passes Candidates and [Authorize]: it is the credential)
  const answer = await request(link, "POST", "", { json: { ok: true, note: "received by mail" } });
  t.is(answer.status, 200, answer.text);
  t.like(answer.body, { status: "completed" }); // v0.4: with its receipt
  t.regex(String((answer.body as { receipt?: unknown } | undefined)?.receipt), /^[\w-]+\.[\w-]+\.[\w-]+$/);
  t.is(sink.messages.filter((m) => m.rcptTos.includes(contact)).length, 1, "one message, sent once");
});

test.serial("a wrong SMTP password: nothing is delivered, the outbox row is retried to its limit and fails with an error naming no secret", async (t) => {
  t.timeout(180_000);
  const cluster = await smtpCluster(t, "smtp_badpass", WRONG_PASSWORD);
  const { runId, contact } = await startApproval(cluster, "badpass");

  const [row] = await eventually(async () => {
    const rows = await outboxRows(cluster, runId);
    return rows.length === 1 && rows[0].status === "failed" ? rows : undefined;
  }, 90_000);
  t.log(`last_error: ${row.last_error}`);
  t.is(row.status, "failed");
  t.is(row.attempts, 5, "every attempt was made (MAX_DELIVERY_ATTEMPTS)");
  t.is(row.body, null, "the body is dropped once the message failed");
  t.is(row.message_id, null);
  t.regex(row.last_error ?? "", /535|Invalid login|credentials invalid/i, "the error says the login was refused");
  for (const secret of [WRONG_PASSWORD, PASSWORD, encodeURIComponent(WRONG_PASSWORD)]) {
    t.false((row.last_error ?? "").includes(secret), "last_error names no password");
    t.false(cluster.output().some((l) => l.includes(secret)), "no log line names a password");
  }
  t.false((row.last_error ?? "").includes("smtp://"), "nor the SMTP_URL");
  t.is(sink.messages.filter((m) => m.rcptTos.includes(contact)).length, 0, "nothing reached the server");
});
