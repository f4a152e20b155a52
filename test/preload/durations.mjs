/**
 * Preloaded into every test process (issue 34 item 1): when SLOTFLOW_TEST_DURATIONS names a file,
 * each ava worker process appends one JSON line `{"file": "<test file>", "ms": <wall ms from the
 * process's start to its exit>}` to it, so `.ci/run` can print the slowest test files at the end
 * (scripts/test-durations.mjs). ava forks one process per test file (`workerThreads: false`) and
 * sends it the file in its first IPC message, `{ava: {type: "options", options: {file}}}`; the
 * listener is removed as soon as that message is seen, so it never keeps the process alive.
 */
import { appendFileSync } from "node:fs";
import { relative } from "node:path";

const out = process.env.SLOTFLOW_TEST_DURATIONS;
if (out && process.send) {
  const started = performance.now();
  let file = "";
  const onMessage = (message) => {
    if (message?.ava?.type !== "options") return;
    file = relative(process.cwd(), String(message.ava.options?.file ?? "").replace(/^file:\/\//, ""));
    process.off("message", onMessage);
  };
  process.on("message", onMessage);
  process.on("exit", () => {
    if (!file) return;
    appendFileSync(out, `${JSON.stringify({ file, ms: Math.round(performance.now() - started) })}\n`);
  });
}
