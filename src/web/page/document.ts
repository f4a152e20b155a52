/**
 * The responder page's documents: the form for a live link, and the page that says what happened to
 * a link that cannot be answered (unknown, used, replaced, no longer working, not open yet).
 * Server-rendered HTML with one inline style and one inline script, both under the response's CSP
 * nonce; no fonts, images or anything else from elsewhere. Semantic landmarks, a labelled control
 * per parameter, a polite live region for outcomes; readable from 360 px wide phones to desktops.
 */
import type { CompiledParam } from "../../lang/compiled.js";
import type { Refusal } from "../../engine/refusals.js";
import { NUMBER_MARK } from "../../engine/views/responder.js";
import { field } from "./form.js";
import { html, raw, type Html } from "./html.js";
import { PAGE_SCRIPT } from "./script.js";
import { forwardWords, linkStateOf, linkWords, SCRIPT_WORDS } from "./wording.js";

/** The script with the page's words (wording.ts) in place of its `__PAGE_WORDS__` placeholder (not an environment variable); `<` escaped so the JSON cannot end the script element. */
const SCRIPT = PAGE_SCRIPT.replace("__PAGE_WORDS__", JSON.stringify(SCRIPT_WORDS).replaceAll("<", "\\u003c"));

/** The pages' style sheet (the responder page; the inbox adds its own rules after it). */
export const PAGE_STYLE = `
:root { color-scheme: light dark; --fg: #1b1b1f; --bg: #ffffff; --muted: #4a4a55; --line: #8a8a99; --accent: #0b57d0; --bad: #b3261e; --good: #146c2e; }
@media (prefers-color-scheme: dark) { :root { --fg: #ececf1; --bg: #16161a; --muted: #c4c4cf; --line: #8a8a99; --accent: #a8c7fa; --bad: #ffb4ab; --good: #8fd9a0; } }
* { box-sizing: border-box; }
body { margin: 0; font: 1rem/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
main { max-width: 40rem; margin: 0 auto; padding: 1.25rem 1rem 3rem; }
h1 { font-size: 1.5rem; line-height: 1.25; margin: 0.5rem 0 0.75rem; overflow-wrap: anywhere; }
.kicker { color: var(--muted); font-size: 0.875rem; margin: 0; overflow-wrap: anywhere; }
.intro { white-space: pre-line; overflow-wrap: anywhere; }
.field { border: 0; margin: 0 0 1.25rem; padding: 0; min-width: 0; }
label, legend { display: block; font-weight: 600; margin-bottom: 0.25rem; padding: 0; }
label.choice { display: inline-flex; align-items: center; gap: 0.4rem; font-weight: 400; margin-right: 1.25rem; min-height: 2.75rem; }
.help { color: var(--muted); font-size: 0.9rem; margin: 0 0 0.4rem; }
input[type=text], input[type=email], input[type=number], input[type=datetime-local], input[type=date], textarea, select {
  font: inherit; color: inherit; background: transparent; width: 100%; min-height: 2.75rem; padding: 0.5rem 0.6rem;
  border: 1px solid var(--line); border-radius: 0.375rem; }
input[type=radio], input[type=checkbox] { width: 1.25rem; height: 1.25rem; accent-color: var(--accent); }
.pair { display: flex; flex-wrap: wrap; gap: 0.5rem; }
.pair > * { flex: 1 1 10rem; }
.row { display: flex; flex-wrap: wrap; align-items: end; gap: 0.5rem; margin-bottom: 0.75rem; }
.row .item { flex: 1 1 14rem; border: 0; margin: 0; padding: 0; }
button { font: inherit; min-height: 2.75rem; padding: 0.5rem 1.25rem; border-radius: 0.375rem; border: 1px solid var(--accent); cursor: pointer; }
button[type=submit] { background: var(--accent); color: var(--bg); font-weight: 600; }
button.secondary { background: transparent; color: var(--accent); }
button:disabled { opacity: 0.6; cursor: not-allowed; }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
[aria-invalid=true] { border-color: var(--bad); }
.error { color: var(--bad); margin: 0.3rem 0 0; font-weight: 600; }
.outcome { margin: 1rem 0; padding: 0; font-weight: 600; }
.outcome.done { color: var(--good); }
.outcome.error { color: var(--bad); }
.notice { border-left: 4px solid var(--line); padding: 0.25rem 0 0.25rem 0.75rem; }
h2 { font-size: 1.15rem; margin: 2rem 0 0.5rem; }
.forward { border-top: 1px solid var(--line); margin-top: 2rem; }
.receipt textarea { font-family: ui-monospace, monospace; font-size: 0.8rem; overflow-wrap: anywhere; }
.facts dt { font-weight: 600; }
.facts dd { margin: 0 0 0.5rem; overflow-wrap: anywhere; }
a { color: var(--accent); }
footer { color: var(--muted); font-size: 0.8rem; margin-top: 2rem; }
`;

const FOOTER = "Answered through a single-use link: the link itself is the permission, so do not forward it.";
/** With the forward form (v0.4): the link is still not to be shared, but the form passes the question on. */
const FORWARD_FOOTER = "Answered through a single-use link: the link itself is the permission, so do not share it; to pass the question on, use “Send this to someone else”.";

/**
 * A whole page in the responder page's look (one inline style under `nonce`; the page script only
 * when `withScript`), with `footer` at the bottom when given and `style` after the page's own.
 * Shared by the responder page, the task page (src/web/task/) and the inbox (src/web/inbox/).
 */
export function pageShell(nonce: string, title: string, body: Html, opts: { withScript: boolean; footer?: Html; style?: string }): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
<title>${title}</title>
<style nonce="${nonce}">${raw(PAGE_STYLE)}${raw(opts.style ?? "")}</style>
</head>
<body>
<main>
${body}
${opts.footer ? html`<footer>${opts.footer}</footer>` : null}
</main>
${opts.withScript ? html`<script nonce="${nonce}">${raw(SCRIPT)}</script>` : null}
</body>
</html>
`.text;
}

const MARKED_NUMBER = new RegExp(`${NUMBER_MARK.open}([^${NUMBER_MARK.open}${NUMBER_MARK.close}]*)${NUMBER_MARK.close}`, "g");
const STRAY_MARK = new RegExp(`[${NUMBER_MARK.open}${NUMBER_MARK.close}]`, "g");

/** A Title or Intro whose numbers are marked (views/responder.ts) as plain text: the numbers as JavaScript prints them. */
export function unmarked(text: string): string {
  return text.replace(MARKED_NUMBER, "$1").replace(STRAY_MARK, "");
}

/**
 * A marked Title or Intro as HTML: each number a `<data class="num" value="25000">25000</data>`,
 * which the page script writes for the reader's locale with `Intl.NumberFormat` ("25.000" in
 * German); without the script it reads as JavaScript prints it.
 */
export function markedHtml(text: string): Html {
  const out: Html[] = [];
  let last = 0;
  for (const m of text.matchAll(MARKED_NUMBER)) {
    out.push(html`${text.slice(last, m.index).replace(STRAY_MARK, "")}`, html`<data class="num" value="${m[1]}">${m[1]}</data>`);
    last = m.index + m[0].length;
  }
  out.push(html`${text.slice(last).replace(STRAY_MARK, "")}`);
  return html`${out}`;
}

/** `footer` null: no footer (a page where nothing was or will be answered through this link). */
function documentShell(nonce: string, title: string, body: Html, withScript: boolean, footer: string | null = FOOTER): string {
  return pageShell(nonce, title, body, { withScript, footer: footer === null ? undefined : html`${footer}` });
}

/**
 * Refusals whose page keeps the single-use footer: a link that was answered (burned) or will be
 * (live, not open yet). An expired, replaced, passed-on, dead or unknown link answered nothing
 * (issue 38 defect 4), so its page has no "Answered through a single-use link…".
 */
const FOOTED = new Set(["link-burned", "slot-not-open"]);

export interface FormPage {
  /** Internal names (never shown to the responder; issue 19 item 4). */
  workflow: string;
  event: string;
  params: CompiledParam[];
  title: string | null;
  intro: string | null;
}

/** The forward form's inputs (v0.4): the link's token (its action is `{token}/forward`) and the form's CSRF token. */
export interface ForwardForm {
  token: string;
  csrf: string;
}

/**
 * Where the page script shows a completed answer's receipt (v0.4 "Receipts"): hidden until then;
 * the download link gets its `data:` URL from the script.
 */
const RECEIPT_SECTION = html`<section id="receipt" class="receipt" aria-labelledby="receipt-title" hidden>
<h2 id="receipt-title">Your receipt</h2>
<p class="help">A signed proof of your answer: anyone can check it against this service's published keys. Keep it if you may need to show that you answered.</p>
<textarea id="receipt-text" rows="4" readonly aria-labelledby="receipt-title"></textarea>
<p><a id="receipt-download" download="receipt.jws">Download the receipt</a></p>
</section>`;

/**
 * "Send this to someone else" (v0.4): a plain HTML form that posts without JavaScript to
 * `{token}/forward` (relative to the page's URL), with the page's CSRF token (forward.ts checks it
 * and the origin).
 */
function forwardSection(f: ForwardForm): Html {
  return html`<section class="forward" aria-labelledby="forward-title">
<h2 id="forward-title">Send this to someone else</h2>
<p class="help">If someone else should answer, we email them a new link of their own; this link then stops working for you.</p>
<form id="forward" method="post" action="${encodeURIComponent(f.token)}/forward">
<input type="hidden" name="csrf" value="${f.csrf}">
<label for="forward-email">Their email address</label>
<input id="forward-email" name="email" type="email" autocomplete="email" maxlength="320" required>
<p><button type="submit" class="secondary">Send it to them</button></p>
</form>
</section>`;
}

/** A slot's heading: the author's `Title` (evaluated), else `Answer: <event>` — the responder page's and the inbox's. */
export function pageHeading(title: string | null, event: string): string {
  return title ?? `Answer: ${event}`;
}

/**
 * The page for a live link: what is asked, the form, the outcome region. The heading is the
 * author's `Title` (without one, `Answer: <event>`); the workflow's internal name is not shown
 * (issue 19 item 4: the header used to read "Workflow · Event").
 */
export function formDocument(nonce: string, page: FormPage, forward: ForwardForm | null = null): string {
  const title = pageHeading(page.title, page.event);
  const body = html`<h1>${markedHtml(title)}</h1>
${page.intro ? html`<p class="intro">${markedHtml(page.intro)}</p>` : null}
<form id="answer" novalidate>
<p id="check-fields" class="error" role="alert" hidden></p>
${page.params.map((p) => field(p))}
${page.params.length === 0 ? html`<p>Nothing to fill in: send to answer.</p>` : null}
<noscript><p class="notice">This page needs JavaScript to send your answer. Turn it on and reload, or ask whoever sent you this link for another way to answer.</p></noscript>
<button type="submit" disabled>Send answer</button>
</form>
<p id="outcome" class="outcome" role="status" aria-live="polite"></p>
${RECEIPT_SECTION}
${forward ? forwardSection(forward) : null}`;
  return documentShell(nonce, unmarked(title), body, true, forward ? FORWARD_FOOTER : FOOTER);
}

/**
 * The page the forward form (without JavaScript) answers when the forward is refused: the status is
 * the refusal's; what happened, in the page's words (wording.ts), and a way back to the link's page.
 */
export function forwardRefusedDocument(nonce: string, refusal: Refusal, token: string): string {
  const words = forwardWords(refusal);
  const body = html`<h1 id="forward-refused" data-refused="${refusal.code}">${words.title}</h1>
<p>${words.sentence}</p>
<p><a href="${encodeURIComponent(token)}">Back to the question</a></p>`;
  return documentShell(nonce, words.title, body, false);
}

/**
 * The page for a link that cannot be answered now; `refusal` is what the POST would answer (its
 * status is the page's), `expiredAt` the deadline of an expired link. The words are wording.ts's;
 * the refusal's API `detail` is not shown.
 */
export function endedDocument(nonce: string, refusal: Refusal, expiredAt: Date | null = null): string {
  const words = linkWords(linkStateOf(refusal), { expiredAt, reason: (refusal.extra as { reason?: string } | undefined)?.reason ?? null });
  const body = html`<h1 id="ended-title" data-ended="${refusal.code}">${words.title}</h1>
<p>${words.sentence}</p>
<p>${words.todo}</p>
<p id="outcome" class="outcome" role="status" aria-live="polite"></p>
${refusal.code === "link-burned" ? RECEIPT_SECTION : null}`;
  return documentShell(nonce, words.title, body, true, FOOTED.has(refusal.code) ? FOOTER : null);
}
