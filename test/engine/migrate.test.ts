/**
 * `slotflow migrate` (src/migrate.ts): creates the database, applies the committed migrations
 * offline, and records them in _prisma_migrations as `prisma migrate deploy` would, so that the
 * Prisma CLI agrees about the database's state.
 */
import test from "ava";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { listMigrations, migrate, MIGRATIONS_DIR } from "../../src/migrate.js";
import { dropDatabase, sql } from "../helpers/db.js";

const server = new URL(process.env.DATABASE_URL || "postgresql://postgres@127.0.0.1:5432/slotflow");

test("migrate creates a missing database, applies every migration once, and records Prisma's checksums", async (t) => {
  const url = new URL(server.toString());
  url.pathname = `/${process.env.SLOTFLOW_TEST_DB_PREFIX || "slotflow_t"}_migrate_${randomBytes(4).toString("hex")}`;
  try {
    const first = await migrate(url.toString());
    t.deepEqual(first.applied, listMigrations());
    const second = await migrate(url.toString());
    t.deepEqual(second.applied, []);
    t.deepEqual(second.alreadyApplied, listMigrations());
    const rows = await sql<{ migration_name: string; checksum: string; finished_at: Date | null; applied_steps_count: number }>(
      url.toString(),
      `SELECT migration_name, checksum, finished_at, applied_steps_count FROM "_prisma_migrations" ORDER BY migration_name`,
    );
    t.is(rows.length, listMigrations().length);
    for (const row of rows) {
      const file = readFileSync(`${MIGRATIONS_DIR}/${row.migration_name}/migration.sql`, "utf8");
      t.is(row.checksum, createHash("sha256").update(file).digest("hex"));
      t.truthy(row.finished_at);
      t.is(row.applied_steps_count, 1);
    }
    const tables = await sql<{ tablename: string }>(url.toString(), "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename");
    t.deepEqual(
      tables.map((r) => r.tablename),
      ["_prisma_migrations", "applied_commands", "calls", "deliveries", "delivery_attempts", "endpoints", "entity_rows", "history", "inbox_entries", "incidents", "link_tokens", "links", "mcp_runs", "outbox", "pending_commands", "receipt_keys", "runs", "sessions", "slack_messages", "slots", "tasks", "workflow_versions", "workflows"],
    );
  } finally {
    await dropDatabase(url.toString());
  }
});
