/**
 * Compilation on the compiler thread (src/lang/compile-async.ts; issue 8 item 17): the same result
 * as compiling in process, and the calling thread's event loop keeps turning meanwhile; the thread
 * ends IDLE_MS after its last compilation and the next compilation starts it again (issue 22).
 */
import test from "ava";
import { readFileSync } from "node:fs";
import { generateAllErrors } from "../../bench/compile.js";
import { compileOffThread, compilerThreadRunning, IDLE_MS } from "../../src/lang/compile-async.js";
import { compile } from "../../src/lang/compile.js";

test("the compiler thread answers what compile() answers", async (t) => {
  const source = readFileSync("examples/vendor-approval.flow", "utf8");
  const local = compile(source, "v.flow");
  const remote = await compileOffThread(source, "v.flow");
  t.deepEqual(remote.diagnostics, local.diagnostics);
  t.deepEqual(remote.workflow, JSON.parse(JSON.stringify(local.workflow)));
  const bad = await compileOffThread("workflow W\ninitial state S { enter { let a = nope } }\nterminal state T\n", "b.flow");
  t.is(bad.workflow, null);
  t.true(bad.diagnostics.some((d) => d.code === "FLOW105"));
});

test("the event loop keeps turning while a 1 MB all-errors source compiles", async (t) => {
  await compileOffThread("workflow Warm\ninitial state S\nterminal state T\n"); // the thread is up
  let turns = 0;
  let running = true;
  const spin = () => {
    turns++;
    if (running) setImmediate(spin);
  };
  setImmediate(spin);
  const result = await compileOffThread(generateAllErrors(1024 * 1024, "type"), "big.flow");
  running = false;
  t.is(result.diagnostics.at(-1)?.code, "FLOW008");
  // Compiled in this thread, the loop could not have turned once before the result arrived.
  t.true(turns > 1, `turns: ${turns}`);
});

test.serial("the compiler thread ends IDLE_MS after its last compilation; the next compilation starts it again (issue 22)", async (t) => {
  t.timeout(IDLE_MS + 30_000);
  const source = "workflow Idle\ninitial state S\nterminal state T\n";
  t.is((await compileOffThread(source)).workflow?.name, "Idle");
  t.true(compilerThreadRunning());
  await new Promise((r) => setTimeout(r, IDLE_MS + 1000));
  t.false(compilerThreadRunning());
  t.is((await compileOffThread(source)).workflow?.name, "Idle");
  t.true(compilerThreadRunning());
});

test.serial("a compilation sent the moment the idle thread is ended goes to the new thread, not the ended thread's exit (issue 39: a deploy refused FLOW999 'the compiler thread exited (code 1)')", async (t) => {
  t.timeout(IDLE_MS + 30_000);
  const source = "workflow Idle\ninitial state S\nterminal state T\n";
  t.is((await compileOffThread(source)).workflow?.name, "Idle");
  // the recorded fact, not a sleep: the idle timer has ended the thread (its exit not yet seen)
  while (compilerThreadRunning()) await new Promise((r) => setImmediate(r));
  const r = await compileOffThread(source);
  t.deepEqual(r.diagnostics.filter((d) => d.severity === "error"), []);
  t.is(r.workflow?.name, "Idle");
});
