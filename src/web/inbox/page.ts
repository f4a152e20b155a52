/**
 * `GET /inbox?workflow=&order=newest|deadline&cursor=&view=open|done` (v0.4 "People inside the
 * company"; docs/inbox.md): the signed-in principal's inbox as a server-rendered page — no script at all,
 * so it works without JavaScript; every control is a link or a native form control (keyboard
 * order follows the page). Not signed in: 303 to `/auth/login?returnTo=…` (signedInPage).
 *
 * Per task: the slot's heading (a link to its task page), the workflow, the run's state, since
 * when it waits, its deadline as a date and a countdown (computed when the page is rendered), and
 * whether it is open or waits on which predecessors. Above the list: the filter form (GET, so the
 * filter and order live in the URL), the counts; below: the next page link.
 *
 * `view=done` (v0.5, issue 43 item 4): what this principal answered in the last 30 days, newest
 * first — per answer its heading (a link to its task page), workflow, when, and the values
 * answered (page/values.ts); the same parameters and refusals as `GET /api/inbox?view=done`.
 * Both views are linked above the list ("To do", "Done").
 *
 * Times (since, deadline, answered at, datetime values) are `<time datetime>` elements written in
 * the signed-in person's time zone with the offset and the zone's name (their session's, from the
 * issuer's `zoneinfo` claim), else in UTC with the offset written — no script rewrites them.
 *
 * Headers: a CSP with `default-src 'none'`, the one inline style under a fresh nonce,
 * `form-action 'self'` (the filter form), no script; `Cache-Control: no-store` (the page is
 * personal); `Referrer-Policy: same-origin`; no token is ever written into the page.
 * A bad query answers 400 as a page that says which parameter, with a link to the plain inbox.
 */
import { randomBytes } from "node:crypto";
import type { Context } from "koa";
import { INBOX_ORDERS, inboxWorkflows, type InboxDonePage, type InboxDoneTask, type InboxPage, type InboxTask } from "../../engine/views/inbox.js";
import { RefusalError } from "../../engine/refusals.js";
import type { Runtime } from "../../runtime.js";
import { ago, countdown } from "../console/time.js";
import { dependency } from "../../engine-client/dependency.js";
import { DEVELOPMENT_BANNER_STYLE, developmentBanner, signedInPage, signOutForm, type SignedIn } from "../identity/signed-in.js";
import { pageHeading, pageShell } from "../page/document.js";
import { setScriptlessPageHeaders } from "../page/headers.js";
import { html, raw, type Html } from "../page/html.js";
import { formatDateIn, t as tr } from "../../i18n/index.js";
import { readerOf, type Reader } from "../page/reader.js";
import { readInbox, type InboxRead } from "./api.js";
import { answerHtml } from "../page/values.js";

const INBOX_STYLE = `
main { max-width: 56rem; }
.who { color: var(--muted); margin: 0 0 1rem; overflow-wrap: anywhere; }
form.filters { display: flex; flex-wrap: wrap; align-items: end; gap: 0.75rem; margin: 0 0 1rem; }
form.filters > div { flex: 1 1 12rem; }
form.filters button { background: var(--accent); color: var(--bg); font-weight: 600; }
.counts { font-weight: 600; }
ol.tasks { list-style: none; margin: 0; padding: 0; }
ol.tasks > li { border-top: 1px solid var(--line); padding: 0.75rem 0; }
ol.tasks h2 { font-size: 1.125rem; margin: 0 0 0.35rem; overflow-wrap: anywhere; }
a { color: var(--accent); }
a:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.15rem 0.75rem; margin: 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.pages { display: flex; gap: 1.5rem; margin-top: 1.25rem; }
.pages a { display: inline-block; min-height: 2.75rem; padding: 0.6rem 0; }
nav.views { display: flex; gap: 1.5rem; margin: 0 0 1rem; }
nav.views a { display: inline-block; min-height: 2.75rem; padding: 0.6rem 0; }
nav.views a[aria-current="page"] { font-weight: 700; color: var(--fg); text-decoration: none; }
dl.answer { display: grid; grid-template-columns: max-content 1fr; gap: 0.15rem 0.75rem; margin: 0.35rem 0 0; }
dl.answer dt { color: var(--muted); }
dl.answer dd { margin: 0; overflow-wrap: anywhere; white-space: pre-wrap; }
dl.values, ul.values { margin: 0; padding-left: 1rem; }
`;

const ORDER_WORDS = { newest: "inbox.newest", deadline: "inbox.deadlineSoonest" } as const;


/**
 * The page around `body`, in the responder page's look (page/document.ts `pageShell`): the
 * development banner when `who` signed in through the development sign-in (v0.4: marked as such on
 * every page it signs into), and a sign-out form for a session.
 */
function shell(nonce: string, reader: Reader, title: string, body: Html, who: SignedIn | null): string {
  return pageShell(nonce, title, html`${developmentBanner(who, reader.lang)}${body}${signOutForm(who, reader.lang)}`, { reader, style: INBOX_STYLE + DEVELOPMENT_BANNER_STYLE });
}

/** `/inbox` with these parameters (empty ones left out). */
function inboxHref(params: Record<string, string | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  const s = q.toString();
  return s ? `/inbox?${s}` : "/inbox";
}

/**
 * A span from now as `lang` says it: English keeps the console's wording (`2 d 3 h ago`, `in 6 d
 * 23 h`); every other language `Intl.RelativeTimeFormat` in the largest whole unit (`vor 2 Tagen`,
 * `6日後`). `ms` is the instant minus now (negative: in the past).
 */
function relative(lang: string, ms: number): string {
  const s = Math.trunc(ms / 1000); // -0 stays -0: the past
  const abs = Math.abs(s);
  const [n, unit]: [number, Intl.RelativeTimeFormatUnit] = abs >= 86_400 ? [Math.trunc(s / 86_400), "day"] : abs >= 3600 ? [Math.trunc(s / 3600), "hour"] : abs >= 60 ? [Math.trunc(s / 60), "minute"] : [s, "second"];
  return new Intl.RelativeTimeFormat(lang, { numeric: "always" }).format(n, unit);
}

/** How long ago `then` was, in `lang` (see relative). */
function agoIn(lang: string, then: Date, now: Date): string {
  // always in the past: an instant a moment ahead of this clock is "0 seconds ago" (-0), never "in 0 seconds"
  return lang === "en" ? ago(then, now) : relative(lang, -Math.max(0, now.getTime() - then.getTime()));
}

/** When a deadline falls (or fell), in `lang` (see relative). */
function countdownIn(lang: string, deadline: Date, now: Date): string {
  return lang === "en" ? countdown(deadline, now) : relative(lang, deadline.getTime() - now.getTime());
}

/**
 * A time on the page: `<time datetime>` with the ISO instant, written in the reader's time zone
 * `zone` with the offset and the zone's name, else in UTC with the offset (interfaces.md "Answers
 * people can trust": insiders' pages write times in the reader's zone; src/i18n `formatDateIn`).
 */
function time(d: Date, lang: string, zone: string | null): Html {
  return html`<time datetime="${d.toISOString()}">${formatDateIn(lang, d, zone)}</time>`;
}

function taskItem(t: InboxTask, now: Date, lang: string, zone: string | null): Html {
  const url = new URL(t.taskUrl);
  const heading = pageHeading(t.titles[lang] ?? t.title, t.event, lang);
  const since = t.openedAt ?? t.listedAt;
  const status =
    t.status === "open"
      ? html`${tr(lang, "inbox.open")}`
      : t.waitingOn.length > 0
        ? html`${tr(lang, "inbox.waitingOn", { steps: new Intl.ListFormat(lang === "en" ? "en-GB" : lang, { style: "narrow", type: "unit" }).format(t.waitingOn) })}`
        : html`${tr(lang, "inbox.waiting")}`;
  return html`<li><article aria-labelledby="t-${t.runId}-${t.alias}-${t.element ?? ""}">
<h2 id="t-${t.runId}-${t.alias}-${t.element ?? ""}"><a href="${url.pathname + url.search}">${heading}</a></h2>
<dl class="facts">
<dt>${tr(lang, "inbox.workflow")}</dt><dd>${t.workflow}</dd>
<dt>${tr(lang, "inbox.runState")}</dt><dd>${t.state}</dd>
<dt>${tr(lang, "inbox.status")}</dt><dd>${status}</dd>
<dt>${tr(lang, t.status === "open" ? "inbox.openSince" : "inbox.listedSince")}</dt><dd>${time(since, lang, zone)} (${agoIn(lang, since, now)})</dd>
<dt>${tr(lang, "inbox.deadline")}</dt><dd>${t.deadline ? html`${time(t.deadline, lang, zone)} (${countdownIn(lang, t.deadline, now)})` : tr(lang, "inbox.none")}</dd>
</dl>
</article></li>`;
}

/** The two views, as plain links (issue 43 item 4): the tasks waiting, and the answers of the last 30 days. */
function viewsNav(lang: string, current: "open" | "done", kept: Record<string, string | null>): Html {
  const link = (v: "open" | "done", key: "inbox.toDo" | "inbox.done") =>
    html`<a href="${inboxHref({ ...kept, view: v === "done" ? "done" : null })}"${raw(v === current ? ' aria-current="page"' : "")}>${tr(lang, key)}</a>`;
  return html`<nav class="views" aria-label="${tr(lang, "inbox.views")}">${link("open", "inbox.toDo")}${link("done", "inbox.done")}</nav>`;
}

function doneItem(t: InboxDoneTask, now: Date, lang: string, zone: string | null): Html {
  const url = new URL(t.taskUrl);
  const id = `d-${t.runId}-${t.alias}-${t.element ?? ""}`;
  return html`<li><article aria-labelledby="${id}">
<h2 id="${id}"><a href="${url.pathname + url.search}">${pageHeading(t.titles[lang] ?? t.title, t.event, lang)}</a></h2>
<dl class="facts">
<dt>${tr(lang, "inbox.workflow")}</dt><dd>${t.workflow}</dd>
<dt>${tr(lang, "inbox.answeredAt")}</dt><dd>${time(t.answeredAt, lang, zone)} (${agoIn(lang, t.answeredAt, now)})</dd>
<dt>${tr(lang, "inbox.yourAnswer")}</dt><dd>${answerHtml(t.params, t.answer, lang, undefined, zone)}</dd>
</dl>
</article></li>`;
}

/** The done view (issue 43 item 4): what this principal answered in the last 30 days, newest first. */
function doneDocument(nonce: string, reader: Reader, signed: SignedIn, query: PageQuery, page: InboxDonePage): string {
  const lang = reader.lang;
  const now = new Date();
  const kept = { view: "done", workflow: query.workflow, limit: query.limit, lang: query.lang };
  const who = signed.principal.email ?? signed.principal.id;
  const body = html`<h1>${tr(lang, "inbox.doneTitle")}</h1>
<p class="who">${tr(lang, "task.signedInAs", { who })}</p>
${viewsNav(lang, "done", { workflow: query.workflow, limit: query.limit, lang: query.lang })}
${page.tasks.length > 0 ? html`<ol class="tasks" id="done" aria-label="${tr(lang, "inbox.doneTitle")}">${page.tasks.map((t) => doneItem(t, now, lang, reader.zone))}</ol>` : html`<p class="counts" id="counts">${query.cursor ? tr(lang, "inbox.noMore") : tr(lang, "inbox.doneEmpty")}</p>`}
<nav class="pages" aria-label="${tr(lang, "inbox.pages")}">
${query.cursor ? html`<a href="${inboxHref({ ...kept, cursor: null })}">${tr(lang, "inbox.firstPage")}</a>` : null}
${page.nextCursor ? html`<a href="${inboxHref({ ...kept, cursor: page.nextCursor })}" rel="next">${tr(lang, "inbox.nextPage")}</a>` : null}
</nav>`;
  return shell(nonce, reader, tr(lang, "inbox.doneTitle"), body, signed);
}

function countsLine(page: InboxPage, lang: string): Html {
  const c = page.counts;
  if (c.capped) return html`<p class="counts" id="counts">${tr(lang, "inbox.capped", { total: c.total })}</p>`;
  if (c.total === 0) return html`<p class="counts" id="counts">${tr(lang, "inbox.empty")}</p>`;
  return html`<p class="counts" id="counts">${tr(lang, "inbox.counts", { total: c.total, open: c.open, waiting: c.waiting })}</p>`;
}

interface PageQuery {
  workflow: string | null;
  order: string;
  cursor: string | null;
  /** `limit` as given (the page size; the API's parameter, kept by the page links). */
  limit: string | null;
  /** `lang` as given (the page's language, issue 42; kept by the page links and the filter form). */
  lang: string | null;
}

function inboxDocument(nonce: string, reader: Reader, signed: SignedIn, workflows: string[], query: PageQuery, page: InboxPage): string {
  const lang = reader.lang;
  const now = new Date();
  const kept = { workflow: query.workflow, order: query.order === "newest" ? null : query.order, limit: query.limit, lang: query.lang };
  const options = workflows.includes(query.workflow ?? "") || !query.workflow ? workflows : [query.workflow, ...workflows];
  const who = signed.principal.email ?? signed.principal.id;
  const body = html`<h1>${tr(lang, "inbox.title")}</h1>
<p class="who">${tr(lang, "task.signedInAs", { who })}</p>
${viewsNav(lang, "open", { workflow: query.workflow, limit: query.limit, lang: query.lang })}
<form class="filters" method="get" action="/inbox">
${query.limit ? html`<input type="hidden" name="limit" value="${query.limit}">` : null}
${query.lang ? html`<input type="hidden" name="lang" value="${query.lang}">` : null}
<div><label for="workflow">${tr(lang, "inbox.workflow")}</label>
<select id="workflow" name="workflow"><option value="">${tr(lang, "inbox.allWorkflows")}</option>${options.map((w) => html`<option value="${w}"${raw(w === query.workflow ? " selected" : "")}>${w}</option>`)}</select></div>
<div><label for="order">${tr(lang, "inbox.order")}</label>
<select id="order" name="order">${INBOX_ORDERS.map((o) => html`<option value="${o}"${raw(o === query.order ? " selected" : "")}>${tr(lang, ORDER_WORDS[o])}</option>`)}</select></div>
<button type="submit">${tr(lang, "inbox.show")}</button>
</form>
${countsLine(page, lang)}
${page.tasks.length > 0 ? html`<ol class="tasks" aria-labelledby="counts">${page.tasks.map((t) => taskItem(t, now, lang, reader.zone))}</ol>` : query.cursor ? html`<p>${tr(lang, "inbox.noMore")}</p>` : null}
<nav class="pages" aria-label="${tr(lang, "inbox.pages")}">
${query.cursor ? html`<a href="${inboxHref({ ...kept, cursor: null })}">${tr(lang, "inbox.firstPage")}</a>` : null}
${page.nextCursor ? html`<a href="${inboxHref({ ...kept, cursor: page.nextCursor })}" rel="next">${tr(lang, "inbox.nextPage")}</a>` : null}
</nav>`;
  return shell(nonce, reader, tr(lang, "inbox.title"), body, signed);
}

function problemDocument(nonce: string, reader: Reader, detail: string, who: SignedIn): string {
  const lang = reader.lang;
  return shell(nonce, reader, tr(lang, "inbox.badAddressTitle"), html`<h1>${tr(lang, "inbox.badAddressTitle")}</h1><p>${detail}</p><p><a href="/inbox">${tr(lang, "inbox.openInbox")}</a></p>`, who);
}

/** The handler of `GET /inbox` (see the module header). */
export async function inboxPageHandler(rt: Runtime, ctx: Context): Promise<void> {
  const who = await signedInPage(ctx, rt);
  if (!who) return;
  const nonce = randomBytes(16).toString("base64");
  setScriptlessPageHeaders(ctx, nonce, rt.config.brand.logoFile !== null);
  // times in the signed-in person's zone (their session's, from the issuer's zoneinfo claim)
  const reader: Reader = { ...readerOf(ctx, rt.config), zone: who.zone };
  ctx.type = "text/html; charset=utf-8";
  let page: InboxRead;
  try {
    page = await readInbox(rt, ctx, who.principal);
  } catch (err) {
    if (!(err instanceof RefusalError) || err.code !== "invalid-query") throw err;
    ctx.status = 400;
    ctx.body = problemDocument(nonce, reader, err.message, who);
    return;
  }
  const one = (k: string) => (typeof ctx.query[k] === "string" && ctx.query[k] !== "" ? (ctx.query[k] as string) : null);
  const query = { workflow: one("workflow"), order: one("order") ?? "newest", cursor: one("cursor"), limit: one("limit"), lang: one("lang") };
  ctx.status = 200;
  if (page.view === "done") {
    ctx.body = doneDocument(nonce, reader, who, query, page.page);
    return;
  }
  const workflows = await dependency(rt.log, "database", () => inboxWorkflows(rt.db));
  ctx.body = inboxDocument(nonce, reader, who, workflows, query, page.page);
}
