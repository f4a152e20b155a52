/**
 * A real PgBouncer (Debian's `pgbouncer`, 1.18 on bookworm) in front of a PostgreSQL server, for
 * the pooler tests (issue 17): on a free port, in a temporary directory, run as the `postgres` user
 * (PgBouncer refuses to run as root), `auth_type = trust`, every database (`* =`) forwarded to the
 * target. `repoint` rewrites the ini to another server and sends `RELOAD` on the admin console, as
 * an operator does after promoting a standby. Needs the `pgbouncer` binary (.ci/run installs it).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { freePort } from "./server.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether a process with this PID exists (signal 0 probes without sending anything). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGINT to a PgBouncer we started, then SIGKILL after 5 s if it is still there. */
async function stopPid(pid: number): Promise<void> {
  if (!alive(pid)) return;
  try {
    process.kill(pid, "SIGINT");
  } catch {
    return;
  }
  for (let i = 0; i < 50 && alive(pid); i++) await sleep(100);
  if (alive(pid)) process.kill(pid, "SIGKILL");
}

export interface PgBouncer {
  port: number;
  /** A URL for `database` through the pooler (user postgres, trust). */
  url(database?: string): string;
  /** Points every database at PostgreSQL on `targetPort` (the ini rewritten, then `RELOAD`). */
  repoint(targetPort: number): Promise<void>;
  /** Runs one command on the admin console (`SHOW POOLS`, `RELOAD`…); its rows. */
  admin(command: string): Promise<Record<string, unknown>[]>;
  /** Its log so far. */
  log(): string;
  /** The pgbouncer process id (from its pidfile), for CPU accounting. */
  pid(): number;
  /** Stops it (SIGINT: immediate shutdown) and removes its directory. */
  destroy(): Promise<void>;
}

const root = process.getuid?.() === 0;
/** Debian installs it in /usr/sbin, which a non-root PATH often lacks. */
const BIN = existsSync("/usr/sbin/pgbouncer") ? "/usr/sbin/pgbouncer" : "pgbouncer";

/**
 * Starts PgBouncer on a free port forwarding to PostgreSQL at 127.0.0.1:`targetPort`, in `mode`
 * (`transaction` by default); `poolSize` server connections per database/user pair (default 20).
 * Resolves once it accepts a connection through to PostgreSQL.
 */
export async function startPgBouncer(opts: { targetPort: number; mode?: "transaction" | "session"; poolSize?: number }): Promise<PgBouncer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "slotflow-pgbouncer-"));
  chmodSync(dir, 0o777);
  const ini = join(dir, "pgbouncer.ini");
  const logFile = join(dir, "pgbouncer.log");
  const config = (target: number) =>
    [
      "[databases]",
      `* = host=127.0.0.1 port=${target}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      `unix_socket_dir = ${dir}`,
      "auth_type = trust",
      `auth_file = ${join(dir, "users.txt")}`,
      "admin_users = postgres",
      `pool_mode = ${opts.mode ?? "transaction"}`,
      `default_pool_size = ${opts.poolSize ?? 20}`,
      "max_client_conn = 1000",
      `logfile = ${logFile}`,
      `pidfile = ${join(dir, "pgbouncer.pid")}`,
      "server_login_retry = 1",
      "",
    ].join("\n");
  writeFileSync(ini, config(opts.targetPort));
  writeFileSync(join(dir, "users.txt"), '"postgres" ""\n');
  writeFileSync(logFile, "");
  for (const f of ["pgbouncer.ini", "users.txt", "pgbouncer.log"]) chmodSync(join(dir, f), 0o666);
  const child: ChildProcess = spawn(root ? "runuser" : BIN, root ? ["-u", "postgres", "--", BIN, ini] : [ini], { stdio: "ignore" });
  child.on("error", () => undefined); // reported below: it never answers
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = (database = "postgres") => `postgresql://postgres@127.0.0.1:${port}/${database}`;
  const bouncer: PgBouncer = {
    port,
    url,
    async admin(command) {
      // The admin console speaks only the simple query protocol: a query without parameters.
      const c = new pg.Client({ connectionString: url("pgbouncer") });
      await c.connect();
      try {
        return (await c.query(command)).rows;
      } finally {
        await c.end();
      }
    },
    async repoint(targetPort) {
      writeFileSync(ini, config(targetPort));
      await bouncer.admin("RELOAD");
    },
    log: () => readFileSync(logFile, "utf8"),
    pid: () => Number(readFileSync(join(dir, "pgbouncer.pid"), "utf8").trim()),
    async destroy() {
      // The daemon's own PID (from its pidfile), read before anything stops: when it runs under
      // `runuser`, killing the wrapper alone can leave PgBouncer running.
      let daemon: number | undefined;
      try {
        daemon = bouncer.pid();
      } catch {
        daemon = undefined;
      }
      if (child.exitCode === null && child.signalCode === null) {
        // SIGINT is PgBouncer's immediate shutdown; runuser passes it on.
        child.kill("SIGINT");
        const t = setTimeout(() => child.kill("SIGKILL"), 5000);
        await exited;
        clearTimeout(t);
      }
      if (daemon && daemon > 1) await stopPid(daemon);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  for (let i = 0; ; i++) {
    const c = new pg.Client({ connectionString: url(), connectionTimeoutMillis: 2000 });
    try {
      await c.connect();
      await c.query("SELECT 1");
      await c.end();
      return bouncer;
    } catch (err) {
      await c.end().catch(() => undefined);
      if (i >= 100 || child.exitCode !== null) {
        const log = (() => {
          try {
            return bouncer.log();
          } catch {
            return "";
          }
        })();
        await bouncer.destroy();
        const missing = BIN === "pgbouncer" ? " (is it installed? apt-get install pgbouncer)" : "";
        throw new Error(`pgbouncer on ${port} did not start${missing}: ${(err as Error).message}\n${log}`);
      }
      await sleep(100);
    }
  }
}
