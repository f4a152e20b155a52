/**
 * Preloaded into every test process (issue 34 item 1): when SLOTFLOW_TEST_DURATIONS names a file,
 * each ava worker process appends one JSON line `{"file": "<test file>", "ms": <wall ms from the
 * process's start to its exit>}` to it, so `.ci/run` can print the slowest test files at the end
 * (scripts/test-durations.mjs). ava forks one process per test file (`workerThreads: false`) and
 * sends it the file in its first IPC message, `{ava: {type: "options", options: {file}}}`; the
 * listener is removed as soon as that message is seen, so it never keeps the process alive.
 *
 * Each line also carries `cpuMs`: the CPU time (user + system, ms) of the test process itself and
 * of every child it started and reaped (spawned slotflow processes, PgBouncer, Redis, Chromium…;
 * Linux's cutime/cstime of /proc/self/stat) — on a 2-core machine CPU, not wall time, is what the
 * suite runs out of, so this is the figure that says which file costs the suite most.
 */
import { appendFileSync, readFileSync } from "node:fs";
import { relative } from "node:path";

const out = process.env.SLOTFLOW_TEST_DURATIONS;
/** CPU ms of this process and its reaped children (Linux); this process's own elsewhere. */
function cpuMs() {
  const own = process.cpuUsage();
  let children = 0;
  try {
    // /proc/self/stat: fields after the command's closing parenthesis; cutime and cstime are the
    // 14th and 15th of those (fields 16 and 17 of proc(5)), in clock ticks (USER_HZ, 100 on Linux)
    const stat = readFileSync("/proc/self/stat", "utf8");
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    children = (Number(rest[13]) + Number(rest[14])) * 10;
  } catch {
    children = 0;
  }
  return Math.round((own.user + own.system) / 1000 + children);
}

if (out && process.send) {
  const started = performance.now();
  let file = "";
  const onMessage = (message) => {
    if (message?.ava?.type !== "options") return;
    file = relative(process.cwd(), String(message.ava.options?.file ?? "").replace(/^file:\/\//, ""))
      // npm test runs the compiled copy (.tmp/tests/test/x.test.js): name the source file
      .replace(/^\.tmp\/tests\/(.*)\.js$/, "$1.ts");
    process.off("message", onMessage);
  };
  process.on("message", onMessage);
  process.on("exit", () => {
    if (!file) return;
    appendFileSync(out, `${JSON.stringify({ file, ms: Math.round(performance.now() - started), cpuMs: cpuMs() })}\n`);
  });
}
