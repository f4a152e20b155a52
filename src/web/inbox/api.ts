/**
 * `GET /api/inbox?workflow=&order=newest|deadline&limit=&cursor=` (v0.4 "People inside the company";
 * docs/inbox.md): the signed-in principal's inbox as JSON,
 *
 *   {tasks: [{runId, workflow, version, state, alias, element, event, params: [{name, type, optional}],
 *             title, status, openedAt, deadline, waitingOn, taskUrl}],
 *    nextCursor, counts: {open, waiting, total, capped}}
 *
 * `title` is the heading the slot's page shows (the author's `Title`, else `Answer: <event>`);
 * `nextCursor` is null on the last page; `counts` are exact unless `capped` (docs/inbox.md).
 * Refusals: 401 unauthorized without a principal (session or bearer JWT; signed-in.ts), 400
 * invalid-query naming the parameter (a bad `cursor` included), 503 unavailable without PostgreSQL.
 */
import type { Context } from "koa";
import { inboxPage, parseInboxQuery, type InboxPage, type InboxTask } from "../../engine/views/inbox.js";
import { RefusalCode, RefusalError, refuse } from "../../engine/refusals.js";
import type { Runtime } from "../../runtime.js";
import { dependency } from "../dependency.js";
import { signedIn } from "../identity/signed-in.js";
import { pageHeading } from "../page/document.js";
import type { PrincipalClaims } from "../../engine/commands/types.js";

/** Reads the page the query asks for, as `who` (400 / 503 refusals as in the module header). */
export async function readInbox(rt: Runtime, ctx: Context, who: PrincipalClaims): Promise<InboxPage> {
  const filter = parseInboxQuery(ctx.query);
  return dependency(rt.log, "database", () => inboxPage({ db: rt.db, sealer: rt.sealer, baseUrl: rt.config.baseUrl }, who, filter));
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
  const page = await readInbox(rt, ctx, who.principal);
  ctx.set("Cache-Control", "no-store");
  ctx.body = { tasks: page.tasks.map(taskJson), nextCursor: page.nextCursor, counts: page.counts };
}
