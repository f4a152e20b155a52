/**
 * The job retry policy (src/queue/retry.ts, issue 8 item 8): which failures are retried until the
 * command is applied, which end the job, and the capped backoff between attempts.
 */
import test from "ava";
import { UnrecoverableError } from "bullmq";
import pg from "pg";
import { RETRY_MAX_DELAY_MS, cappedBackoff, classifyFailure, decideRetry } from "../../src/queue/retry.js";

test("a refused PostgreSQL connection is an infrastructure failure, retried however often it failed before", async (t) => {
  const client = new pg.Client({ connectionString: "postgresql://postgres@127.0.0.1:1/none", connectionTimeoutMillis: 2000 });
  const err = await client.connect().then(() => null, (e: unknown) => e);
  t.truthy(err);
  t.is(classifyFailure(err), "infrastructure");
  t.is(decideRetry(err, 10_000), "retry");
});

test("PostgreSQL shutdown, serialization failures, deadlocks and Prisma connection codes are infrastructure failures", (t) => {
  for (const code of ["57P01", "40001", "40P01", "08006", "P1001", "P1017", "P2028", "P2034", "ECONNRESET"]) {
    t.is(classifyFailure(Object.assign(new Error("x"), { code })), "infrastructure", code);
  }
  t.is(classifyFailure(new Error("Connection terminated unexpectedly")), "infrastructure");
  t.is(classifyFailure(new Error("wrapped", { cause: { kind: "DatabaseNotReachable" } })), "infrastructure");
  t.is(classifyFailure(Object.assign(new Error("Connection is closed."), { name: "Error" })), "infrastructure");
});

test("values PostgreSQL cannot store, constraint violations, validation errors and programming errors end the job at once", (t) => {
  for (const code of ["22P05", "22021", "23505", "42703"]) {
    t.is(decideRetry(Object.assign(new Error("x"), { code }), 0), "end", code);
  }
  t.is(decideRetry(new TypeError("x is undefined"), 0), "end");
  t.is(decideRetry(new UnrecoverableError("bad"), 0), "end");
  t.is(decideRetry(Object.assign(new Error("bad job"), { name: "ValidationError" }), 0), "end");
});

test("an error of unknown kind is retried until the job has failed five times in all", (t) => {
  const err = new Error("unknown sealed value version");
  t.is(classifyFailure(err), "unknown");
  t.deepEqual([0, 1, 2, 3, 4].map((n) => decideRetry(err, n)), ["retry", "retry", "retry", "retry", "end"]);
});

test("the backoff doubles from 250 ms and is capped at 5 s (within ±20 % jitter)", (t) => {
  const mid = () => 0.5;
  t.deepEqual([1, 2, 3, 4, 5, 6, 7, 100, 1e9].map((n) => cappedBackoff(n, mid)), [250, 500, 1000, 2000, 4000, 5000, 5000, 5000, 5000]);
  t.is(cappedBackoff(50, () => 1), RETRY_MAX_DELAY_MS * 1.2);
  t.is(cappedBackoff(50, () => 0), RETRY_MAX_DELAY_MS * 0.8);
});

test("a write refused by a read-only server (a standby not yet promoted during a failover, 25006) is an infrastructure failure (issue 17)", (t) => {
  const err = Object.assign(new Error("cannot execute UPDATE in a read-only transaction"), { code: "25006" });
  t.is(classifyFailure(err), "infrastructure");
  t.is(decideRetry(err, 100), "retry");
});
