/**
 * Email that a vendor's mail server accepts (issue 18 item 6), against a real SMTP server on
 * 127.0.0.1 (the `smtp-server` package) that offers STARTTLS and refuses AUTH before it: the
 * mailer upgrades to TLS (certificate checked against a CA the test made), authenticates, sends
 * From SLOTFLOW_MAIL_FROM with Message-IDs of its domain, DKIM-signed by nodemailer (verified by
 * the `mailauth` library against the published key), with the plain text part unchanged and an
 * HTML alternative in which the link is a button, everything escaped. Parsed by `mailparser`.
 */
import test from "ava";
import { execFileSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { simpleParser } from "mailparser";
import { dkimVerify } from "mailauth/lib/dkim/verify.js";
import { SMTPServer } from "smtp-server";
import { loadConfig } from "../../src/config.js";
import { htmlAlternative, isOwnCallbackLink, LINK_BUTTON_LABEL, smtpTransport } from "../../src/channels/email/transport.js";

interface Received {
  raw: string;
  secure: boolean;
  user: string | undefined;
  envelopeFrom: string;
}

const dir = mkdtempSync(join(tmpdir(), "slotflow-smtp-"));
execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem"), "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"], { stdio: "ignore" });
const key = readFileSync(join(dir, "key.pem"));
const cert = readFileSync(join(dir, "cert.pem"));
const dkimKeys = generateKeyPairSync("rsa", { modulusLength: 2048 });
const dkimPem = dkimKeys.privateKey.export({ type: "pkcs8", format: "pem" }).toString();
const dkimPublic = dkimKeys.publicKey.export({ type: "spki", format: "der" }).toString("base64");

const received: Received[] = [];
const server = new SMTPServer({
  secure: false,
  key,
  cert,
  authMethods: ["PLAIN", "LOGIN"],
  // AUTH is refused before STARTTLS (allowInsecureAuth false): an accepted login proves TLS
  onAuth(auth, _session, cb) {
    if (auth.username === "sfuser" && auth.password === "sf-pass") cb(null, { user: auth.username });
    else cb(new Error("Invalid username or password"));
  },
  onData(stream, session, cb) {
    const chunks: Buffer[] = [];
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("end", () => {
      received.push({ raw: Buffer.concat(chunks).toString("utf8"), secure: session.secure, user: session.user as string | undefined, envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : "" });
      cb();
    });
  },
  logger: false,
});
let port = 0;

test.before(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  port = (server.server.address() as { port: number }).port;
});

test.after.always(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

const BASE = "https://slotflow.example.com";
const LINK = `${BASE}/api/workflow/callback/sfl_` + "A".repeat(49);
const BODY = `Dear <Vendor> & co,\nplease answer: ${LINK}\nSee https://example.com/terms?a=1&b=2 too.`;

test.serial("STARTTLS + AUTH, From SLOTFLOW_MAIL_FROM with its Message-ID domain, DKIM-signed (verified by mailauth), text unchanged beside an HTML alternative with the link as a button", async (t) => {
  const config = loadConfig({
    SLOTFLOW_MAIL_FROM: "Acme Approvals <approvals@acme.example>",
    SLOTFLOW_DKIM_DOMAIN: "acme.example",
    SLOTFLOW_DKIM_SELECTOR: "sf2026",
    SLOTFLOW_DKIM_PRIVATE_KEY: dkimPem.replace(/\n/g, "\\n"),
  });
  const transport = smtpTransport(`smtp://sfuser:sf-pass@127.0.0.1:${port}?requireTLS=true`, config.mail, { tls: { ca: [cert] } }, BASE);
  const messageId = await transport.send({ to: "ap@vendor.example", subject: "Approve Acme?", body: BODY });
  t.regex(messageId, /^<[0-9a-f-]{36}@acme\.example>$/);
  const got = received.at(-1)!;
  t.true(got.secure, "the session was upgraded to TLS");
  t.is(got.user, "sfuser");
  t.is(got.envelopeFrom, "approvals@acme.example");
  const mail = await simpleParser(got.raw);
  t.is(mail.from?.value[0].address, "approvals@acme.example");
  t.is(mail.from?.value[0].name, "Acme Approvals");
  t.is(mail.messageId, messageId);
  t.is(mail.text?.replace(/\r\n/g, "\n").replace(/\n$/, ""), BODY, "the text part is the body, unchanged");
  const html = String(mail.html);
  t.true(html.includes(`<a href="${LINK}"`), "the link is a button");
  t.true(html.includes("Open to answer</a>"));
  t.true(html.includes("Dear &lt;Vendor&gt; &amp; co"), "text escaped");
  t.true(html.includes('<a href="https://example.com/terms?a=1&amp;b=2">'));
  t.false(html.includes("<Vendor>"));
  const verified = await dkimVerify(got.raw, {
    resolver: async (name: string, type: string) => {
      if (type === "TXT" && name === "sf2026._domainkey.acme.example") return [[`v=DKIM1; k=rsa; p=${dkimPublic}`]];
      throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
    },
  } as never);
  t.is(verified.results.length, 1);
  t.is(verified.results[0].status.result, "pass", JSON.stringify(verified.results[0].status));
  t.is(verified.results[0].signingDomain, "acme.example");
});

test.serial("wrong SMTP credentials are an error of the attempt (the outbox retries), not a silent drop", async (t) => {
  const transport = smtpTransport(`smtp://sfuser:wrong@127.0.0.1:${port}?requireTLS=true`, undefined, { tls: { ca: [cert] } });
  await t.throwsAsync(transport.send({ to: "ap@vendor.example", subject: "x", body: "y" }), { message: /Invalid username or password/ });
});

test("the defaults are unchanged: slotflow <no-reply@slotflow.local>, no DKIM; SLOTFLOW_MAIL_FROM and DKIM settings are validated", (t) => {
  t.deepEqual(loadConfig({}).mail, { from: "slotflow <no-reply@slotflow.local>", dkim: null });
  t.throws(() => loadConfig({ SLOTFLOW_MAIL_FROM: "a@x, b@y" }), { message: /SLOTFLOW_MAIL_FROM/ });
  t.throws(() => loadConfig({ SLOTFLOW_DKIM_DOMAIN: "acme.example" }), { message: /SLOTFLOW_DKIM_SELECTOR/ });
});

test("htmlAlternative escapes everything and makes only callback links buttons", (t) => {
  const html = htmlAlternative(`<script>alert(1)</script>\n${LINK}`, BASE);
  t.false(html.includes("<script>"));
  t.is(html.match(/Open to answer/g)?.length, 1);
  t.is(htmlAlternative("no links here", BASE).includes("Open to answer"), false);
});

test("issue 28 item 5: only callback links under BASE_URL become buttons; the same shape elsewhere stays a visible plain link", (t) => {
  const foreign = [
    "https://attacker.example/api/workflow/callback/login",
    "http://slotflow.example.com/api/workflow/callback/sfl_x", // another scheme
    "https://slotflow.example.com:8443/api/workflow/callback/sfl_x", // another port
    "https://slotflow.example.com.attacker.example/api/workflow/callback/sfl_x",
    "https://user@slotflow.example.com/api/workflow/callback/sfl_x",
    "https://attacker.example/x?u=https://slotflow.example.com/api/workflow/callback/sfl_x",
  ];
  for (const url of foreign) {
    const html = htmlAlternative(`A responder's note: see ${url}`, BASE);
    t.false(html.includes(LINK_BUTTON_LABEL), url);
    t.true(html.includes(`<a href="${url.replace(/&/g, "&amp;")}">${url.replace(/&/g, "&amp;")}</a>`), `${url} stays visible as its own text`);
  }
  t.is(htmlAlternative(`answer: ${LINK}\nsee https://attacker.example/api/workflow/callback/login`, BASE).match(/Open to answer/g)?.length, 1, "the genuine link stays a button");
  // a BASE_URL with a path prefix: links must be under it
  const prefixed = "https://acme.example/flows";
  t.true(isOwnCallbackLink(`${prefixed}/api/workflow/callback/sfl_x`, prefixed));
  t.false(isOwnCallbackLink("https://acme.example/api/workflow/callback/sfl_x", prefixed));
  t.false(isOwnCallbackLink(`${LINK}`, null), "no BASE_URL, no buttons");
});
