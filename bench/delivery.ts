/**
 * Benchmark `delivery` (issue 22 item 2): delivering N pending outbox mails, three ways, in one run
 * on the same machine, at C = 1, 10 and 50:
 *
 *   per-message  one BullMQ `mail` job `{ outboxId, runId }` per message (Queues.enqueueMail, one
 *                each: what the command worker queues when its pump does not take a step's mail,
 *                and every retry), a worker of concurrency C whose processor is the engine's
 *                `deliverOutbox` (src/outbox/mailer.ts): claim, send, mark — 2 statements a message;
 *   pump         the engine's first-attempt path: its MailPump (src/outbox/mail-pump.ts), fed as
 *                the command worker feeds it — C concurrent feeders, each `await pump.deliver([item])`
 *                one message at a time (C steps committing at once), then `pump.close()` — which
 *                claims up to BATCH (50) of the rows it was handed by key (`UPDATE … FROM
 *                unnest(run ids, ids)`), sends ≤ 4 at once and marks the sent in one statement —
 *                2 statements a batch, no Redis. `deliver` returns at once, so a feeder waits
 *                while --pump-window messages (default the pump's MAX_BACKLOG, 1000) are handed
 *                over and not yet sent: the pump's capacity without overflowing to the `mail`
 *                queue (a phase that overflows fails). The pump is one claim-send-mark loop per
 *                process whatever C is;
 *   batch        C concurrent loops, each claiming up to K pending rows in one statement
 *                (`FOR UPDATE SKIP LOCKED`, the way issue 22 names), sending each with the same
 *                per-message work, marking them sent in one statement (bench/lib/outbox-batch.ts;
 *                a measurement, not an engine feature) — 2 statements a batch, no Redis.
 *
 * All run in one delivering process (bench/lib/delivery-worker.ts: slotflow's runtime with an
 * in-memory transport that sends nothing), so per message: messages/s, CPU ms over that process,
 * the PostgreSQL backends of the database (autovacuum apart) and redis-server (bench/lib/proc.ts,
 * from /proc), SQL round trips and Redis commands (bench/lib/count-preload.mjs; Redis's own INFO
 * commandstats beside them). The per-message path's enqueue — done in production by the command
 * worker when its pump does not take the mail, or by the sweeper — is measured in its own window
 * and shown apart and added.
 *
 * The mails are the engine's: one VendorApproval run (examples/vendor-approval.flow) is started by
 * the engine in this process (applyCommand: its outbox row has the recipient and subject stored as
 * the engine stores them and the body, which carries the callback link, sealed), then each phase
 * clones that run and its outbox row N times in one statement (fresh ids, status pending) and
 * VACUUMs (ANALYZE) them. Every phase checks its N rows end sent, each sent once.
 *
 * The batch claim scans `outbox_status_created_at_idx` (status, created_at), which exists since the
 * first migration; `--pending-index` also creates a partial index on (created_at) WHERE status =
 * 'pending' in the bench's own database, to see whether one would pay. The claim's plan is printed.
 *
 *   npm run bench -- delivery [n=10000] [--k=50] [--c=1,10,50] [--warm=3000] [--pump-window=1000] [--pending-index]
 *
 * n is the messages of each measured phase. At C=50 the batch loops hold up to C·K = 2,500 claimed
 * messages at once, and each loop ends with one claim that finds nothing (C statements per phase):
 * n should be several times C·K for the batch figures to be those of a backlog, not of a start-up.
 *
 * Writes bench/results/delivery-*.json.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startBenchCluster, type BenchCluster, type Window } from "./lib/cluster.js";
import { loadNote, machineCpu } from "./lib/proc.js";
import { fmt, WARM_UP, writeResult } from "./lib/report.js";
import { ROOT, type ServerProcess } from "../test/helpers/server.js";
import { createDb } from "../src/db.js";
import { applyCommand } from "../src/engine/commands/apply.js";
import { deploy } from "../src/engine/versions/deploy.js";
import { Sealer } from "../src/engine/sealing/seal.js";
import { BATCH, MAX_BACKLOG } from "../src/outbox/mail-pump.js";
import type { MailJob } from "../src/queue/outbox-jobs.js";

const flags = process.argv.slice(2).filter((a) => a.startsWith("--"));
const flag = (name: string) => flags.find((f) => f.startsWith(`--${name}=`))?.slice(name.length + 3);
const [N = 10_000] = process.argv.slice(2).filter((a) => !a.startsWith("--")).map(Number);
const K = Number(flag("k") ?? 50);
const CS = (flag("c") ?? "1,10,50").split(",").map(Number);
const PENDING_INDEX = flags.includes("--pending-index");
const PUMP_WINDOW = Number(flag("pump-window") ?? MAX_BACKLOG);
if (!(PUMP_WINDOW >= 1 && PUMP_WINDOW <= MAX_BACKLOG)) throw new Error(`--pump-window: 1 to ${MAX_BACKLOG} (the pump's MAX_BACKLOG)`);
const INPUT = { vendor: { name: "Bench", contactEmail: "bench@example.com" }, amount: 10 };

type Mode = "per-message" | "pump" | "batch";
const MODES: Mode[] = ["per-message", "pump", "batch"];
const LABEL: Record<Mode, string> = { "per-message": "per-message", pump: `pump (BATCH=${BATCH})`, batch: `batch K=${K}` };

export interface DeliveryFigures {
  mode: Mode;
  clients: number;
  k: number | null;
  messages: number;
  seconds: number;
  perSecond: number;
  cpuMsPerMessage: number;
  cpuMsByProcess: Record<string, number>;
  sqlPerMessage: number;
  sqlByVerb: Record<string, number>;
  redisCommandsPerMessage: number;
  redisByName: Record<string, number>;
  redisServerCallsPerMessage: number;
  batches: number;
  pauses: Window["pauses"];
}

/** Per-message figures of a measured window over `n` messages delivered in `ms`. */
function perMessage(mode: Mode, clients: number, n: number, ms: number, batches: number, w: Window): DeliveryFigures {
  const per = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, Number((v / n).toFixed(3))]));
  return {
    mode,
    clients,
    k: mode === "batch" ? K : mode === "pump" ? BATCH : null,
    messages: n,
    seconds: ms / 1000,
    perSecond: n / (ms / 1000),
    cpuMsPerMessage: Object.values(w.cpuMs).reduce((a, b) => a + b, 0) / n,
    cpuMsByProcess: per(w.cpuMs),
    sqlPerMessage: w.counts.sql / n,
    sqlByVerb: per(w.counts.sqlByVerb),
    redisCommandsPerMessage: w.counts.redis / n,
    redisByName: per(w.counts.redisByName),
    redisServerCallsPerMessage: Math.max(0, w.redisServerCalls) / n, // the meter's INFO correction can leave -2 in a window without Redis traffic
    batches,
    pauses: w.pauses,
  };
}

/** The delivering process, counted by the cluster's meter as `deliverer`; `ask` sends one request and waits for its answer. */
async function startDeliverer(bench: BenchCluster, maxClients: number): Promise<{ ask(req: Record<string, unknown>): Promise<Record<string, unknown>> }> {
  const child: ChildProcess = spawn(process.execPath, ["--import=tsx", join(ROOT, "bench/lib/delivery-worker.ts")], {
    cwd: ROOT,
    // the cluster's environment: its database, Redis, queue prefix, seal key and the counting preload
    env: { ...bench.cluster.env, SLOTFLOW_WORKER_CONCURRENCY: String(maxClients) },
    stdio: ["ignore", "ignore", "pipe", "ipc"], // stdout: the log lines, discarded as a log shipper would take them
  });
  const output: string[] = [];
  child.stderr!.on("data", (c: Buffer) => output.push(...c.toString("utf8").split("\n").filter(Boolean)));
  const answers: ((m: Record<string, unknown>) => void)[] = [];
  child.on("message", (m: Record<string, unknown>) => answers.shift()?.(m));
  const next = () =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`the delivering process exited (${code}):\n${output.join("\n")}`));
      child.once("exit", onExit);
      answers.push((m) => {
        child.off("exit", onExit);
        if (m.ok) resolve(m);
        else reject(new Error(`the delivering process failed: ${String(m.error)}`));
      });
    });
  await next(); // { ready }
  const proc: ServerProcess = {
    child,
    role: "deliverer",
    output,
    warnings: [],
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.disconnect();
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
  bench.cluster.processes.push(proc); // metered with the cluster (bench/lib/cluster.ts measure)
  return {
    ask(req) {
      const answer = next();
      child.send(req);
      return answer;
    },
  };
}

/**
 * One real VendorApproval start through the engine (deploy and applyCommand in this process);
 * returns its run id. Its outbox row is set `sent` (its columns kept) so that only clones are pending.
 */
async function templateRun(bench: BenchCluster): Promise<string> {
  const db = createDb(bench.cluster.databaseUrl, 1);
  try {
    const d = await deploy(db, readFileSync(join(ROOT, "examples/vendor-approval.flow"), "utf8"), "vendor-approval.flow");
    const runId = randomUUID();
    const applied = await applyCommand(
      { db, sealer: new Sealer(bench.cluster.env.SLOTFLOW_SEAL_KEY!), baseUrl: bench.cluster.baseUrl },
      { kind: "start", commandId: randomUUID(), runId, workflow: d.name, version: d.version, input: INPUT },
    );
    if (!applied.outcome.ok || applied.queuedMail.length !== 1) throw new Error(`template start: ${JSON.stringify(applied.outcome)}`);
    await bench.pool.query("UPDATE outbox SET status = 'sent' WHERE run_id = $1", [runId]);
    return runId;
  } finally {
    await db.$disconnect();
  }
}

/** `n` clones of the template run and its outbox row, pending, in one statement; returns their keys (outbox id, run id). */
async function seedPending(bench: BenchCluster, template: string, n: number): Promise<MailJob[]> {
  const { rows } = await bench.pool.query<{ id: string; run_id: string }>(
    `WITH n AS (SELECT gen_random_uuid() AS run_id, gen_random_uuid() AS id FROM generate_series(1, $2::int)),
          r AS (INSERT INTO runs (id, workflow_name, version, state, status, visit, input, milestones)
                SELECT n.run_id, t.workflow_name, t.version, t.state, t.status, t.visit, t.input, t.milestones FROM n, runs t WHERE t.id = $1::uuid)
     INSERT INTO outbox (id, run_id, "to", subject, body, reply_to, cc, status, attempts)
     SELECT n.id, n.run_id, o."to", o.subject, o.body, o.reply_to, o.cc, 'pending', 0 FROM n, outbox o WHERE o.run_id = $1::uuid
     RETURNING id, run_id`,
    [template, n],
  );
  for (const table of ["runs", "outbox"]) await bench.pool.query(`VACUUM (ANALYZE) ${table}`);
  return rows.map((r) => ({ outboxId: r.id, runId: r.run_id }));
}

/** Throws unless every one of `ids` is sent once: status sent, body dropped, a message id, one attempt, no claim. */
async function checkSent(bench: BenchCluster, ids: string[], sends: number): Promise<void> {
  const { rows } = await bench.pool.query<{ ok: number }>(
    `SELECT count(*) FILTER (WHERE status = 'sent' AND body IS NULL AND message_id IS NOT NULL AND attempts = 1 AND claimed_until IS NULL)::int AS ok
       FROM outbox WHERE id = ANY($1::uuid[])`,
    [ids],
  );
  if (rows[0]!.ok !== ids.length || sends !== ids.length) throw new Error(`delivery check: ${rows[0]!.ok} of ${ids.length} rows sent, ${sends} sends`);
}

async function main() {
  const load0 = machineCpu();
  const maxC = Math.max(...CS);
  const bench = await startBenchCluster("bdelivery", { roles: [] });
  const phases: Record<string, DeliveryFigures> = {};
  const enqueue: Record<string, DeliveryFigures> = {};
  let plan = "";
  try {
    const template = await templateRun(bench);
    if (PENDING_INDEX) await bench.pool.query(`CREATE INDEX outbox_pending_bench_idx ON outbox (created_at) WHERE status = 'pending'`);
    const deliverer = await startDeliverer(bench, maxC);

    /** Seeds n pending mails and delivers them `mode`-wise with C = c; measured unless a warm-up. */
    const phase = async (mode: Mode, c: number, n: number, measured: boolean): Promise<DeliveryFigures | null> => {
      const items = await seedPending(bench, template, n);
      if (mode === "per-message") {
        const m = measured ? await bench.measure() : null;
        const q = await deliverer.ask({ cmd: "enqueue", items });
        if (m) enqueue[`C${c}`] = perMessage(mode, 10, n, q.ms as number, 0, await m.stop());
        await deliverer.ask({ cmd: "jobs", c, n });
      } else if (mode === "pump") {
        await deliverer.ask({ cmd: "pump", c, items, window: PUMP_WINDOW });
      } else {
        if (measured && c === CS[Math.floor(CS.length / 2)]) {
          const explain = await bench.pool.query(
            `EXPLAIN SELECT run_id, id FROM outbox WHERE status = 'pending' AND (claimed_until IS NULL OR claimed_until < now()) ORDER BY created_at LIMIT ${K} FOR UPDATE SKIP LOCKED`,
          );
          plan = explain.rows.map((r) => r["QUERY PLAN"]).join("\n");
        }
        await deliverer.ask({ cmd: "batch", c, k: K });
      }
      const m = measured ? await bench.measure() : null;
      const r = await deliverer.ask({ cmd: "go" });
      const w = m ? await m.stop() : null;
      if (mode === "per-message") await deliverer.ask({ cmd: "close" });
      if ((r.handedOver as number) > 0) throw new Error(`pump C=${c}: ${String(r.handedOver)} messages handed to the mail queue (its backlog overflowed)`);
      await checkSent(bench, items.map((i) => i.outboxId), r.sends as number);
      return w ? perMessage(mode, c, n, r.ms as number, r.batches as number, w) : null;
    };

    process.stdout.write(`template run ${template}; warming up (${WARM_UP} messages each way, C=10)…\n`);
    for (const mode of MODES) await phase(mode, 10, WARM_UP, false);
    bench.resetPeakMemory();
    for (const c of CS) {
      for (const mode of MODES) {
        const f = (await phase(mode, c, N, true))!;
        phases[`${mode}-C${c}`] = f;
        const e = mode === "per-message" ? enqueue[`C${c}`] : undefined;
        process.stdout.write(
          `${LABEL[mode]} C=${c}: ${fmt(f.perSecond)} messages/s, CPU ${fmt(f.cpuMsPerMessage, 3)} ms/message ${JSON.stringify(f.cpuMsByProcess)}, ` +
            `SQL ${fmt(f.sqlPerMessage, 3)}/message ${JSON.stringify(f.sqlByVerb)}, Redis ${fmt(f.redisCommandsPerMessage, 2)} commands/message ${JSON.stringify(f.redisByName)} ` +
            `(server-side ${fmt(f.redisServerCallsPerMessage, 2)})${f.batches ? `, ${f.batches} ${mode === "pump" ? "claims" : "batches"} (${fmt(f.messages / f.batches, 1)} messages each)` : ""}` +
            (e ? `; its enqueue: CPU ${fmt(e.cpuMsPerMessage, 3)} ms/message ${JSON.stringify(e.cpuMsByProcess)}, Redis ${fmt(e.redisCommandsPerMessage, 2)} commands/message ${JSON.stringify(e.redisByName)}` : "") +
            "\n",
        );
      }
    }

    // The table, and which pays at each C.
    const rows: string[][] = [["C", "way", "messages/s", "CPU ms/msg", "deliverer", "PostgreSQL", "redis-server", "autovacuum", "SQL/msg", "Redis cmds/msg"]];
    const verdicts: { clients: number; way: "pump" | "batch"; perSecondRatio: number; cpuRatio: number; cpuRatioWithEnqueue: number }[] = [];
    for (const c of CS) {
      const a = phases[`per-message-C${c}`]!;
      const p = phases[`pump-C${c}`]!;
      const b = phases[`batch-C${c}`]!;
      const e = enqueue[`C${c}`]!;
      const row = (label: string, f: Pick<DeliveryFigures, "cpuMsPerMessage" | "cpuMsByProcess" | "sqlPerMessage" | "redisCommandsPerMessage">, rate: string) => [
        String(c),
        label,
        rate,
        fmt(f.cpuMsPerMessage, 3),
        ...["deliverer", "postgres", "redis", "autovacuum"].map((p) => fmt(f.cpuMsByProcess[p] ?? 0, 3)),
        fmt(f.sqlPerMessage, 2),
        fmt(f.redisCommandsPerMessage, 2),
      ];
      const sum = (x: Record<string, number>, y: Record<string, number>) => Object.fromEntries([...new Set([...Object.keys(x), ...Object.keys(y)])].map((k) => [k, (x[k] ?? 0) + (y[k] ?? 0)]));
      rows.push(row("per-message", a, fmt(a.perSecond)));
      rows.push(
        row(
          "… with its enqueue",
          { cpuMsPerMessage: a.cpuMsPerMessage + e.cpuMsPerMessage, cpuMsByProcess: sum(a.cpuMsByProcess, e.cpuMsByProcess), sqlPerMessage: a.sqlPerMessage + e.sqlPerMessage, redisCommandsPerMessage: a.redisCommandsPerMessage + e.redisCommandsPerMessage },
          "",
        ),
      );
      rows.push(row(LABEL.pump, p, fmt(p.perSecond)));
      rows.push(row(LABEL.batch, b, fmt(b.perSecond)));
      for (const [way, f] of [["pump", p], ["batch", b]] as const) {
        verdicts.push({ clients: c, way, perSecondRatio: f.perSecond / a.perSecond, cpuRatio: f.cpuMsPerMessage / a.cpuMsPerMessage, cpuRatioWithEnqueue: f.cpuMsPerMessage / (a.cpuMsPerMessage + e.cpuMsPerMessage) });
      }
    }
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    process.stdout.write(`\n${rows.map((r) => r.map((cell, i) => (i === 1 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ")).join("\n")}\n`);
    process.stdout.write(`\nbatch claim's plan (${N} pending among the sent of earlier phases${PENDING_INDEX ? ", with the partial pending index" : ""}):\n${plan}\n`);
    process.stdout.write(`\npump and batch against per-message (one process, same machine; the pump's window ${PUMP_WINDOW}):\n`);
    for (const v of verdicts) {
      process.stdout.write(
        `  C=${String(v.clients).padEnd(2)} ${v.way.padEnd(5)}: ${fmt(v.perSecondRatio, 2)}× the messages/s, ${fmt(v.cpuRatio, 2)}× the CPU per message (${fmt(v.cpuRatioWithEnqueue, 2)}× counting the per-message path's enqueue)\n`,
      );
    }
    const note = loadNote(load0);
    process.stdout.write(`${note}\n`);
    const path = writeResult("delivery", { note, n: N, k: K, pumpBatch: BATCH, pumpWindow: PUMP_WINDOW, clients: CS, warm: WARM_UP, pendingIndex: PENDING_INDEX, phases, enqueue, verdicts, claimPlan: plan });
    process.stdout.write(`wrote ${path}\n`);
  } finally {
    await bench.stop();
  }
}

await main();
