/**
 * Child runs (issue 40 item 3; docs/language.md "Calls"), in process through the testing kit (the
 * same engine code as the server): `call workflow Child as x returns E` starts the child in the
 * parent's step, the child's result answers the parent's call; a child cancelled on its own fails
 * the call; cancelling the parent cancels the child and its children; an input the child refuses
 * and an 11th level of nesting fail the call; `run.children()` / the `parent` link both ways.
 */
import test from "ava";
import { createDb } from "../../src/db.js";
import { listRuns, parseRunsQuery } from "../../src/operators/runs-list.js";
import { Workflow } from "../../src/testing/index.js";
import { useKitDatabase } from "../helpers/kit.js";

useKitDatabase(test, "child-runs");

const CHILD = `workflow Onboard(supplier: string) returns Onboarded
event Onboarded(approved: bool, note: string)
event Decide(ok: bool)
initial state Review {
  subscribe Decide(ok) as decision {
    Candidates: anyone()
  }
  on decision(ok) {
    result { approved: ok, note: "by review" }
    default -> Done
  }
}
terminal state Done
`;

const PARENT = `workflow Purchase(supplier: string, amount: int)
event Onboarded(approved: bool, note: string)
initial state Onboarding {
  call workflow Onboard as onboard returns Onboarded {
    Input { supplier: supplier }
  }
  on onboard(approved, note) {
    when (approved) -> Ordered
    default -> Refused
  }
  on onboard.failed -> Stuck
}
terminal state Ordered
terminal state Refused
terminal state Stuck
`;

// A chain: each level calls the next with depth + 1 until \`depth\` reaches \`stop\`.
const NEST = `workflow Nest(depth: int, stop: int)
event Done(state: string)
initial state Calling {
  call workflow Nest as inner returns Done {
    Input { depth: depth + 1, stop: stop }
  }
  on inner(state) -> Ok
  on inner.failed -> Failed
}
terminal state Ok
terminal state Failed
`;

// deployed on first use (the kit's database is made by useKitDatabase's hook, run beside any other before hook)
let deployed: Promise<Workflow> | null = null;
const parent = () => (deployed ??= Workflow.deploy(CHILD).then(() => Workflow.deploy(PARENT)));

async function decide(child: Awaited<ReturnType<Workflow["start"]>>, ok: boolean) {
  return child.raise("decision", { ok }, { as: { id: "reviewer", roles: [] } });
}

test.serial("the child's result answers the parent's call: the parent routes on it; parent/child linked both ways", async (t) => {
  const run = await (await parent()).start({ supplier: "ACME", amount: 10 });
  t.is(run.state, "Onboarding");
  const [child] = await run.children();
  t.truthy(child);
  t.is(child.state, "Review");
  t.deepEqual(child.parent, { runId: run.id, alias: "onboard", element: null });
  const slot = run.slots.find((s) => s.alias === "onboard")!;
  t.like(slot, { kind: "call", callee: { type: "workflow", workflow: "Onboard", runId: child.id }, callStatus: "pending" });
  await new Promise((r) => setTimeout(r, 60)); // the child runs at least this long: its call's ms says so
  await decide(child, true);
  await child.refresh();
  t.is(child.status, "finished", JSON.stringify(child.incidents));
  t.deepEqual(child.result, { approved: true, note: "by review", state: "Done" });
  await run.refresh();
  t.is(run.state, "Ordered");
  t.like(run.slots.find((s) => s.alias === "onboard"), { status: "completed", callStatus: "answered" });
  // the attempt's time: from the slot's opening to the child's end (not 0: issue 40 item 5)
  const attempt = run.history.find((h) => h.kind === "call-attempt")!.data as { ms: number; attempt: number };
  t.is(attempt.attempt, 1);
  t.true(attempt.ms >= 60, `ms ${attempt.ms}`);
});

test.serial("cancelling the parent cancels its child and the child's children", async (t) => {
  await parent();
  const top = await Workflow.deploy(`workflow Top(supplier: string)
event Done(state: string)
initial state Buying {
  call workflow Purchase as purchase returns Done {
    Input { supplier: supplier, amount: 5 }
  }
  on purchase(state) -> Bought
}
terminal state Bought
`);
  const run = await top.start({ supplier: "ACME" });
  const [child] = await run.children();
  const [grandchild] = await child.children();
  t.is(grandchild.state, "Review");
  await run.cancel("no longer needed");
  await child.refresh();
  await grandchild.refresh();
  t.is(child.status, "cancelled");
  t.is(grandchild.status, "cancelled");
  t.like(grandchild.history.find((h) => h.kind === "run-cancelled")!.data as Record<string, unknown>, { actor: `run:${child.id}` });
});

test.serial("the slot's Deadline passing runs on x.expired and cancels the child with the reason", async (t) => {
  await parent();
  const timed = await Workflow.deploy(
    PARENT.replace("workflow Purchase", "workflow TimedPurchase")
      .replace("Input { supplier: supplier }", "Input { supplier: supplier }\n    Deadline: 1d")
      .replace("on onboard.failed -> Stuck", "on onboard.failed -> Stuck\n  on onboard.expired -> Refused"),
  );
  const run = await timed.start({ supplier: "ACME", amount: 10 });
  const [child] = await run.children();
  await run.advanceTime("2d");
  t.is(run.state, "Refused");
  await child.refresh();
  t.is(child.status, "cancelled");
  t.like(child.history.find((h) => h.kind === "run-cancelled")!.data as Record<string, unknown>, { reason: `the parent's call slot "onboard" closed (expired)` });
});

test.serial("GET /api/runs?parent= lists the runs a run started (the runs list's filter); a malformed parent is refused", async (t) => {
  const run = await (await parent()).start({ supplier: "ACME", amount: 10 });
  const db = createDb(process.env.DATABASE_URL!, 1);
  t.teardown(() => db.$disconnect());
  const page = await listRuns(db, parseRunsQuery({ parent: run.id }));
  t.deepEqual(page.runs.map((r) => r.workflow), ["Onboard"]);
  t.is(page.runs[0].id, (await run.children())[0].id);
  t.deepEqual((await listRuns(db, parseRunsQuery({ parent: (await run.children())[0].id }))).runs, []);
  t.throws(() => parseRunsQuery({ parent: "not-a-run" }), { message: /parent/ });
});

test.serial("a child cancelled on its own fails the call: on x.failed, x.error says why", async (t) => {
  const run = await (await parent()).start({ supplier: "ACME", amount: 10 });
  const [child] = await run.children();
  await child.cancel("supplier withdrew");
  await run.refresh();
  t.is(run.state, "Stuck");
  t.like(run.slots.find((s) => s.alias === "onboard"), { status: "failed", callStatus: "failed", error: "child run cancelled: supplier withdrew" });
});

test.serial("cancelling the parent cancels the child with the reason", async (t) => {
  const run = await (await parent()).start({ supplier: "ACME", amount: 10 });
  const [child] = await run.children();
  await run.cancel("order dropped");
  await child.refresh();
  t.is(child.status, "cancelled");
  const cancelled = child.history.find((h) => h.kind === "run-cancelled")!;
  t.like(cancelled.data as Record<string, unknown>, { reason: "the parent run was cancelled: order dropped", actor: `run:${run.id}` });
});

test.serial("an input the child refuses fails the call at once, nothing of the child written", async (t) => {
  await parent();
  const bad = await Workflow.deploy(PARENT.replace("workflow Purchase", "workflow BadPurchase").replace("Input { supplier: supplier }", "Input { supplier: amount }"));
  const run = await bad.start({ supplier: "ACME", amount: 10 });
  t.is(run.state, "Stuck");
  t.deepEqual(await run.children(), []);
  const slot = run.slots.find((s) => s.alias === "onboard")!;
  t.like(slot, { callStatus: "failed", callee: { type: "workflow", workflow: "Onboard", runId: null } });
  t.regex(String((slot as { error?: string }).error), /^invalid input for workflow "Onboard": /);
});

test.serial("depth: ten levels of children start; the 11th fails the call of the 10th", async (t) => {
  const nest = await Workflow.deploy(NEST);
  const top = await nest.start({ depth: 0, stop: 99 });
  // every level started in the top's step; the 10th level's call failed, so the chain unwinds
  const chain = [top];
  for (let i = 0; i < 10; i++) {
    const [c] = await chain[chain.length - 1].children();
    t.truthy(c, `level ${i + 1}`);
    chain.push(c);
  }
  t.deepEqual(await chain[10].children(), []);
  t.is(chain[10].state, "Failed");
  t.regex(String((chain[10].slots[0] as { error?: string }).error), /nest deeper than 10/);
  await top.refresh();
  t.is(top.state, "Ok", "level 10 finished (in Failed), which answers level 9, … up to the top");
});
