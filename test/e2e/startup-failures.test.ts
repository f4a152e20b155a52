/**
 * Start-up and dependencies (issue 9 §3): every command that cannot reach what it needs prints one
 * line naming what, where and the variable, and exits 1 — no stack trace, no hang. Each case spawns
 * the real CLI and asserts the exact line and the exit code. A port in use is reported before
 * anything is migrated; production lists every missing secret at once; `migrate` needs only
 * DATABASE_URL and `token` only the JWT secret.
 */
import test from "ava";
import { spawn } from "node:child_process";
import { createServer, type Server } from "node:net";
import { dropDatabase, freshDatabase, sql } from "../helpers/db.js";
import { freePort, ROOT } from "../helpers/server.js";
import { cliEntry } from "../helpers/cli-entry.js";

interface Exit {
  code: number | null;
  stdout: string[];
  stderr: string[];
}

/** At most two CLI processes at a time, so a loaded machine does not starve them. */
let running = 0;
const queued: (() => void)[] = [];
async function slot<T>(fn: () => Promise<T>): Promise<T> {
  if (running >= 2) await new Promise<void>((resolve) => queued.push(resolve));
  running++;
  try {
    return await fn();
  } finally {
    running--;
    queued.shift()?.();
  }
}

/** Runs `slotflow ...args` with `env` over a clean base (no secrets, no URLs from the caller). */
function cli(args: string[], env: NodeJS.ProcessEnv): Promise<Exit> {
  return slot(() => spawnCli(args, env));
}

function spawnCli(args: string[], env: NodeJS.ProcessEnv): Promise<Exit> {
  const base: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, SLOTFLOW_QUEUE_PREFIX: process.env.SLOTFLOW_QUEUE_PREFIX || "slotflow-startup" };
  const child = spawn(process.execPath, [...cliEntry(), ...args], { cwd: ROOT, env: { ...base, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString("utf8")));
  child.stderr.on("data", (c: Buffer) => (err += c.toString("utf8")));
  const killer = setTimeout(() => child.kill("SIGKILL"), 50_000);
  return new Promise((resolve) =>
    child.once("close", (code) => {
      clearTimeout(killer);
      const lines = (s: string) => s.split("\n").filter((l) => l !== "");
      resolve({ code, stdout: lines(out), stderr: lines(err) });
    }),
  );
}

const SERVER = new URL(process.env.DATABASE_URL || "postgresql://postgres@127.0.0.1:5432/slotflow");
const REDIS = process.env.REDIS_URL || "redis://127.0.0.1:6379";
const dbUrl = (name: string) => {
  const u = new URL(SERVER.toString());
  u.pathname = `/${name}`;
  return u.toString();
};
const prefix = () => process.env.SLOTFLOW_TEST_DB_PREFIX || "slotflow_t";

let migrated = "";
let closedPort = 0;
test.before(async () => {
  migrated = await freshDatabase("startup");
  closedPort = await freePort();
});
test.after.always(async () => {
  if (migrated) await dropDatabase(migrated);
});

for (const role of ["serve", "web", "worker", "sweeper", "migrate"]) {
  test(`${role}: PostgreSQL unreachable is one line naming it and DATABASE_URL, exit 1`, async (t) => {
    const url = `postgresql://postgres:hunter2@127.0.0.1:${closedPort}/slotflow`;
    const r = await cli([role], { DATABASE_URL: url, REDIS_URL: REDIS, PORT: String(await freePort()) });
    t.is(r.code, 1);
    t.deepEqual(r.stderr, [`error: cannot reach PostgreSQL at postgresql://postgres:***@127.0.0.1:${closedPort}/slotflow (DATABASE_URL)`]);
    t.deepEqual(r.stdout, []);
  });
}

for (const role of ["serve", "web", "worker", "sweeper"]) {
  test(`${role}: Redis unreachable is one line naming it and REDIS_URL, exit 1`, async (t) => {
    const r = await cli([role], { DATABASE_URL: migrated, REDIS_URL: `redis://127.0.0.1:${closedPort}`, PORT: String(await freePort()) });
    t.is(r.code, 1);
    t.deepEqual(r.stderr, [`error: cannot reach Redis at redis://127.0.0.1:${closedPort} (REDIS_URL)`]);
    t.deepEqual(r.stdout, []);
  });
}

test("a missing database is one line telling to migrate, and the server never says ready", async (t) => {
  const name = `${prefix()}_missing_db`;
  const r = await cli(["serve"], { DATABASE_URL: dbUrl(name), REDIS_URL: REDIS, PORT: String(await freePort()) });
  t.is(r.code, 1);
  const server = new URL(SERVER.toString());
  server.pathname = "";
  t.deepEqual(r.stderr, [`error: database "${name}" does not exist at ${server.toString().replace(/\/$/, "")} (DATABASE_URL): run \`slotflow migrate\``]);
  t.deepEqual(r.stdout, []);
});

test("a database without the migrations is one line telling to migrate", async (t) => {
  const name = `${prefix()}_unmigrated`;
  await sql(dbUrl("postgres"), `DROP DATABASE IF EXISTS "${name}"`);
  await sql(dbUrl("postgres"), `CREATE DATABASE "${name}"`);
  try {
    const r = await cli(["worker"], { DATABASE_URL: dbUrl(name), REDIS_URL: REDIS });
    t.is(r.code, 1);
    t.is(r.stderr.length, 1);
    t.regex(r.stderr[0], new RegExp(`^error: database "${name}" has \\d+ pending migrations? \\(DATABASE_URL\\): run \`slotflow migrate\`$`));
  } finally {
    await dropDatabase(dbUrl(name));
  }
});

test("a port in use is one line, before anything is migrated", async (t) => {
  const holder: Server = createServer();
  const port = await new Promise<number>((resolve) => holder.listen(0, () => resolve((holder.address() as { port: number }).port)));
  const name = `${prefix()}_port_busy`;
  try {
    const r = await cli(["serve", "--migrate"], { DATABASE_URL: dbUrl(name), REDIS_URL: REDIS, PORT: String(port) });
    t.is(r.code, 1);
    t.deepEqual(r.stderr, [`error: port ${port} is already in use (PORT)`]);
    const created = await sql(dbUrl("postgres"), "SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    t.is(created.length, 0, "serve --migrate created the database although it could not listen");
  } finally {
    holder.close();
    await dropDatabase(dbUrl(name));
  }
});

test("NODE_ENV=production lists every missing secret in one line", async (t) => {
  const r = await cli(["web"], { NODE_ENV: "production", DATABASE_URL: migrated, REDIS_URL: REDIS, PORT: String(await freePort()) });
  t.is(r.code, 1);
  t.deepEqual(r.stderr, ["error: SLOTFLOW_ADMIN_TOKEN is required, as are SLOTFLOW_JWT_SECRET and SLOTFLOW_SEAL_KEY, when NODE_ENV=production"]);
  const worker = await cli(["worker"], { NODE_ENV: "production", DATABASE_URL: migrated, REDIS_URL: REDIS, SLOTFLOW_ADMIN_TOKEN: "set" });
  t.deepEqual(worker.stderr, ["error: SLOTFLOW_SEAL_KEY is required when NODE_ENV=production"]);
});

test("in production, migrate needs only DATABASE_URL and token only the JWT secret", async (t) => {
  const migrateRun = await cli(["migrate"], { NODE_ENV: "production", DATABASE_URL: migrated });
  t.is(migrateRun.code, 0, migrateRun.stderr.join("\n"));
  t.regex(migrateRun.stdout.join("\n"), /migrations: 0 applied, \d+ already applied/);
  const token = await cli(["token", "--sub", "ann"], { NODE_ENV: "production", SLOTFLOW_JWT_SECRET: "prod-jwt" });
  t.is(token.code, 0, token.stderr.join("\n"));
  t.regex(token.stdout[0], /^[\w-]+\.[\w-]+\.[\w-]+$/);
  const noSecret = await cli(["token", "--sub", "ann"], { NODE_ENV: "production", SLOTFLOW_ADMIN_TOKEN: "a", SLOTFLOW_SEAL_KEY: "b" });
  t.is(noSecret.code, 1);
  t.deepEqual(noSecret.stderr, ["error: SLOTFLOW_JWT_SECRET is required when NODE_ENV=production"]);
});

test("issue 28 item 8: slotflow token refuses a lifetime above SLOTFLOW_JWT_MAX_TTL_SECONDS and carries the configured aud and iss", async (t) => {
  const long = await cli(["token", "--sub", "ann", "--ttl", "90000"], { SLOTFLOW_JWT_SECRET: "j" });
  t.is(long.code, 1);
  t.regex(long.stderr.join("\n"), /--ttl must be a whole number of seconds from 1 to 86400 \(SLOTFLOW_JWT_MAX_TTL_SECONDS\), got: 90000/);
  const scoped = await cli(["token", "--sub", "ann", "--ttl", "600"], { SLOTFLOW_JWT_SECRET: "j", SLOTFLOW_JWT_AUDIENCE: "raise", SLOTFLOW_JWT_ISSUER: "https://idp.example" });
  t.is(scoped.code, 0, scoped.stderr.join("\n"));
  const claims = JSON.parse(Buffer.from(scoped.stdout[0]!.split(".")[1]!, "base64url").toString("utf8"));
  t.like(claims, { sub: "ann", aud: "raise", iss: "https://idp.example" });
  t.is(claims.exp - claims.iat, 600);
});

for (const args of [["show", "0"], ["start", "VendorApproval"], ["deploy", "examples/vendor-approval.flow"], ["raise", "0", "decision", "--as", "ann"]]) {
  test(`${args[0]}: an unreachable server is one line naming it and the options, exit 1`, async (t) => {
    const r = await cli(args, { BASE_URL: `http://127.0.0.1:${closedPort}` });
    t.is(r.code, 1);
    t.deepEqual(r.stderr, [`error: cannot reach the slotflow server at http://127.0.0.1:${closedPort} (--url or BASE_URL)`]);
  });
}

test("deploy: a file that cannot be read is one line, before any server is asked", async (t) => {
  const r = await cli(["deploy", "test/fixtures/no-such-file.flow"], { BASE_URL: `http://127.0.0.1:${closedPort}` });
  t.is(r.code, 1);
  t.deepEqual(r.stderr, ["error: cannot read test/fixtures/no-such-file.flow: ENOENT"]);
});

test("a development receipt key sealed under another SLOTFLOW_SEAL_KEY is one line naming the variable, exit 1, no stack trace (issue 38 defect 5)", async (t) => {
  const { createDb } = await import("../../src/db.js");
  const { Sealer } = await import("../../src/engine/sealing/seal.js");
  const { developmentKey } = await import("../../src/engine/receipts/keys.js");
  const url = await freshDatabase("startupseal");
  try {
    // another environment's process kept its development key, sealed under its own seal key
    const db = createDb(url, 1);
    try {
      await developmentKey(db, new Sealer(["another-environments-seal-key"]));
    } finally {
      await db.$disconnect();
    }
    t.is((await sql(url, "SELECT count(*)::int AS n FROM receipt_keys")).at(0)?.n, 1);
    for (const role of ["serve", "web", "worker"]) {
      const r = await cli([role], { DATABASE_URL: url, REDIS_URL: REDIS, PORT: String(await freePort()), SLOTFLOW_SEAL_KEY: "this-environments-seal-key" });
      t.is(r.code, 1, `${role}: ${r.stderr.join("\n")}`);
      t.is(r.stderr.length, 1, `${role}: ${r.stderr.join("\n")}`);
      t.regex(r.stderr[0], /^error: SLOTFLOW_SEAL_KEY cannot open the development receipt key stored in the database \(table receipt_keys\)/, role);
      t.regex(r.stderr[0], /SLOTFLOW_RECEIPT_KEYS$/);
      t.notRegex(r.stderr.join("\n"), /UnsealError|\n\s+at /, role);
      t.false([...r.stdout, ...r.stderr].join("\n").includes("this-environments-seal-key"), "the key is never printed");
    }
  } finally {
    await dropDatabase(url);
  }
});
