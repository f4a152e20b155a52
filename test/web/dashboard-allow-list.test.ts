/**
 * The queue dashboard's allow-list of state-changing requests (src/web/dashboard.ts
 * `dashboardWriteRefusal`): a retry of one failed job and "retry all failed" only. Issue 38
 * (informational): the job-retry pattern `/api/queues/:queue/:jobId/retry` also admitted Bull
 * Board's clean route, `/api/queues/:queue/clean/retry`; a word that names a queue action is never
 * a job id.
 */
import test from "ava";
import { DASHBOARD_HEADER, DASHBOARD_PATH, dashboardWriteRefusal } from "../../src/web/dashboard.js";

/** A same-origin PUT from the dashboard's page to `relative`, with its header. */
function put(relative: string, method = "PUT") {
  const headers: Record<string, string> = { origin: "http://127.0.0.1:3000", "sec-fetch-site": "same-origin", [DASHBOARD_HEADER.toLowerCase()]: "1" };
  return dashboardWriteRefusal({ method, path: `${DASHBOARD_PATH}${relative}`, protocol: "http", host: "127.0.0.1:3000", get: (name: string) => headers[name.toLowerCase()] ?? "" }, false);
}

test("a job's retry and retry-all-failed are kept", (t) => {
  t.is(put("/api/queues/commands/0b6f1c1e-6a43-4c1e-9d1a-2f4b9c7e0a11/retry"), null);
  t.is(put("/api/queues/commands/1234/retry"), null);
  t.is(put("/api/queues/mail/retry/failed"), null);
});

test("Bull Board's clean route, and other queue actions shaped like a job retry, are refused 405", (t) => {
  for (const path of ["/api/queues/commands/clean/retry", "/api/queues/commands/CLEAN/retry", "/api/queues/commands/retry/retry", "/api/queues/commands/promote/retry", "/api/queues/commands/empty/retry", "/api/queues/commands/clean/failed", "/api/queues/commands/retry/completed"]) {
    t.like(put(path), { status: 405 }, path);
  }
  t.like(put("/api/queues/commands/1234/retry", "POST"), { status: 405 });
});
