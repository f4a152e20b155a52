/**
 * A workflow's states drawn as SVG on the server (issue 23 "the workflow's state graph"): the
 * nodes are the compiled states, the edges every transition out of them (`transitions`: routing on
 * entry, timers, `on x(…)` and `on x.expired` arms, each labelled by what moves it), laid out by ELK's layered
 * algorithm (elkjs, run in-process — no hand-placed boxes), top to bottom.
 *
 * Marked: the current state (filled), the states visited and the transitions taken, in the order
 * the run's history entered them (`state-entered` entries). The SVG has a <title> and a <desc>
 * naming the current state and the path, for screen readers; text is escaped.
 *
 * Layouts are cached per workflow version (a version never changes) up to LAYOUT_CACHE entries.
 */
import type { ELK, ElkExtendedEdge, ElkNode } from "elkjs/lib/elk-api.js";
import type { CompiledWorkflow } from "../../lang/compiled.js";
import { html, type Html } from "../page/html.js";

const LAYOUT_CACHE = 200;
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

let elkInstance: Promise<ELK> | null = null;
/**
 * ELK, loaded and started on the first layout (issue 22 item 3: a web process that never draws a
 * graph does not hold ELK's compiled bundle in memory).
 */
function elk(): Promise<ELK> {
  elkInstance ??= import("elkjs/lib/elk.bundled.js").then((m) => {
    // elk.bundled.js is CommonJS: imported from ESM its module.exports is the constructor itself
    const bundled = m.default as unknown as { default?: unknown };
    const ElkCtor = (bundled.default ?? bundled) as unknown as new () => ELK;
    return new ElkCtor();
  });
  return elkInstance;
}
const cache = new Map<string, Promise<Layout>>();

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
  const laid = await (await elk()).layout(graph);
  const byId = new Map(states.map((s) => [`n:${s.name}`, s]));
  return {
    width: laid.width ?? 0,
    height: laid.height ?? 0,
    nodes: (laid.children ?? []).map((n: ElkNode) => {
      const s = byId.get(n.id)!;
      return { name: s.name, x: n.x ?? 0, y: n.y ?? 0, w: n.width ?? 0, h: n.height ?? 0, initial: s.initial, terminal: s.terminal };
    }),
    edges: (laid.edges ?? []).map((le: ElkExtendedEdge) => {
      const e = edges.find((x) => x.id === le.id)!;
      const section = (le as ElkExtendedEdge).sections?.[0];
      const points = section ? [section.startPoint, ...(section.bendPoints ?? []), section.endPoint] : [];
      const label = (le as ElkExtendedEdge).labels?.[0];
      const labelAt = label && label.x !== undefined && label.y !== undefined ? { x: label.x, y: label.y + 11 } : null;
      return { from: e.from, to: e.to, label: e.label, points, labelAt };
    }),
  };
}

/** The layout of a workflow version (cached). */
export function layoutOf(key: string, wf: CompiledWorkflow): Promise<Layout> {
  let hit = cache.get(key);
  if (!hit) {
    if (cache.size >= LAYOUT_CACHE) cache.delete(cache.keys().next().value!);
    hit = computeLayout(wf);
    hit.catch(() => cache.delete(key));
    cache.set(key, hit);
  }
  return hit;
}

/**
 * The SVG of a workflow's states. `path` lists the states entered, in order (the run's history);
 * `current` is the run's state (null on a workflow page: nothing marked).
 */
export async function stateGraph(key: string, wf: CompiledWorkflow, path: string[], current: string | null): Promise<Html> {
  const layout = await layoutOf(key, wf);
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
