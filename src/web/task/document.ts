/**
 * The task page's documents (v0.4 "People inside the company": `/inbox/tasks/{runId}/{alias}`):
 * the task with its form, the task closed (how it ended and who answered), the 403 page saying
 * why this principal may not answer, and the 404 page. Server-rendered HTML in the responder
 * page's look (page/document.ts `pageShell`) with no script at all: the form is a plain HTML form
 * post that works without JavaScript; its fields are the responder page's (page/form.ts, post
 * mode). Author text and anything read from a run enter only through the `html` tag (escaped).
 */
import type { TaskView } from "../../engine/views/task.js";
import { DEVELOPMENT_BANNER_STYLE, developmentBanner, signOutForm, type SignedIn } from "../identity/signed-in.js";
import { pageShell } from "../page/document.js";
import { field, type PostedForm } from "../page/form.js";
import { html, type Html } from "../page/html.js";
import { plainDate } from "../page/wording.js";

/** The principal as the page names it: its email, else its id. */
function nameOf(p: { id: string; email: string | null }): string {
  return p.email ?? p.id;
}

function footer(who: SignedIn): Html {
  return html`Signed in as ${nameOf(who.principal)}${who.principal.roles.length ? ` (roles: ${who.principal.roles.join(", ")})` : ""}.${
    who.development ? html` <strong>Development sign-in: not for real answers.</strong>` : null
  }`;
}

function shell(nonce: string, who: SignedIn, title: string, body: Html): string {
  // the same banner as the inbox (identity/signed-in.ts): the development sign-in is marked on every page
  return pageShell(nonce, title, html`${developmentBanner(who)}${body}${signOutForm(who)}`, { withScript: false, footer: footer(who), style: DEVELOPMENT_BANNER_STYLE });
}

/**
 * "anyone with the role “staff”, … or user “alice”"; "anyone signed in" for `anyone()` (and for a
 * slot without `Candidates` in a version deployed before v0.5); without `Candidates` since v0.5,
 * "only the holder of its link" (issue 38 M2).
 */
export function candidatesText(c: TaskView["candidates"], access: TaskView["access"] = "candidates"): string {
  if (access === "link-only") return "only the person its link was sent to (through the link), never someone signed in";
  if (!c || c.anyone) return "anyone signed in";
  const all = [...c.roles.map((r) => `anyone with the role “${r}”`), ...c.users.map((u) => `user “${u}”`)];
  if (all.length === 0) return "nobody (the list of candidates is empty)";
  return all.length === 1 ? all[0]! : `${all.slice(0, -1).join(", ")} or ${all[all.length - 1]}`;
}

/** How a closed task ended, in one sentence (who answered, with "you" for this principal). */
export function endedText(view: TaskView, who: SignedIn): string {
  const s = view.slot;
  const at = s.closedAt ? ` at ${plainDate(s.closedAt)}` : "";
  switch (s.status) {
    case "completed": {
      const a = s.answeredBy;
      if (!a) return `Answered${at}.`;
      if (a.via === "link") return `Answered through its link${at}.`;
      if (a.via === "call") return `Answered by its callee${at}.`;
      const by = a.id === who.principal.id ? "you" : nameOf(a);
      return a.via === "slack" ? `Answered in Slack by ${by}${at}.` : `Answered by ${by}${at}.`;
    }
    case "expired":
      return `The time to answer ran out${at}.`;
    case "dropped":
      return `The question was withdrawn${at}.`;
    case "cancelled":
      return `The workflow moved on without an answer${at}.`;
    default:
      return view.run.status === "running" ? "This task is no longer asked." : `The run has ${view.run.status === "cancelled" ? "been cancelled" : "finished"}.`;
  }
}

function heading(view: TaskView): string {
  return view.title ?? `Answer: ${view.slot.event}`;
}

function kicker(view: TaskView): Html {
  const el = view.slot.element === null ? "" : ` [${view.slot.element}]`;
  return html`<p class="kicker">${view.run.workflow} · ${view.slot.alias}${el}</p>`;
}

function facts(view: TaskView): Html {
  const s = view.slot;
  return html`<dl class="facts">
<dt>Who may answer</dt><dd id="candidates">${candidatesText(view.candidates, view.access)}</dd>
${s.openedAt ? html`<dt>Waiting since</dt><dd><time datetime="${s.openedAt.toISOString()}">${plainDate(s.openedAt)}</time></dd>` : null}
${s.deadline ? html`<dt>Deadline</dt><dd><time datetime="${s.deadline.toISOString()}">${plainDate(s.deadline)}</time></dd>` : null}
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
export function taskDocument(nonce: string, who: SignedIn, view: TaskView, form: TaskFormState, notice: string | null = null): string {
  const title = heading(view);
  let main: Html;
  if (view.live && view.slot.status === "open") {
    const fieldErrors = Object.keys(form.post.errors).length > 0;
    main = html`${form.message || fieldErrors ? html`<p class="outcome error" id="outcome" role="alert">${form.message ?? "Please check the fields marked below."}</p>` : null}
<form id="answer" method="post" action="${form.action}" novalidate>
<input type="hidden" name="csrf" value="${form.csrf}">
${view.params.map((p) => field(p, form.post))}
${view.params.length === 0 ? html`<p>Nothing to fill in: send to answer.</p>` : null}
<button type="submit">Send answer</button>
</form>`;
  } else if (view.live) {
    main = html`<p class="notice" id="outcome" role="status">Not open yet: this task opens once earlier steps are done. Come back later.</p>`;
  } else {
    main = html`<p class="outcome${view.slot.status === "completed" ? " done" : ""}" id="outcome" role="status" data-status="${view.slot.status}">${notice ? html`${notice} ` : null}${endedText(view, who)}</p>`;
  }
  const body = html`${kicker(view)}
<h1>${title}</h1>
${view.intro ? html`<p class="intro">${view.intro}</p>` : null}
${facts(view)}
${main}`;
  return shell(nonce, who, title, body);
}

/** The page after a 202: the answer is recorded and being applied. */
export function acceptedDocument(nonce: string, who: SignedIn, view: TaskView, action: string): string {
  const title = heading(view);
  return shell(nonce, who, title, html`${kicker(view)}
<h1>${title}</h1>
<p class="outcome done" id="outcome" role="status">Accepted — your answer was received and is being applied. <a href="${action}">See how the task stands</a>.</p>`);
}

/**
 * The 403 page: why this principal may not answer (`Candidates`, a link-only slot, `[Authorize]`),
 * a CSRF or origin refusal. It never shows the task's Title, Intro or answerer (issue 38 L1): only
 * the workflow, the slot's alias and who may answer.
 */
export function refusedDocument(nonce: string, who: SignedIn, view: TaskView | null, why: "not-a-candidate" | "authorize-denied" | "csrf" | "origin"): string {
  const me = nameOf(who.principal);
  const roles = who.principal.roles.length ? `your roles: ${who.principal.roles.join(", ")}` : "you hold no role";
  const sentence = {
    "not-a-candidate": `This task may be answered by ${candidatesText(view?.candidates ?? null, view?.access ?? "candidates")}; you are signed in as ${me} (${roles}).`,
    "authorize-denied": `The workflow allows this answer only to some people (an [Authorize] rule of its event${view ? ` ${view.slot.event}` : ""}), and you, ${me} (${roles}), are not one of them.`,
    csrf: "The form's CSRF token is missing or wrong: reload the task page and send the form again.",
    origin: "This form was sent from another site: open the task page and answer there.",
  }[why];
  const title = why === "csrf" || why === "origin" ? "Refused" : "You cannot answer this task";
  const body = html`${view ? kicker(view) : null}
<h1 data-refused="${why}">${title}</h1>
<p id="why">${sentence}</p>
<p>If you think that is wrong, ask the workflow's owner.</p>`;
  return shell(nonce, who, title, body);
}

/** The 404 page: no such run, task or element. */
export function notFoundDocument(nonce: string, who: SignedIn): string {
  return shell(nonce, who, "No such task", html`<h1>No such task</h1>
<p>No task matches this address: the run or its task is unknown. Check the address, or open your inbox.</p>
<p><a href="/inbox">Your inbox</a></p>`);
}
