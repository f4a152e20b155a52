/**
 * The one rule for an email recipient (issue 8 item 18): `send email to X` and the built-in
 * `isEmailAddress(s)` both use it, and the mailer checks it again before handing a message over.
 *
 * X must be exactly one RFC 5322 addr-spec, `local@domain`, written plainly:
 * - parsed by `email-addresses` (an RFC 5322 parser; RFC 6532 UTF-8 allowed) as one mailbox, with
 *   no display name, no angle brackets, no comments or folding white space: the addr-spec the parser
 *   found must be the whole string — so no lists (`,`, `;`), groups (`G: a@x;`), `Name <a@x>`,
 *   CR/LF, or surrounding spaces;
 * - the local part a dot-atom and the domain a dot-atom: quoted local parts (`"a b"@x`) and domain
 *   literals (`a@[192.0.2.1]`) are refused — both are valid RFC 5322, but rare in practice and the
 *   shapes in which a downstream address parser could find a second address.
 *
 * Why a library: the grammar (atext, dot-atom, quoted pairs, CFWS, obsolete forms, groups) is
 * RFC 5322's, and `email-addresses` implements it as written and is widely used; nodemailer's own
 * `addressparser` is built to be lenient (it splits lists and recovers from malformed input), which
 * is the opposite of what a guard needs.
 */
import emailAddresses from "email-addresses";

/** True when `text` is exactly one plain email address (`local@domain`). */
export function isEmailAddress(text: string): boolean {
  // Dot-atoms hold none of these; RFC 5322 specials and white space only appear in the shapes refused above.
  if (text.length === 0 || text.length > 998 || /[\s"[\]()<>,;:\\]/.test(text)) return false;
  const parsed = emailAddresses.parseOneAddress({ input: text, rfc6532: true, strict: true, startAt: "mailbox" } as emailAddresses.Options);
  if (parsed === null || parsed.type !== "mailbox") return false;
  const mailbox = parsed as emailAddresses.ParsedMailbox;
  return mailbox.name === null && mailbox.parts.address.tokens === text;
}
