/**
 * The email channel's send (issue 39 item 2; moved from outbox/mailer.ts): the transport of a
 * `send email`. The outbox's lifecycle (claim, attempt, retry: outbox/mailer.ts, mail-pump.ts)
 * hands it one opened message at a time.
 *
 * Transport: nodemailer over SMTP_URL; when it is unset, the message is written to the terminal
 * (stdout) as a plain block — that print is the delivery, so it shows the link as a recipient would
 * see it.
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
import { DEFAULT_MAIL_FROM, type MailSettings } from "../../config.js";
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

