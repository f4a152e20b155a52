/**
 * What a test run spends its time on besides tests (issue 34 item 1): each fresh database (and how
 * long making it took: a copy of the template, test/helpers/db.ts), each migrated template (issue
 * 39: once per run and set of migrations) and each slotflow process a test starts (and how long it
 * took to be ready) is appended as one JSON line `{"cost": "database" | "template" | "process", "ms"}` to the file named by
 * SLOTFLOW_TEST_DURATIONS, beside test/preload/durations.mjs's per-file lines; `.ci/run` sums them
 * (.ci/test-durations.mjs). Nothing is written when the variable is unset.
 */
import { appendFileSync } from "node:fs";

/** Records one database made or one process started, taking `ms` of wall time. */
export function recordCost(cost: "database" | "template" | "process", ms: number): void {
  const out = process.env.SLOTFLOW_TEST_DURATIONS;
  if (out) appendFileSync(out, `${JSON.stringify({ cost, ms: Math.round(ms) })}\n`);
}
