/**
 * The console's runs list, `GET /console/runs?…` (issue 23): the API's filters (operators/runs-list.ts)
 * kept in the URL by a GET form, counts per status for the other filters, one row per run — id,
 * workflow, state, status, age and what it waits on (alias, status, link status, since when an open
 * slot waits — slots.opened_at, "waiting since 2 d 3 h ago" — and the deadline countdown; never a
 * token) — newest first, a "Next page" link carrying the cursor. Every run is a link; `j`/`k`
 * move between them (layout.ts), Tab works as everywhere.
 */
import type { Db } from "../../db.js";
import { countByStatus, listRuns, RUN_STATUSES, type RunListItem, type RunsFilter } from "../../operators/runs-list.js";
import { html, type Html } from "../page/html.js";
import { ago, countdown, span, utc } from "./time.js";

export interface RunsQuery {
  /** The raw query, to refill the form (strings only). */
  raw: Record<string, string>;
  filter: RunsFilter | null;
  /** A refused filter's message (400). */
  error: string | null;
}

const qs = (params: Record<string, string | undefined>) => {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) u.set(k, v);
  const s = u.toString();
  return s ? `?${s}` : "";
};

function waitingCell(run: RunListItem, now: Date): Html {
  if (!run.waiting.length) return html`<span class="muted">nothing</span>`;
  return html`<ul class="plain waits">${run.waiting.map(
    (w) =>
      html`<li><strong>${w.alias}</strong>${w.element === null ? null : html`[${w.element}]`} <span class="badge ${w.status}">${w.status}</span> <span class="badge ${w.link}">link ${w.link}</span>${
        w.openedAt ? html` <span class="muted">waiting since <time class="since" datetime="${w.openedAt.toISOString()}" title="${utc(w.openedAt)}">${ago(w.openedAt, now)}</time></span>` : null
      }${
        w.deadline ? html` <span class="muted">due <time class="countdown" datetime="${w.deadline.toISOString()}" title="${utc(w.deadline)}">${countdown(w.deadline, now)}</time></span>` : null
      }</li>`,
  )}</ul>`;
}

/** The runs list's body. */
export async function runsBody(db: Db, q: RunsQuery, workflows: string[]): Promise<{ status: number; body: Html }> {
  const now = new Date();
  const r = q.raw;
  const form = html`<form id="filters" class="filters" method="get" action="/console/runs" aria-label="Filter runs">
<div class="f"><label for="f-workflow">Workflow</label><select id="f-workflow" name="workflow"><option value="">any</option>${workflows.map((w) => html`<option${r.workflow === w ? html` selected` : null}>${w}</option>`)}</select></div>
<div class="f"><label for="f-status">Status</label><select id="f-status" name="status"><option value="">any</option>${RUN_STATUSES.map((s) => html`<option${r.status === s ? html` selected` : null}>${s}</option>`)}</select></div>
<div class="f"><label for="f-state">State</label><input id="f-state" name="state" value="${r.state ?? ""}" autocomplete="off"></div>
<div class="f"><label for="f-waiting">Waiting on (slot alias)</label><input id="f-waiting" name="waiting" value="${r.waiting ?? ""}" autocomplete="off"></div>
<div class="f"><label for="f-after">Created after</label><input id="f-after" name="createdAfter" value="${r.createdAfter ?? ""}" placeholder="2026-11-25T00:00Z" autocomplete="off"></div>
<div class="f"><label for="f-before">Created before</label><input id="f-before" name="createdBefore" value="${r.createdBefore ?? ""}" placeholder="2026-11-26" autocomplete="off"></div>
${r.version ? html`<input type="hidden" name="version" value="${r.version}">` : null}
${r.parent ? html`<input type="hidden" name="parent" value="${r.parent}">` : null}
${r.limit ? html`<input type="hidden" name="limit" value="${r.limit}">` : null}
<div><button type="submit">Filter</button> <a href="/console/runs">Clear</a></div>
</form>
${r.parent ? html`<p>The runs started by run <a href="/console/runs/${r.parent}" class="mono">${r.parent}</a> (<code>call workflow</code>).</p>` : null}
<p class="keys muted">Keys: <kbd>j</kbd>/<kbd>k</kbd> next/previous run, <kbd>Enter</kbd> opens it, <kbd>/</kbd> filters.</p>`;
  if (!q.filter) {
    return { status: 400, body: html`<h1>Runs</h1>${form}<p class="notice error" role="alert">${q.error ?? "Invalid filter."}</p>` };
  }
  const f = q.filter;
  const [page, counts] = await Promise.all([listRuns(db, f), countByStatus(db, f)]);
  const base = { workflow: r.workflow, version: r.version, parent: r.parent, state: r.state, waiting: r.waiting, createdAfter: r.createdAfter, createdBefore: r.createdBefore, limit: r.limit };
  const countList = html`<ul class="counts" aria-label="Runs per status">
<li><a href="/console/runs${qs(base)}"${!f.status ? html` aria-current="page"` : null}>all: ${Object.values(counts).reduce((a, b) => a + b, 0)}</a></li>
${RUN_STATUSES.map((s) => html`<li><a href="/console/runs${qs({ ...base, status: s })}"${f.status === s ? html` aria-current="page"` : null}>${s}: ${counts[s] ?? 0}</a></li>`)}
</ul>`;
  const rows = page.runs.map(
    (run) => html`<tr class="run">
<td data-label="Run"><a class="run-link mono" href="/console/runs/${run.id}">${run.id.slice(0, 8)}</a></td>
<td data-label="Workflow"><a href="/console/workflows/${run.workflow}">${run.workflow}</a> <span class="muted">v${run.version}</span></td>
<td data-label="State">${run.state}</td>
<td data-label="Status"><span class="badge ${run.status}">${run.status}</span></td>
<td class="opt" data-label="Age"><time datetime="${run.createdAt.toISOString()}" title="${utc(run.createdAt)}">${span(now.getTime() - run.createdAt.getTime())}</time></td>
<td data-label="Waiting on">${waitingCell(run, now)}</td>
</tr>`,
  );
  const table = page.runs.length
    ? html`<div class="table-wrap" tabindex="0" role="region" aria-label="Runs"><table class="stack">
<caption class="muted">Newest first${f.cursor ? " (a later page)" : ""}</caption>
<thead><tr><th scope="col">Run</th><th scope="col">Workflow</th><th scope="col">State</th><th scope="col">Status</th><th scope="col" class="opt">Age</th><th scope="col">Waiting on</th></tr></thead>
<tbody>${rows}</tbody></table></div>`
    : html`<p>No runs match these filters.</p>`;
  const pager = html`<nav class="pager" aria-label="Pages">
${f.cursor ? html`<a href="/console/runs${qs({ ...base, status: r.status })}">First page</a>` : null}
${page.nextCursor ? html`<a href="/console/runs${qs({ ...base, status: r.status, cursor: page.nextCursor })}" rel="next">Next page</a>` : null}
</nav>`;
  return { status: 200, body: html`<h1>Runs</h1>${form}${countList}${table}${pager}` };
}
