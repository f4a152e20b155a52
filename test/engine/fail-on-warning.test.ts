/**
 * Issue 16 item 6: a process warning fails the test run. The preload (test/preload/fail-on-warning.mjs)
 * is loaded by every suite's ava config; here a child process with it emits a DeprecationWarning and
 * must exit non-zero, naming the warning, while one without a warning exits 0. The pg warning the
 * issue found (showRun's multi-relation include in one transaction) is exercised by every test that
 * shows a run (e.g. test/examples/testing-kit.test.ts), which this preload now fails on a warning.
 */
import { spawnSync } from "node:child_process";
import test from "ava";

const ROOT = new URL("../..", import.meta.url).pathname;
const run = (code: string) => spawnSync(process.execPath, ["--import=./test/preload/fail-on-warning.mjs", "-e", code], { cwd: ROOT, encoding: "utf8" });

test("a DeprecationWarning makes the process fail, naming the warning", (t) => {
  const res = run("process.emitWarning('Calling client.query() when the client is already executing a query', 'DeprecationWarning'); setTimeout(() => {}, 50);");
  t.not(res.status, 0);
  t.regex(res.stderr, /A process warning fails the test run/);
  t.regex(res.stderr, /DeprecationWarning: Calling client\.query\(\)/);
});

test("a process without a warning exits 0", (t) => {
  const res = run("setTimeout(() => {}, 10);");
  t.is(res.status, 0, res.stderr);
});
