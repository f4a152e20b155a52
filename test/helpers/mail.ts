/**
 * Emails printed by the terminal mail transport (SMTP_URL empty), read back from a cluster's
 * captured output. Each message is printed as one block:
 *
 *   ----- email (SMTP_URL is not set: printed instead of sent) -----
 *   To: <to>
 *   Subject: <subject>
 *
 *   <body, one or more lines>
 *   ----- end of email -----
 *
 * Tests give every run a unique title and every workflow puts the title in its subjects, so a
 * subject names one message of one run.
 */
import { pollPause } from "./poll.js";

export interface PrintedEmail {
  to: string;
  subject: string;
  body: string;
}

const START = /^----- email \(SMTP_URL is not set: printed instead of sent\) -----$/;
const END = "----- end of email -----";

/** Every complete email block in `lines`, in order. A block still being written is left out. */
export function parseEmails(lines: readonly string[]): PrintedEmail[] {
  const out: PrintedEmail[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!START.test(lines[i])) continue;
    const to = /^To: (.*)$/.exec(lines[i + 1] ?? "");
    const subject = /^Subject: (.*)$/.exec(lines[i + 2] ?? "");
    if (!to || !subject || lines[i + 3] !== "") continue;
    const end = lines.indexOf(END, i + 4);
    if (end < 0) break;
    out.push({ to: to[1], subject: subject[1], body: lines.slice(i + 4, end).join("\n") });
    i = end;
  }
  return out;
}

/** Waits (polling with pollPause: 25 ms rising to 200 ms) for the email whose subject is exactly `subject`; fails after `ms`. */
export async function waitForEmail(output: () => string[], subject: string, ms = 15_000): Promise<PrintedEmail> {
  const until = Date.now() + ms;
  for (let attempt = 0; ; attempt++) {
    const found = parseEmails(output()).find((m) => m.subject === subject);
    if (found) return found;
    if (Date.now() > until) {
      const seen = parseEmails(output()).map((m) => m.subject);
      throw new Error(`no email with subject "${subject}" within ${ms} ms; subjects seen: ${JSON.stringify(seen.slice(-20))}`);
    }
    await new Promise((r) => setTimeout(r, pollPause(attempt)));
  }
}

const LINK = /https?:\/\/[^\s"]+\/api\/workflow\/callback\/(?:sfl_[A-Za-z0-9_-]{49}|[A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])/g;

/** The callback links in an email's body, in order. */
export function linksIn(mail: PrintedEmail): string[] {
  return [...mail.body.matchAll(LINK)].map((m) => m[0]);
}

/** The one callback link of an email; throws unless there is exactly one. */
export function linkIn(mail: PrintedEmail): string {
  const links = linksIn(mail);
  if (links.length !== 1) throw new Error(`expected one callback link in "${mail.subject}", found ${links.length}: ${mail.body}`);
  return links[0];
}

/** The token (last path segment) of a callback link. */
export function tokenOf(url: string): string {
  return new URL(url).pathname.split("/").pop()!;
}
