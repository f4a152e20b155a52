/**
 * What a command checks before it does anything, and how an expected failure is reported
 * (issue 9 §3): one line naming what failed, where, and the variable that points at it, then
 * exit code 1 — never a stack trace, never a hang.
 *
 *   cannot reach PostgreSQL at postgresql://postgres@127.0.0.1:5499/slotflow (DATABASE_URL)
 *   database "slotflow" does not exist at postgresql://postgres@127.0.0.1:5432 (DATABASE_URL): run `slotflow migrate`
 *   database "slotflow" has 2 pending migrations (DATABASE_URL): run `slotflow migrate`
 *   cannot reach Redis at redis://127.0.0.1:6499 (REDIS_URL)
 *   port 3000 is already in use (PORT)
 *   cannot reach the slotflow server at http://localhost:3000 (--url or BASE_URL)
 *
 * `preflight()` is the start-up sequence of the long-running roles, in order; each step fails with
 * one line and nothing after it runs (so a busy port is reported before anything is migrated):
 *   1. configuration, with the secrets the roles need (web: all three; worker, sweeper: the seal key)
 *   2. the web port is free (a worker's or sweeper's SLOTFLOW_METRICS_PORT, when set)
 *   3. PostgreSQL answers, the database exists and is migrated (`--migrate`: applies migrations first);
 *      in production a web process also needs SLOTFLOW_WORKER_TOKEN when a deployed workflow has a
 *      `call task` (`checkWorkerToken`, issue 41 item 3)
 *   4. Redis answers, in the configured topology, and can run BullMQ's multi-key scripts on each
 *      queue shard's keys (issue 17 item 5: a Cluster given as one node answers CROSSSLOT/MOVED, a
 *      Sentinel that names no master, a replica that is READONLY — each one line, exit 1)
 * It loads no engine, web or queue module, so a failure is reported within a few seconds.
 *
 * Passwords in URLs are printed as `***` (failure.ts prints the line). Each check gives up within
 * CONNECT_TIMEOUT_MS.
 */
import { createServer } from "node:net";
import pg from "pg";
import { loadConfig, type Config, type SecretName } from "../config.js";
import { probeLayout, redisClient, redisVariable, redisWhere, type RedisConfig } from "../queue/redis.js";
import { allShards, parseShardList, shardPrefix, type ShardConfig } from "../queue/shards.js";
import { listMigrations, migrate } from "../migrate.js";
import { redactUrl, StartupError } from "./failure.js";

export { StartupError };

/** How long a check waits for PostgreSQL or Redis to accept a connection. */
export const CONNECT_TIMEOUT_MS = 3000;

/** Error codes that mean "nobody answered there" (connection refused, no route, no such host, timeout). */
const UNREACHABLE = new Set(["ECONNREFUSED", "ECONNRESET", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "EPIPE"]);

function errorCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; cause?: { code?: unknown }; errors?: { code?: unknown }[] };
  const code = e?.code ?? e?.cause?.code ?? e?.errors?.[0]?.code;
  return typeof code === "string" ? code : undefined;
}

/** True when `err` carries a network error code (nobody answered there). */
export function isUnreachable(err: unknown): boolean {
  const code = errorCode(err);
  return code !== undefined && UNREACHABLE.has(code);
}

/** A PostgreSQL server error carries a five-character SQLSTATE code. */
function sqlState(err: unknown): string | undefined {
  const code = errorCode(err);
  return code !== undefined && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/**
 * Turns an error from PostgreSQL into a StartupError when it is an expected condition
 * (unreachable, database missing, login refused); returns `err` unchanged otherwise.
 * `connecting`: the error came from opening the connection, so an error without a SQLSTATE
 * (a connect timeout) also means unreachable.
 */
export function postgresFailure(err: unknown, databaseUrl: string, connecting = false): unknown {
  const where = redactUrl(databaseUrl);
  const state = sqlState(err);
  if (isUnreachable(err) || (connecting && state === undefined && !(err instanceof StartupError))) {
    return new StartupError(`cannot reach PostgreSQL at ${where} (DATABASE_URL)`);
  }
  if (state === "3D000") {
    const u = new URL(databaseUrl);
    const name = decodeURIComponent(u.pathname.slice(1));
    u.pathname = "";
    return new StartupError(`database "${name}" does not exist at ${redactUrl(u.toString())} (DATABASE_URL): run \`slotflow migrate\``);
  }
  if (state === "28P01" || state === "28000") {
    return new StartupError(`PostgreSQL at ${where} refused the login: ${(err as Error).message} (DATABASE_URL)`);
  }
  return err;
}

/**
 * Redis's error from connecting, PING or the layout probe as a StartupError (an answer is quoted;
 * anything else is unreachable). `config` may be a bare REDIS_URL.
 */
export function redisFailure(err: unknown, config: string | RedisConfig): StartupError {
  const c: RedisConfig = typeof config === "string" ? { redisUrl: config } : config;
  const variable = redisVariable(c);
  const message = (err as Error)?.message ?? String(err);
  if ((err as Error)?.name === "ReplyError") {
    const hint = /^(CROSSSLOT|MOVED|ASK|CLUSTERDOWN)/.test(message) && !c.redisClusterNodes ? ": this is a Redis Cluster; set REDIS_CLUSTER_NODES" : "";
    if (variable === "REDIS_URL") return new StartupError(`Redis at ${redactUrl(c.redisUrl)} answered: ${message}${hint} (REDIS_URL)`);
    return new StartupError(`${redisWhere(c)} answered: ${message}${hint} (${variable})`);
  }
  if (variable === "REDIS_URL") return new StartupError(`cannot reach Redis at ${redactUrl(c.redisUrl)} (REDIS_URL)`);
  const why = /sentinel|master/i.test(message) ? `: ${message}` : "";
  return new StartupError(`cannot reach ${redisWhere(c)}${why} (${variable})`);
}

/** Resolves when `port` can be listened on; rejects with a StartupError naming `variable` when it is taken. */
export async function checkPortFree(port: number, variable = "PORT"): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once("error", (err: NodeJS.ErrnoException) =>
      reject(err.code === "EADDRINUSE" || err.code === "EACCES" ? portFailure(err, port, variable) : err),
    );
    probe.listen(port, () => probe.close(() => resolve()));
  });
}

function portFailure(err: NodeJS.ErrnoException, port: number, variable: string): StartupError {
  return new StartupError(err.code === "EACCES" ? `port ${port} needs privileges this process does not have (${variable})` : `port ${port} is already in use (${variable})`);
}

/**
 * Checks that PostgreSQL answers at `databaseUrl`, that the database exists and, unless
 * `pendingAllowed`, that every migration this version ships is applied.
 */
export async function checkPostgres(databaseUrl: string, opts: { pendingAllowed?: boolean } = {}): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  client.on("error", () => undefined);
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => undefined);
    throw postgresFailure(err, databaseUrl, true);
  }
  try {
    if (opts.pendingAllowed) return;
    const table = await client.query<{ present: boolean }>(`SELECT to_regclass('"_prisma_migrations"') IS NOT NULL AS present`);
    const applied = table.rows[0]?.present
      ? new Set((await client.query<{ migration_name: string }>(`SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL`)).rows.map((r) => r.migration_name))
      : new Set<string>();
    const pending = listMigrations().filter((name) => !applied.has(name));
    if (pending.length > 0) {
      const name = decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
      const count = pending.length === 1 ? "1 pending migration" : `${pending.length} pending migrations`;
      throw new StartupError(`database "${name}" has ${count} (DATABASE_URL): run \`slotflow migrate\``);
    }
  } catch (err) {
    throw postgresFailure(err, databaseUrl);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Checks that Redis answers PING in the configured topology (REDIS_URL, REDIS_CLUSTER_NODES or
 * REDIS_SENTINELS) and that each queue shard's key layout can run a multi-key script there
 * (`probeLayout`), without retrying; within about CONNECT_TIMEOUT_MS.
 */
export async function checkRedis(config: string | (RedisConfig & ShardConfig)): Promise<void> {
  const c = typeof config === "string" ? { redisUrl: config, queuePrefix: "slotflow" } : config;
  const redis = redisClient(c, { probe: true, connectTimeoutMs: CONNECT_TIMEOUT_MS });
  redis.on("error", () => undefined);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("no answer")), CONNECT_TIMEOUT_MS * 2);
  });
  try {
    await Promise.race([
      (async () => {
        await redis.connect();
        await redis.ping();
        if (typeof config !== "string") for (const shard of allShards(c)) await probeLayout(redis, shardPrefix(c, shard));
      })(),
      late,
    ]);
  } catch (err) {
    throw redisFailure(err, config);
  } finally {
    clearTimeout(timer);
    redis.disconnect();
  }
}

/** `slotflow worker --shards LIST` checked against SLOTFLOW_QUEUE_SHARDS; a bad list is a StartupError. */
export function shardsOption(raw: string, count: number): number[] {
  try {
    return parseShardList(raw, count);
  } catch (err) {
    throw new StartupError((err as Error).message);
  }
}

/** Which long-running roles a process runs. */
export interface Roles {
  web: boolean;
  worker: boolean;
  sweeper: boolean;
}

/** Secrets the roles need: the web process all three; workers and the sweeper only the seal key. */
function secretsFor(roles: Roles): SecretName[] {
  return roles.web ? ["SLOTFLOW_ADMIN_TOKEN", "SLOTFLOW_JWT_SECRET", "SLOTFLOW_SEAL_KEY", "SLOTFLOW_SESSION_SECRET"] : ["SLOTFLOW_SEAL_KEY"];
}

/** The start-up sequence above; resolves the checked configuration. Rejects with ConfigError or StartupError. */
export async function preflight(roles: Roles, opts: { migrate?: boolean } = {}): Promise<Config> {
  const config = loadConfig(process.env, { secrets: secretsFor(roles) });
  if (roles.web) await checkPortFree(config.port);
  if (config.metricsPort !== null) await checkPortFree(config.metricsPort, "SLOTFLOW_METRICS_PORT"); // every role (issue 16 item 5)
  if (opts.migrate) await migrate(config.databaseUrl).catch((err: unknown) => Promise.reject(postgresFailure(err, config.databaseUrl)));
  await checkPostgres(config.databaseUrl);
  if (roles.web && config.nodeEnv === "production" && config.workerTokens.length === 0) await checkWorkerToken(config.databaseUrl);
  await checkRedis(config);
  return config;
}

/**
 * SLOTFLOW_WORKER_TOKEN is required in production when a deployed workflow has a `call task`
 * (v0.5 SDK, issue 41 item 3; interfaces.md "The TypeScript SDK"): without it, the web process of
 * such a deployment refuses to start, with one line naming the workflow and the variable.
 */
export async function checkWorkerToken(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  client.on("error", () => undefined);
  let name: string | undefined;
  try {
    await client.connect();
    const rows = await client.query<{ workflow_name: string }>(
      `SELECT workflow_name FROM workflow_versions
        WHERE jsonb_path_exists(compiled::jsonb, 'lax $.** ? (@.type == "task" && exists(@.task))') ORDER BY workflow_name LIMIT 1`,
    );
    name = rows.rows[0]?.workflow_name;
  } catch (err) {
    throw postgresFailure(err, databaseUrl);
  } finally {
    await client.end().catch(() => undefined);
  }
  if (name !== undefined) {
    throw new StartupError(`workflow "${name}" has a \`call task\`, and task workers need a token of their own in production: set SLOTFLOW_WORKER_TOKEN (comma-separated tokens for rotation)`);
  }
}
