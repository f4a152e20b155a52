/**
 * Delivery of the transactional outbox (`send email`). This module alone writes `outbox.status`.
 * Recipient, subject and body are stored sealed when they carry a link; the mailer opens them to
 * send, and the stored error of a failed attempt has tokens redacted.
 *
 *   pending --delivered--> sent       (the body is dropped: it may carry a link)
 *   pending --attempts exhausted--> failed (the body is dropped too)
 *   pending --recipient not one plain address--> failed (at once; see engine/email-address.ts)
 *
 * A message row is written in the same transaction as the step that queued it, so it exists only
 * if the step committed. After commit the worker enqueues a `deliver` job; the sweeper re-enqueues
 * rows left pending (a worker that died between commit and enqueue). Delivery is at least once:
 * a crash between sending and marking `sent` sends again.
 *
 * Transport: nodemailer over SMTP_URL; when it is unset, the message is written to the terminal
 * (stdout) as a plain block — that print is the delivery, so it shows the link as a recipient would
 * see it. Log lines never contain the body.
 */
import nodemailer, { type Transporter } from "nodemailer";
import type { Db } from "../db.js";
import type { Logger } from "../log.js";
import { isEmailAddress } from "../engine/email-address.js";
import { redactTokens, type Sealer } from "../engine/seal.js";

export const MAX_DELIVERY_ATTEMPTS = 5;
const FROM_ADDRESS = "no-reply@slotflow.local";
const FROM = `slotflow <${FROM_ADDRESS}>`;

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

/** SMTP through nodemailer. */
export function smtpTransport(smtpUrl: string): MailTransport {
  const transporter: Transporter = nodemailer.createTransport(smtpUrl);
  return {
    kind: "smtp",
    async send(mail) {
      // The envelope names the one recipient explicitly: nodemailer never re-parses `to` into a list.
      // A cc is a recipient too: it joins the envelope; replyTo is a header only.
      const info = await transporter.sendMail({
        from: FROM,
        to: mail.to,
        ...(mail.cc ? { cc: mail.cc } : {}),
        ...(mail.replyTo ? { replyTo: mail.replyTo } : {}),
        envelope: { from: FROM_ADDRESS, to: mail.cc ? [mail.to, mail.cc] : [mail.to] },
        subject: mail.subject,
        text: mail.body,
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

/** Delivers one outbox message if it is still pending. Throws when sending fails and attempts remain (the job retries). */
export async function deliverOutbox(db: Db, sealer: Sealer, transport: MailTransport, outboxId: string, log?: Logger): Promise<"sent" | "skipped" | "failed"> {
  const result = await db.$transaction(
    async (tx) => {
      const rows = await tx.$queryRaw<
        { id: string; to: string; subject: string; body: string | null; reply_to: string | null; cc: string | null; status: string; attempts: number }[]
      >`
        SELECT id, "to", subject, body, reply_to, cc, status, attempts FROM outbox WHERE id = ${outboxId}::uuid FOR UPDATE SKIP LOCKED`;
      const row = rows[0];
      if (!row || row.status !== "pending") return { kind: "skipped" as const };
      // recipient, subject and body are stored sealed when they carry a link (Sealer.sealText)
      const mail: Mail = { to: sealer.openText(row.to), subject: sealer.openText(row.subject), body: row.body === null ? "" : sealer.openText(row.body) };
      if (row.reply_to !== null) mail.replyTo = sealer.openText(row.reply_to);
      if (row.cc !== null) mail.cc = sealer.openText(row.cc);
      // `send email` queues only single plain addresses; a row that holds anything else (queued
      // before that rule) fails at once rather than waiting out its attempts (issue 8 item 18).
      if (!isEmailAddress(mail.to) || (mail.cc !== undefined && !isEmailAddress(mail.cc)) || (mail.replyTo !== undefined && !isEmailAddress(mail.replyTo))) {
        await tx.outboxMessage.update({
          where: { id: row.id },
          data: { status: "failed", body: null, attempts: row.attempts + 1, lastError: "the recipient is not exactly one email address" },
        });
        return { kind: "failed" as const };
      }
      try {
        const messageId = await transport.send(mail);
        await tx.outboxMessage.update({
          where: { id: row.id },
          data: { status: "sent", body: null, messageId, deliveredAt: new Date(), attempts: row.attempts + 1 },
        });
        return { kind: "sent" as const };
      } catch (err) {
        return { kind: "error" as const, err, attempts: row.attempts + 1 };
      }
    },
    { maxWait: 10_000, timeout: 60_000 },
  );
  if (result.kind === "sent") {
    if (transport.kind === "terminal") log?.info({ outboxId }, "email printed (SMTP_URL is not set)");
    else log?.info({ outboxId }, "email delivered");
  }
  if (result.kind !== "error") return result.kind;
  const failed = result.attempts >= MAX_DELIVERY_ATTEMPTS;
  const message = result.err instanceof Error ? result.err.message : String(result.err);
  await db.outboxMessage.update({
    where: { id: outboxId },
    data: { attempts: result.attempts, lastError: redactTokens(message).slice(0, 500), ...(failed ? { status: "failed", body: null } : {}) },
  });
  log?.warn({ outboxId, attempts: result.attempts, failed }, "email delivery failed");
  if (failed) return "failed";
  throw result.err;
}
