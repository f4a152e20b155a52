/**
 * Test databases: each test file gets its own fresh PostgreSQL database, migrated with the same
 * runner as production (`slotflow migrate`), on the server of DATABASE_URL (default local).
 * With SLOTFLOW_TEST_PARTITIONED=1 its run tables are then hash-partitioned (partitioned.ts,
 * issue 20 item 2), so a suite runs on the partitioned schema.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { migrate } from "../../src/migrate.js";
import { recordCost } from "./costs.js";
import { partitionedTests, partitionRunTables } from "./partitioned.js";

const SERVER = new URL(process.env.DATABASE_URL || "postgresql://postgres@127.0.0.1:5432/slotflow");

/** Creates and migrates a new database (partitioned when SLOTFLOW_TEST_PARTITIONED=1); returns its URL. */
export async function freshDatabase(label: string): Promise<string> {
  const prefix = process.env.SLOTFLOW_TEST_DB_PREFIX || "slotflow_t";
  const name = `${prefix}_${label.replace(/\W/g, "_").slice(0, 20)}_${randomBytes(4).toString("hex")}`.toLowerCase();
  const url = new URL(SERVER.toString());
  url.pathname = `/${name}`;
  const started = performance.now();
  await migrate(url.toString());
  if (partitionedTests()) await partitionRunTables(url.toString());
  recordCost("database", performance.now() - started);
  return url.toString();
}

/** Drops a database made by freshDatabase (connections are terminated first). */
export async function dropDatabase(databaseUrl: string): Promise<void> {
  const name = new URL(databaseUrl).pathname.slice(1);
  const admin = new URL(databaseUrl);
  admin.pathname = "/postgres";
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

/** Runs one SQL query against `databaseUrl`. */
export async function sql<T extends pg.QueryResultRow = pg.QueryResultRow>(databaseUrl: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}
