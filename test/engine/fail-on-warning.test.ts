/**
 * Issue 16 item 6: a process warning fails the test run. The preload (test/preload/fail-on-warning.mjs)
 * is loaded by every suite's ava config; here a child process with it emits a DeprecationWarning and
 * must exit non-zero, naming the warning, while one without a warning exits 0. The pg warning the
 * issue found (showRun's multi-relation include in one transaction) is exercised by every test that
 * shows a run (e.g. test/examples/testing-kit.test.ts), which this preload now fails on a warning.
 *
 * Spawned slotflow processes (test/helpers/server.ts) do not load the preload: their warnings are
 * collected from their output and fail the test in `stop()`.
 */
import { spawnSync } from "node:child_process";
import test from "ava";
import { dropDatabase } from "../helpers/db.js";
import { isWarningLine, startCluster } from "../helpers/server.js";
import { ROOT } from "../helpers/root.js";


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

test("warning lines of a spawned process: Node's own on stderr and pino's, not ordinary log lines", (t) => {
  t.true(isWarningLine("(node:4242) DeprecationWarning: Calling client.query() when the client is already executing a query"));
  t.true(isWarningLine("(node:4242) [DEP0040] DeprecationWarning: The `punycode` module is deprecated."));
  t.true(isWarningLine("(node:4242) MaxListenersExceededWarning: Possible EventEmitter memory leak detected."));
  t.true(isWarningLine("(node:4242) Warning: Setting the NODE_TLS_REJECT_UNAUTHORIZED environment variable to '0'"));
  t.true(isWarningLine('{"level":40,"err":{"type":"DeprecationWarning","message":"x"},"msg":"process warning"}'));
  t.false(isWarningLine('{"level":40,"msg":"dependency failed","dependency":"redis"}'));
  t.false(isWarningLine("warning: 20240101_init was changed after it was applied"));
  t.false(isWarningLine("(Use `node --trace-deprecation ...` to show where the warning was created)"));
});

test("a spawned slotflow process that prints a warning fails the test that spawned it: its stop() throws naming the warning", async (t) => {
  const cluster = await startCluster("warning");
  try {
    const worker = await cluster.spawn("worker", { env: { NODE_OPTIONS: "--import=./test/fixtures/emit-warning.mjs" } });
    const err = await t.throwsAsync(() => worker.stop());
    t.regex(err!.message, /printed a process warning/);
    t.regex(err!.message, /slotflow worker \(pid \d+\): \(node:\d+\) DeprecationWarning: Calling client\.query\(\)/);
    t.deepEqual(cluster.processes[0].warnings, [], "the serve process printed none");
    await t.throwsAsync(() => cluster.stop(), { message: /slotflow worker/ }, "Cluster.stop() reports it too, after stopping every process");
    t.true(cluster.processes.every((p) => p.child.exitCode !== null || p.child.signalCode !== null));
  } finally {
    await cluster.stop().catch(() => undefined);
    await dropDatabase(cluster.databaseUrl);
  }
});
