/**
 * The fan-out limit (issue 8 item 16) through the testing kit, with SLOTFLOW_MAX_FANOUT=3 for this
 * file: a list parameter longer than the limit is refused at start (422, nothing stored); a list
 * written in the source longer than the limit is a runtime error of the step that enters the state.
 */
import test from "ava";
import { RefusalError, Workflow } from "../../src/testing/index.js";
import { useKitDatabase } from "../helpers/kit.js";

process.env.SLOTFLOW_MAX_FANOUT = "3";
useKitDatabase(test, "fanout");

const source = `workflow Fan(names: list<string>, wide: bool)
event Sign(ok: bool)
event Next()
initial state Collect {
  subscribe Sign(ok) as sig for each n in names
  subscribe Next() as next { Candidates: anyone() }
  on next() {
    when (wide) -> Wide
    default -> Done
  }
}
state Wide {
  subscribe Sign(ok) as many for each i in [1, 2, 3, 4]
}
terminal state Done
`;

test.serial("a list parameter longer than SLOTFLOW_MAX_FANOUT is refused at start; at the limit it fans out", async (t) => {
  const wf = await Workflow.deploy(source);
  const err = await t.throwsAsync(wf.start({ names: ["a", "b", "c", "d"], wide: false }), { instanceOf: RefusalError });
  t.is(err!.code, "invalid-body");
  t.deepEqual((err!.extra.errors as { name: string }[]).map((e) => e.name), ["names"]);
  const run = await wf.start({ names: ["a", "b", "c"], wide: false });
  t.is(run.slots.filter((s) => s.alias === "sig").length, 3);
});

test.serial("a literal list longer than the limit fails the step that enters its state, applying nothing", async (t) => {
  const wf = await Workflow.deploy(source);
  const run = await wf.start({ names: [], wide: true });
  const err = await t.throwsAsync(run.raise("next", {}, { as: { id: "ops" } }), { instanceOf: RefusalError });
  t.is(err!.code, "handler-failed");
  await run.refresh();
  t.is(run.state, "Collect");
  t.regex(run.incidents[0].message, /at most 3 \(SLOTFLOW_MAX_FANOUT\)/);
});
