/**
 * The console's thread (src/web/console/off-thread.ts; issue 28 items 2–3): layouts, diffs and
 * colouring run there, never on the calling event loop; a job past its time limit is terminated
 * (reason `timeout`), a job past the thread's heap limit kills the thread, not the process (reason
 * `memory`), a full queue refuses at once (`busy`), and the next job gets a fresh thread. Layouts
 * and diffs are cached per version (pair), simultaneous views share one job, and a version above
 * the drawing bounds is listed without any layout.
 */
import test from "ava";
import { readFileSync } from "node:fs";
import type { ElkNode } from "elkjs/lib/elk-api.js";
import { compile } from "../../src/lang/compile.js";
import type { CompiledWorkflow } from "../../src/lang/compiled.js";
import { layoutOf, MAX_DRAWN_STATES, stateGraph } from "../../src/web/console/graph.js";
import { consoleThreadStats, ConsoleJobError, QUEUE_MAX, runOffThread, setConsoleThreadHeapMb, THREAD_HEAP_MB } from "../../src/web/console/off-thread.js";
import { DIFF_MAX_EDIT_LINES, versionDiff } from "../../src/web/console/source.js";
import { bigFlow } from "../helpers/big-flow.js";

const compiled = (source: string): CompiledWorkflow => {
  const { workflow, diagnostics } = compile(source, "t.flow");
  if (!workflow) throw new Error(JSON.stringify(diagnostics.slice(0, 3)));
  return workflow;
};

/** An ELK input graph of `n` nodes and `m` labelled edges (slow to lay out for n ≥ 100). */
function elkGraph(n: number, m: number): ElkNode {
  return {
    id: "root",
    layoutOptions: { "elk.algorithm": "layered", "elk.edgeRouting": "ORTHOGONAL" },
    children: Array.from({ length: n }, (_, i) => ({ id: `n${i}`, width: 90, height: 36 })),
    edges: Array.from({ length: m }, (_, i) => ({
      id: `e${i}`,
      sources: [`n${i % n}`],
      targets: [`n${(i * 7 + 3) % n}`],
      labels: [{ id: `l${i}`, text: `go${i}`, width: 30, height: 14 }],
    })),
  };
}

/** Counts turns of this thread's event loop until stopped. */
function spinner() {
  let turns = 0;
  let running = true;
  const spin = () => {
    turns++;
    if (running) setImmediate(spin);
  };
  setImmediate(spin);
  return () => {
    running = false;
    return turns;
  };
}

test.serial("a workflow's layout runs on the console thread while this event loop turns; simultaneous views share one layout, later views the cached one", async (t) => {
  const wf = compiled(readFileSync("examples/vendor-approval.flow", "utf8"));
  const before = consoleThreadStats().jobsStarted;
  const stop = spinner();
  const [a, b] = [layoutOf("VendorApproval@1", wf), layoutOf("VendorApproval@1", wf)];
  t.is(a, b, "one layout for both");
  const layout = await a;
  t.true(stop() > 1, "the event loop turned while ELK laid the graph out");
  t.false("notDrawn" in layout);
  t.true((await stateGraph("VendorApproval@1", wf, ["Review"], "Review")).text.startsWith("<svg"));
  t.is(consoleThreadStats().jobsStarted - before, 1, "one job for three uses");
});

test.serial("a version above the drawing bounds is listed without a layout being attempted, saying why", async (t) => {
  const wf = compiled(bigFlow("TooBig", MAX_DRAWN_STATES + 1, 1));
  const before = consoleThreadStats().jobsStarted;
  const page = (await stateGraph("TooBig@1", wf, ["S0", "S7"], "S7")).text;
  t.is(consoleThreadStats().jobsStarted, before);
  t.regex(page, new RegExp(`This version has ${MAX_DRAWN_STATES + 2} states and ${(MAX_DRAWN_STATES + 1) * 2} transitions: too large to draw`));
  t.regex(page, /<tr class="visited"><th scope="row">▶ S0<\/th><td> \(visited\)<\/td><td>go → S7, Done<\/td><\/tr>/);
  t.regex(page, /<tr class="current"><th scope="row">S7<\/th><td> <strong>\(current\)<\/strong><\/td>/);
  t.regex(page, /<th scope="row">■ Done<\/th><td><\/td><td><span class="muted">none<\/span><\/td>/);
  t.notRegex(page, /<svg/);
});

test.serial("a job past its time limit is terminated and rejects with `timeout`; the next job gets a fresh thread", async (t) => {
  const { threadsStarted } = consoleThreadStats();
  const err = await t.throwsAsync(runOffThread({ kind: "layout", graph: elkGraph(150, 600) }, { timeLimitMs: 300 }), { instanceOf: ConsoleJobError });
  t.is(err?.reason, "timeout");
  const patch = await runOffThread<string>({ kind: "diff", oldName: "a", newName: "b", oldText: "x\n", newText: "y\n", context: 3, maxEditLength: 10, timeoutMs: 1000 });
  t.regex(patch, /^-x$/m);
  t.is(consoleThreadStats().threadsStarted, threadsStarted + 1);
});

test.serial("a job that needs more than the thread's heap kills the thread, not the process, and rejects with `memory`", async (t) => {
  t.timeout(120_000);
  setConsoleThreadHeapMb(32);
  try {
    const err = await t.throwsAsync(runOffThread({ kind: "layout", graph: elkGraph(600, 3000) }, { timeLimitMs: 100_000 }), { instanceOf: ConsoleJobError });
    t.is(err?.reason, "memory", err?.message);
  } finally {
    setConsoleThreadHeapMb(THREAD_HEAP_MB);
  }
  const patch = await runOffThread<string>({ kind: "diff", oldName: "a", newName: "b", oldText: "x\n", newText: "y\n", context: 3, maxEditLength: 10, timeoutMs: 1000 });
  t.regex(patch, /^\+y$/m);
});

test.serial("with QUEUE_MAX jobs waiting, one more is refused at once with `busy`", async (t) => {
  const job = { kind: "diff" as const, oldName: "a", newName: "b", oldText: "x\n", newText: "y\n", context: 3, maxEditLength: 10, timeoutMs: 1000 };
  const accepted = Array.from({ length: QUEUE_MAX + 1 }, () => runOffThread<string>(job)); // one runs, QUEUE_MAX wait
  const err = await t.throwsAsync(runOffThread(job), { instanceOf: ConsoleJobError });
  t.is(err?.reason, "busy");
  t.is((await Promise.all(accepted)).length, QUEUE_MAX + 1);
});

test.serial("the diff of two versions differing on every line gives up and says so, linking both; the outcome is cached per version pair", async (t) => {
  const a = { version: 1, source: bigFlow("Wide", 3, DIFF_MAX_EDIT_LINES, "n", (i, k) => (i + k) % 3) };
  const b = { version: 2, source: bigFlow("Wide", 3, DIFF_MAX_EDIT_LINES, "m", (i, k) => (i + k) % 3) };
  const before = consoleThreadStats().jobsStarted;
  const stop = spinner();
  const shown = (await versionDiff("Wide", a, b))!.text;
  t.true(stop() > 1);
  t.regex(shown, /The versions differ too much to diff here \(more than 2,000 lines changed/);
  t.regex(shown, /<a href="\/console\/workflows\/Wide\?version=1">version 1<\/a>, <a href="\/console\/workflows\/Wide\?version=2">version 2<\/a>/);
  t.is((await versionDiff("Wide", a, b))!.text, shown);
  t.is(consoleThreadStats().jobsStarted - before, 1, "diffed once");
  const c = { version: 3, source: b.source.replace("when (m == 1) -> S1", "when (m == 1) -> S2") };
  const small = (await versionDiff("Wide", b, c))!.text;
  t.regex(small, /<span class="del">- {4}when \(m == 1\) -&gt; S1<\/span>/);
  t.is(await versionDiff("Wide", c, c), null, "equal sources: no diff");
});
