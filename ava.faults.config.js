// The faults suite (`npm run test:faults`): test/faults/*.ts, one file, serial scenarios, long
// timeouts. Kept out of `npm test` (whose glob is test/**/*.test.ts). See docs/testing.md.
export default {
  files: ["test/faults/**/*.ts"],
  extensions: { ts: "module" },
  nodeArguments: ["--import=tsx", "--import=./test/preload/fail-on-warning.mjs", "--import=./test/preload/durations.mjs"],
  workerThreads: false,
  timeout: "10m",
  concurrency: 1,
};
