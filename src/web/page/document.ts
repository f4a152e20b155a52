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
import { rulesText } from "../../engine/values/rules.js";
import { BROWSER_DATE_OPTIONS, DAY_OPTIONS, formatDateIn, formatDateUtc, formatNumber, isRightToLeft, LANGUAGES, languageName, t, tParts, yesNo } from "../../i18n/index.js";
import { brandLogoPath } from "../brand-logo.js";
import { field, labelOf } from "./form.js";
import { html, Html, raw } from "./html.js";
import type { Reader } from "./reader.js";
import { PAGE_SCRIPT } from "./script.js";
import { forwardWords, linkStateOf, linkWords, scriptWords } from "./wording.js";

/**
 * The script with the page's words (wording.ts, in the reader's language, for the labels on the
 * page) in place of its `__PAGE_WORDS__` placeholder (not an environment variable); `<` escaped so
 * the JSON cannot end the script element.
 */
function pageScript(lang: string, params: CompiledParam[]): string {
  const labels = params.map((p) => labelOf(p));
  const rules = params.flatMap((p) => rulesText(p.rules));
  // English pages write dates the British way, as the server does (`28 November 2026 at 05:42 UTC`)
  const words = { ...scriptWords(lang, labels, rules), dateLocale: lang === "en" ? "en-GB" : lang, dateOptions: BROWSER_DATE_OPTIONS, dayOptions: DAY_OPTIONS };
  return PAGE_SCRIPT.replace("__PAGE_WORDS__", JSON.stringify(words).replaceAll("<", "\\u003c"));
}

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
label.choice { display: inline-flex; align-items: center; gap: 0.4rem; font-weight: 400; margin-inline-end: 1.25rem; min-height: 2.75rem; }
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
.notice { border-inline-start: 4px solid var(--line); padding-block: 0.25rem; padding-inline: 0.75rem 0; }
h2 { font-size: 1.15rem; margin: 2rem 0 0.5rem; }
.forward { border-top: 1px solid var(--line); margin-top: 2rem; }
.receipt textarea { font-family: ui-monospace, monospace; font-size: 0.8rem; overflow-wrap: anywhere; }
.facts dt { font-weight: 600; }
.facts dd { margin: 0 0 0.5rem; overflow-wrap: anywhere; }
a { color: var(--accent); }
footer { color: var(--muted); font-size: 0.8rem; margin-top: 2rem; }
.brand { display: flex; align-items: center; gap: 0.6rem; margin: 0 0 0.5rem; font-weight: 600; overflow-wrap: anywhere; }
.brand img { max-height: 2.5rem; max-width: 10rem; }
nav.languages ul { list-style: none; display: flex; flex-wrap: wrap; gap: 0.25rem 0.9rem; margin: 2rem 0 0; padding: 0; font-size: 0.875rem; }
nav.languages a { display: inline-block; min-height: 1.5rem; padding-block: 0.1rem; }
nav.languages a[aria-current] { font-weight: 700; color: var(--fg); }
time { unicode-bidi: isolate; }
`;

/** The organisation's name and logo at the top of every page (issue 42; empty without a brand). */
function brandHeader(reader: Reader): Html | null {
  const b = reader.brand;
  if (!b.name && !b.logoFile) return null;
  const logo = b.logoFile ? html`<img src="${brandLogoPath(b.logoFile)}" alt="${b.name ? "" : "Logo"}" height="40">` : null;
  return html`<header class="brand" id="brand">${logo}${b.name ? html`<span>${b.name}</span>` : null}</header>`;
}

/** Links to the same page in each language slotflow speaks (none when the slot's `Language` fixed it). */
function languageSwitcher(reader: Reader): Html | null {
  if (reader.fixed) return null;
  return html`<nav class="languages" aria-label="${t(reader.lang, "page.languages")}"><ul>${LANGUAGES.map(
    (l) => html`<li><a href="${reader.langHref(l)}" hreflang="${l}" lang="${l}"${l === reader.lang ? raw(' aria-current="true"') : null}>${languageName(l)}</a></li>`,
  )}</ul></nav>`;
}

/** The brand's accent (light scheme only: it was checked against the white page, config.ts). */
function accentStyle(reader: Reader): string {
  return reader.brand.color ? `:root { --accent: ${reader.brand.color}; } @media (prefers-color-scheme: dark) { :root { --accent: #a8c7fa; } }` : "";
}

/**
 * A whole page in the responder page's look (one inline style under `nonce`; the page script only
 * when `script` is given, with its words), with `footer` at the bottom when given and `style`
 * after the page's own. In the reader's language (`<html lang>`, `dir="rtl"` for Arabic), with
 * the brand at the top and the language switcher (issue 42).
 * Shared by the responder page, the task page (src/web/task/) and the inbox (src/web/inbox/).
 */
export function pageShell(nonce: string, title: string, body: Html, opts: { reader: Reader; script?: string; footer?: Html; style?: string }): string {
  const lang = opts.reader.lang;
  return html`<!doctype html>
<html lang="${lang}" dir="${isRightToLeft(lang) ? "rtl" : "ltr"}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
<title>${title}</title>
<style nonce="${nonce}">${raw(PAGE_STYLE)}${raw(accentStyle(opts.reader))}${raw(opts.style ?? "")}</style>
</head>
<body>
<main>
${brandHeader(opts.reader)}
${body}
${languageSwitcher(opts.reader)}
${opts.footer ? html`<footer>${opts.footer}</footer>` : null}
</main>
${opts.script ? html`<script nonce="${nonce}">${raw(opts.script)}</script>` : null}
</body>
</html>
`.text;
}

const MARKED = new RegExp(`${NUMBER_MARK.open}([^${NUMBER_MARK.open}${NUMBER_MARK.close}]*)${NUMBER_MARK.close}`, "g");
const STRAY_MARK = new RegExp(`[${NUMBER_MARK.open}${NUMBER_MARK.close}]`, "g");

/** One marked value (views/responder.ts) as text in `lang`: a number, `b:true` → Yes, `d:<ISO>` → the date in UTC with the offset written. */
function markedText(mark: string, lang: string): string {
  if (mark.startsWith("b:")) return yesNo(lang, mark === "b:true");
  if (mark.startsWith("d:")) {
    const d = new Date(mark.slice(2));
    return Number.isNaN(d.getTime()) ? mark.slice(2) : formatDateUtc(lang, d);
  }
  const n = Number(mark);
  return mark.trim() !== "" && Number.isFinite(n) ? formatNumber(lang, n) : mark;
}

/** A Title or Intro whose values are marked (views/responder.ts) as plain text in `lang` (the page's `<title>`, mails). */
export function unmarked(text: string, lang = "en"): string {
  return text.replace(MARKED, (_m, v: string) => markedText(v, lang)).replace(STRAY_MARK, "");
}

/**
 * A marked Title or Intro as HTML in the reader's language (issue 42): each number a
 * `<data class="num" value="25000">25.000</data>` written by `Intl.NumberFormat` for `lang`, each
 * bool the language's Yes/No, each datetime a `<time data-dt datetime="…">` in UTC with the offset
 * written, which the page script rewrites in the browser's time zone.
 */
export function markedHtml(text: string, lang = "en"): Html {
  const out: Html[] = [];
  let last = 0;
  for (const m of text.matchAll(MARKED)) {
    const v = m[1]!;
    out.push(html`${text.slice(last, m.index).replace(STRAY_MARK, "")}`);
    if (v.startsWith("d:")) out.push(html`<time data-dt datetime="${v.slice(2)}">${markedText(v, lang)}</time>`);
    else if (v.startsWith("b:")) out.push(html`${markedText(v, lang)}`);
    else out.push(html`<data class="num" value="${v}">${markedText(v, lang)}</data>`);
    last = m.index + m[0].length;
  }
  out.push(html`${text.slice(last).replace(STRAY_MARK, "")}`);
  return html`${out}`;
}

/**
 * A date in a sentence. Without `zone`: `<time data-dt>` in UTC with the offset written; the page
 * script (on a page that has one) writes it in the browser's time zone. With the reader's `zone`
 * (Reader.zone, the insiders' scriptless pages): `<time datetime>` written there by the server,
 * with the offset and the zone's name (src/i18n `formatDateIn`). `datetime` is the ISO instant.
 */
export function timeHtml(d: Date, lang: string, zone: string | null = null): Html {
  if (zone !== null) return html`<time datetime="${d.toISOString()}">${formatDateIn(lang, d, zone)}</time>`;
  return html`<time data-dt datetime="${d.toISOString()}">${formatDateUtc(lang, d)}</time>`;
}

/** A catalog message as HTML: its text escaped, Html values (a `<time>`, a link) inserted as they are (intl-messageformat's rich values). */
export function tHtml(lang: string, key: Parameters<typeof tParts>[1], values: Record<string, string | number | Html>): Html {
  return html`${tParts<Html>(lang, key, values).map((p) => (p instanceof Html ? p : html`${p}`))}`;
}

/** `footer` null: no footer (a page where nothing was or will be answered through this link). */
function documentShell(nonce: string, reader: Reader, title: string, body: Html, script: string | null, footer: "normal" | "forward" | null = "normal"): string {
  const words = footer === null ? undefined : html`${t(reader.lang, footer === "forward" ? "page.footerForward" : "page.footer")}`;
  return pageShell(nonce, title, body, { reader, script: script ?? undefined, footer: words });
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
  /** The author's variants by language (issue 42): the page shows the one for its language, else the default wording. */
  titles?: Record<string, string>;
  intros?: Record<string, string>;
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
function receiptSection(lang: string): Html {
  return html`<section id="receipt" class="receipt" aria-labelledby="receipt-title" hidden>
<h2 id="receipt-title">${t(lang, "receipt.title")}</h2>
<p class="help">${t(lang, "receipt.help")}</p>
<textarea id="receipt-text" rows="4" readonly aria-labelledby="receipt-title" dir="ltr"></textarea>
<p><a id="receipt-download" download="receipt.jws">${t(lang, "receipt.download")}</a></p>
</section>`;
}

/**
 * "Send this to someone else" (v0.4): a plain HTML form that posts without JavaScript to
 * `{token}/forward` (relative to the page's URL), with the page's CSRF token (forward.ts checks it
 * and the origin), and the page's language (`lang`), in which the forward mail is written.
 */
function forwardSection(f: ForwardForm, lang: string): Html {
  return html`<section class="forward" aria-labelledby="forward-title">
<h2 id="forward-title">${t(lang, "forward.title")}</h2>
<p class="help">${t(lang, "forward.help")}</p>
<form id="forward" method="post" action="${encodeURIComponent(f.token)}/forward">
<input type="hidden" name="csrf" value="${f.csrf}">
<input type="hidden" name="lang" value="${lang}">
<label for="forward-email">${t(lang, "forward.email")}</label>
<input id="forward-email" name="email" type="email" autocomplete="email" maxlength="320" required dir="ltr">
<p><button type="submit" class="secondary">${t(lang, "forward.send")}</button></p>
</form>
</section>`;
}

/** A slot's heading: the author's `Title` (evaluated), else `Answer: <event>` — the responder page's and the inbox's. */
export function pageHeading(title: string | null, event: string, lang = "en"): string {
  return title ?? t(lang, "page.answerHeading", { event });
}

/** "Asked by <brand>" above the question (issue 42: the responder page says who is asking). */
function askedBy(reader: Reader): Html | null {
  return reader.brand.name ? html`<p class="kicker" id="asked-by">${t(reader.lang, "page.askedBy", { brand: reader.brand.name })}</p>` : null;
}

/**
 * The page for a live link: what is asked, the form, the outcome region. The heading is the
 * author's `Title` (without one, `Answer: <event>`); the workflow's internal name is not shown
 * (issue 19 item 4: the header used to read "Workflow · Event"). In the reader's language.
 */
export function formDocument(nonce: string, page: FormPage, forward: ForwardForm | null, reader: Reader): string {
  const lang = reader.lang;
  const title = pageHeading(page.titles?.[lang] ?? page.title, page.event, lang);
  const intro = page.intros?.[lang] ?? page.intro;
  const body = html`${askedBy(reader)}<h1>${markedHtml(title, lang)}</h1>
${intro ? html`<p class="intro">${markedHtml(intro, lang)}</p>` : null}
<form id="answer" novalidate>
<p id="check-fields" class="error" role="alert" hidden></p>
${page.params.map((p) => field(p, undefined, lang))}
${page.params.length === 0 ? html`<p>${t(lang, "page.nothingToFill")}</p>` : null}
<noscript><p class="notice">${t(lang, "page.needsScript")}</p></noscript>
<button type="submit" disabled>${t(lang, "page.send")}</button>
</form>
<p id="outcome" class="outcome" role="status" aria-live="polite"></p>
${receiptSection(lang)}
${forward ? forwardSection(forward, lang) : null}`;
  return documentShell(nonce, reader, unmarked(title, lang), body, pageScript(lang, page.params), forward !== null ? "forward" : "normal");
}

/**
 * The page the forward form (without JavaScript) answers when the forward is refused: the status is
 * the refusal's; what happened, in the page's words (wording.ts), and a way back to the link's page.
 */
export function forwardRefusedDocument(nonce: string, refusal: Refusal, token: string, reader: Reader): string {
  const words = forwardWords(refusal, reader.lang);
  const body = html`<h1 id="forward-refused" data-refused="${refusal.code}">${words.title}</h1>
<p>${words.sentence}</p>
<p><a href="${encodeURIComponent(token)}?lang=${reader.lang}">${t(reader.lang, "forward.back")}</a></p>`;
  return documentShell(nonce, reader, words.title, body, null);
}

/**
 * The page for a link that cannot be answered now; `refusal` is what the POST would answer (its
 * status is the page's), `expiredAt` the deadline of an expired link. The words are wording.ts's,
 * in the reader's language; the refusal's API `detail` is not shown.
 */
export function endedDocument(nonce: string, refusal: Refusal, expiredAt: Date | null, reader: Reader): string {
  const lang = reader.lang;
  const state = linkStateOf(refusal);
  const words = linkWords(state, { expiredAt, reason: (refusal.extra as { reason?: string } | undefined)?.reason ?? null }, lang);
  const sentence = state === "expired" && expiredAt ? tHtml(lang, "link.expired.sentenceAt", { date: timeHtml(expiredAt, lang) }) : html`${words.sentence}`;
  const body = html`<h1 id="ended-title" data-ended="${refusal.code}">${words.title}</h1>
<p>${sentence}</p>
<p>${words.todo}</p>
<p id="outcome" class="outcome" role="status" aria-live="polite"></p>
${refusal.code === "link-burned" ? receiptSection(lang) : null}`;
  return documentShell(nonce, reader, words.title, body, pageScript(lang, []), FOOTED.has(refusal.code) ? "normal" : null);
}
