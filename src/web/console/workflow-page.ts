/**
 * A workflow's console page, `GET /console/workflows/{name}[?version=N][&from=A&to=B]` (issue 23):
 * its versions (the current one marked, each with its runs), the states of the shown version as
 * SVG (graph.ts), the shown version's source highlighted with the VS Code extension's grammar
 * (source.ts), and what changed between two versions (`from` → `to`, default: the one before the
 * shown version → the shown version).
 * Answers null (404) when no workflow has the name, or the version asked for does not exist.
 */
import type { Db } from "../../db.js";
import { loadVersion } from "../../engine/versions/workflows.js";
import { html, type Html } from "../page/html.js";
import { stateGraph } from "./graph.js";
import { highlight, versionDiff } from "./source.js";
import { utc } from "./time.js";

const intParam = (v: string | undefined) => (v !== undefined && /^\d{1,9}$/.test(v) ? Number(v) : undefined);

export async function workflowBody(db: Db, name: string, query: Record<string, string>): Promise<Html | null> {
  // The list of versions without their sources and compiled forms: a compiled form is JSON about
  // 25× its source, and parsing every version's on this event loop stalled deposits (issue 28 item 3).
  const wf = await db.workflow.findUnique({
    where: { name },
    include: { versions: { orderBy: { version: "asc" }, select: { version: true, createdAt: true, sourceSha256: true } } },
  });
  if (!wf) return null;
  const shownNo = intParam(query.version) ?? wf.currentVersion;
  if (!wf.versions.some((v) => v.version === shownNo)) return null;
  const toNo = intParam(query.to) ?? shownNo;
  const fromNo = intParam(query.from) ?? Math.max(1, toNo - 1);
  // only the sources this page shows or compares
  const sources = new Map(
    (
      await db.workflowVersion.findMany({
        where: { workflowName: name, version: { in: [...new Set([shownNo, fromNo, toNo])] } },
        select: { version: true, source: true },
      })
    ).map((v) => [v.version, v]),
  );
  const shown = sources.get(shownNo);
  if (!shown) return null;
  const from = sources.get(fromNo);
  const to = sources.get(toNo);
  const compiled = await loadVersion(db, name, shown.version);
  // the layout, the diff and the colouring run on the console thread, bounded (issue 28 items 2-3)
  const [graph, diff, source] = await Promise.all([
    stateGraph(`${name}@${shown.version}`, compiled, [], null),
    from && to && from.version !== to.version ? versionDiff(name, from, to) : null,
    highlight(shown.source, `${name}@${shown.version}`),
  ]);
  const options = (selected: number) => wf.versions.map((v) => html`<option value="${v.version}"${v.version === selected ? html` selected` : null}>version ${v.version}</option>`);
  return html`<p><a href="/console/runs?workflow=${name}">← Runs of ${name}</a></p>
<h1>Workflow ${name}</h1>
<h2>Versions</h2>
<div class="table-wrap" tabindex="0" role="region" aria-label="Versions"><table class="stack"><thead><tr><th scope="col">Version</th><th scope="col">Deployed</th><th scope="col" class="opt">Source SHA-256</th><th scope="col">Runs</th></tr></thead><tbody>
${[...wf.versions].reverse().map(
  (v) => html`<tr><td data-label="Version"><a href="/console/workflows/${name}?version=${v.version}"${v.version === shown.version ? html` aria-current="page"` : null}>version ${v.version}</a>${v.version === wf.currentVersion ? " (current)" : null}</td><td data-label="Deployed">${utc(v.createdAt)}</td><td class="opt mono" data-label="Source SHA-256">${v.sourceSha256.slice(0, 16)}…</td><td data-label="Runs"><a href="/console/runs?workflow=${name}&amp;version=${v.version}">runs of version ${v.version}</a></td></tr>`,
)}
</tbody></table></div>
<h2 id="graph-h">States of version ${shown.version}</h2>
<figure class="graph" aria-labelledby="graph-h">${graph}</figure>
<h2>Source of version ${shown.version}</h2>
${source}
<h2 id="diff-h">What changed</h2>
${wf.versions.length < 2
  ? html`<p class="muted">Only one version is deployed.</p>`
  : html`<form class="filters" method="get" action="/console/workflows/${name}" aria-labelledby="diff-h">
<input type="hidden" name="version" value="${shown.version}">
<div class="f"><label for="d-from">From</label><select id="d-from" name="from">${options(fromNo)}</select></div>
<div class="f"><label for="d-to">To</label><select id="d-to" name="to">${options(toNo)}</select></div>
<div><button type="submit">Compare</button></div>
</form>
${!from || !to ? html`<p class="notice error">No such version.</p>` : from.version === to.version ? html`<p class="muted">Pick two different versions.</p>` : diff ?? html`<p class="muted">The sources are identical.</p>`}`}`;
}
