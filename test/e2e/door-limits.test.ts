/**
 * Rate limits on sign-in, task POSTs, the raise API and Slack interactions (interfaces.md v0.5
 * "Security, round two", last bullet; issue 38), against a real `slotflow serve` with
 * SLOTFLOW_RATE_LIMIT_PER_MINUTE=3: each door lets a client through 3 times a minute, then answers
 * 429 `rate-limited` with `Retry-After`, as the callback endpoint does — before any handler runs —
 * and each door counts on its own. The limiter is src/web/door-limits.ts.
 */
import test from "ava";
import { randomUUID } from "node:crypto";
import { doorOf } from "../../src/web/door-limits.js";
import { rawRequest } from "../helpers/callback.js";
import { dropDatabase } from "../helpers/db.js";
import { startCluster, type Cluster } from "../helpers/server.js";

let cluster: Cluster;
let port = 0;

test.before(async () => {
  cluster = await startCluster("doorlimits", { env: { SLOTFLOW_RATE_LIMIT_PER_MINUTE: "3", SLOTFLOW_DEV_SIGN_IN: "1" } });
  port = Number(new URL(cluster.baseUrl).port);
});

test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

/** Sends `send` four times: the first three pass the limiter (whatever the handler answers), the fourth is 429 with Retry-After. */
async function fourth(t: import("ava").ExecutionContext, what: string, send: () => ReturnType<typeof rawRequest>): Promise<void> {
  for (let i = 0; i < 3; i++) {
    const res = await send();
    t.not(res.status, 429, `${what} #${i + 1}`);
  }
  const over = await send();
  t.is(over.status, 429, what);
  t.is(over.body?.code, "rate-limited", what);
  t.regex(String(over.headers["retry-after"]), /^\d+$/, what);
  t.true(Number(over.headers["retry-after"]) >= 1 && Number(over.headers["retry-after"]) <= 60, what);
}

test.serial("sign-in: the fourth /auth/login of a minute is 429 with Retry-After", async (t) => {
  await fourth(t, "sign-in", () => rawRequest({ port, method: "GET", path: "/auth/login", headers: { accept: "text/html" } }));
  // the same door under another spelling is counted too
  t.is((await rawRequest({ port, method: "GET", path: "/AUTH/LOGIN/" })).status, 429);
});

test.serial("task POSTs: the fourth POST to a task page is 429", async (t) => {
  const path = `/inbox/tasks/${randomUUID()}/decision`;
  await fourth(t, "task", () => rawRequest({ port, method: "POST", path, headers: { "content-type": "application/x-www-form-urlencoded" }, body: "csrf=x" }));
});

test.serial("the raise API: the fourth raise is 429, before the token is even read", async (t) => {
  const path = `/api/runs/${randomUUID()}/slots/decision/events`;
  await fourth(t, "raise", () => rawRequest({ port, method: "POST", path, headers: { "content-type": "application/json" }, body: "{}" }));
});

test.serial("Slack interactions: the fourth POST is 429", async (t) => {
  await fourth(t, "slack", () => rawRequest({ port, method: "POST", path: "/api/slack/interactions", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "payload=%7B%7D" }));
});

test.serial("each door counts on its own; other routes are not counted by them", async (t) => {
  // every door above is spent; a GET of the inbox API and the health check are untouched
  t.not((await rawRequest({ port, method: "GET", path: "/healthz" })).status, 429);
  t.not((await rawRequest({ port, method: "GET", path: "/api/inbox" })).status, 429);
  t.not((await rawRequest({ port, method: "GET", path: "/" })).status, 429);
});

test("which requests each door counts", (t) => {
  t.is(doorOf("GET", "/auth/login"), "sign-in");
  t.is(doorOf("POST", "/auth/login"), "sign-in");
  t.is(doorOf("GET", "/Auth/Callback/"), "sign-in");
  t.is(doorOf("POST", "/auth/logout"), null);
  t.is(doorOf("POST", "/inbox/tasks/r/a"), "task");
  t.is(doorOf("GET", "/inbox/tasks/r/a"), null);
  t.is(doorOf("POST", "/api/runs/r/slots/a/events"), "raise");
  t.is(doorOf("POST", "/API/Runs/r/slots/a/events/"), "raise");
  t.is(doorOf("POST", "/api/slack/interactions"), "slack");
  t.is(doorOf("POST", "/api/workflow/callback/x"), null, "the callback endpoint keeps its own limiter");
  t.is(doorOf("POST", "/mcp"), null);
});
