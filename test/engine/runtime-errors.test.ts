/**
 * Runtime errors abort the whole step (language reference "Errors"): nothing is kept, the slot
 * stays as it was, and the run shows an incident — once, even when the sweeper retries a failing
 * expiry again and again.
 */
import test from "ava";
import { Workflow } from "../../src/testing/index.js";
import { sql } from "../helpers/db.js";
import { useKitDatabase } from "../helpers/kit.js";

useKitDatabase(test, "runtime");

test.serial("a failing expiry handler keeps nothing, leaves the slot open, and is recorded as one incident however often it is retried", async (t) => {
  const run = await (await Workflow.deploy("test/fixtures/failing-expiry.flow")).start({ task: { name: "report" } });
  await sql(process.env.DATABASE_URL!, "UPDATE slots SET deadline = now() - interval '1 second' WHERE run_id = $1", [run.id]);
  t.is(await Workflow.sweep(), 0);
  t.is(await Workflow.sweep(), 0);
  await run.refresh();
  t.is(run.state, "Waiting");
  t.is(run.entities.task.name, "report");
  t.is(run.slots[0].status, "open");
  t.is(run.incidents.length, 1);
  t.like(run.incidents[0], { command: "expire", code: "handler-failed" });
  t.regex(run.incidents[0].message, /@maxLength/);
});
