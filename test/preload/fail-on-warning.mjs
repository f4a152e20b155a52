/**
 * Preloaded into every test process of the three suites (`npm test`, `npm run test:fuzz`,
 * `npm run test:faults`; the `nodeArguments` of package.json "ava", ava.fuzz.config.js and
 * ava.faults.config.js), issue 16 item 6: any process warning — a DeprecationWarning such as pg's
 * "client is already executing a query", a MaxListenersExceededWarning, an unhandled-rejection
 * warning — fails the test file that emitted it, so no new warning slips in. The warning is
 * printed with its stack, and rethrown as an uncaught exception, which ava reports as a failure.
 */
process.on("warning", (warning) => {
  const text = `${warning.name}: ${warning.message}${warning.stack ? `\n${warning.stack}` : ""}`;
  process.exitCode = 1;
  setImmediate(() => {
    throw new Error(`A process warning fails the test run (test/preload/fail-on-warning.mjs):\n${text}`);
  });
});
