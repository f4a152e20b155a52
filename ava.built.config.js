// What `npm test` runs (issue 39 item 4): every test file as the JavaScript that
// scripts/test-prepare.mjs wrote to .tmp/tests/ (the typecheck's output), so no test process pays
// for a TypeScript loader. The same settings as package.json's "ava" (which `npx ava test/x.test.ts`
// uses to run one file from its sources), without tsx and the slotflow-src condition: a test that
// imports the package by name ("slotflow/testing") gets the build in dist/, made by the same step.
export default {
  files: [".tmp/tests/test/**/*.test.js"],
  nodeArguments: ["--import=./test/preload/fail-on-warning.mjs", "--import=./test/preload/durations.mjs"],
  workerThreads: false,
  timeout: "60s",
  // three test files at once on 2 cores: most end-to-end files wait (sweeps, timers, outages,
  // browsers) more than they compute — one npm test's files spent 1,712 s of wall time for 831 s of
  // CPU at concurrency 2 — so a third keeps both cores busy (docs/testing.md, "Round four")
  concurrency: 3,
};
