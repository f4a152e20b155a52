/**
 * Migration 20261125080000_distributable_keys (issue 20 item 2) brings an existing database
 * forward with its data: a database at the previous migration holds a run with a live link, a
 * webhook delivery and an attempt of it; after `slotflow migrate` the token still resolves (through
 * the new token table), the deposit completes the run, the attempt has its run, and the keys are
 * those the distributed rules ask for.
 */
import test from "ava";
import { cpSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { applyCommand, type EngineDeps } from "../../src/engine/commands/apply.js";
import { deploy } from "../../src/engine/versions/deploy.js";
import { prepareStart } from "../../src/engine/commands/prepare.js";
import { Sealer } from "../../src/engine/sealing/seal.js";
import { hashToken } from "../../src/engine/sealing/token.js";
import { loadConfig } from "../../src/config.js";
import { createDb } from "../../src/db.js";
import { listMigrations, migrate, MIGRATIONS_DIR } from "../../src/migrate.js";
import { Workflow } from "../../src/testing/index.js";
import { dropDatabase, sql } from "../helpers/db.js";

const THIS = "20261125080000_distributable_keys";

const SOURCE = `workflow Carry(doc: Doc)
entity Doc { url: string? @maxLength(400) }
event Answer(ok: bool)
initial state Waiting {
  subscribe Answer(ok) as answer
  enter { doc.url = answer.CallbackUrl() }
  on answer(ok) -> Done
}
terminal state Done
`;

/**
 * This release starts a run through `slotflow_start_write` (issue 22, a later migration), which the
 * previous release's database lacks: the test gives that database the later migration's functions
 * (slotflow_start_write and the two it calls), on top of the previous release's
 * `slotflow_step_write`, only while it starts the run, so the run's rows are written in the
 * previous release's shape. Returns the statements that create them and their names.
 */
function startWriteShim(): { create: string[]; names: string[] } {
  const later = listMigrations().find((n) => n > THIS && readFileSync(join(MIGRATIONS_DIR, n, "migration.sql"), "utf8").includes("CREATE FUNCTION slotflow_start_write"));
  if (!later) throw new Error("no migration defines slotflow_start_write");
  const text = readFileSync(join(MIGRATIONS_DIR, later, "migration.sql"), "utf8");
  const fns = [...text.matchAll(/CREATE FUNCTION (\w+)\([\s\S]*?\$\$;/g)];
  if (!fns.some((m) => m[1] === "slotflow_start_write")) throw new Error(`${later}: slotflow_start_write not found`);
  return { create: fns.map((m) => m[0]), names: fns.map((m) => m[1]!) };
}

/** A folder holding the migrations before `THIS` (copies of the committed ones). */
function previousMigrations(): string {
  const dir = mkdtempSync(join(tmpdir(), "slotflow-migrations-"));
  for (const name of listMigrations().filter((n) => n < THIS)) cpSync(join(MIGRATIONS_DIR, name), join(dir, name), { recursive: true });
  return dir;
}

test("a database at the previous migration comes forward: its live link resolves and deposits, its rows get their keys", async (t) => {
  t.true(listMigrations().includes(THIS));
  const server = new URL(process.env.DATABASE_URL || "postgresql://postgres@127.0.0.1:5432/slotflow");
  const url = new URL(server.toString());
  url.pathname = `/${process.env.SLOTFLOW_TEST_DB_PREFIX || "slotflow_t"}_migfwd_${randomBytes(4).toString("hex")}`;
  const databaseUrl = url.toString();
  const config = loadConfig(process.env, { secrets: ["SLOTFLOW_SEAL_KEY"] });
  const db = createDb(databaseUrl, 2);
  try {
    const before = await migrate(databaseUrl, previousMigrations());
    t.false(before.applied.includes(THIS));
    // The previous release's data: deployed, started (its start step mints the link).
    const deps: EngineDeps = { db, sealer: new Sealer(config.sealKeys), baseUrl: "http://slotflow.test" };
    await deploy(db, SOURCE);
    const shim = startWriteShim();
    for (const create of shim.create) await sql(databaseUrl, create);
    const prepared = await prepareStart(db, "Carry", { doc: { url: null } });
    if (!prepared.ok) throw new Error(prepared.refusal.detail);
    const started = await applyCommand(deps, prepared.cmd);
    t.true(started.outcome.ok);
    const runId = prepared.cmd.runId;
    const [entity] = await db.entityRow.findMany({ where: { runId } });
    const link = (deps.sealer.unsealJson(entity.data) as { url: string }).url;
    const token = new URL(link).pathname.split("/").pop()!;
    await sql(databaseUrl, `INSERT INTO deliveries (id, run_id, endpoint, statement, webhook_id, payload, status)
                            VALUES (gen_random_uuid(), $1, 'portal', 'webhook', 'msg_1', NULL, 'failed')`, [runId]);
    await sql(databaseUrl, "INSERT INTO delivery_attempts (delivery_id, attempt, error) SELECT id, 1, 'refused' FROM deliveries WHERE run_id = $1", [runId]);
    await db.$disconnect();
    for (const name of shim.names) await sql(databaseUrl, `DROP FUNCTION ${name}`);

    const after = await migrate(databaseUrl);
    t.deepEqual(after.applied, listMigrations().filter((n) => n >= THIS));
    t.deepEqual(
      await sql(databaseUrl, "SELECT run_id FROM link_tokens WHERE token_sha256 = $1", [hashToken(token)]),
      [{ run_id: runId }],
      "the live link's token is in the token table",
    );
    t.deepEqual(await sql(databaseUrl, "SELECT run_id FROM delivery_attempts"), [{ run_id: runId }], "the attempt has its run");
    // a delivery worker of the previous release records an attempt without run_id: filled in
    await sql(databaseUrl, "INSERT INTO delivery_attempts (delivery_id, attempt, error) SELECT id, 2, 'refused' FROM deliveries WHERE run_id = $1", [runId]);
    t.deepEqual(await sql(databaseUrl, "SELECT run_id FROM delivery_attempts WHERE attempt = 2"), [{ run_id: runId }], "the previous release's insert gets its run");
    const keys = await sql<{ table: string; def: string }>(
      databaseUrl,
      `SELECT conrelid::regclass::text AS table, pg_get_constraintdef(oid) AS def FROM pg_constraint
        WHERE contype IN ('p', 'u') AND conrelid::regclass::text IN ('slots', 'links', 'history', 'incidents', 'outbox', 'deliveries', 'delivery_attempts', 'entity_rows')
        ORDER BY 1`,
    );
    t.is(keys.length, 8);
    for (const k of keys) t.regex(k.def, /^(PRIMARY KEY|UNIQUE) \(run_id,/, `${k.table}: ${k.def}`);

    // The engine of this release on the migrated database: the link resolves and the deposit lands.
    process.env.DATABASE_URL = databaseUrl;
    const redeemed = await Workflow.Redeem(link, { ok: true });
    t.is(redeemed.status, "completed");
    t.regex(redeemed.receipt ?? "", /^[\w-]+\.[\w-]+\.[\w-]+$/, "with its receipt (v0.4)");
    const [run] = await sql<{ state: string; status: string }>(databaseUrl, "SELECT state, status FROM runs WHERE id = $1", [runId]);
    t.deepEqual(run, { state: "Done", status: "finished" });
  } finally {
    await Workflow.disconnect();
    await db.$disconnect().catch(() => undefined);
    await dropDatabase(databaseUrl);
  }
});
