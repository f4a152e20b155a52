/**
 * The testing kit's database and clock (issue 9 §2): it refuses to run without an explicit
 * database (SLOTFLOW_TEST_DATABASE_URL, else DATABASE_URL) instead of using the development
 * database, and `run.advanceTime(duration)` reaches deadlines without SQL or waiting — the slot
 * expires as the sweeper would expire it, its link dies with reason `expired`, other runs are
 * untouched. Serial: the kit reads its database from the environment on first use.
 */
import test from "ava";
import { RefusalError, Workflow } from "../../src/testing/index.js";
import { dropDatabase, freshDatabase } from "../helpers/db.js";
import { freePort } from "../helpers/server.js";

let url = "";
test.before(async () => {
  url = await freshDatabase("kitsetup");
  delete process.env.DATABASE_URL;
  delete process.env.SLOTFLOW_TEST_DATABASE_URL;
  process.env.BASE_URL = "http://slotflow.test";
});
test.after.always(async () => {
  await Workflow.disconnect();
  if (url) await dropDatabase(url);
});

test.serial("without SLOTFLOW_TEST_DATABASE_URL or DATABASE_URL the kit refuses, naming both", async (t) => {
  const err = await t.throwsAsync(Workflow.deploy("test/fixtures/callback-deadline.flow"));
  t.is(err!.name, "ConfigError");
  t.is(
    err!.message,
    "slotflow/testing needs a database of its own: set SLOTFLOW_TEST_DATABASE_URL (or DATABASE_URL) to a PostgreSQL database for tests, migrated with `npx slotflow migrate`",
  );
});

test.serial("SLOTFLOW_TEST_DATABASE_URL is used before DATABASE_URL", async (t) => {
  process.env.DATABASE_URL = `postgresql://postgres@127.0.0.1:${await freePort()}/not_this_one`;
  process.env.SLOTFLOW_TEST_DATABASE_URL = url;
  const wf = await Workflow.deploy("test/fixtures/callback-deadline.flow");
  t.is(wf.name, "CbDeadline");
});

test.serial("run.advanceTime reaches a deadline: the slot expires, its handler runs, its link is dead", async (t) => {
  const wf = await Workflow.deploy("test/fixtures/callback-deadline.flow");
  const run = await wf.start({ job: { title: "late", contact: "late@example.com" } });
  const other = await wf.start({ job: { title: "other", contact: "other@example.com" } });
  const slowUrl = run.entities.job.slowUrl as string;

  // Half the hour: the slot is still open and its link still answers.
  await run.advanceTime("30m");
  t.is(run.slots.find((s) => s.alias === "slow")!.status, "open");
  t.not(run.entities.job.slowExpired, true);

  // Past the hour: expired exactly as the sweeper would (on slow.expired ran).
  await run.advanceTime("31m");
  t.is(run.slots.find((s) => s.alias === "slow")!.status, "expired");
  t.is(run.entities.job.slowExpired, true);
  const dead = await t.throwsAsync(Workflow.Redeem(slowUrl, { text: "too late" }), { instanceOf: RefusalError });
  t.is(dead!.code, "link-dead");
  t.is(dead!.extra.reason, "expired");

  // Another run's clock did not move.
  await other.refresh();
  t.is(other.slots.find((s) => s.alias === "slow")!.status, "open");
  await Workflow.Redeem(other.entities.job.slowUrl as string, { text: "in time" });
});

test.serial("advanceTime refuses a duration it cannot read", async (t) => {
  const wf = await Workflow.deploy("test/fixtures/callback-deadline.flow");
  const run = await wf.start({ job: { title: "x", contact: "x@example.com" } });
  await t.throwsAsync(run.advanceTime("three days"), { instanceOf: RangeError, message: /"3d", "1d12h" or "90m"/ });
});

test.serial("deploy of a path to a .flow file that does not exist reports the missing file, not compile errors (issue 21 item 5)", async (t) => {
  const err = await t.throwsAsync(Workflow.deploy("flows/expense-aproval.flow"));
  t.is((err as NodeJS.ErrnoException).code, "ENOENT");
  t.regex(err!.message, /^Workflow\.deploy: no such file: flows\/expense-aproval\.flow \(looked in .+\)$/);
  t.notRegex(err!.message, /error\(s\)/);
});

test.serial("a failed deploy's message carries the diagnostics as `slotflow check` prints them (issue 21 item 5)", async (t) => {
  const source = "workflow Broken\ninitial state A {\n  on nope() -> Nowhere\n}\nterminal state B\n";
  const err = await t.throwsAsync(Workflow.deploy(source), { instanceOf: RefusalError });
  t.is(err!.code, "invalid-workflow");
  const { compile, formatDiagnostic } = await import("../../src/lang/compile.js");
  const printed = compile(source).diagnostics.map((d) => formatDiagnostic(d, source, "<source>"));
  t.true(printed.length >= 1);
  t.is(err!.message, [`The workflow has ${printed.filter((p) => / error /.test(p.split("\n")[0])).length} error(s).`, ...printed].join("\n"));
  t.regex(err!.message, /^<source>:3:6: error FLOW104: .+\n  on nope\(\) -> Nowhere\n     \^~~~$/m);
  t.true(Array.isArray(err!.extra.diagnostics), "the diagnostics stay data too");
});
