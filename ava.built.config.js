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
  // two test files at once on 2 cores: the suite is bound by CPU, and a third file at once made
  // every file longer and so costlier (idle servers sweep, waits poll, per wall second) — measured
  // on one machine, one after the other: 967 s at two, longer at three (docs/testing.md, "Round five")
  concurrency: 2,
};
