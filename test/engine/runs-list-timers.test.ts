/**
 * The runs list (issue 23) × timers (issue 19): a timer is stored as an open row of `slots` (alias
 * `@timer:N`, engine/lifecycles/timer.ts), but a run never "waits on" its timer — `waiting[]` lists only the
 * slots a responder can answer, as `GET /api/runs/{id}` does, and `?waiting=` cannot name a timer.
 */
import test from "ava";
import { createDb, type Db } from "../../src/db.js";
import { listRuns, parseRunsQuery } from "../../src/operators/runs-list.js";
import { Workflow } from "../../src/testing/index.js";
import { useKitDatabase } from "../helpers/kit.js";

useKitDatabase(test, "runs_list_timers");

const SOURCE = `workflow Remind(doc: Doc)
entity Doc { url: string? @maxLength(400) }
event Answer(ok: bool)
initial state Waiting {
  subscribe Answer(ok) as answer
  enter {
    doc.url = answer.CallbackUrl()
  }
  every 1d {
    send email to "boss@example.com" { subject: "Reminder", body: "still waiting" }
  }
  on answer(ok) -> Done
}
terminal state Done
`;

let db: Db;
test.serial.before(() => {
  db = createDb(process.env.DATABASE_URL!, 2);
});
test.after.always(async () => {
  await db?.$disconnect();
});

test.serial("a run with a timer waits on its slot only; ?waiting= cannot name a timer row", async (t) => {
  const wf = await Workflow.deploy(SOURCE);
  const run = await wf.start({ doc: { url: null } });
  t.is(run.timers.length, 1, "the run has its timer");
  const { runs } = await listRuns(db, parseRunsQuery({ workflow: "Remind" }));
  const listed = runs.find((r) => r.id === run.id);
  t.deepEqual(listed?.waiting.map((w) => w.alias), ["answer"]);
  t.throws(() => parseRunsQuery({ waiting: "@timer:0" }), { message: /waiting/ });
});
