/**
 * `GET /api/inbox?workflow=&order=newest|deadline&limit=&cursor=&view=open|done` (v0.4 "People
 * inside the company"; docs/inbox.md): the signed-in principal's inbox as JSON,
 *
 *   {tasks: [{runId, workflow, version, state, alias, element, event, params: [{name, type, optional}],
 *             title, status, openedAt, deadline, waitingOn, taskUrl}],
 *    nextCursor, counts: {open, waiting, total, capped}}
 *
 * `title` is the heading the slot's page shows (the author's `Title`, else `Answer: <event>`);
 * `nextCursor` is null on the last page; `counts` are exact unless `capped` (docs/inbox.md).
 * With `view=done` (v0.5, issue 43 item 4): the slots this principal answered in the last 30 days,
 * newest first, `{tasks: [{runId, workflow, version, state, alias, element, event, title, status:
 * "completed", answeredAt, answer, taskUrl}], nextCursor}` — `answer` the values answered (JSON).
 * Refusals: 401 unauthorized without a principal (session or bearer JWT; signed-in.ts), 400
 * invalid-query naming the parameter (a bad `cursor` included), 503 unavailable without PostgreSQL.
 */
import type { Context } from "koa";
import { inboxDonePage, inboxPage, parseInboxQuery, type InboxDonePage, type InboxDoneTask, type InboxPage, type InboxTask } from "../../engine/views/inbox.js";
import { RefusalCode, RefusalError, refuse } from "../../engine/refusals.js";
import type { Runtime } from "../../runtime.js";
import { dependency } from "../../engine-client/dependency.js";
import { signedIn } from "../identity/signed-in.js";
import { pageHeading } from "../page/document.js";
import type { PrincipalClaims } from "../../engine/commands/types.js";

/** The page the query asks for: the tasks waiting (`view` open) or the answers given lately (`view` done). */
export type InboxRead = { view: "open"; page: InboxPage } | { view: "done"; page: InboxDonePage };

/** Reads the page the query asks for, as `who` (400 / 503 refusals as in the module header). */
export async function readInbox(rt: Runtime, ctx: Context, who: PrincipalClaims): Promise<InboxRead> {
  const filter = parseInboxQuery(ctx.query);
  const deps = { db: rt.db, sealer: rt.sealer, baseUrl: rt.config.baseUrl };
  if (filter.view === "done") return { view: "done", page: await dependency(rt.log, "database", () => inboxDonePage(deps, who, filter)) };
  return { view: "open", page: await dependency(rt.log, "database", () => inboxPage(deps, who, filter)) };
}

/** An answered task as the API shows it (`?view=done`, issue 43 item 4). */
function doneJson(t: InboxDoneTask) {
  return {
    runId: t.runId,
    workflow: t.workflow,
    version: t.version,
    state: t.state,
    alias: t.alias,
    element: t.element,
    event: t.event,
    title: pageHeading(t.title, t.event),
    status: "completed",
    answeredAt: t.answeredAt,
    answer: t.answer,
    taskUrl: t.taskUrl,
  };
}

/** A task as the API shows it (the contract's members, in its order). */
function taskJson(t: InboxTask) {
  return {
    runId: t.runId,
    workflow: t.workflow,
    version: t.version,
    state: t.state,
    alias: t.alias,
    element: t.element,
    event: t.event,
    params: t.params,
    title: pageHeading(t.title, t.event),
    status: t.status,
    openedAt: t.openedAt,
    deadline: t.deadline,
    waitingOn: t.waitingOn,
    taskUrl: t.taskUrl,
  };
}

/** The handler of `GET /api/inbox`. */
export async function inboxApi(rt: Runtime, ctx: Context): Promise<void> {
  const who = await signedIn(ctx, rt);
  if (!who) throw new RefusalError(refuse(RefusalCode.Unauthorized, "Sign in: send a principal's bearer JWT (or the session cookie)."));
  const read = await readInbox(rt, ctx, who.principal);
  ctx.set("Cache-Control", "no-store");
  if (read.view === "done") ctx.body = { tasks: read.page.tasks.map(doneJson), nextCursor: read.page.nextCursor };
  else ctx.body = { tasks: read.page.tasks.map(taskJson), nextCursor: read.page.nextCursor, counts: read.page.counts };
}
