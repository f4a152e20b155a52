/**
 * Delivery of the transactional outbox (`send email`). This module alone writes `outbox.status`.
 * Recipient, subject and body are stored sealed when they carry a link; the mailer opens them to
 * send, and the stored error of a failed attempt has tokens redacted.
 *
 *   pending --delivered--> sent       (the body is dropped: it may carry a link)
 *   pending --attempts exhausted--> failed (the body is dropped too)
 *   pending --recipient not one plain address--> failed (at once; see lang/runtime/email-address.ts)
 *
 * A message row is written in the same transaction as the step that queued it, so it exists only
 * if the step committed. After commit the worker enqueues a `deliver` job; the sweeper re-enqueues
 * rows left pending (a worker that died between commit and enqueue). Delivery is at least once:
 * a crash between sending and marking `sent` sends again.
 *
 * Transport: nodemailer over SMTP_URL; when it is unset, the message is written to the terminal
 * (stdout) as a plain block — that print is the delivery, so it shows the link as a recipient would
 * see it. Log lines never contain the body.
 *
 * What a vendor's mail server accepts (issue 18 item 6): the From is SLOTFLOW_MAIL_FROM and
 * Message-IDs take its domain (so SPF/DMARC can align); with SLOTFLOW_DKIM_* every message is
 * DKIM-signed by nodemailer's own `dkim` option; SMTP_URL carries TLS and auth as nodemailer reads
 * them (`smtps://` implicit TLS; `smtp://…:587?requireTLS=true` STARTTLS required; credentials in
 * the URL). Each message has the plain text part it always had and an HTML alternative in which a
 * callback link is a button (`htmlAlternative`; everything escaped).
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import escapeHtml from "escape-html";
import nodemailer, { type Transporter } from "nodemailer";
import type SMTPTransport from "nodemailer/lib/smtp-transport";
import { DEFAULT_MAIL_FROM, type MailSettings } from "../config.js";
import type { Db } from "../db.js";
import { Prisma } from "../generated/prisma/client.js";
import type { Logger } from "../log.js";
import { isEmailAddress } from "../lang/runtime/email-address.js";
import { redactTokens, type Sealer } from "../engine/sealing/seal.js";

export const MAX_DELIVERY_ATTEMPTS = 5;

/** The From header, its bare address (the envelope's sender) and its domain (Message-IDs). */
export function mailIdentity(from: string = DEFAULT_MAIL_FROM): { from: string; address: string; domain: string } {
  const address = (/<([^<>]+)>\s*$/.exec(from)?.[1] ?? from).trim();
  return { from, address, domain: address.slice(address.lastIndexOf("@") + 1) };
}

const ANY_URL = /https?:\/\/[^\s<>"']+/g;
/** The button's text for a callback link in the HTML part. */
export const LINK_BUTTON_LABEL = "Open to answer";

/**
 * True when `url` is a callback link of this server: it starts with `${baseUrl}/api/workflow/callback/`
 * (scheme, host, port and path prefix exactly those of BASE_URL) — issue 28 item 5: a URL of that
 * shape on any other host (a responder's note quoting `https://attacker.example/api/workflow/callback/…`)
 * is no button.
 */
export function isOwnCallbackLink(url: string, baseUrl: string | null): boolean {
  if (!baseUrl) return false;
  let u: URL;
  let base: URL;
  try {
    u = new URL(url);
    base = new URL(baseUrl);
  } catch {
    return false;
  }
  const prefix = `${base.pathname.replace(/\/+$/, "")}/api/workflow/callback/`;
  return u.protocol === base.protocol && u.host === base.host && u.username === "" && u.password === "" && u.pathname.startsWith(prefix) && u.pathname.length > prefix.length;
}

/**
 * The HTML alternative of a plain-text body (issue 18 item 6): the text escaped, line breaks kept,
 * each callback link of this server (`isOwnCallbackLink` against `baseUrl`, BASE_URL) a button (an
 * `<a>` styled as one) and any other URL a plain link showing its own text — never a button
 * (issue 28 item 5). `baseUrl` null: no buttons at all. Nothing loaded from elsewhere; the text part
 * is sent unchanged beside it.
 */
export function htmlAlternative(text: string, baseUrl: string | null): string {
  const inline = (line: string): string => {
    let out = "";
    let last = 0;
    for (const m of line.matchAll(ANY_URL)) {
      out += escapeHtml(line.slice(last, m.index));
      const url = m[0];
      const href = escapeHtml(url);
      out += isOwnCallbackLink(url, baseUrl)
        ? `</p><p><a href="${href}" style="display:inline-block;padding:10px 18px;background:#1d4ed8;color:#ffffff;border-radius:6px;text-decoration:none;font-weight:600">${LINK_BUTTON_LABEL}</a></p><p>`
        : `<a href="${href}">${href}</a>`;
      last = (m.index ?? 0) + url.length;
    }
    return out + escapeHtml(line.slice(last));
  };
  const body = text.split(/\r?\n/).map(inline).join("<br>\n").replace(/<p><\/p>/g, "");
  return `<!doctype html>\n<html><body style="font-family:system-ui,sans-serif;font-size:15px;line-height:1.5"><p>${body}</p></body></html>\n`.replace(/<p><\/p>/g, "");
}

export interface Mail {
  to: string;
  subject: string;
  body: string;
  /** One address each, when the `send email` gave them (issue 19). */
  replyTo?: string;
  cc?: string;
}

export interface MailTransport {
  /** `terminal` only prints (logged as `email printed`, never `email delivered`); `smtp` (or unset) delivers. */
  readonly kind?: "smtp" | "terminal";
  /** Sends one message; returns its message id. */
  send(mail: Mail): Promise<string>;
}

/**
 * SMTP through nodemailer: `smtpUrl` (SMTP_URL, with TLS and auth as nodemailer reads them),
 * `settings` (SLOTFLOW_MAIL_FROM, SLOTFLOW_DKIM_*; the defaults when absent), `extra` transport
 * options (tests: a private CA), `baseUrl` (BASE_URL: only its callback links become buttons in the
 * HTML part; null: none do). Throws when the DKIM key file cannot be read.
 */
export function smtpTransport(
  smtpUrl: string,
  settings: MailSettings = { from: DEFAULT_MAIL_FROM, dkim: null },
  extra: SMTPTransport.Options = {},
  baseUrl: string | null = null,
): MailTransport {
  const identity = mailIdentity(settings.from);
  const dkim = settings.dkim
    ? { domainName: settings.dkim.domainName, keySelector: settings.dkim.keySelector, privateKey: settings.dkim.privateKey ?? readFileSync(settings.dkim.privateKeyFile!, "utf8") }
    : undefined;
  const transporter: Transporter = nodemailer.createTransport({ ...(nodemailer.createTransport(smtpUrl).options as SMTPTransport.Options), ...extra, ...(dkim ? { dkim } : {}) });
  return {
    kind: "smtp",
    async send(mail) {
      // The envelope names the one recipient explicitly: nodemailer never re-parses `to` into a list.
      // A cc is a recipient too: it joins the envelope; replyTo is a header only (issue 19).
      const info = await transporter.sendMail({
        from: identity.from,
        to: mail.to,
        ...(mail.cc ? { cc: mail.cc } : {}),
        ...(mail.replyTo ? { replyTo: mail.replyTo } : {}),
        envelope: { from: identity.address, to: mail.cc ? [mail.to, mail.cc] : [mail.to] },
        messageId: `<${randomUUID()}@${identity.domain}>`,
        subject: mail.subject,
        text: mail.body,
        html: htmlAlternative(mail.body, baseUrl),
      });
      return String(info.messageId);
    },
  };
}

/** Prints each message to `out` (default stdout) instead of sending it. */
export function terminalTransport(out: NodeJS.WritableStream = process.stdout): MailTransport {
  let n = 0;
  return {
    kind: "terminal",
    async send(mail) {
      const id = `<terminal-${process.pid}-${++n}-${Date.now()}@slotflow.local>`;
      out.write(
        `\n----- email (SMTP_URL is not set: printed instead of sent) -----\nTo: ${mail.to}\n${mail.cc ? `Cc: ${mail.cc}\n` : ""}${mail.replyTo ? `Reply-To: ${mail.replyTo}\n` : ""}Subject: ${mail.subject}\n\n${mail.body}\n----- end of email -----\n\n`,
      );
      return id;
    },
  };
}

/**
 * How long a delivery holds its claimed row, ms (issue 22): longer than any send can take
 * (nodemailer's connection, greeting and socket timeouts), so a second job for the same row —
 * the sweeper's re-enqueue, a stalled job taken back — finds it claimed and skips it. A worker that
 * dies mid-send leaves the claim to lapse; the row is then delivered again (at least once).
 */
export const MAIL_CLAIM_MS = 15 * 60_000;

/** A claimed outbox row as both delivery paths read it (recipient, subject, body sealed as stored). */
export type ClaimedRow = { id: string; run_id: string; to: string; subject: string; body: string | null; reply_to: string | null; cc: string | null; attempts: number };

/** The columns a claim returns, for `RETURNING` (ClaimedRow's shape). */
export const CLAIMED_COLUMNS = `id, run_id, "to", subject, body, reply_to, cc, attempts`;

/**
 * The message of a claimed row, opened (recipient, subject and body are stored sealed when they
 * carry a link: Sealer.sealText), or null when its recipient, cc or reply-to is not exactly one
 * plain address. `send email` queues only single plain addresses; a row that holds anything else
 * (queued before that rule) fails at once rather than waiting out its attempts (issue 8 item 18).
 */
export function openClaimed(sealer: Sealer, row: ClaimedRow): Mail | null {
  const mail: Mail = { to: sealer.openText(row.to), subject: sealer.openText(row.subject), body: row.body === null ? "" : sealer.openText(row.body) };
  if (row.reply_to !== null) mail.replyTo = sealer.openText(row.reply_to);
  if (row.cc !== null) mail.cc = sealer.openText(row.cc);
  if (!isEmailAddress(mail.to) || (mail.cc !== undefined && !isEmailAddress(mail.cc)) || (mail.replyTo !== undefined && !isEmailAddress(mail.replyTo))) return null;
  return mail;
}

/** Marks a claimed row failed at once: its recipient is not one plain address (openClaimed). */
export async function markUndeliverable(db: Db, row: ClaimedRow): Promise<void> {
  await db.$executeRaw`UPDATE outbox SET status = 'failed', body = NULL, attempts = ${row.attempts + 1}, claimed_until = NULL,
                              last_error = 'the recipient is not exactly one email address' WHERE run_id = ${row.run_id}::uuid AND id = ${row.id}::uuid`;
}

/**
 * Records a failed send of a claimed row: attempts + 1, the error (tokens redacted, ≤ 500
 * characters), the claim released; at MAX_DELIVERY_ATTEMPTS the row fails and its body is dropped.
 * Returns whether the row failed for good.
 */
export async function markSendFailed(db: Db, row: ClaimedRow, err: unknown, log?: Logger): Promise<boolean> {
  const attempts = row.attempts + 1;
  const failed = attempts >= MAX_DELIVERY_ATTEMPTS;
  const message = redactTokens(err instanceof Error ? err.message : String(err)).slice(0, 500);
  await db.$executeRaw`UPDATE outbox SET attempts = ${attempts}, last_error = ${message}, claimed_until = NULL,
                              status = CASE WHEN ${failed} THEN 'failed' ELSE status END,
                              body = CASE WHEN ${failed} THEN NULL ELSE body END
                        WHERE run_id = ${row.run_id}::uuid AND id = ${row.id}::uuid`;
  log?.warn({ outboxId: row.id, attempts, failed }, "email delivery failed");
  return failed;
}

/** The log line of one sent message: `email printed` (terminal transport) or `email delivered`. */
export function logSent(transport: MailTransport, outboxId: string, log?: Logger): void {
  if (transport.kind === "terminal") log?.info({ outboxId }, "email printed (SMTP_URL is not set)");
  else log?.info({ outboxId }, "email delivered");
}

/**
 * What a `mail` job names (src/queue/queues.ts): the outbox row, and its run. `runId` is absent
 * only in jobs queued by a release before it (they named the row by id alone) and in a test's call.
 */
export interface OutboxRef {
  outboxId: string;
  runId?: string;
}

/**
 * Delivers one outbox message if it is still pending and not claimed. Throws when sending fails and
 * attempts remain (the job retries). Round trips (issue 22 item 2): claim, send, mark — two SQL
 * statements, each its own transaction; no row lock is held while sending.
 *
 *   claim: UPDATE outbox SET claimed_until = now() + MAIL_CLAIM_MS
 *            WHERE run_id = $run AND id = $1 AND status = 'pending'
 *            AND (claimed_until IS NULL OR claimed_until < now()) RETURNING …
 *   mark:  UPDATE outbox SET status = 'sent' | attempts, last_error …, claimed_until = NULL
 *            WHERE run_id = $run AND id = $1
 *
 * With the job's run id every statement names `(run_id, id)`: a router statement under a
 * distributed PostgreSQL (docs/scaling.md). A job without a run id (queued by the previous
 * release) is claimed by `id` alone — a multi-shard lookup of one row — and delivered the same
 * way, once. A run id that is not the row's claims nothing ("skipped").
 *
 * Two workers claiming the same row: PostgreSQL re-checks the WHERE of the second UPDATE after the
 * first commits, so exactly one gets the row (test `engine/start-and-delivery`).
 */
export async function deliverOutbox(db: Db, sealer: Sealer, transport: MailTransport, ref: OutboxRef, log?: Logger): Promise<"sent" | "skipped" | "failed"> {
  const { outboxId } = ref;
  const which = ref.runId === undefined ? Prisma.sql`id = ${outboxId}::uuid` : Prisma.sql`run_id = ${ref.runId}::uuid AND id = ${outboxId}::uuid`;
  const rows = await db.$queryRaw<ClaimedRow[]>`
    UPDATE outbox SET claimed_until = now() + make_interval(secs => ${MAIL_CLAIM_MS / 1000})
     WHERE ${which} AND status = 'pending' AND (claimed_until IS NULL OR claimed_until < now())
    RETURNING ${Prisma.raw(CLAIMED_COLUMNS)}`;
  const row = rows[0];
  if (!row) return "skipped";
  const mail = openClaimed(sealer, row);
  if (!mail) {
    await markUndeliverable(db, row);
    return "failed";
  }
  let messageId: string;
  try {
    messageId = await transport.send(mail);
  } catch (err) {
    if (await markSendFailed(db, row, err, log)) return "failed";
    throw err;
  }
  await db.$executeRaw`UPDATE outbox SET status = 'sent', body = NULL, message_id = ${messageId}, delivered_at = now(), attempts = ${row.attempts + 1}, claimed_until = NULL
                        WHERE run_id = ${row.run_id}::uuid AND id = ${outboxId}::uuid`;
  logSent(transport, outboxId, log);
  return "sent";
}
