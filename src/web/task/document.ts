/**
 * The task page's documents (v0.4 "People inside the company": `/inbox/tasks/{runId}/{alias}`):
 * the task with its form, the task closed (how it ended and who answered), the 403 page saying
 * why this principal may not answer, and the 404 page. Server-rendered HTML in the responder
 * page's look (page/document.ts `pageShell`) with no script at all: the form is a plain HTML form
 * post that works without JavaScript; its fields are the responder page's (page/form.ts, post
 * mode). Author text and anything read from a run enter only through the `html` tag (escaped).
 * Times are written in the reader's time zone (`Doc.reader.zone`: the signed-in person's, from
 * the issuer's `zoneinfo` claim) with the offset and the zone's name, else in UTC with the offset.
 */
import type { TaskView } from "../../engine/views/task.js";
import { DEVELOPMENT_BANNER_STYLE, developmentBanner, signOutForm, type SignedIn } from "../identity/signed-in.js";
import { formatDateIn, t, zoneOffset } from "../../i18n/index.js";
import { pageShell, timeHtml } from "../page/document.js";
import { answerHtml } from "../page/values.js";
import { field, type PostedForm } from "../page/form.js";
import { html, type Html } from "../page/html.js";
import type { Reader } from "../page/reader.js";

/** What every task document is written with: the response's CSP nonce and the reader (language, brand; issue 42). */
export interface Doc {
  nonce: string;
  reader: Reader;
  /** The page's `?lang=` when the reader gave one (kept by the link back to the inbox). */
  langParam?: string | null;
}

/** The principal as the page names it: its email, else its id. */
function nameOf(p: { id: string; email: string | null }): string {
  return p.email ?? p.id;
}

function footer(who: SignedIn, lang: string): Html {
  const name = nameOf(who.principal);
  const signed = who.principal.roles.length ? t(lang, "task.signedInAsRoles", { who: name, roles: who.principal.roles.join(", ") }) : t(lang, "task.signedInAs", { who: name });
  return html`${signed}${who.development ? html` <strong>${t(lang, "task.devSignIn")}</strong>` : null}`;
}

/**
 * The link back to the inbox that heads every task page (issue 43 item 4): a plain `<a>` (no
 * script, allowed by the pages' CSP), keeping the page's `?lang=` when the reader chose one.
 */
function backToInbox(doc: Doc): Html {
  const href = doc.langParam ? `/inbox?lang=${encodeURIComponent(doc.langParam)}` : "/inbox";
  return html`<nav class="back" aria-label="${t(doc.reader.lang, "task.backNav")}"><a id="back-to-inbox" href="${href}">${t(doc.reader.lang, "task.backToInbox")}</a></nav>`;
}

function shell(doc: Doc, who: SignedIn, title: string, body: Html): string {
  // the same banner as the inbox (identity/signed-in.ts): the development sign-in is marked on every page
  return pageShell(doc.nonce, title, html`${developmentBanner(who, doc.reader.lang)}${backToInbox(doc)}${body}${signOutForm(who, doc.reader.lang)}`, { reader: doc.reader, footer: footer(who, doc.reader.lang), style: DEVELOPMENT_BANNER_STYLE + BACK_STYLE });
}

const BACK_STYLE = `
nav.back { margin: 0 0 0.75rem; }
nav.back a { display: inline-block; min-height: 2.75rem; padding: 0.6rem 0; color: var(--accent); }
nav.back a:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
dl.answer { display: grid; grid-template-columns: max-content 1fr; gap: 0.15rem 0.75rem; margin: 0; }
dl.answer dt { color: var(--muted); }
dl.answer dd { margin: 0; overflow-wrap: anywhere; white-space: pre-wrap; }
dl.values, ul.values { margin: 0; padding-left: 1rem; }
`;

/**
 * "role staff, role boss or user alice" (the list joined by `Intl.ListFormat`); "anyone signed in"
 * for `anyone()` (and for a slot without `Candidates` in a version deployed before v0.5); without
 * `Candidates` since v0.5, "only the person its link was sent to" — in `lang`.
 */
export function candidatesText(c: TaskView["candidates"], access: TaskView["access"] = "candidates", lang = "en"): string {
  if (access === "link-only") return t(lang, "task.linkOnly");
  if (!c || c.anyone) return t(lang, "task.anyoneSignedIn");
  const all = [...c.roles.map((role) => t(lang, "task.role", { role })), ...c.users.map((user) => t(lang, "task.user", { user }))];
  if (all.length === 0) return t(lang, "task.nobody");
  return new Intl.ListFormat(lang === "en" ? "en-GB" : lang, { type: "disjunction" }).format(all);
}

/**
 * How a closed task ended, in one sentence in `lang` (who answered, with "you" for this principal);
 * when, in the reader's time zone `zone` (null: UTC), with the offset written.
 */
export function endedText(view: TaskView, who: SignedIn, lang = "en", zone: string | null = null): string {
  const s = view.slot;
  const at = s.closedAt ? t(lang, "task.at", { date: formatDateIn(lang, s.closedAt, zone) }) : "";
  switch (s.status) {
    case "completed": {
      const a = s.answeredBy;
      if (!a) return t(lang, "task.answered", { at });
      if (a.via === "link") return t(lang, "task.answeredLink", { at });
      if (a.via === "call") return t(lang, "task.answeredCall", { at });
      const by = a.id === who.principal.id ? t(lang, "task.you") : nameOf(a);
      return t(lang, a.via === "slack" ? "task.answeredSlack" : "task.answeredBy", { by, at });
    }
    case "expired":
      return t(lang, "task.expired", { at });
    case "dropped":
      return t(lang, "task.dropped", { at });
    case "cancelled":
      return t(lang, "task.cancelled", { at });
    default:
      return view.run.status === "running" ? t(lang, "task.noLongerAsked") : t(lang, view.run.status === "cancelled" ? "task.runCancelled" : "task.runFinished");
  }
}

/** The task's heading in `lang`: the author's `Title` variant for it, else the default `Title`, else `Answer: <event>`. */
function heading(view: TaskView, lang: string): string {
  return view.titles[lang] ?? view.title ?? t(lang, "page.answerHeading", { event: view.slot.event });
}

/** The task's `Intro` in `lang` (its variant, else the default wording), or null. */
function introOf(view: TaskView, lang: string): string | null {
  return view.intros[lang] ?? view.intro;
}

function kicker(view: TaskView): Html {
  const el = view.slot.element === null ? "" : ` [${view.slot.element}]`;
  return html`<p class="kicker">${view.run.workflow} · ${view.slot.alias}${el}</p>`;
}

function facts(view: TaskView, lang: string, zone: string | null): Html {
  const s = view.slot;
  return html`<dl class="facts">
<dt>${t(lang, "task.whoMayAnswer")}</dt><dd id="candidates">${candidatesText(view.candidates, view.access, lang)}</dd>
${s.openedAt ? html`<dt>${t(lang, "task.waitingSince")}</dt><dd>${timeHtml(s.openedAt, lang, zone)}</dd>` : null}
${s.deadline ? html`<dt>${t(lang, "task.deadline")}</dt><dd>${timeHtml(s.deadline, lang, zone)}</dd>` : null}
</dl>`;
}

export interface TaskFormState {
  /** The CSRF token of the session ("" for a bearer client, which needs none). */
  csrf: string;
  /** The form's action: this page's path and query. */
  action: string;
  /** A posted form shown again (values, refusals beside fields, list rows). */
  post: PostedForm;
  /** A refusal not tied to one field (a `Requires` refusal in its `else` words, …). */
  message: string | null;
}

/** The task page: with the form when the slot is open, else how it stands or how it ended. */
export function taskDocument(doc: Doc, who: SignedIn, view: TaskView, form: TaskFormState, notice: string | null = null): string {
  const lang = doc.reader.lang;
  const title = heading(view, lang);
  let main: Html;
  if (view.live && view.slot.status === "open") {
    const fieldErrors = Object.keys(form.post.errors).length > 0;
    // a datetime's offset selector starts on the person's zone's offset now (UTC without a zone)
    const offset = zoneOffset(doc.reader.zone, new Date());
    main = html`${form.message || fieldErrors ? html`<p class="outcome error" id="outcome" role="alert">${form.message ?? t(lang, "field.checkFields")}</p>` : null}
<form id="answer" method="post" action="${form.action}" novalidate>
<input type="hidden" name="csrf" value="${form.csrf}">
${view.params.map((p) => field(p, form.post, lang, offset))}
${view.params.length === 0 ? html`<p>${t(lang, "page.nothingToFill")}</p>` : null}
<button type="submit">${t(lang, "page.send")}</button>
</form>`;
  } else if (view.live) {
    main = html`<p class="notice" id="outcome" role="status">${t(lang, "task.notOpen")}</p>`;
  } else {
    main = html`<p class="outcome${view.slot.status === "completed" ? " done" : ""}" id="outcome" role="status" data-status="${view.slot.status}">${notice ? html`${notice} ` : null}${endedText(view, who, lang, doc.reader.zone)}</p>
${view.slot.status === "completed" && view.slot.answer ? html`<section aria-labelledby="answer-heading"><h2 id="answer-heading">${t(lang, "task.whatWasAnswered")}</h2>${answerHtml(view.params, view.slot.answer, lang, "answer", doc.reader.zone)}</section>` : null}`;
  }
  const body = html`${kicker(view)}
<h1>${title}</h1>
${introOf(view, lang) ? html`<p class="intro">${introOf(view, lang)}</p>` : null}
${facts(view, lang, doc.reader.zone)}
${main}`;
  return shell(doc, who, title, body);
}

/** The page after a 202: the answer is recorded and being applied. */
export function acceptedDocument(doc: Doc, who: SignedIn, view: TaskView, action: string): string {
  const lang = doc.reader.lang;
  const title = heading(view, lang);
  return shell(doc, who, title, html`${kicker(view)}
<h1>${title}</h1>
<p class="outcome done" id="outcome" role="status">${t(lang, "task.accepted")} <a href="${action}">${t(lang, "task.seeHow")}</a>.</p>`);
}

/**
 * The 403 page: why this principal may not answer (`Candidates`, a link-only slot, `[Authorize]`),
 * a CSRF or origin refusal. It never shows the task's Title, Intro or answerer (issue 38 L1): only
 * the workflow, the slot's alias and who may answer.
 */
export function refusedDocument(doc: Doc, who: SignedIn, view: TaskView | null, why: "not-a-candidate" | "authorize-denied" | "csrf" | "origin"): string {
  const lang = doc.reader.lang;
  const me = nameOf(who.principal);
  const roles = who.principal.roles.length ? t(lang, "task.yourRoles", { roles: who.principal.roles.join(", ") }) : t(lang, "task.noRole");
  const sentence = {
    "not-a-candidate": () => t(lang, "task.notCandidate", { candidates: candidatesText(view?.candidates ?? null, view?.access ?? "candidates", lang), me, roles }),
    "authorize-denied": () => t(lang, "task.authorizeDenied", { event: view?.slot.event ?? "", me, roles }),
    csrf: () => t(lang, "task.csrf"),
    origin: () => t(lang, "task.origin"),
  }[why]();
  const title = why === "csrf" || why === "origin" ? t(lang, "task.refused") : t(lang, "task.cannotAnswer");
  const body = html`${view ? kicker(view) : null}
<h1 data-refused="${why}">${title}</h1>
<p id="why">${sentence}</p>
<p>${t(lang, "task.askOwner")}</p>`;
  return shell(doc, who, title, body);
}

/** The 404 page: no such run, task or element. */
export function notFoundDocument(doc: Doc, who: SignedIn): string {
  const lang = doc.reader.lang;
  return shell(doc, who, t(lang, "task.noSuchTask"), html`<h1>${t(lang, "task.noSuchTask")}</h1>
<p>${t(lang, "task.noSuchTaskText")}</p>
<p><a href="/inbox">${t(lang, "task.yourInbox")}</a></p>`);
}
