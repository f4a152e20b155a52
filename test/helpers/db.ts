/**
 * Test databases: each test file gets its own fresh PostgreSQL database, migrated with the same
 * runner as production (`slotflow migrate`), on the server of DATABASE_URL (default local).
 * With SLOTFLOW_TEST_PARTITIONED=1 its run tables are then hash-partitioned (partitioned.ts,
 * issue 20 item 2), so a suite runs on the partitioned schema.
 *
 * Template (issue 39 item 4): the migrations run once per set of migrations, into a template
 * database `<prefix>_tpl_<fingerprint>` (the fingerprint hashes every migration's name and SQL, so
 * a branch that adds or edits one gets its own); each fresh database is then a copy of it
 * (`CREATE DATABASE … TEMPLATE …`: a file copy, no SQL replayed). The first process to need it
 * builds it under a PostgreSQL advisory lock, in a database of another name renamed when complete,
 * so no process ever copies a half-migrated template; the others wait on the lock and copy.
 * The copy is the migrated schema byte for byte, `_prisma_migrations` included. CI drops it with
 * the run's other databases (they share SLOTFLOW_TEST_DB_PREFIX); locally it is kept and reused
 * by the next run with the same migrations. SLOTFLOW_TEST_TEMPLATE=0 migrates each database
 * instead (the previous way).
 *
 * With built-ins (`freshDatabase(label, {builtins: true})`, what startCluster asks for): a second
 * template, the first one after the real CLI's `slotflow migrate`, which also deploys the built-in
 * workflows of the MCP tools (src/mcp/builtins.ts) — the database a production install has after
 * `slotflow migrate`. Without it every spawned cluster's first web process compiled both built-ins
 * in its compiler thread (~0.7 s of CPU per cluster, ~100 clusters per `npm test`). Its name also
 * carries a fingerprint of the built-ins' sources and the compiler (src/lang, src/mcp/builtins.ts),
 * so a changed compiler never leaves a stale compiled form in a kept template.
 */
import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { listMigrations, migrate, MIGRATIONS_DIR } from "../../src/migrate.js";
import { cliEntry } from "./cli-entry.js";
import { recordCost } from "./costs.js";
import { partitionedTests, partitionRunTables } from "./partitioned.js";
import { ROOT } from "./root.js";

const SERVER = new URL(process.env.DATABASE_URL || "postgresql://postgres@127.0.0.1:5432/slotflow");

const prefix = () => process.env.SLOTFLOW_TEST_DB_PREFIX || "slotflow_t";

/** The URL of database `name` on the test server. */
function urlOf(name: string): string {
  const url = new URL(SERVER.toString());
  url.pathname = `/${name}`;
  return url.toString();
}

/** Runs `fn` with a client connected to the server's `postgres` database. */
async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: urlOf("postgres") });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A fingerprint of the migrations (names and SQL): the template's name carries it. */
export function migrationsFingerprint(): string {
  const hash = createHash("sha256");
  for (const name of listMigrations()) hash.update(`${name}\0`).update(readFileSync(join(MIGRATIONS_DIR, name, "migration.sql"))).update("\0");
  return hash.digest("hex").slice(0, 16);
}

/** Files under `dir` (recursively, at most 8 levels), sorted: what the built-ins' fingerprint hashes. */
function filesUnder(dir: string, depth = 0): string[] {
  if (depth > 8) return [];
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name), depth + 1) : [join(dir, e.name)]));
}

/** A fingerprint of the migrations, the built-ins' sources and the compiler that compiles them. */
function builtinsFingerprint(): string {
  const hash = createHash("sha256").update(migrationsFingerprint());
  for (const f of [...filesUnder(join(ROOT, "src", "lang")), join(ROOT, "src", "mcp", "builtins.ts")]) hash.update(`${f}\0`).update(readFileSync(f)).update("\0");
  return hash.digest("hex").slice(0, 16);
}

/**
 * Builds template `name` once across processes (a PostgreSQL advisory lock; built under another
 * name and renamed when complete, so no process ever copies a half-built one) by `build(url)`.
 */
async function buildOnce(name: string, build: (url: string) => Promise<void>): Promise<string> {
  await withAdmin(async (admin) => {
    // one builder at a time, across processes (a session lock, released when the client ends)
    await admin.query("SELECT pg_advisory_lock(hashtext($1))", [name]);
    const found = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (found.rowCount) return;
    const building = `${prefix()}_tplb_${randomBytes(4).toString("hex")}`.toLowerCase();
    const started = performance.now();
    await build(urlOf(building));
    await admin.query(`ALTER DATABASE "${building}" RENAME TO "${name}"`);
    recordCost("template", performance.now() - started);
  });
  return name;
}

let template: Promise<string> | null = null;
let builtinsTemplate: Promise<string> | null = null;

/**
 * The name of the migrated template database, built on first use (see the module's comment).
 * Resolved once per process.
 */
export function templateDatabase(): Promise<string> {
  template ??= buildOnce(`${prefix()}_tpl_${migrationsFingerprint()}`.toLowerCase(), (url) => migrate(url).then(() => undefined));
  template.catch(() => (template = null));
  return template;
}

/**
 * The template after the real `slotflow migrate` (migrations, then the built-in workflows),
 * built on first use from templateDatabase(). Resolved once per process.
 */
function builtinsTemplateDatabase(): Promise<string> {
  builtinsTemplate ??= templateDatabase().then((from) =>
    buildOnce(`${prefix()}_tpm_${builtinsFingerprint()}`.toLowerCase(), async (url) => {
      const name = new URL(url).pathname.slice(1);
      await withAdmin((admin) => admin.query(`CREATE DATABASE "${name}" TEMPLATE "${from}"`));
      const env = { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: "production", DATABASE_URL: url };
      await promisify(execFile)(process.execPath, [...cliEntry(), "migrate"], { cwd: ROOT, env, timeout: 120_000 });
    }),
  );
  builtinsTemplate.catch(() => (builtinsTemplate = null));
  return builtinsTemplate;
}

/**
 * Creates a new database, a copy of the migrated template (partitioned when
 * SLOTFLOW_TEST_PARTITIONED=1); returns its URL. `builtins`: a copy of the template after
 * `slotflow migrate`, the built-in workflows deployed (see the module's comment).
 */
export async function freshDatabase(label: string, opts: { builtins?: boolean } = {}): Promise<string> {
  const name = `${prefix()}_${label.replace(/\W/g, "_").slice(0, 20)}_${randomBytes(4).toString("hex")}`.toLowerCase();
  const url = urlOf(name);
  const started = performance.now();
  if (process.env.SLOTFLOW_TEST_TEMPLATE === "0") await migrate(url);
  else {
    const from = await (opts.builtins ? builtinsTemplateDatabase() : templateDatabase());
    await withAdmin((admin) => admin.query(`CREATE DATABASE "${name}" TEMPLATE "${from}"`));
  }
  if (partitionedTests()) await partitionRunTables(url);
  recordCost("database", performance.now() - started);
  return url;
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
