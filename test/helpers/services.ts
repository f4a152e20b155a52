/**
 * Throwaway backing services for tests that break them on purpose (test/e2e/durability.test.ts,
 * the faults suite in test/faults/): a `redis-server` and a PostgreSQL cluster of their own, on
 * free ports, in temporary directories, so killing, restarting or flushing them never disturbs
 * the machine's shared services. Both need the Debian binaries (`redis-server`, PostgreSQL's
 * `initdb`/`pg_ctl`); PostgreSQL runs as the `postgres` user (via `runuser` when we are root).
 */
import { execFile, execFileSync, spawn, type ChildProcess } from "node:child_process";
import { promisify } from "node:util";
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import pg from "pg";
import { freePort } from "./server.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface RedisServer {
  port: number;
  url: string;
  /** Starts (or starts again) the server on the same port and directory; resolves once it answers PING. */
  start(): Promise<void>;
  /** Stops it: `SHUTDOWN` (AOF flushed) by default, or SIGKILL. */
  stop(how?: "shutdown" | "kill"): Promise<void>;
  /** Runs one command on it. */
  command(...args: string[]): Promise<unknown>;
  /** Stops it and removes its directory. */
  destroy(): Promise<void>;
}

/** A redis-server on a free port; `appendonly` on unless told otherwise; `maxmemory-policy noeviction`. */
export async function startRedis(opts: { appendonly?: boolean; policy?: string } = {}): Promise<RedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "slotflow-redis-"));
  let child: ChildProcess | null = null;
  const url = `redis://127.0.0.1:${port}`;
  const server: RedisServer = {
    port,
    url,
    async start() {
      child = spawn(
        "redis-server",
        ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--appendonly", opts.appendonly === false ? "no" : "yes", "--appendfsync", "everysec", "--maxmemory-policy", opts.policy ?? "noeviction", "--save", ""],
        { stdio: "ignore" },
      );
      for (let i = 0; i < 200; i++) {
        try {
          if ((await server.command("PING")) === "PONG") return;
        } catch {
          await sleep(50);
        }
      }
      throw new Error(`redis-server on ${port} did not start`);
    },
    async stop(how = "shutdown") {
      const c = child;
      child = null;
      if (!c || c.exitCode !== null) return;
      const exited = new Promise<void>((resolve) => c.once("exit", () => resolve()));
      if (how === "kill") c.kill("SIGKILL");
      else await server.command("SHUTDOWN").catch(() => c.kill("SIGTERM"));
      await exited;
    },
    async command(...args: string[]) {
      const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null, connectTimeout: 1000 });
      r.on("error", () => undefined);
      try {
        await r.connect();
        return await r.call(args[0]!, ...args.slice(1));
      } finally {
        r.disconnect();
      }
    },
    async destroy() {
      await server.stop("kill");
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}

export interface PostgresServer {
  port: number;
  /** A URL for `database` on this server (user postgres, trust). */
  url(database?: string): string;
  start(): Promise<void>;
  /** `pg_ctl stop -m fast` (connections are terminated; committed data kept); `immediate` is a crash. */
  stop(mode?: "fast" | "immediate"): Promise<void>;
  destroy(): Promise<void>;
}

/** A streaming standby (startStandby): a PostgresServer that can be promoted. */
export interface StandbyServer extends PostgresServer {
  /** `pg_ctl promote -w`: resolves once it accepts writes. */
  promote(): Promise<void>;
}

function pgBin(name: string): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) if (existsSync(join(root, v, "bin", name))) return join(root, v, "bin", name);
  return name;
}

const root = process.getuid?.() === 0;

/** Runs a PostgreSQL binary as the `postgres` user (blocking: set-up only). */
function asPostgres(bin: string, args: string[]): void {
  execFileSync(root ? "runuser" : bin, root ? ["-u", "postgres", "--", bin, ...args] : args, { stdio: "pipe" });
}

/** The same without blocking the event loop (stops and restarts during a test). */
async function asPostgresAsync(bin: string, args: string[]): Promise<void> {
  await promisify(execFile)(root ? "runuser" : bin, root ? ["-u", "postgres", "--", bin, ...args] : args);
}

/**
 * A fresh PostgreSQL cluster (initdb) on a free port, trust auth (replication connections too),
 * fsync off (it is throwaway). `settings` are extra `-c name=value` server settings (for example
 * `synchronous_standby_names=standby1`).
 */
export async function startPostgres(opts: { settings?: string[] } = {}): Promise<PostgresServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "slotflow-pg-"));
  chmodSync(dir, 0o777);
  const data = join(dir, "data");
  asPostgres(pgBin("initdb"), ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
  return serve(port, dir, data, opts.settings ?? []);
}

/**
 * A streaming standby of `primary` (issue 17 failover): `pg_basebackup -R` of it into a new
 * directory, started on a free port; it connects with `application_name=<name>`, so a primary
 * with `synchronous_standby_names=<name>` commits only once this standby has the WAL.
 */
export async function startStandby(primary: PostgresServer, name: string): Promise<StandbyServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "slotflow-pg-standby-"));
  chmodSync(dir, 0o777);
  const data = join(dir, "data");
  await asPostgresAsync(pgBin("pg_basebackup"), ["-d", `host=127.0.0.1 port=${primary.port} user=postgres application_name=${name}`, "-D", data, "-R", "-X", "stream", "-c", "fast"]);
  const server = await serve(port, dir, data, []);
  return {
    ...server,
    async promote() {
      await asPostgresAsync(pgBin("pg_ctl"), ["-D", data, "-w", "-t", "60", "promote"]);
    },
  };
}

async function serve(port: number, dir: string, data: string, settings: string[]): Promise<PostgresServer> {
  const extra = settings.map((s) => ` -c ${s}`).join("");
  const server: PostgresServer = {
    port,
    url: (database = "postgres") => `postgresql://postgres@127.0.0.1:${port}/${database}`,
    async start() {
      await asPostgresAsync(pgBin("pg_ctl"), ["-D", data, "-l", join(dir, "log"), "-w", "-t", "60", "-o", `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200${extra}`, "start"]);
      for (let i = 0; i < 100; i++) {
        const c = new pg.Client({ connectionString: server.url() });
        try {
          await c.connect();
          await c.end();
          return;
        } catch {
          await sleep(100);
        }
      }
      throw new Error(`PostgreSQL on ${port} did not accept connections`);
    },
    async stop(mode = "fast") {
      await asPostgresAsync(pgBin("pg_ctl"), ["-D", data, "-w", "-m", mode, "stop"]);
    },
    async destroy() {
      try {
        asPostgres(pgBin("pg_ctl"), ["-D", data, "-w", "-m", "immediate", "stop"]);
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}
