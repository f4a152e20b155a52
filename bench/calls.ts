/**
 * Benchmark `calls` (issue 40 item 7, issue 41 item 6): a run whose state calls a machine and
 * whose answer routes it, through the whole path, against real `slotflow web` and `slotflow
 * worker` processes, at C = 1, 10 and 50 — beside a start alone and a link deposit in the same
 * run, on the same cluster:
 *
 *   start    N runs of a workflow that waits on a link slot, C starters at once
 *            (`POST /api/workflows/{name}/runs`): what starting a run costs;
 *   deposit  N deposits answering clones of one VendorApproval run (seeded in SQL, as bench
 *            `deposits` does), C responders at once: what a person's answer costs;
 *   http     N runs of a workflow whose state is `call http "bench-svc"` to a callee in this
 *            process that answers `{score, band}` at once, C starters at once, measured until every
 *            run has finished: start + the call (off the run lock, in the worker) + its answer's step;
 *   task     as http, with `call task "bench.score"` served by `slotflow/worker` (a `TaskWorker` of
 *            concurrency C in its own process, bench/lib/task-worker-host.ts): start + the task's
 *            long-poll fetch, lease and completion (`/api/tasks/poll|complete`) + its answer's step;
 *   hop      the bare HTTP hop: N POSTs from this process to the same callee, C at once — the
 *            ceiling of the network part of a call on this machine (CPU: this process, which is
 *            both client and callee).
 *
 * For each: operations/s, CPU ms per operation over every process (web, worker, the task worker,
 * the database's PostgreSQL backends, redis-server; bench/lib/cluster.ts), SQL statements and
 * Redis commands per operation (counted inside the slotflow processes by the bench preload), and
 * "call − start": a call's own cost beside a deposit's. The callee and the starters run in this
 * process and are not counted (they stand for other machines), but share the two cores.
 *
 *   npm run bench -- calls [n=300] [--c=1,10,50] [--warm=100]
 *
 * Writes bench/results/calls-*.json.
 */
import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { startBenchCluster, type BenchCluster, type Window } from "./lib/cluster.js";
import { loadNote, machineCpu } from "./lib/proc.js";
import { drive, fmt, post, postDeposit, writeResult, type LoadResult } from "./lib/report.js";
import { ADMIN_TOKEN, request, ROOT, type ServerProcess } from "../test/helpers/server.js";

const flags = process.argv.slice(2).filter((a) => a.startsWith("--"));
const flag = (name: string) => flags.find((f) => f.startsWith(`--${name}=`))?.slice(name.length + 3);
const [N = 300] = process.argv.slice(2).filter((a) => !a.startsWith("--")).map(Number);
const CS = (flag("c") ?? "1,10,50").split(",").map(Number);
const WARM = Number(flag("warm") ?? 100);
const WORKER_TOKEN = "bench-worker-token";

/** A workflow whose one state calls `callee` (`http "endpoint"` or `task "type"`) and routes on the score. */
function scoringFlow(name: string, callee: string, timeout: string): string {
  return `workflow ${name}(company: string)
event Scored(score: int, band: string)
initial state Checking {
  call ${callee} as credit returns Scored {
    Input { company: company }
    Timeout: ${timeout}
    Attempts: 3
  }
  on credit(score, band) {
    when (score >= 700) -> Good
    default -> Manual
  }
  on credit.failed -> Failed
}
terminal state Good
terminal state Manual
terminal state Failed
`;
}

/** The three workflows; each routes on its answer and ends, so "finished" is "answered". */
const FLOWS = {
  BenchWait: `workflow BenchWait(company: string)
event Done(ok: bool)
initial state Waiting {
  subscribe Done(ok) as done {
    Title: "Done?"
  }
  on done(ok) -> Finished
}
terminal state Finished
`,
  BenchHttp: scoringFlow("BenchHttp", 'http "bench-svc"', "10s"),
  BenchTask: scoringFlow("BenchTask", 'task "bench.score"', "30s"),
};

type Kind = "start" | "deposit" | "http" | "task" | "hop";

export interface CallFigures extends LoadResult {
  kind: Kind;
  /** Wall seconds from the first request until every operation was done (runs finished, for http and task). */
  doneSeconds: number;
  donePerSecond: number;
  cpuMsPerOp: number;
  cpuMsByProcess: Record<string, number>;
  sqlPerOp: number;
  redisCommandsPerOp: number;
  sqlByVerb: Record<string, number>;
  redisByName: Record<string, number>;
}

function figures(kind: Kind, load: LoadResult, doneMs: number, w: Window): CallFigures {
  const n = load.ops;
  const per = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, Number((v / n).toFixed(2))]));
  return {
    ...load,
    kind,
    doneSeconds: doneMs / 1000,
    donePerSecond: n / (doneMs / 1000),
    cpuMsPerOp: Object.values(w.cpuMs).reduce((a, b) => a + b, 0) / n,
    cpuMsByProcess: per(w.cpuMs),
    sqlPerOp: w.counts.sql / n,
    redisCommandsPerOp: w.counts.redis / n,
    sqlByVerb: per(w.counts.sqlByVerb),
    redisByName: per(w.counts.redisByName),
  };
}

/** The callee of `call http`: answers every POST with `{score, band}` at once (a keep-alive server). */
function startCallee(): Promise<{ server: Server; url: string; calls: () => number }> {
  let calls = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      calls++;
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"score":720,"band":"A"}');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      resolve({ server, url: `http://127.0.0.1:${port}`, calls: () => calls });
    }),
  );
}

/** The task-worker process (bench/lib/task-worker-host.ts) at concurrency `c`, metered with the cluster as `task-worker`. */
async function startTaskWorker(bench: BenchCluster, c: number): Promise<ServerProcess> {
  const child = spawn(process.execPath, ["--import=tsx", join(ROOT, "bench/lib/task-worker-host.ts")], {
    cwd: ROOT,
    env: { ...process.env, BENCH_URL: bench.cluster.baseUrl, BENCH_WORKER_TOKEN: WORKER_TOKEN, BENCH_CONCURRENCY: String(c) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  child.stderr!.on("data", (b: Buffer) => output.push(b.toString("utf8")));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (b: Buffer) => b.toString("utf8").includes("ready") && resolve());
    child.once("exit", (code) => reject(new Error(`the task worker exited (${code}): ${output.join("")}`)));
  });
  const proc: ServerProcess = {
    child,
    role: "task-worker",
    output,
    warnings: [],
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
      await exited;
      clearTimeout(timer);
    },
  };
  bench.cluster.processes.push(proc);
  return proc;
}

/** Waits until `n` runs of `workflow` have ended (one indexed count every 50 ms); returns how many ended Good. */
async function allEnded(bench: BenchCluster, workflow: string, n: number, timeoutMs = 600_000): Promise<number> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await bench.pool.query<{ ended: string; good: string }>(
      "SELECT count(*) FILTER (WHERE status <> 'running') AS ended, count(*) FILTER (WHERE state = 'Good') AS good FROM runs WHERE workflow_name = $1",
      [workflow],
    );
    if (Number(rows[0]!.ended) >= n) return Number(rows[0]!.good);
    if (Date.now() > until) throw new Error(`${workflow}: ${rows[0]!.ended} of ${n} runs ended in ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const startUrl = (bench: BenchCluster, workflow: string) => `${bench.cluster.baseUrl}/api/workflows/${workflow}/runs`;
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** Starts `n` runs of `workflow` with `clients` starters at once (the last of them measured: see header). */
function starts(bench: BenchCluster, workflow: string, from: number, n: number, clients: number): Promise<LoadResult> {
  const items = Array.from({ length: n }, (_, i) => JSON.stringify({ company: `Bench ${from + i}` }));
  return drive(items, clients, (body) => post(startUrl(bench, workflow), body, auth));
}

const started = machineCpu();
const bench = await startBenchCluster("calls", { env: { SLOTFLOW_WORKER_TOKEN: WORKER_TOKEN, SLOTFLOW_ENDPOINTS_ALLOW_PRIVATE: "1" } });
const callee = await startCallee();
const results: CallFigures[] = [];
try {
  for (const [name, source] of Object.entries(FLOWS)) {
    const res = await request(bench.cluster.baseUrl, "POST", "/api/workflows", { token: ADMIN_TOKEN, text: source });
    if (res.status !== 201) throw new Error(`deploy ${name}: ${res.status} ${res.text}`);
  }
  await bench.deploy("examples/vendor-approval.flow");
  const endpoint = await request(bench.cluster.baseUrl, "PUT", "/api/endpoints/bench-svc", { token: ADMIN_TOKEN, json: { kind: "http", url: `${callee.url}/score` } });
  if (endpoint.status !== 201 && endpoint.status !== 200) throw new Error(`endpoint: ${endpoint.status} ${endpoint.text}`);
  const urls = await bench.seedRuns("VendorApproval", { vendor: { name: "Bench", contactEmail: "bench@example.com" }, amount: 10 }, WARM + N * CS.length, "calls");

  // warm every path once (the processes' first query shapes, JIT), outside any measurement
  let httpRuns = 0;
  let taskRuns = 0;
  let waitRuns = 0;
  let deposited = 0;
  const warmWorker = await startTaskWorker(bench, 10);
  await starts(bench, "BenchWait", waitRuns, WARM, 10);
  waitRuns += WARM;
  await drive(urls.slice(0, WARM), 10, (u) => postDeposit(u));
  deposited += WARM;
  await starts(bench, "BenchHttp", httpRuns, WARM, 10);
  httpRuns += WARM;
  await starts(bench, "BenchTask", taskRuns, WARM, 10);
  taskRuns += WARM;
  await allEnded(bench, "BenchHttp", httpRuns);
  await allEnded(bench, "BenchTask", taskRuns);
  await warmWorker.stop();
  bench.cluster.processes.splice(bench.cluster.processes.indexOf(warmWorker), 1);

  for (const c of CS) {
    // the bare HTTP hop: this process posting to the callee (its own CPU, both sides)
    {
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const load = await drive(Array.from({ length: N }, () => '{"company":"Bench"}'), c, (body) => post(`${callee.url}/score`, body));
      const ms = performance.now() - t0;
      const used = process.cpuUsage(cpu0);
      const cpuMs = (used.user + used.system) / 1000;
      results.push(figures("hop", load, ms, { cpuMs: { "bench process (client + callee)": cpuMs }, counts: { sql: 0, redis: 0, sqlByVerb: {}, redisByName: {} }, redisServerCalls: 0, pauses: {} }));
    }
    // start alone
    {
      const m = await bench.measure();
      const t0 = performance.now();
      const load = await starts(bench, "BenchWait", waitRuns, N, c);
      waitRuns += N;
      results.push(figures("start", load, performance.now() - t0, await m.stop()));
    }
    // a link deposit (seeded runs)
    {
      const m = await bench.measure();
      const t0 = performance.now();
      const load = await drive(urls.slice(deposited, deposited + N), c, (u) => postDeposit(u));
      deposited += N;
      results.push(figures("deposit", load, performance.now() - t0, await m.stop()));
    }
    // call http
    {
      const m = await bench.measure();
      const t0 = performance.now();
      const load = await starts(bench, "BenchHttp", httpRuns, N, c);
      httpRuns += N;
      const good = await allEnded(bench, "BenchHttp", httpRuns);
      const doneMs = performance.now() - t0;
      if (good !== httpRuns) throw new Error(`http: ${httpRuns - good} runs did not end Good`);
      results.push(figures("http", load, doneMs, await m.stop()));
    }
    // call task through slotflow/worker at concurrency c
    {
      const worker = await startTaskWorker(bench, c);
      const m = await bench.measure();
      const t0 = performance.now();
      const load = await starts(bench, "BenchTask", taskRuns, N, c);
      taskRuns += N;
      const good = await allEnded(bench, "BenchTask", taskRuns);
      const doneMs = performance.now() - t0;
      if (good !== taskRuns) throw new Error(`task: ${taskRuns - good} runs did not end Good`);
      results.push(figures("task", load, doneMs, await m.stop()));
      await worker.stop();
      bench.cluster.processes.splice(bench.cluster.processes.indexOf(worker), 1);
    }
  }
} finally {
  callee.server.close();
  await bench.stop();
}

const row = (f: CallFigures) =>
  `${f.kind.padEnd(8)} C=${String(f.clients).padEnd(3)} ${fmt(f.donePerSecond).padStart(7)}/s done  ${fmt(f.cpuMsPerOp, 2).padStart(7)} CPU ms/op  ` +
  `${fmt(f.sqlPerOp, 1).padStart(5)} SQL/op  ${fmt(f.redisCommandsPerOp, 1).padStart(5)} Redis/op   ` +
  Object.entries(f.cpuMsByProcess)
    .map(([k, v]) => `${k} ${fmt(v, 2)}`)
    .join(", ");
console.log(`calls: n=${N} per phase; CPU ms per operation over every process (web, worker, task worker, PostgreSQL, Redis)`);
for (const f of results) console.log(row(f));
for (const c of CS) {
  const at = (k: Kind) => results.find((r) => r.kind === k && r.clients === c)!;
  const start = at("start").cpuMsPerOp;
  console.log(
    `C=${c}: call − start: http ${fmt(at("http").cpuMsPerOp - start, 2)} CPU ms, task ${fmt(at("task").cpuMsPerOp - start, 2)} CPU ms; a deposit ${fmt(at("deposit").cpuMsPerOp, 2)} CPU ms; the bare hop ${fmt(at("hop").cpuMsPerOp, 2)} CPU ms (${fmt(at("hop").donePerSecond)}/s)`,
  );
}
console.log(`callee answered ${callee.calls()} requests (calls and hops); ${loadNote(started)}`);
console.log(`wrote ${writeResult("calls", { n: N, clients: CS, results })}`);
