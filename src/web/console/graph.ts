/**
 * A workflow's states drawn as SVG on the server (issue 23 "the workflow's state graph"): the
 * nodes are the compiled states, the edges every transition out of them (`transitions`: routing on
 * entry, timers, `on x(…)` and `on x.expired` arms, each labelled by what moves it), laid out by ELK's layered
 * algorithm (elkjs, on the console thread — no hand-placed boxes), top to bottom.
 *
 * Marked: the current state (filled), the states visited and the transitions taken, in the order
 * the run's history entered them (`state-entered` entries). The SVG has a <title> and a <desc>
 * naming the current state and the path, for screen readers; text is escaped.
 *
 * Bounds (issue 28 item 2: a 300-state, 7,800-transition workflow laid out on the event loop
 * stalled `/healthz` 75 s, then killed the process out of heap):
 * - a version of more than MAX_DRAWN_STATES states or MAX_DRAWN_TRANSITIONS transitions is not
 *   laid out: its states and their transitions are listed in a table instead, saying why;
 * - ELK runs on the console thread (off-thread.ts), never on the web process's event loop, one
 *   layout at a time, within LAYOUT_TIME_LIMIT_MS and the thread's heap limit; a layout that fails
 *   (too slow, too big, queue full) falls back to the same table, saying why;
 * - the outcome (the layout, or why there is none) is cached per workflow version (a version
 *   never changes) in an LRU of LAYOUT_CACHE entries; simultaneous views of one version share one
 *   layout. Only a full queue (`busy`) is not cached: the next view tries again.
 */
import type { ElkExtendedEdge, ElkNode } from "elkjs/lib/elk-api.js";
import type { CompiledWorkflow } from "../../lang/compiled.js";
import { html, type Html } from "../page/html.js";
import { ConsoleJobError, LruCache, runOffThread } from "./off-thread.js";

const LAYOUT_CACHE = 200;
/** Versions with more states than this are listed, not drawn (issue 28 item 2). */
export const MAX_DRAWN_STATES = 60;
/** Versions with more transitions (edges) than this are listed, not drawn (issue 28 item 2). */
export const MAX_DRAWN_TRANSITIONS = 240;
/** The time limit of one layout on the console thread, ms (issue 28 item 2). */
export const LAYOUT_TIME_LIMIT_MS = 10_000;
const NODE_H = 36;
const CHAR_W = 8;
const LABEL_CHAR_W = 6.5;

interface Edge {
  id: string;
  from: string;
  to: string;
  label: string;
}

interface Layout {
  width: number;
  height: number;
  nodes: { name: string; x: number; y: number; w: number; h: number; initial: boolean; terminal: boolean }[];
  edges: { from: string; to: string; label: string; points: { x: number; y: number }[]; labelAt: { x: number; y: number } | null }[];
}

/** Why a version is listed rather than drawn. */
interface NotDrawn {
  notDrawn: string;
}
const cache = new LruCache<Promise<Layout | NotDrawn>>(LAYOUT_CACHE);

/**
 * The transitions of a compiled workflow: one edge per (state, label, target), in the order
 * routing on entry, timers, handlers, expiries. Pure (no layout): every way a run can move out of
 * a state is an edge, labelled by what moves it (issue 30 item 1) —
 *   `enter`             an arm of the state's `enter` block (routing on entry, `enterArms`);
 *   `after 5d`, `every 1d`, `every 2d after 1d`   an arm of a timer, labelled with its header
 *                       as written (`CompiledTimer.schedule`);
 *   `x`                 an arm of `on x(…)`;
 *   `x.expired`         an arm of `on x.expired`.
 * Arms naming a state the workflow does not have are left out (the checker refuses them).
 */
export function transitions(wf: CompiledWorkflow): Edge[] {
  const out: Edge[] = [];
  const seen = new Set<string>();
  const add = (from: string, label: string, to: string) => {
    const key = `${from}\u0000${label}\u0000${to}`;
    if (seen.has(key) || !wf.states[to]) return;
    seen.add(key);
    out.push({ id: `e${out.length}`, from, to, label });
  };
  for (const state of Object.values(wf.states)) {
    for (const arm of state.enterArms ?? []) add(state.name, "enter", arm.target.name);
    for (const timer of state.timers ?? []) for (const arm of timer.handler.arms) add(state.name, timer.schedule, arm.target.name);
    for (const [alias, on] of Object.entries(state.on)) for (const arm of on.handler.arms) add(state.name, alias, arm.target.name);
    for (const [alias, handler] of Object.entries(state.expired)) for (const arm of handler.arms) add(state.name, `${alias}.expired`, arm.target.name);
  }
  return out;
}

async function computeLayout(wf: CompiledWorkflow): Promise<Layout> {
  const states = Object.values(wf.states);
  const edges = transitions(wf);
  const graph: ElkNode = {
    id: "root",
    layoutOptions: {
      "elk.algorithm": "layered",
      "elk.direction": "DOWN",
      "elk.edgeRouting": "ORTHOGONAL",
      "elk.spacing.nodeNode": "30",
      "elk.layered.spacing.nodeNodeBetweenLayers": "45",
      "elk.spacing.edgeLabel": "4",
      "elk.edgeLabels.inline": "false",
      "elk.padding": "[top=12,left=12,bottom=12,right=12]",
    },
    children: states.map((s) => ({ id: `n:${s.name}`, width: Math.max(90, s.name.length * CHAR_W + 28), height: NODE_H })),
    edges: edges.map(
      (e): ElkExtendedEdge => ({
        id: e.id,
        sources: [`n:${e.from}`],
        targets: [`n:${e.to}`],
        labels: [{ id: `${e.id}:l`, text: e.label, width: e.label.length * LABEL_CHAR_W + 6, height: 14 }],
      }),
    ),
  };
  const laid = await runOffThread<ElkNode>({ kind: "layout", graph }, { timeLimitMs: LAYOUT_TIME_LIMIT_MS });
  const byId = new Map(states.map((s) => [`n:${s.name}`, s]));
  const edgeById = new Map(edges.map((e) => [e.id, e]));
  return {
    width: laid.width ?? 0,
    height: laid.height ?? 0,
    nodes: (laid.children ?? []).map((n: ElkNode) => {
      const s = byId.get(n.id)!;
      return { name: s.name, x: n.x ?? 0, y: n.y ?? 0, w: n.width ?? 0, h: n.height ?? 0, initial: s.initial, terminal: s.terminal };
    }),
    edges: (laid.edges ?? []).map((le: ElkExtendedEdge) => {
      const e = edgeById.get(le.id)!;
      const section = (le as ElkExtendedEdge).sections?.[0];
      const points = section ? [section.startPoint, ...(section.bendPoints ?? []), section.endPoint] : [];
      const label = (le as ElkExtendedEdge).labels?.[0];
      const labelAt = label && label.x !== undefined && label.y !== undefined ? { x: label.x, y: label.y + 11 } : null;
      return { from: e.from, to: e.to, label: e.label, points, labelAt };
    }),
  };
}

const count = (n: number, one: string, many: string) => `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;

/**
 * The layout of a workflow version, or why it is not drawn (cached per `key`, the version's
 * `name@version`; issue 28 item 2): too many states or transitions (no layout attempted), or the
 * layout on the console thread took too long, needed too much memory, failed, or the queue was full.
 */
export function layoutOf(key: string, wf: CompiledWorkflow): Promise<Layout | NotDrawn> {
  const hit = cache.get(key);
  if (hit) return hit;
  const states = Object.keys(wf.states).length;
  const edges = transitions(wf).length;
  const size = `This version has ${count(states, "state", "states")} and ${count(edges, "transition", "transitions")}`;
  let outcome: Promise<Layout | NotDrawn>;
  if (states > MAX_DRAWN_STATES || edges > MAX_DRAWN_TRANSITIONS) {
    outcome = Promise.resolve({
      notDrawn: `${size}: too large to draw (the console draws at most ${MAX_DRAWN_STATES} states and ${MAX_DRAWN_TRANSITIONS} transitions).`,
    });
  } else {
    outcome = computeLayout(wf).catch((err: unknown): NotDrawn => {
      const reason = err instanceof ConsoleJobError ? err.reason : "failed";
      if (reason === "busy") cache.delete(key); // transient: the next view tries again
      const why = {
        busy: "the server is drawing other graphs; reload the page later",
        timeout: `laying it out took more than ${LAYOUT_TIME_LIMIT_MS / 1000} s`,
        memory: "laying it out needed more memory than the console allows",
        failed: "laying it out failed",
      }[reason];
      return { notDrawn: `${size}; it is not drawn: ${why}.` };
    });
  }
  cache.set(key, outcome);
  return outcome;
}

/**
 * The states and their transitions as a table, for a version that is not drawn: one row per state
 * (▶ initial, ■ terminal; the run's current and visited states marked), its transitions grouped
 * by handler label.
 */
function stateTable(wf: CompiledWorkflow, why: string, path: string[], current: string | null): Html {
  const visited = new Set(path);
  const onRun = current !== null;
  const out = new Map<string, Map<string, string[]>>();
  for (const e of transitions(wf)) {
    const byLabel = out.get(e.from) ?? new Map<string, string[]>();
    out.set(e.from, byLabel);
    const targets = byLabel.get(e.label) ?? [];
    byLabel.set(e.label, targets);
    targets.push(e.to);
  }
  const rows = Object.values(wf.states).map((s) => {
    const cls = s.name === current ? "current" : visited.has(s.name) ? "visited" : null;
    const mark = s.initial ? "▶ " : s.terminal ? "■ " : "";
    const note = cls === "current" ? html` <strong>(current)</strong>` : cls === "visited" ? html` (visited)` : null;
    const edges = [...(out.get(s.name) ?? new Map<string, string[]>())].map(([label, targets], i) => html`${i ? "; " : null}${label} → ${targets.join(", ")}`);
    return html`<tr${cls ? html` class="${cls}"` : null}><th scope="row">${mark}${s.name}</th>${onRun ? html`<td>${note}</td>` : null}<td>${edges.length ? edges : html`<span class="muted">none</span>`}</td></tr>`;
  });
  return html`<p class="notice">${why} Its states and transitions are listed instead.</p>
<div class="table-wrap" tabindex="0" role="region" aria-label="States of ${wf.name}"><table><thead><tr><th scope="col">State</th>${onRun ? html`<th scope="col">This run</th>` : null}<th scope="col">Transitions (handler → states)</th></tr></thead><tbody>
${rows}
</tbody></table></div>`;
}

/**
 * The SVG of a workflow's states. `path` lists the states entered, in order (the run's history);
 * `current` is the run's state (null on a workflow page: nothing marked).
 */
export async function stateGraph(key: string, wf: CompiledWorkflow, path: string[], current: string | null): Promise<Html> {
  const layout = await layoutOf(key, wf);
  if ("notDrawn" in layout) return stateTable(wf, layout.notDrawn, path, current);
  const visited = new Set(path);
  const taken = new Set<string>();
  for (let i = 1; i < path.length; i++) taken.add(`${path[i - 1]}\u0000${path[i]}`);
  const title = current ? `States of ${wf.name}; the run is in ${current}` : `States of ${wf.name}`;
  const desc = current
    ? `Path taken: ${path.join(" → ")}. Current state: ${current}.`
    : `States: ${layout.nodes.map((n) => n.name).join(", ")}.`;
  const d = (pts: { x: number; y: number }[]) => pts.map((p, i) => `${i ? "L" : "M"}${p.x.toFixed(1)} ${p.y.toFixed(1)}`).join(" ");
  return html`<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-labelledby="graph-title graph-desc" viewBox="0 0 ${Math.ceil(layout.width)} ${Math.ceil(layout.height)}" width="${Math.ceil(layout.width)}" height="${Math.ceil(layout.height)}">
<title id="graph-title">${title}</title>
<desc id="graph-desc">${desc}</desc>
<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path class="arrow" d="M0 0 L10 5 L0 10 z"/></marker></defs>
${layout.edges.map((e) => {
  const cls = taken.has(`${e.from}\u0000${e.to}`) ? "edge taken" : "edge";
  return html`<g class="${cls}"><path d="${d(e.points)}" marker-end="url(#arrow)"/>${e.labelAt ? html`<text x="${e.labelAt.x.toFixed(1)}" y="${e.labelAt.y.toFixed(1)}">${e.label}</text>` : null}</g>`;
})}
${layout.nodes.map((n) => {
  const cls = `node${n.name === current ? " current" : visited.has(n.name) ? " visited" : ""}`;
  const r = n.terminal ? 2 : 10;
  const mark = n.initial ? "▶ " : n.terminal ? "■ " : "";
  return html`<g class="${cls}" data-state="${n.name}"><rect x="${n.x}" y="${n.y}" width="${n.w}" height="${n.h}" rx="${r}"/><text x="${(n.x + n.w / 2).toFixed(1)}" y="${(n.y + n.h / 2 + 4.5).toFixed(1)}" text-anchor="middle">${mark}${n.name}</text></g>`;
})}
</svg>`;
}
