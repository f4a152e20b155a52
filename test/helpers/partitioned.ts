/**
 * The partitioned schema (issue 20 item 2, "A schema that can be distributed"): Citus cannot be
 * installed here, so the tests prove the distributed rules with PostgreSQL's own hash partitioning,
 * whose partition pruning is the analogue of Citus' router rule (a statement that names one value
 * of the distribution column touches one shard).
 *
 * `partitionRunTables(url)` takes a freshly migrated, EMPTY database and recreates every run table
 * as `PARTITION BY HASH (<distribution column>)` with `PARTITIONS` partitions — the same columns,
 * defaults, primary and unique keys, indexes, triggers and foreign keys (PostgreSQL 15 allows foreign keys to
 * partitioned tables), read from the catalog rather than retyped, so a later migration's index or
 * key comes along. Distribution columns (docs/scaling.md): `runs` by `id`, the tables of a run by
 * `run_id`, the token table `link_tokens` by `token_sha256`, `applied_commands` by `id` (its own
 * key). Reference tables (workflows, workflow_versions, endpoints) stay as they are.
 *
 * Partition `i` of table `t` is named `t_h<i>` (`FOR VALUES WITH (MODULUS 8, REMAINDER i)`).
 * Throws when a run table holds rows (it would drop them).
 *
 * Set SLOTFLOW_TEST_PARTITIONED=1 and `freshDatabase` (test/helpers/db.ts) applies it to every
 * test database, so the engine suite runs on the partitioned schema (.ci/run).
 */
import pg from "pg";

/** Partitions per table. */
export const PARTITIONS = 8;

/** Each partitioned table and its distribution (partition) column. */
export const DISTRIBUTION: Readonly<Record<string, string>> = {
  runs: "id",
  slots: "run_id",
  links: "run_id",
  entity_rows: "run_id",
  history: "run_id",
  incidents: "run_id",
  outbox: "run_id",
  deliveries: "run_id",
  delivery_attempts: "run_id",
  // issue 34 item 3: commands answered 202, recorded until applied (src/engine/commands/pending.ts)
  pending_commands: "run_id",
  // v0.4: the inbox's index of open slots by candidate principal
  inbox_entries: "run_id",
  // v0.5: a call slot's call (issue 40), and the runs started through MCP
  calls: "run_id",
  // v0.5 SDK (issue 41 item 3): the lease of a `call task`, with its call
  tasks: "run_id",
  mcp_runs: "run_id",
  link_tokens: "token_sha256",
  // v0.5: browser sessions, keyed by the SHA-256 of the session id (not co-located)
  sessions: "id_sha256",
  applied_commands: "id",
};

/** Whether the test databases are to be partitioned (SLOTFLOW_TEST_PARTITIONED=1). */
export function partitionedTests(): boolean {
  return process.env.SLOTFLOW_TEST_PARTITIONED === "1";
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Recreates the run tables of the empty database `databaseUrl` hash-partitioned; see the module header. */
export async function partitionRunTables(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const tables = Object.keys(DISTRIBUTION);
  try {
    await client.query("BEGIN");
    for (const t of tables) {
      const { rows } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${quote(t)}`);
      if (Number(rows[0].n) > 0) throw new Error(`partitionRunTables: table ${t} holds rows; it takes an empty database`);
    }
    // Keys and foreign keys (of, and to, the run tables), and the other indexes, as the catalog has them.
    const constraints = await client.query<{ table: string; name: string; def: string; type: string }>(
      `SELECT c.conrelid::regclass::text AS table, c.conname AS name, pg_get_constraintdef(c.oid) AS def, c.contype AS type
         FROM pg_constraint c
        WHERE c.contype IN ('p', 'u', 'f') AND (c.conrelid::regclass::text = ANY($1) OR c.confrelid::regclass::text = ANY($1))
        ORDER BY c.contype DESC, c.conname`,
      [tables],
    );
    const indexes = await client.query<{ def: string }>(
      `SELECT pg_get_indexdef(i.indexrelid) AS def
         FROM pg_index i
        WHERE i.indrelid::regclass::text = ANY($1)
          AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)`,
      [tables],
    );
    const triggers = await client.query<{ def: string }>(
      `SELECT pg_get_triggerdef(t.oid) AS def FROM pg_trigger t WHERE t.tgrelid::regclass::text = ANY($1) AND NOT t.tgisinternal`,
      [tables],
    );
    // Sequences owned by a column (bigserial ids) must outlive the table they are re-attached to.
    const owned = await client.query<{ seq: string; table: string; column: string }>(
      `SELECT s.oid::regclass::text AS seq, d.refobjid::regclass::text AS table, a.attname AS column
         FROM pg_class s JOIN pg_depend d ON d.objid = s.oid AND d.deptype = 'a' AND d.refobjid::regclass::text = ANY($1)
         JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
        WHERE s.relkind = 'S'`,
      [tables],
    );
    for (const c of constraints.rows.filter((c) => c.type === "f")) {
      await client.query(`ALTER TABLE ${c.table} DROP CONSTRAINT ${quote(c.name)}`);
    }
    for (const s of owned.rows) await client.query(`ALTER SEQUENCE ${s.seq} OWNED BY NONE`);
    for (const t of tables) {
      await client.query(`ALTER TABLE ${quote(t)} RENAME TO ${quote(`${t}_unpartitioned`)}`);
      await client.query(
        `CREATE TABLE ${quote(t)} (LIKE ${quote(`${t}_unpartitioned`)} INCLUDING DEFAULTS INCLUDING GENERATED INCLUDING STORAGE)
           PARTITION BY HASH (${quote(DISTRIBUTION[t])})`,
      );
      await client.query(`DROP TABLE ${quote(`${t}_unpartitioned`)}`);
      for (let i = 0; i < PARTITIONS; i++) {
        await client.query(`CREATE TABLE ${quote(`${t}_h${i}`)} PARTITION OF ${quote(t)} FOR VALUES WITH (MODULUS ${PARTITIONS}, REMAINDER ${i})`);
      }
    }
    for (const s of owned.rows) await client.query(`ALTER SEQUENCE ${s.seq} OWNED BY ${s.table}.${quote(s.column)}`);
    for (const c of constraints.rows.filter((c) => c.type !== "f")) {
      await client.query(`ALTER TABLE ${c.table} ADD CONSTRAINT ${quote(c.name)} ${c.def}`);
    }
    for (const i of indexes.rows) await client.query(i.def);
    for (const c of constraints.rows.filter((c) => c.type === "f")) {
      await client.query(`ALTER TABLE ${c.table} ADD CONSTRAINT ${quote(c.name)} ${c.def}`);
    }
    for (const tr of triggers.rows) await client.query(tr.def);
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  } finally {
    await client.end();
  }
}
