/**
 * The state graph's edges (issue 30 item 1): every way a run can move from a state is an edge,
 * labelled by what moves it — routing on entry (`enter`), a timer (its header: `after 5d`,
 * `every 1d`), an event handler (`x`) and an expiry (`x.expired`). A state whose `enter` ends
 * with arms is no orphan. Pure: the edges are computed from the compiled workflow (graph.ts
 * `transitions`), before any layout.
 */
import test from "ava";
import { readFileSync } from "node:fs";
import { compile } from "../../src/lang/compile.js";
import { transitions } from "../../src/web/console/graph.js";

const compiled = (source: string) => {
  const r = compile(source);
  if (!r.workflow) throw new Error(JSON.stringify(r.diagnostics));
  return r.workflow;
};
const edges = (source: string) => transitions(compiled(source)).map((e) => `${e.from} -[${e.label}]-> ${e.to}`).sort();

test("purchase-approval: enter arms, an `after` timer's arm, handlers and expiries are edges; a timer without arms draws none", (t) => {
  t.deepEqual(edges(readFileSync("examples/purchase-approval.flow", "utf8")), [
    "Escalated -[financeDecision.expired]-> TimedOut",
    "Escalated -[financeDecision]-> Approved",
    "Escalated -[financeDecision]-> Declined",
    "Review -[after 5d]-> Escalated",
    "Review -[decision.expired]-> TimedOut",
    "Review -[decision]-> Approved",
    "Review -[decision]-> Declined",
    "Triage -[enter]-> Approved",
    "Triage -[enter]-> Review",
  ]);
});

test("the issue's workflow: Triage routes on entry (no orphan), `after 5d { … default -> Escalated }` and `every 1d` arms are edges", (t) => {
  const source = `workflow Invoice(amount: int)
event Pay(ok: bool)
initial state Triage {
  enter {
    when (amount <= 10000) -> Approved
    default -> AwaitingVendor
  }
}
state AwaitingVendor {
  subscribe Pay(ok) as pay { Deadline: 7d }
  after 5d {
    default -> Escalated
  }
  on pay(ok) -> Approved
  on pay.expired -> Escalated
}
state Escalated {
  every 1d {
    when (amount > 5) -> Approved
  }
}
terminal state Approved
`;
  const got = edges(source);
  t.deepEqual(got, [
    "AwaitingVendor -[after 5d]-> Escalated",
    "AwaitingVendor -[pay.expired]-> Escalated",
    "AwaitingVendor -[pay]-> Approved",
    "Escalated -[every 1d]-> Approved",
    "Triage -[enter]-> Approved",
    "Triage -[enter]-> AwaitingVendor",
  ]);
  const wf = compiled(source);
  for (const name of Object.keys(wf.states)) {
    const touched = transitions(wf).some((e) => e.from === name || e.to === name);
    t.true(touched, `${name} has an edge`);
  }
});

test("edge ids are unique and each (state, label, target) appears once", (t) => {
  const all = transitions(compiled(readFileSync("examples/purchase-approval.flow", "utf8")));
  t.is(new Set(all.map((e) => e.id)).size, all.length);
  t.is(new Set(all.map((e) => `${e.from} ${e.label} ${e.to}`)).size, all.length);
});
