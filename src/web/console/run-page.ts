/**
 * A run's console page, `GET /console/runs/{id}` (issue 23), top to bottom:
 * 1. "Waiting on": each open or waiting slot — its event and the event's parameters, since when it
 *    waits (its opening time and how long ago; "not open yet" while waiting on `After`; issue 23),
 *    the deadline as a date and a countdown, the `After` predecessors and whether each is done,
 *    `Requires` and `Candidates` as written in the source, the link's status (live/burned/retired/
 *    dead/none, never the token) — and what unblocks it: the operator's "Revoke link" (with a
 *    reason) and the answer paths; then the state's pending timers (`after 5d`, `every 1d`), each
 *    with its next firing as a date and a countdown and where it may move the run (issue 30 item
 *    2); the timers on its slots (`after`/`every` inside a `subscribe` or `call` block): per open
 *    slot (element) the alias (`sigs[1]`), the timer as written and its next firing; then "Cancel
 *    run" (with a reason). A viewer sees the same without the forms.
 * 1b. "Responders" (v0.4 Many responders, elements.ts): each element of a fanned-out slot with its
 *    value, status and its own link's state (`dead (quorum-reached)` …), the slot's Quorum and how
 *    many elements are completed; an operator's per-element "Revoke link".
 * 1c. "Answered": each completed slot with who answered it (v0.4 "Who answered": through its link,
 *    by a principal with id and email, or in Slack) and when.
 * 2. The workflow's states as SVG (graph.ts): the current state and the path taken marked.
 * 3. History as a timeline relative to the run's start; incidents; tracked entities (values that
 *    carry a link show its token as `[redacted]`: engine/views/views.ts); the outbox of every channel —
 *    email, `send webhook`, `send message` — with attempts, the last result (`HTTP 503`, an error
 *    class), the next attempt, and why a message ended or was withdrawn (issue 30 item 3); never a
 *    body or payload.
 * Everything read comes from the API's read models (engine/views/views.ts, operators/runs-list.ts).
 */
import type { Db } from "../../db.js";
import type { CompiledWorkflow, TypeSpec } from "../../lang/compiled.js";
import { slotAccess } from "../../lang/slot-access.js";
import type { Expr } from "../../lang/ast.js";
import type { Sealer } from "../../engine/sealing/seal.js";
import { redactTokens } from "../../engine/sealing/seal.js";
import { showOutbox, showRun, type RunView } from "../../engine/views/views.js";
import { loadVersion } from "../../engine/versions/workflows.js";
import { showDeliveries } from "../../outbox/deliveries-view.js";
import { waitingOf } from "../../operators/runs-list.js";
import { html, type Html } from "../page/html.js";
import type { ConsoleUser } from "./access.js";
import { answeredByText, elementsPanel, readElementLinks, type ElementLinks } from "./elements.js";
import { stateGraph } from "./graph.js";
import { ago, countdown, offset, utc } from "./time.js";

/** Outcomes of an action, shown after its 303 (`?done=` / `?error=`): a fixed set, never request text. */
export const NOTICES: Record<string, { text: string; error: boolean }> = {
  cancelled: { text: "The run was cancelled.", error: false },
  revoked: { text: "The link was revoked: its holders now get “no longer works”.", error: false },
  accepted: { text: "Queued: the worker has not answered yet; reload in a moment.", error: false },
  "run-finished": { text: "Nothing was done: the run has already ended.", error: true },
  "no-link": { text: "Nothing was done: that slot has no live link (any more).", error: true },
  reason: { text: "Nothing was done: give a reason (1 to 500 characters).", error: true },
  csrf: { text: "Nothing was done: the form was stale. Try again.", error: true },
  failed: { text: "Nothing was done: the action was refused.", error: true },
};

/** A compiled type as written in a source (`list<string>?`); depth-bounded. */
export function typeText(t: TypeSpec, depth = 0): string {
  if (depth > 16) return "…";
  const base = t.kind === "list" ? `list<${typeText(t.element, depth + 1)}>` : t.kind === "entity" ? t.name : t.kind;
  return t.optional ? `${base}?` : base;
}

const exprText = (source: string, e: Expr) => source.slice(e.range.start.offset, e.range.end.offset);

const json = (v: unknown) => JSON.stringify(v);

/**
 * One message of a run's outbox as the console lists it (issue 30 item 3): mail
 * (engine/views/views.ts showOutbox) and `send webhook` / `send message` deliveries
 * (outbox/deliveries-view.ts) in one shape. `to`: the recipient (mail) or the endpoint's name;
 * `what`: the subject (mail) or the delivery's `webhook-id`; `last`: the last attempt's result
 * (`HTTP 503`, an error class such as `Error ECONNREFUSED`, a mail error), null before any;
 * `ended`: why it stopped — a delivery's `endReason`, or a failed/withdrawn mail's last error
 * (`withdrawn: the run was cancelled`) — null while it may still go. Never a body or payload.
 */
export interface OutboxRow {
  id: string;
  channel: "email" | "webhook" | "message";
  to: string;
  what: string;
  status: string;
  attempts: number;
  last: string | null;
  nextAttemptAt: Date | null;
  ended: string | null;
  createdAt: Date;
}

interface RunData {
  view: RunView;
  wf: CompiledWorkflow;
  source: string;
  links: Map<string, string>;
  /** The newest link of each element of the current visit's fanned-out slots (v0.4, elements.ts). */
  elementLinks: ElementLinks;
  outbox: OutboxRow[];
}

/** Every message of the run, oldest first, whatever its channel. */
async function readOutbox(db: Db, sealer: Sealer, runId: string): Promise<OutboxRow[]> {
  const [mail, errors, deliveries] = await Promise.all([
    showOutbox(db, sealer, runId),
    db.outboxMessage.findMany({ where: { runId, lastError: { not: null } }, select: { id: true, lastError: true } }),
    showDeliveries(db, runId),
  ]);
  const mailError = new Map(errors.map((e) => [e.id, e.lastError === null ? null : redactTokens(e.lastError).slice(0, 300)]));
  const rows: OutboxRow[] = [
    ...mail.map((m): OutboxRow => {
      const error = mailError.get(m.id) ?? null;
      const ended = m.status === "failed" || m.status === "withdrawn";
      return { id: m.id, channel: "email", to: m.to, what: m.subject, status: m.status, attempts: m.attempts, last: ended ? null : error, nextAttemptAt: null, ended: ended ? error : null, createdAt: m.createdAt };
    }),
    ...deliveries.map((d): OutboxRow => ({
      id: d.id,
      channel: d.channel,
      to: d.endpoint,
      what: d.webhookId,
      status: d.status,
      attempts: d.attempts,
      last: d.lastStatusCode !== null ? `HTTP ${d.lastStatusCode}` : d.lastError,
      nextAttemptAt: d.status === "pending" ? d.nextAttemptAt : null,
      ended: d.endReason,
      createdAt: d.createdAt,
    })),
  ];
  return rows.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
}

/** Reads what the page shows; null when no run has this id. */
export async function readRun(db: Db, sealer: Sealer, id: string): Promise<RunData | null> {
  const view = await showRun(db, sealer, id);
  if (!view) return null;
  const visit = Math.max(0, ...view.slots.filter((s) => s.state === view.state).map((s) => s.visit));
  const [wf, version, waiting, outbox, elementLinks] = await Promise.all([
    loadVersion(db, view.workflow, view.version),
    db.workflowVersion.findUnique({ where: { workflowName_version: { workflowName: view.workflow, version: view.version } }, select: { source: true } }),
    waitingOf(db, [view.id]),
    readOutbox(db, sealer, view.id),
    readElementLinks(db, view.id, view.state, visit),
  ]);
  const links = new Map((waiting.get(view.id) ?? []).map((w) => [`${w.alias}\u0000${w.element}`, w.link]));
  return { view, wf, source: version?.source ?? "", links, elementLinks, outbox };
}

function reasonField(id: string): Html {
  return html`<div><label for="${id}">Reason (required, recorded in the history)</label><input id="${id}" name="reason" required maxlength="500" autocomplete="off"></div>`;
}

function waitingPanel(d: RunData, user: ConsoleUser, csrf: string, now: Date): Html {
  const { view, wf, source } = d;
  const current = view.slots.filter((s) => s.state === view.state);
  const visit = Math.max(0, ...current.map((s) => s.visit));
  const inVisit = current.filter((s) => s.visit === visit);
  const open = view.status === "running" ? inVisit.filter((s) => s.status === "open" || s.status === "waiting") : [];
  const state = wf.states[view.state];
  // v0.4: a fanned-out slot with Quorum is done once the quorum was reached in this visit (the
  // history's `quorum-reached` since the state was last entered), though some elements are cancelled
  const entered = view.history.map((h) => h.kind).lastIndexOf("state-entered");
  const quorumReached = new Set(view.history.slice(entered + 1).filter((h) => h.kind === "quorum-reached").map((h) => String((h.data as { alias?: unknown }).alias)));
  const slots = open.map((s) => {
    const decl = state?.slots.find((x) => x.alias === s.alias);
    const event = wf.events[s.event];
    const link = d.links.get(`${s.alias}\u0000${s.element}`) ?? "none";
    const deadline = s.deadline ? new Date(s.deadline) : null;
    const opened = s.status === "open" && s.openedAt ? new Date(s.openedAt) : null;
    const after = (decl?.after ?? []).map((a) => ({ alias: a, done: quorumReached.has(a) || inVisit.filter((x) => x.alias === a).every((x) => x.status === "completed") }));
    const name = `${s.alias}${s.element === null ? "" : `[${s.element}]`}`;
    const fid = `r-${s.alias}-${s.element ?? "x"}`;
    const linkOnly = decl !== undefined && slotAccess(wf, decl) === "link-only";
    return html`<section class="slot" aria-labelledby="slot-${fid}">
<h3 id="slot-${fid}">${name} <span class="badge ${s.status}">${s.status}</span> <span class="badge ${link}">link ${link}</span></h3>
<dl class="facts">
<dt>Event</dt><dd><code>${s.event}(${(event?.params ?? []).map((p, i) => html`${i ? ", " : ""}${p.name}: ${typeText(p.type)}`)})</code></dd>
${s.element !== null ? html`<dt>Element</dt><dd><code>${json(s.elementValue)}</code></dd>` : null}
<dt>Waiting since</dt><dd>${opened ? html`<time datetime="${opened.toISOString()}">${utc(opened)}</time> — <span class="since">${ago(opened, now)}</span>` : html`<span class="muted">not open yet</span>`}</dd>
<dt>Deadline</dt><dd>${deadline ? html`<time datetime="${deadline.toISOString()}">${utc(deadline)}</time> — <time class="countdown" datetime="${deadline.toISOString()}">${countdown(deadline, now)}</time>` : html`<span class="muted">none</span>`}</dd>
<dt>After</dt><dd>${after.length ? html`<ul class="plain">${after.map((a) => html`<li>${a.alias}: ${a.done ? "done" : "not done yet"}</li>`)}</ul>` : html`<span class="muted">nothing (opens with the state)</span>`}</dd>
<dt>Requires</dt><dd>${decl?.requires ? html`<code>${exprText(source, decl.requires)}</code>` : html`<span class="muted">nothing</span>`}</dd>
<dt>Candidates</dt><dd>${decl?.candidates ? html`<code>${decl.candidates.map((c) => exprText(source, c)).join(", ")}</code>` : linkOnly ? html`<span class="muted">none: answered only through its link</span>` : html`<span class="muted">anyone signed in (no Candidates, deployed before v0.5)</span>`}</dd>
<dt>Link</dt><dd>${link === "live" ? "live: whoever holds it can answer (the token is never shown)" : link === "none" ? "none minted" : `${link}: it cannot be used`}</dd>
<dt>Unblocks it</dt><dd>${s.status === "waiting" ? "its After predecessors completing, then " : null}${linkOnly ? html`${link === "live" ? "an answer through the link" : "a link minted by the workflow, then an answer through it"}${deadline ? ", or the deadline" : null}.` : html`${link === "live" ? "an answer through the link, or " : null}a raise by a candidate (<code>POST /api/runs/${view.id}/slots/${s.alias}/events</code>)${deadline ? ", or the deadline" : null}.`}</dd>
</dl>
${user.role === "operator" && link === "live" && s.element === null
  ? html`<form class="action" method="post" action="/console/runs/${view.id}/slots/${s.alias}/revoke">
<input type="hidden" name="csrf" value="${csrf}">
<div class="row">${reasonField(`${fid}-reason`)}<div><button type="submit" class="danger">Revoke link of ${s.alias}</button></div></div>
</form>`
  : null}
</section>`;
  });
  const timers = view.status === "running" ? view.timers : [];
  const timerList = timers.length
    ? html`<section class="timers" aria-labelledby="timers-h">
<h3 id="timers-h">Timers</h3>
<ul class="plain">${timers.map((tm) => {
        const decl = state?.timers?.find((x) => x.index === tm.index);
        const targets = [...new Set((decl?.handler.arms ?? []).map((a) => a.target.name))];
        const arms = decl?.handler.arms ?? [];
        const moves = !targets.length
          ? `stays in ${view.state}`
          : arms.length === 1 && arms[0]!.kind === "default"
            ? `moves to ${targets[0]}`
            : `may move to ${targets.join(", ")}`;
        const next = tm.next ? new Date(tm.next) : null;
        return html`<li><code>${tm.schedule ?? `timer ${tm.index}`}</code> — ${next ? html`next <time datetime="${next.toISOString()}">${utc(next)}</time> — <time class="countdown" datetime="${next.toISOString()}">${countdown(next, now)}</time>` : html`<span class="muted">not scheduled</span>`} <span class="muted">(${moves})</span></li>`;
      })}</ul>
</section>`
    : null;
  // the timers on the current state's slots (language reference "Timers on a slot, per element"): one per open slot (element)
  const slotTimers = view.status === "running" ? view.slotTimers : [];
  const slotTimerList = slotTimers.length
    ? html`<section class="timers" aria-labelledby="slot-timers-h">
<h3 id="slot-timers-h">Timers on slots</h3>
<ul class="plain" id="slot-timers">${slotTimers.map((tm) => {
        const decl = state?.slots.find((x) => x.alias === tm.alias)?.timers?.find((x) => x.index === tm.index);
        const targets = [...new Set((decl?.handler.arms ?? []).map((a) => a.target.name))];
        const next = tm.next ? new Date(tm.next) : null;
        const slot = tm.element === null ? tm.alias : `${tm.alias}[${tm.element}]`;
        return html`<li><code>${slot}</code>: <code>${tm.schedule ?? `timer ${tm.index}`}</code> — ${next ? html`next <time datetime="${next.toISOString()}">${utc(next)}</time> — <time class="countdown" datetime="${next.toISOString()}">${countdown(next, now)}</time>` : html`<span class="muted">not scheduled</span>`}${targets.length ? html` <span class="muted">(may move to ${targets.join(", ")})</span>` : null}</li>`;
      })}</ul>
</section>`
    : null;
  const cancel =
    view.status !== "running"
      ? html`<p>The run has ${view.status === "cancelled" ? "been cancelled" : "finished"}; it waits on nothing.</p>`
      : user.role === "operator"
        ? html`<form class="action" method="post" action="/console/runs/${view.id}/cancel" aria-label="Cancel this run">
<input type="hidden" name="csrf" value="${csrf}">
<div class="row">${reasonField("cancel-reason")}<div><button type="submit" class="danger">Cancel run</button></div></div>
<p class="muted">Cancelling ends the run: every open slot is cancelled, every live link stops working, unsent messages are withdrawn.</p>
</form>`
        : html`<p class="muted">You are signed in as a viewer: you can look, not act.</p>`;
  return html`<section class="panel" aria-labelledby="waiting-h">
<h2 id="waiting-h">Waiting on</h2>
${open.length ? slots : view.status === "running" ? html`<p>No open or waiting slot.</p>` : null}
${timerList}
${slotTimerList}
${cancel}
</section>`;
}


/**
 * The child runs this run started (v0.5 `call workflow`, issue 40 item 3): each call slot of type
 * `workflow` with its child run linked (or why it could not start) and the call's status; the
 * child's page links back through "Parent run". Nothing when the run started none.
 */
function childrenPanel(view: RunView): Html | null {
  const calls = view.slots.filter((s) => s.kind === "call" && (s as { callee?: { type?: string } }).callee?.type === "workflow") as (RunView["slots"][number] & { callee: { workflow: string | null; runId: string | null }; callStatus: string; error?: string | null })[];
  if (calls.length === 0) return null;
  return html`<h2>Child runs</h2>
<ul>${calls.map(
    (c) => html`<li><code>${c.alias}</code>${c.element !== null ? html`[${c.element}]` : null}: ${c.callee.workflow} ${c.callee.runId ? html`<a href="/console/runs/${c.callee.runId}" class="mono">${c.callee.runId}</a>` : html`<span class="muted">not started</span>`} <span class="badge ${c.callStatus}">${c.callStatus}</span>${c.error ? html` <span class="muted">${c.error}</span>` : null}</li>`,
  )}</ul>
<p><a href="/console/runs?parent=${view.id}">All runs this run started</a></p>`;
}

/** The completed slots of the run, newest last, each with who answered (v0.4 "Who answered"). */
function answeredPanel(view: RunView): Html {
  const done = view.slots.filter((s) => s.status === "completed").sort((a, b) => new Date(a.closedAt ?? 0).getTime() - new Date(b.closedAt ?? 0).getTime());
  return html`<h2 id="answered-h">Answered</h2>
${done.length
  ? html`<ul class="plain" aria-labelledby="answered-h">${done.map((s) => {
      const at = s.closedAt ? new Date(s.closedAt) : null;
      return html`<li data-answered="${s.alias}${s.element === null ? "" : `[${s.element}]`}"><strong>${s.alias}${s.element === null ? "" : `[${s.element}]`}</strong> (${s.event}) — answered ${answeredByText(s.answeredBy)}${at ? html` at <time datetime="${at.toISOString()}">${utc(at)}</time>` : null}</li>`;
    })}</ul>`
  : html`<p class="muted">No slot answered yet.</p>`}`;
}

/** The run page's body. */
export async function runBody(d: RunData, user: ConsoleUser, csrf: string, notice: string | null): Promise<Html> {
  const { view, wf } = d;
  const now = new Date();
  const start = new Date(view.createdAt).getTime();
  const path = view.history.filter((h) => h.kind === "state-entered").map((h) => String((h.data as { state?: unknown }).state));
  const graph = await stateGraph(`${view.workflow}@${view.version}`, wf, path, view.state);
  const n = notice ? NOTICES[notice] : undefined;
  const history = view.history.slice(-1000);
  return html`<p><a href="/console/runs">← Runs</a></p>
<h1>Run <span class="mono">${view.id}</span></h1>
${n ? html`<p class="notice${n.error ? " error" : ""}" role="${n.error ? "alert" : "status"}">${n.text}</p>` : null}
<dl class="facts">
<dt>Workflow</dt><dd><a href="/console/workflows/${view.workflow}">${view.workflow}</a> version ${view.version}</dd>
<dt>State</dt><dd>${view.state}</dd>
<dt>Status</dt><dd><span class="badge ${view.status}">${view.status}</span></dd>
<dt>Started</dt><dd><time datetime="${new Date(view.createdAt).toISOString()}">${utc(new Date(view.createdAt))}</time></dd>
${view.finishedAt ? html`<dt>Ended</dt><dd><time datetime="${new Date(view.finishedAt).toISOString()}">${utc(new Date(view.finishedAt))}</time></dd>` : null}
${view.parent ? html`<dt>Parent run</dt><dd><a href="/console/runs/${view.parent.runId}" class="mono">${view.parent.runId}</a>${view.parent.alias ? html` (call <code>${view.parent.alias}</code>${view.parent.element !== null ? html`, element ${view.parent.element}` : null})` : null}</dd>` : null}
</dl>
${childrenPanel(view)}
${waitingPanel(d, user, csrf, now)}
${elementsPanel(view, wf, d.source, d.elementLinks, user, csrf)}
${answeredPanel(view)}
<h2 id="graph-h">States</h2>
<figure class="graph" aria-labelledby="graph-h">${graph}</figure>
<p class="muted">Filled: the current state; blue: states and transitions this run has taken. ▶ initial, ■ terminal.</p>
<h2>History</h2>
${view.history.length > history.length ? html`<p class="muted">The last ${history.length} of ${view.history.length} entries.</p>` : null}
<ol class="timeline">${history.map(
    (h) => html`<li><span class="at"><time datetime="${new Date(h.at).toISOString()}" title="${utc(new Date(h.at))}">${offset(new Date(h.at).getTime() - start)}</time></span><span><strong>${h.kind}</strong> <code>${json(h.data)}</code></span></li>`,
  )}</ol>
<h2>Incidents</h2>
${view.incidents.length
  ? html`<ul>${view.incidents.map((i) => html`<li><time datetime="${new Date(i.at).toISOString()}">${offset(new Date(i.at).getTime() - start)}</time> <strong>${i.command}</strong> ${i.code}: ${i.message}</li>`)}</ul>`
  : html`<p class="muted">None.</p>`}
<h2>Tracked entities</h2>
${Object.keys(view.entities).length
  ? Object.entries(view.entities).map(
      ([name, data]) => html`<h3>${name}</h3><dl class="facts">${Object.entries((data ?? {}) as Record<string, unknown>).map(([k, v]) => html`<dt>${k}</dt><dd><code>${json(v)}</code></dd>`)}</dl>`,
    )
  : html`<p class="muted">None.</p>`}
<p class="muted">A value that carries a callback link shows its token as [redacted].</p>
<h2>Outbox</h2>
${d.outbox.length
  ? html`<div class="table-wrap" tabindex="0" role="region" aria-label="Outbox messages"><table class="stack"><thead><tr><th scope="col">Queued</th><th scope="col">Channel</th><th scope="col">To</th><th scope="col">Subject / webhook-id</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last result</th><th scope="col">Next / why it ended</th></tr></thead><tbody>${d.outbox.map(
      (m) => html`<tr data-message="${m.id}"><td data-label="Queued">${offset(m.createdAt.getTime() - start)}</td><td data-label="Channel">${m.channel}</td><td data-label="To">${m.to}</td><td data-label="Subject / webhook-id">${m.channel === "email" ? m.what : html`<code>${m.what}</code>`}</td><td data-label="Status"><span class="badge ${m.status}">${m.status}</span></td><td data-label="Attempts">${m.attempts}</td><td data-label="Last result">${m.last ?? html`<span class="muted">—</span>`}</td><td data-label="Next / why it ended">${
        m.ended
          ? m.ended
          : m.nextAttemptAt
            ? html`next attempt <time class="countdown" datetime="${m.nextAttemptAt.toISOString()}">${countdown(m.nextAttemptAt, now)}</time>`
            : html`<span class="muted">—</span>`
      }</td></tr>`,
    )}</tbody></table></div>`
  : html`<p class="muted">No messages.</p>`}`;
}
