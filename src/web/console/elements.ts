/**
 * The run page's "Responders" panel (v0.4 Many responders): every element of each fanned-out slot
 * of the run's current state visit — its value, its status, and its own link's state (live,
 * burned, retired, dead with the reason such as `quorum-reached`, or none; never a token) — with
 * the slot's `Quorum` and how many elements are completed. An operator may revoke one element's
 * live link (`POST /console/runs/{id}/slots/{alias}/revoke?element=N`, with a reason).
 */
import { Prisma } from "../../generated/prisma/client.js";
import type { Db } from "../../db.js";
import type { CompiledWorkflow } from "../../lang/compiled.js";
import type { Expr } from "../../lang/ast.js";
import type { RunView } from "../../engine/views/views.js";
import { html, type Html } from "../page/html.js";
import type { ConsoleUser } from "./access.js";

/** The newest link of one element's slot: `status` (live/burned/retired/dead) and a dead link's reason. */
export interface ElementLink {
  status: string;
  endReason: string | null;
}

/** The key of an element in `ElementLinks`. */
export const elementKey = (alias: string, element: number) => `${alias}\u0000${element}`;

export type ElementLinks = Map<string, ElementLink>;

/** The newest link of every element slot of `runId` in state `state`, visit `visit` (one query). */
export async function readElementLinks(db: Db, runId: string, state: string, visit: number): Promise<ElementLinks> {
  const rows = await db.$queryRaw<{ alias: string; element: number; status: string; end_reason: string | null }[]>(Prisma.sql`
    SELECT s.alias, s.element, l.status, l.end_reason
      FROM slots s
      JOIN LATERAL (SELECT status, end_reason FROM links
                     WHERE links.run_id = s.run_id AND links.slot_id = s.id
                     ORDER BY created_at DESC LIMIT 1) l ON true
     WHERE s.run_id = ${runId}::uuid AND s.state = ${state} AND s.visit = ${visit} AND s.element IS NOT NULL`);
  return new Map(rows.map((r) => [elementKey(r.alias, r.element), { status: r.status, endReason: r.end_reason }]));
}

/** How an element's link reads: `live`, `burned`, `dead (quorum-reached)`, `none`. */
function linkText(link: ElementLink | undefined): { badge: string; text: string } {
  if (!link) return { badge: "none", text: "none" };
  if (link.status === "dead" && link.endReason) return { badge: "dead", text: `dead (${link.endReason})` };
  return { badge: link.status, text: link.status };
}

/**
 * The panel, or null when the current state has no fanned-out slot with elements in this visit.
 * `source` is the version's source (for the `Quorum` expression as written).
 */
export function elementsPanel(
  view: RunView,
  wf: CompiledWorkflow,
  source: string,
  links: ElementLinks,
  user: ConsoleUser,
  csrf: string,
): Html | null {
  const current = view.slots.filter((s) => s.state === view.state);
  const visit = Math.max(0, ...current.map((s) => s.visit));
  const decls = (wf.states[view.state]?.slots ?? []).filter((d) => d.forEach);
  const groups = decls
    .map((decl) => ({ decl, elements: current.filter((s) => s.visit === visit && s.alias === decl.alias && s.element !== null) }))
    .filter((g) => g.elements.length > 0);
  if (groups.length === 0) return null;
  const exprText = (e: Expr) => source.slice(e.range.start.offset, e.range.end.offset);
  return html`<section class="panel" aria-labelledby="responders-h">
<h2 id="responders-h">Responders</h2>
${groups.map(({ decl, elements }) => {
    const completed = elements.filter((s) => s.status === "completed").length;
    const needs = decl.quorum ? html`Quorum <code>${exprText(decl.quorum)}</code>` : html`every element`;
    return html`<h3 id="responders-${decl.alias}">${decl.alias} <span class="muted">— ${completed} of ${elements.length} completed; needs ${needs}</span></h3>
<div class="table-wrap" tabindex="0" role="region" aria-labelledby="responders-${decl.alias}"><table class="stack"><thead><tr><th scope="col">Element</th><th scope="col">Value</th><th scope="col">Status</th><th scope="col">Link</th><th scope="col">Answered</th>${user.role === "operator" ? html`<th scope="col">Revoke</th>` : null}</tr></thead><tbody>${elements.map((s) => {
      const link = linkText(links.get(elementKey(s.alias, s.element!)));
      const fid = `e-${s.alias}-${s.element}`;
      return html`<tr data-element="${s.alias}[${s.element}]"><td data-label="Element">${s.alias}[${s.element}]</td><td data-label="Value"><code>${JSON.stringify(s.elementValue)}</code></td><td data-label="Status"><span class="badge ${s.status}">${s.status}</span></td><td data-label="Link"><span class="badge ${link.badge}">link ${link.text}</span></td><td data-label="Answered">${s.status === "completed" ? answeredByText(s.answeredBy) : html`<span class="muted">—</span>`}</td>${
        user.role === "operator"
          ? html`<td data-label="Revoke">${
              link.badge === "live" && view.status === "running"
                ? html`<form class="action" method="post" action="/console/runs/${view.id}/slots/${s.alias}/revoke?element=${s.element}">
<input type="hidden" name="csrf" value="${csrf}">
<label for="${fid}-reason">Reason</label> <input id="${fid}-reason" name="reason" required maxlength="500" autocomplete="off"> <button type="submit" class="danger">Revoke link of ${s.alias}[${s.element}]</button>
</form>`
                : html`<span class="muted">—</span>`
            }</td>`
          : null
      }</tr>`;
    })}</tbody></table></div>`;
  })}
<p class="muted">Each element has a link of its own (minted in <code>each { … }</code>); a token is never shown.</p>
</section>`;
}

/** How a completed slot was answered, in words (v0.4 "Who answered"; v0.5 the link's recipient and who forwarded it). */
export function answeredByText(a: RunView["slots"][number]["answeredBy"]): string {
  if (!a) return "not recorded";
  if (a.via === "link") {
    // v0.5 (issue 43 item 2): whom slotflow sent the link to, and who forwarded it
    const sentTo = a.recipient ? `sent to ${a.recipient}` : null;
    const by = a.forwardedBy ? `forwarded by ${a.forwardedBy}` : null;
    const evidence = [sentTo, by].filter(Boolean).join(", ");
    return evidence ? `through its link (${evidence})` : "through its link";
  }
  if (a.via === "call") return "by its callee";
  const who = a.email ? `${a.id} (${a.email})` : a.id;
  return a.via === "slack" ? `in Slack by ${who}` : `by principal ${who}`;
}
