/**
 * Every process checks at start that Redis persists queued commands (issue 8 item 8):
 * `CONFIG GET appendonly` / `maxmemory-policy`. A warning in development; in production a refusal
 * to start on a Redis that evicts keys, unless SLOTFLOW_ALLOW_VOLATILE_REDIS=1, and a warning on
 * one without AOF (issue 34 item 3: a 202 is recorded in PostgreSQL, so a restart that keeps
 * nothing loses no promise). Against redis-servers of the test's own.
 */
import test from "ava";
import { spawn } from "node:child_process";
import { dropDatabase, freshDatabase } from "../helpers/db.js";
import { ROOT } from "../helpers/server.js";
import { startRedis, type RedisServer } from "../helpers/services.js";
import { cliEntry } from "../helpers/cli-entry.js";

let volatile: RedisServer;
let evicting: RedisServer;
let durable: RedisServer;
let databaseUrl: string;

test.before(async () => {
  databaseUrl = await freshDatabase("persist");
  [volatile, evicting, durable] = await Promise.all([startRedis({ appendonly: false }), startRedis({ appendonly: true, policy: "allkeys-lru" }), startRedis({ appendonly: true })]);
});
test.after.always(async () => {
  await Promise.all([volatile, evicting, durable].map((r) => r?.destroy()));
  if (databaseUrl) await dropDatabase(databaseUrl);
});

const WARNING = "Redis does not persist queued commands";

/** Starts `slotflow <role>`; resolves with its output once it is ready (then stops it) or once it exits. */
function run(role: string, env: NodeJS.ProcessEnv): Promise<{ ready: boolean; code: number | null; output: string }> {
  const child = spawn(process.execPath, [...cliEntry(), role], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      SLOTFLOW_ADMIN_TOKEN: "t",
      SLOTFLOW_JWT_SECRET: "t",
      SLOTFLOW_SEAL_KEY: "t",
      SLOTFLOW_QUEUE_PREFIX: "sft-persistence",
      PORT: "0",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  return new Promise((resolve) => {
    const onData = (c: Buffer) => {
      output += c.toString("utf8");
      if (output.includes('"msg":"ready"')) {
        child.kill("SIGKILL");
        resolve({ ready: true, code: null, output });
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => resolve({ ready: output.includes('"msg":"ready"'), code, output }));
  });
}

test("in production a worker starts on a Redis without AOF, with a warning naming the setting (issue 34 item 3)", async (t) => {
  const r = await run("worker", { NODE_ENV: "production", REDIS_URL: volatile.url });
  t.true(r.ready, r.output);
  t.true(r.output.includes(WARNING), r.output);
  t.regex(r.output, /appendonly is \\?"no\\?"/);
});

test("in production a web process refuses to start on a Redis that evicts keys", async (t) => {
  const r = await run("web", { NODE_ENV: "production", REDIS_URL: evicting.url });
  t.false(r.ready, r.output);
  t.is(r.code, 1);
  t.regex(r.output, /maxmemory-policy is \\?"allkeys-lru\\?"/);
  t.true(r.output.includes("SLOTFLOW_ALLOW_VOLATILE_REDIS"), r.output);
});

test("in production SLOTFLOW_ALLOW_VOLATILE_REDIS=1 starts the sweeper on an evicting Redis anyway, with a warning", async (t) => {
  const r = await run("sweeper", { NODE_ENV: "production", REDIS_URL: evicting.url, SLOTFLOW_ALLOW_VOLATILE_REDIS: "1" });
  t.true(r.ready, r.output);
  t.true(r.output.includes(WARNING), r.output);
});

test("in development a volatile Redis is a warning, not a refusal", async (t) => {
  const r = await run("worker", { NODE_ENV: "development", REDIS_URL: volatile.url });
  t.true(r.ready, r.output);
  t.true(r.output.includes(WARNING), r.output);
});

test("in production a Redis with appendonly yes and noeviction starts without a warning", async (t) => {
  const r = await run("worker", { NODE_ENV: "production", REDIS_URL: durable.url });
  t.true(r.ready, r.output);
  t.false(r.output.includes(WARNING), r.output);
});
