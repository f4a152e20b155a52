/**
 * How the tests' waits poll (test/helpers/server.ts `eventually`, test/helpers/mail.ts
 * `waitForEmail`).
 */

/**
 * The pause before poll number `attempt` (0-based) of a wait: 25 ms, then doubling to at most
 * 200 ms. On this 2-core CI machine CPU, not wall time, is what a test run runs out of, and a wait
 * that polls a server every 50 ms for seconds (a sweep, a retry, an outage) spends the test
 * process's, the server's and PostgreSQL's CPU on every poll; backing off keeps a quick condition
 * quick and a slow one cheap, at most 200 ms later than seen (docs/testing.md, "Round five").
 */
export function pollPause(attempt: number): number {
  return Math.min(200, 25 * 2 ** Math.min(attempt, 3));
}
