// The fuzz suite (`npm run test:fuzz`): test/fuzz/*.fuzz.ts, which the default `npm test` glob
// (test/**/*.test.ts) does not pick up.
export default {
  files: ["test/fuzz/**/*.fuzz.ts"],
  extensions: { ts: "module" },
  nodeArguments: ["--import=tsx", "--import=./test/preload/fail-on-warning.mjs", "--import=./test/preload/durations.mjs"],
  workerThreads: false,
  timeout: "4m",
  concurrency: 1,
};
