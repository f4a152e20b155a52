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
 * - Holds Prisma's advisory lock (72707369) while it works, so concurrent releases queue up.
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

/** Applies every pending migration of `dir` to `databaseUrl`. */
export async function migrate(databaseUrl: string, dir = MIGRATIONS_DIR): Promise<MigrationResult> {
  await ensureDatabase(databaseUrl);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const result: MigrationResult = { applied: [], alreadyApplied: [], checksumMismatches: [] };
  try {
    await client.query("SELECT pg_advisory_lock($1)", [PRISMA_ADVISORY_LOCK]);
    await client.query(CREATE_TABLE);
    const rows = await client.query<{ migration_name: string; checksum: string; finished_at: Date | null; rolled_back_at: Date | null }>(
      `SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations"`,
    );
    const failed = rows.rows.filter((r) => r.finished_at === null && r.rolled_back_at === null);
    if (failed.length > 0) {
      throw new MigrationError(
        `migration ${failed[0].migration_name} failed earlier and was not rolled back; fix the database, then mark it rolled back`,
      );
    }
    const done = new Map(rows.rows.filter((r) => r.finished_at !== null).map((r) => [r.migration_name, r.checksum]));
    for (const name of listMigrations(dir)) {
      const sql = readFileSync(join(dir, name, "migration.sql"), "utf8");
      const checksum = createHash("sha256").update(sql).digest("hex");
      if (done.has(name)) {
        result.alreadyApplied.push(name);
        if (done.get(name) !== checksum) result.checksumMismatches.push(name);
        continue;
      }
      const id = randomUUID();
      await client.query(
        `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count) VALUES ($1, $2, $3, now(), 0)`,
        [id, checksum, name],
      );
      try {
        await client.query("BEGIN");
        await client.query(sql);
        await client.query(
          `UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1`,
          [id],
        );
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK");
        const message = err instanceof Error ? err.message : String(err);
        await client.query(`UPDATE "_prisma_migrations" SET logs = $2 WHERE id = $1`, [id, message]);
        throw new MigrationError(`migration ${name} failed: ${message}`);
      }
      result.applied.push(name);
    }
    return result;
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [PRISMA_ADVISORY_LOCK]).catch(() => undefined);
    await client.end();
  }
}
