/**
 * Applies the committed migrations in prisma/migrations to a database, offline.
 *
 * The Prisma CLI cannot run `migrate` without downloading a native engine, so slotflow ships this
 * small runner. It records each migration in `_prisma_migrations` exactly as `prisma migrate
 * deploy` does (id, checksum = SHA-256 hex of migration.sql, finished_at, applied_steps_count), so
 * a machine with the Prisma CLI can run `prisma migrate deploy` / `migrate status` on the same
 * database and agree.
 *
 * - Creates the database named in the URL if it does not exist (as Prisma does).
 * - Holds Prisma's advisory lock (72707369) in each migration's transaction, so concurrent
 *   releases queue up, and a pooler in transaction mode can carry it (issue 17).
 * - Each migration runs in its own transaction; a failure rolls it back, leaves the row with
 *   `finished_at` NULL and `logs` set (Prisma's "failed migration"), and throws `MigrationError`.
 * - A recorded migration whose checksum differs from the file is reported, not re-applied.
 */
import { createHash, randomUUID } from "node:crypto";
import { readdirSync, readFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { packageRoot } from "./package.js";

export class MigrationError extends Error {
  override name = "MigrationError";
}

export const MIGRATIONS_DIR = join(packageRoot(), "prisma", "migrations");
const PRISMA_ADVISORY_LOCK = 72707369;

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER UNSIGNED NOT NULL DEFAULT 0
)`.replace(" UNSIGNED", "");

export interface MigrationResult {
  applied: string[];
  alreadyApplied: string[];
  checksumMismatches: string[];
}

/** Creates the database of `databaseUrl` when it is missing. */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ""));
  if (!name) throw new MigrationError(`DATABASE_URL names no database: ${url.origin}`);
  const admin = new URL(databaseUrl);
  admin.pathname = "/postgres";
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (found.rowCount === 0) {
      await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
    }
  } catch (err) {
    // Another process may have created it between the check and the create.
    if ((err as { code?: string }).code !== "42P04") throw err;
  } finally {
    await client.end();
  }
}

/** Lists migration folder names in apply order. */
export function listMigrations(dir = MIGRATIONS_DIR): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(join(dir, e.name, "migration.sql")))
    .map((e) => e.name)
    .sort();
}

/**
 * Applies every pending migration of `dir` to `databaseUrl`.
 *
 * Safe through a pooler in transaction mode (issue 17): no session state is kept between
 * transactions. Each migration runs in one transaction that first takes Prisma's advisory lock as
 * a transaction lock (`pg_advisory_xact_lock`), re-reads `_prisma_migrations` under it, applies the
 * SQL and records the row; so two releases migrating at once apply each migration once, whichever
 * server connection the pooler hands each transaction.
 */
export async function migrate(databaseUrl: string, dir = MIGRATIONS_DIR): Promise<MigrationResult> {
  await ensureDatabase(databaseUrl);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const result: MigrationResult = { applied: [], alreadyApplied: [], checksumMismatches: [] };
  /** Runs `fn` in one transaction holding the migration lock. */
  const locked = async <T>(fn: () => Promise<T>): Promise<T> => {
    await client.query("BEGIN");
    try {
      await client.query("SELECT pg_advisory_xact_lock($1)", [PRISMA_ADVISORY_LOCK]);
      const value = await fn();
      await client.query("COMMIT");
      return value;
    } catch (err) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw err;
    }
  };
  /** The recorded migrations; throws when one failed earlier and was not rolled back. */
  const recorded = async () => {
    const rows = await client.query<{ migration_name: string; checksum: string; finished_at: Date | null; rolled_back_at: Date | null }>(
      `SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations"`,
    );
    const failed = rows.rows.filter((r) => r.finished_at === null && r.rolled_back_at === null);
    if (failed.length > 0) {
      throw new MigrationError(
        `migration ${failed[0].migration_name} failed earlier and was not rolled back; fix the database, then mark it rolled back`,
      );
    }
    return new Map(rows.rows.filter((r) => r.finished_at !== null).map((r) => [r.migration_name, r.checksum]));
  };
  try {
    const done = await locked(async () => {
      await client.query(CREATE_TABLE);
      return recorded();
    });
    for (const name of listMigrations(dir)) {
      const sql = readFileSync(join(dir, name, "migration.sql"), "utf8");
      const checksum = createHash("sha256").update(sql).digest("hex");
      if (done.has(name)) {
        result.alreadyApplied.push(name);
        if (done.get(name) !== checksum) result.checksumMismatches.push(name);
        continue;
      }
      const id = randomUUID();
      let appliedMeanwhile: string | undefined;
      try {
        await locked(async () => {
          // Another release may have applied it since the first read.
          appliedMeanwhile = (await recorded()).get(name);
          if (appliedMeanwhile !== undefined) return;
          await client.query(sql);
          await client.query(
            `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count) VALUES ($1, $2, $3, now(), now(), 1)`,
            [id, checksum, name],
          );
        });
      } catch (err) {
        if (err instanceof MigrationError) throw err;
        const message = err instanceof Error ? err.message : String(err);
        // Prisma's "failed migration": the row with finished_at NULL and the error in logs.
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count, logs) VALUES ($1, $2, $3, now(), 0, $4)`,
          [id, checksum, name, message],
        );
        throw new MigrationError(`migration ${name} failed: ${message}`);
      }
      if (appliedMeanwhile !== undefined) {
        result.alreadyApplied.push(name);
        if (appliedMeanwhile !== checksum) result.checksumMismatches.push(name);
      } else {
        result.applied.push(name);
      }
    }
    return result;
  } finally {
    await client.end();
  }
}
