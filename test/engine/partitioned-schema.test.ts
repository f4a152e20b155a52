/**
 * Issue 20 item 2, "A schema that can be distributed": on the schema with every run table
 * `PARTITION BY HASH (run_id)` (runs by id, link_tokens by token_sha256, applied_commands by id;
 * 8 partitions each, test/helpers/partitioned.ts), every statement of the start, deposit (token
 * lookup, step read, step write, applied command), mail and delivery jobs (claim and mark, by the
 * run id the job carries), expire (the per-run apply) and purge paths touches one partition of
 * each run table it reads or writes. Partition pruning is the analogue
 * of Citus' router rule: a statement that names one value of the distribution column goes to one
 * shard (docs/scaling.md).
 *
 * The statements are the engine's own: the paths run through the engine's code (lookupLink,
 * applyCommand, dueExpiries, purgeBatch) on a connection that has `auto_explain` log every
 * statement — the function bodies' statements included (`log_nested_statements`) — as
 * `EXPLAIN (ANALYZE, FORMAT JSON)` to the client (client_min_messages = log). A partition counts
 * as touched when a plan node scanned it (`Actual Loops` > 0) or a write landed in it; the
 * partitions an INSERT routes to are read back from the rows' `tableoid`. Each path runs under
 * `plan_cache_mode = force_custom_plan` (pruning at planning) and `force_generic_plan` (the plans
 * PL/pgSQL caches: pruning at execution).
 *
 * Multi-shard by nature, and asserted as such: the sweeper's scan for due deadlines across all runs
 * (`dueExpiries`) and the purge's scan for ended runs (`DOOMED_SQL`); and the claim of a mail or
 * delivery job of the previous release, which names its row by id alone. The purge's deletes name the
 * doomed runs' ids: a batch whose runs share a partition touches that partition only.
 */
import test, { type ExecutionContext } from "ava";
import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { applyCommand, type EngineDeps } from "../../src/engine/commands/apply.js";
import { deploy } from "../../src/engine/versions/deploy.js";
import { dueExpiries } from "../../src/engine/sweeps/expiry.js";
import { prepareStart } from "../../src/engine/commands/prepare.js";
import { prepareDeposit } from "../../src/engine/commands/redeem.js";
import { DOOMED_SQL, purgeBatch, PURGE_SQL } from "../../src/engine/sweeps/retention.js";
import { Sealer } from "../../src/engine/sealing/seal.js";
import { lookupLink } from "../../src/engine/sql/link-lookup.js";
import { attemptDelivery } from "../../src/outbox/deliveries.js";
import { deliverOutbox, type MailTransport } from "../../src/outbox/mailer.js";
import { hashToken } from "../../src/engine/sealing/token.js";
import { loadConfig } from "../../src/config.js";
import { PrismaClient } from "../../src/db.js";
import { dropDatabase, freshDatabase, sql } from "../helpers/db.js";
import { DISTRIBUTION, PARTITIONS, partitionedTests, partitionRunTables } from "../helpers/partitioned.js";

const SOURCE = `workflow Route(doc: Doc)
entity Doc { url: string? @maxLength(400); other: string? @maxLength(400); note: string? @maxLength(100) }
event Answer(ok: bool)
event Second(ok: bool)
initial state Waiting {
  subscribe Answer(ok) as answer { Deadline: 2h }
  subscribe Second(ok) as second
  enter {
    doc.url = answer.CallbackUrl()
    doc.other = second.CallbackUrl()
    send email to "boss@example.com" { subject: "Answer", body: doc.url }
    send webhook to "portal" { type: "route.created", url: doc.url }
  }
  on answer(ok) -> Done
  on answer.expired {
    doc.note = "late"
    default -> Late
  }
}
terminal state Done
terminal state Late
`;

type PlanNode = { "Node Type": string; "Relation Name"?: string; "Actual Loops"?: number; "Subplan Name"?: string; Plans?: PlanNode[] };
interface Logged {
  query: string;
  plan: PlanNode;
}

let url = "";
const config = loadConfig(process.env, { secrets: ["SLOTFLOW_SEAL_KEY"] });
const sealer = new Sealer(config.sealKeys);
const transport: MailTransport = { kind: "smtp", send: async () => "<partitioned@test>" };

test.before(async () => {
  url = await freshDatabase("partitioned");
  if (!partitionedTests()) await partitionRunTables(url);
});

test.after.always(async () => {
  if (url) await dropDatabase(url);
});

/** An engine whose one connection logs every statement's plan (auto_explain) into `logged`. */
function explainingEngine(mode: "force_custom_plan" | "force_generic_plan"): { deps: EngineDeps; logged: Logged[]; close: () => Promise<void> } {
  const logged: Logged[] = [];
  const options = [
    "session_preload_libraries=auto_explain",
    "auto_explain.log_min_duration=0",
    "auto_explain.log_nested_statements=on",
    "auto_explain.log_analyze=on",
    "auto_explain.log_format=json",
    "client_min_messages=log",
    `plan_cache_mode=${mode}`,
  ].map((o) => `-c ${o}`).join(" ");
  const pool = new pg.Pool({ connectionString: url, max: 1, options });
  pool.on("error", () => undefined);
  pool.on("connect", (client) => {
    client.on("notice", (n) => {
      const at = n.message?.indexOf("plan:") ?? -1;
      if (at < 0) return;
      const doc = JSON.parse(n.message!.slice(at + 5)) as { "Query Text": string; Plan: PlanNode };
      logged.push({ query: doc["Query Text"], plan: doc.Plan });
    });
  });
  const db = new PrismaClient({ adapter: new PrismaPg(pool) });
  return { deps: { db, sealer, baseUrl: "http://slotflow.test" }, logged, close: () => db.$disconnect() };
}

const PARTITION = /^(\w+)_h(\d+)$/;

/** The partitions each plan node scanned or wrote (`Actual Loops` > 0), by parent table. */
function touched(node: PlanNode, into = new Map<string, Set<number>>()): Map<string, Set<number>> {
  const m = node["Relation Name"] ? PARTITION.exec(node["Relation Name"]) : null;
  if (m && DISTRIBUTION[m[1]] !== undefined && (node["Actual Loops"] ?? 0) > 0) {
    if (!into.has(m[1])) into.set(m[1], new Set());
    into.get(m[1])!.add(Number(m[2]));
  }
  for (const child of node.Plans ?? []) touched(child, into);
  return into;
}

/** Asserts that every logged statement touched at most one partition of each table; returns how many statements touched a run table. */
function assertRouter(t: ExecutionContext, path: string, logged: Logged[]): number {
  let counted = 0;
  for (const { query, plan } of logged) {
    const parts = touched(plan);
    if (parts.size > 0) counted++;
    for (const [table, set] of parts) {
      t.is(set.size, 1, `${path}: "${query.replace(/\s+/g, " ").slice(0, 160)}" touched ${set.size} partitions of ${table}`);
    }
  }
  return counted;
}

/** The partition (0..7) each run table's rows of `runId` sit in; asserts one per table. */
async function rowsOfRun(t: ExecutionContext, runId: string): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  for (const [table, key] of Object.entries(DISTRIBUTION)) {
    const where = table === "runs" ? "id = $1" : table === "applied_commands" || table === "link_tokens" ? "run_id = $1" : `${key} = $1`;
    const rows = await sql<{ part: string }>(url, `SELECT DISTINCT tableoid::regclass::text AS part FROM ${table} WHERE ${where}`, [runId]);
    if (table === "applied_commands" || table === "link_tokens") continue; // distributed by their own key
    if (rows.length === 0) continue;
    t.is(rows.length, 1, `the rows of run ${runId} in ${table} sit in one partition`);
    found.set(table, Number(PARTITION.exec(rows[0].part)![2]));
  }
  return found;
}

/** The token of a run's link to slot `name` ("url" | "other"), from its tracked row. */
async function tokenOf(deps: EngineDeps, runId: string, name: "url" | "other"): Promise<string> {
  const [entity] = await deps.db.entityRow.findMany({ where: { runId } });
  return new URL((sealer.unsealJson(entity.data) as Record<string, string>)[name]).pathname.split("/").pop()!;
}

async function start(deps: EngineDeps): Promise<string> {
  const prepared = await prepareStart(deps.db, "Route", { doc: { url: null, other: null, note: null } });
  if (!prepared.ok) throw new Error(prepared.refusal.detail);
  const { outcome } = await applyCommand(deps, prepared.cmd);
  if (!outcome.ok) throw new Error(outcome.refusal.detail);
  return prepared.cmd.runId;
}

for (const mode of ["force_custom_plan", "force_generic_plan"] as const) {
  test.serial(`start, deposit, mail and delivery jobs, expire and purge touch one partition of each run table (${mode})`, async (t) => {
    const { deps, logged, close } = explainingEngine(mode);
    try {
      if (mode === "force_custom_plan") await deploy(deps.db, SOURCE);
      t.deepEqual(
        (await sql<{ n: string }>(url, "SELECT count(*) AS n FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhparent WHERE c.relname = 'slots'"))[0],
        { n: String(PARTITIONS) },
        "slots is partitioned",
      );
      // Runs enough to land in several partitions (and PL/pgSQL past its first executions).
      const runs: string[] = [];
      for (let i = 0; i < 12; i++) runs.push(await start(deps));
      const partsOfRuns = new Set<number>();
      for (const id of runs) partsOfRuns.add((await rowsOfRun(t, id)).get("runs")!);
      t.true(partsOfRuns.size > 1, "the runs spread over partitions");

      // start: the applied-command probe, the step's write (one run's rows in one partition each)
      logged.length = 0;
      const started = await start(deps);
      t.true(assertRouter(t, "start", logged) >= 1);
      const where = await rowsOfRun(t, started);
      t.true(where.size >= 6, "the start wrote runs, slots, links, entity_rows, history, outbox, deliveries");
      t.is(new Set(where.values()).size, 1, "and every one in the run's partition (co-located by run_id)");

      // mail and delivery jobs (`{ outboxId, runId }`, `{ deliveryId, runId }`): claim and mark by (run_id, id)
      const [mail] = await sql<{ id: string }>(url, "SELECT id FROM outbox WHERE run_id = $1", [started]);
      const [delivery] = await sql<{ id: string }>(url, "SELECT id FROM deliveries WHERE run_id = $1", [started]);
      logged.length = 0;
      t.is(await deliverOutbox(deps.db, sealer, transport, { outboxId: mail.id, runId: started }), "sent");
      t.true(assertRouter(t, "mail job", logged) >= 2, "the mail job's claim and mark");
      t.deepEqual([...new Set(logged.flatMap((l) => [...touched(l.plan).keys()]))], ["outbox"]);
      logged.length = 0;
      // no endpoint is named "portal": the claim, then the delivery is failed saying so
      t.like(await attemptDelivery({ db: deps.db, sealer, allowPrivate: false, retryMs: [0] }, { deliveryId: delivery.id, runId: started }), { kind: "failed" });
      t.true(assertRouter(t, "delivery job", logged) >= 2, "the delivery job's claim and its end");
      const deliveryTables = new Set(logged.flatMap((l) => [...touched(l.plan).keys()]));
      // v0.5: a webhook is data — its job reads no link (only messages check the links they carry)
      t.deepEqual([...deliveryTables], ["deliveries"], "the webhook's delivery job reads deliveries only");
      // a job of the previous release names the row only: its claim reads every partition (multi-shard)
      const [oldMail] = await sql<{ id: string }>(url, "SELECT id FROM outbox WHERE run_id = $1", [runs[0]]);
      const [oldDelivery] = await sql<{ id: string }>(url, "SELECT id FROM deliveries WHERE run_id = $1", [runs[0]]);
      logged.length = 0;
      t.is(await deliverOutbox(deps.db, sealer, transport, { outboxId: oldMail.id }), "sent");
      t.true(Math.max(...logged.map((l) => touched(l.plan).get("outbox")?.size ?? 0)) > 1, "the claim by id alone reads every partition of outbox");
      logged.length = 0;
      t.like(await attemptDelivery({ db: deps.db, sealer, allowPrivate: false, retryMs: [0] }, { deliveryId: oldDelivery.id }), { kind: "failed" });
      t.true(Math.max(...logged.map((l) => touched(l.plan).get("deliveries")?.size ?? 0)) > 1, "the claim by id alone reads every partition of deliveries");

      // deposit: the token lookup (web), then the worker's read and write
      const token = await tokenOf(deps, started, "url");
      logged.length = 0;
      const link = await lookupLink(deps.db, hashToken(token));
      t.truthy(link);
      t.true(assertRouter(t, "token lookup", logged) >= 2, "the lookup: link_tokens by key, then the link, slot and run by run_id");
      const lookupTables = new Set(logged.flatMap((l) => [...touched(l.plan).keys()]));
      t.deepEqual([...lookupTables].sort(), ["link_tokens", "links", "runs", "slots"]);
      logged.length = 0;
      const prepared = await prepareDeposit(deps.db, token, { ok: true });
      if (!prepared.ok) throw new Error(prepared.refusal.detail);
      const deposited = await applyCommand(deps, prepared.cmd);
      t.true(deposited.outcome.ok);
      t.true(assertRouter(t, "deposit", logged) >= 3);
      const depositTables = new Set(logged.flatMap((l) => [...touched(l.plan).keys()]));
      for (const table of ["runs", "slots", "links", "applied_commands", "deliveries"]) t.true(depositTables.has(table), `the deposit read ${table}`);

      // expire: the sweeper's scan is a multi-shard read; each run's expiry is one partition
      await sql(url, "UPDATE slots SET deadline = now() - interval '1 minute' WHERE run_id = ANY($1) AND alias = 'answer'", [runs.slice(0, 6)]);
      logged.length = 0;
      const due = await dueExpiries(deps.db, new Date(), 500);
      t.is(due.length, 6);
      const scanned = logged.map((l) => touched(l.plan).get("slots")?.size ?? 0);
      t.true(Math.max(...scanned) > 1, "the scan for due deadlines reads every partition of slots (a multi-shard read)");
      logged.length = 0;
      for (const cmd of due) t.true((await applyCommand(deps, cmd)).outcome.ok);
      t.true(assertRouter(t, "expire", logged) >= 6);

      // purge: the runs ended in one partition; the deletes touch that partition only
      const bucket = (await rowsOfRun(t, runs[0])).get("runs")!;
      const inBucket = [];
      for (const id of runs.slice(0, 6)) if ((await rowsOfRun(t, id)).get("runs") === bucket) inBucket.push(id);
      await sql(url, "UPDATE runs SET finished_at = now() - interval '400 days' WHERE id = ANY($1)", [inBucket]);
      // The delete is an unnamed statement sent once per batch with the ids as its parameter:
      // PostgreSQL plans it for those values (plan_cache_mode auto, as in production).
      await deps.db.$executeRawUnsafe("SET plan_cache_mode = auto");
      logged.length = 0;
      const counts = await purgeBatch(deps.db, new Date(), 30 * 86_400_000);
      t.is(counts.runs, inBucket.length);
      t.true(counts.link_tokens > 0 && counts.slots > 0);
      const scan = logged.find((l) => l.query === DOOMED_SQL);
      t.truthy(scan, "the scan for ended runs was logged");
      t.true((touched(scan!.plan).get("runs")?.size ?? 0) > 1, "the scan for ended runs reads every partition of runs (a multi-shard read)");
      const purge = logged.find((l) => l.query === PURGE_SQL);
      t.truthy(purge, "the deletes were logged");
      const deletes = touched(purge!.plan);
      for (const table of ["runs", "slots", "links", "entity_rows", "history", "outbox", "deliveries", "link_tokens", "applied_commands"]) {
        t.true(deletes.has(table), `the purge deleted from ${table}`);
      }
      for (const [table, set] of deletes) {
        if (table === "link_tokens" || table === "applied_commands") continue; // by their own key: each row's partition
        t.deepEqual([...set], [bucket], `the purge's delete from ${table} touched only the doomed runs' partition`);
      }
    } finally {
      await close();
    }
  });
}
