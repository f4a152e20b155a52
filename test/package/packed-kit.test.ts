/**
 * The package as an author installs it (issue 9 §1): `npm pack` this project, put the tarball
 * where docs/testing.md's Set-up says (`../slotflow/` beside the author's project), run the install
 * line that Set-up shows — exactly that line, read from the page (issue 30 item 12: the page said
 * `npm install --save-dev slotflow`, a 404: slotflow is not on the npm registry) — in a fresh
 * temporary project, migrate a fresh database with the installed
 * `slotflow migrate` (the compiled CLI), type-check the author's test that docs/testing.md shows
 * with plain `tsc` (the package's `exports` carry `types`; no loader) and run the compiled test
 * with ava. It deploys, starts, redeems with `Workflow.Redeem` and asserts refusal codes. Then
 * `import { compile } from "slotflow"` from plain JavaScript.
 *
 * The second test installs the same tarball into a second fresh project and uses the SDK there
 * (`slotflow types`, `slotflow/client`, `slotflow/worker`; see its comment).
 *
 * Needs the npm registry (or npm's cache): the tarball's dependencies and ava are installed with
 * `--prefer-offline`. Takes about a minute on a quiet machine; each step has its own timeout.
 */
import test from "ava";
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { showRun, startRun } from "../helpers/callback.js";
import { runsBuilt } from "../helpers/cli-entry.js";
import { dropDatabase } from "../helpers/db.js";
import { ADMIN_TOKEN, eventually, ROOT, startCluster, type Cluster } from "../helpers/server.js";

const run = promisify(execFile);
const STEP_MS = 240_000;

/** The first ```ts block after "## An author's test to copy" in docs/testing.md. */
function documentedTest(): string {
  const doc = readFileSync(join(ROOT, "docs/testing.md"), "utf8");
  const section = doc.slice(doc.indexOf("## An author's test to copy"));
  const block = /```ts\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error("docs/testing.md shows no author's test");
  return block[1];
}

/**
 * The install line of docs/testing.md's "Set-up": the `npm install` line of its ```sh block — run
 * as written, by the shell, in the author's project.
 */
function documentedInstall(): string {
  const doc = readFileSync(join(ROOT, "docs/testing.md"), "utf8");
  const section = doc.slice(doc.indexOf("## Set-up"), doc.indexOf("### TypeScript tests"));
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  const line = block?.[1]!.split("\n").map((l) => l.trim()).find((l) => l.startsWith("npm install"));
  if (!line) throw new Error("docs/testing.md's Set-up shows no npm install line");
  return line;
}

/** The two ```json blocks of docs/testing.md's "TypeScript tests": package.json fields and tsconfig.json. */
function documentedSetup(): { packageJson: Record<string, unknown>; tsconfig: Record<string, unknown> } {
  const doc = readFileSync(join(ROOT, "docs/testing.md"), "utf8");
  const section = doc.slice(doc.indexOf("### TypeScript tests"));
  const blocks = [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]) as Record<string, unknown>);
  if (blocks.length < 2) throw new Error("docs/testing.md shows no TypeScript set-up");
  return { packageJson: blocks[0], tsconfig: blocks[1] };
}

/**
 * `npm pack` of this checkout into `dest`, without its lifecycle scripts: `npm pack` runs
 * `prepare` (`npm run build`), and tsc rewriting dist/ file by file while the other test files'
 * servers load it made one of them read a half-written module (CI: "The requested module
 * './lexer.js' does not provide an export named 'Newline'"). `npm test` builds dist/ before any
 * test runs; run alone with a stale dist/ (test/helpers/cli-entry.ts), this file builds it first,
 * with nothing else running. The tarball is what `npm pack` makes after `prepare` either way.
 */
async function pack(dest: string, options: { cwd: string; env: NodeJS.ProcessEnv; maxBuffer: number }) {
  if (!runsBuilt()) await run("npm", ["run", "build"], options);
  return run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", dest], options);
}

let dir = "";
let databaseUrl = "";
/** The tarball `npm pack` wrote (the SDK test below installs it too; it packs on its own when run alone). */
let tarball = "";
test.after.always(async () => {
  if (databaseUrl) await dropDatabase(databaseUrl);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test.serial("the packed package installs into a fresh project, whose documented ava test passes without a loader", async (t) => {
  t.timeout(STEP_MS, "npm pack");
  dir = mkdtempSync(join(tmpdir(), "slotflow-packed-"));
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: "" };
  delete env.DATABASE_URL;
  delete env.SLOTFLOW_TEST_DATABASE_URL;
  const opts = (cwd: string) => ({ cwd, env, maxBuffer: 64 * 1024 * 1024 });

  const packed = await pack(dir, opts(ROOT));
  const [{ filename, files }] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
  const paths = files.map((f) => f.path);
  t.true(paths.includes("dist/src/testing/index.js") && paths.includes("dist/src/testing/index.d.ts"), "the tarball carries the compiled kit with its types");
  t.true(paths.some((p) => p.startsWith("dist/src/generated/prisma/")), "the tarball carries the compiled Prisma client");
  t.false(paths.some((p) => p.startsWith("src/") || p.startsWith("test/")), "the tarball carries no TypeScript sources or tests");

  t.timeout(STEP_MS, "npm install");
  const project = join(dir, "author-project");
  mkdirSync(join(project, "test/fixtures"), { recursive: true });
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify({
      name: "author-project",
      private: true,
      ...documentedSetup().packageJson,
      // This machine's registry has msgpackr-extract's platform packages only up to 3.0.4 (a BullMQ dependency).
      overrides: { "msgpackr-extract": "3.0.4" },
    }),
  );
  // the checkout beside the project, holding the tarball `npm pack` wrote into it
  const line = documentedInstall();
  t.is(line, `npm install --save-dev ../slotflow/${filename} ava@7`, "the documented line names the tarball npm pack writes");
  mkdirSync(join(dir, "slotflow"));
  renameSync(join(dir, filename), join(dir, "slotflow", filename));
  tarball = join(dir, "slotflow", filename);
  // the line as written; npm's settings for this machine come from the environment, not the line
  const npmEnv = { ...env, npm_config_prefer_offline: "true", npm_config_audit: "false", npm_config_fund: "false" };
  await run("sh", ["-c", line], { ...opts(project), env: npmEnv });
  const installed = JSON.parse(readFileSync(join(project, "package.json"), "utf8")) as { devDependencies: Record<string, string> };
  t.is(installed.devDependencies.slotflow, `file:../slotflow/${filename}`);
  t.truthy(installed.devDependencies.ava);
  t.pass("installed");

  t.timeout(STEP_MS, "tsc");
  cpSync(join(ROOT, "test/fixtures/purchase-order.flow"), join(project, "test/fixtures/purchase-order.flow"));
  writeFileSync(join(project, "test/kit.test.ts"), documentedTest());
  writeFileSync(join(project, "tsconfig.json"), JSON.stringify(documentedSetup().tsconfig));
  await run(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], opts(project));
  t.pass("the documented test type-checks against the package's declarations");

  t.timeout(STEP_MS, "migrate");
  const server = new URL(process.env.DATABASE_URL || "postgresql://postgres@127.0.0.1:5432/slotflow");
  server.pathname = `/${process.env.SLOTFLOW_TEST_DB_PREFIX || "slotflow_t"}_packed_${Date.now().toString(36)}`;
  databaseUrl = server.toString();
  const migrated = await run(join(project, "node_modules/.bin/slotflow"), ["migrate"], { ...opts(project), env: { ...env, DATABASE_URL: databaseUrl } });
  t.regex(migrated.stdout, /^migrations: [1-9]\d* applied, 0 already applied$/m);

  t.timeout(STEP_MS, "ava");
  const tested = await run(join(project, "node_modules/.bin/ava"), ["--tap"], { ...opts(project), env: { ...env, SLOTFLOW_TEST_DATABASE_URL: databaseUrl } });
  t.regex(tested.stdout, /^# pass 1$/m, tested.stdout);
  t.regex(tested.stdout, /^# fail 0$/m);

  // The package's main entry, from plain JavaScript: the compiler answers with data.
  const script = `import { compile } from "slotflow"; const r = compile("workflow W(", "w.flow"); console.log(r.workflow === null, r.diagnostics[0].code);`;
  const main = await run(process.execPath, ["--input-type=module", "-e", script], opts(project));
  t.regex(main.stdout, /^true FLOW\d{3}$/m);
});

// --- the SDK: slotflow types, slotflow/client, slotflow/worker ----------------------------------------

const WORKER_TOKEN = "packed-sdk-worker-token-0123456789";

/** The flow of the kill -9 test: the app's task type, with a 3 s lease. */
const QUICK_LEASE = `workflow QuickLease(customer: string)
event Scored(score: int, band: string)
initial state Checking {
  call task "credit-score" as credit returns Scored {
    Input { customer: customer, amount: 1 }
    Timeout: 3s
    Attempts: 3
  }
  on credit(score, band) -> Scored
  on credit.failed -> Failed
}
terminal state Scored
terminal state Failed
`;

/** A worker of the project's own that takes one task and never finishes it (killed mid-task). */
const HANG = `import { TaskWorker } from "slotflow/worker";
const worker = new TaskWorker({
  url: process.env.BASE_URL!, token: process.env.SLOTFLOW_WORKER_TOKEN!, waitSeconds: 5,
  tasks: { "credit-score": async (_input: { customer: string }, ctx) => { console.log(\`took \${ctx.taskId} attempt \${ctx.attempt}\`); await new Promise(() => undefined); return { score: 0, band: "X" }; } },
});
await worker.run();
`;

/** A worker of the project's own that answers every task until SIGTERM. */
const SERVE = `import { TaskWorker } from "slotflow/worker";
const worker = new TaskWorker({
  url: process.env.BASE_URL!, token: process.env.SLOTFLOW_WORKER_TOKEN!, waitSeconds: 5,
  tasks: { "credit-score": async (_input: { customer: string }, ctx) => { console.log(\`answered \${ctx.taskId} attempt \${ctx.attempt}\`); return { score: 700, band: "A" }; } },
});
process.once("SIGTERM", () => void worker.stop());
await worker.run();
`;

/** Calls that must not compile: an unknown workflow, and an input of the wrong type. */
const WRONG = `import { createClient } from "slotflow/client";
import type { Workflows } from "./workflows.js";
const slotflow = createClient<Workflows>({ url: "http://localhost:3000", token: "t" });
await slotflow.start("CreditOrdr", { order: { customer: "A", amount: 1 } });
await slotflow.start("CreditOrder", { order: { customer: "A", amount: "1200" } });
`;

let cluster: Cluster | undefined;
const children: ChildProcess[] = [];
test.after.always(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

/** Spawns `node file` in the project; its stdout lines are collected in `lines`. */
function spawnNode(project: string, file: string, env: NodeJS.ProcessEnv): { child: ChildProcess; lines: string[] } {
  const child = spawn(process.execPath, [file], { cwd: project, env, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  const lines: string[] = [];
  child.stdout!.on("data", (b: Buffer) => lines.push(...b.toString("utf8").split("\n").filter(Boolean)));
  child.stderr!.on("data", (b: Buffer) => lines.push(`stderr: ${b.toString("utf8")}`));
  return { child, lines };
}

/**
 * The SDK as a user's project gets it (issue 41, "Done when"), with nothing of this repository but
 * the package: `slotflow types` (the installed CLI) writes declarations from examples/app's flow;
 * plain `tsc` compiles examples/app's service and refuses a wrong workflow name and a wrong input
 * type; the compiled service, run with plain `node`, serves its `call task`, starts a run and
 * prints the typed result its own worker decided; a task worker killed with `kill -9` while it
 * holds a task: another worker of the project takes it once the lease (the call's `Timeout`, 3 s
 * here) ran out, and the answer is applied once (attempt 2, one `call-answered`).
 */
test.serial("the SDK in a fresh project with the packed package: types, tsc, the client and task workers (one killed mid-task)", async (t) => {
  t.timeout(STEP_MS, "npm pack");
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: "" };
  delete env.DATABASE_URL;
  delete env.SLOTFLOW_TEST_DATABASE_URL;
  const opts = (cwd: string) => ({ cwd, env, maxBuffer: 64 * 1024 * 1024 });
  dir ||= mkdtempSync(join(tmpdir(), "slotflow-packed-"));
  if (!tarball) {
    const packed = await pack(dir, opts(ROOT));
    tarball = join(dir, (JSON.parse(packed.stdout) as { filename: string }[])[0]!.filename);
  }

  t.timeout(STEP_MS, "npm install");
  const project = join(dir, "sdk-project");
  mkdirSync(join(project, "src"), { recursive: true });
  mkdirSync(join(project, "flows"));
  // This machine's registry has msgpackr-extract's platform packages only up to 3.0.4 (a BullMQ dependency).
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "app", private: true, type: "module", overrides: { "msgpackr-extract": "3.0.4" } }));
  const npmEnv = { ...env, npm_config_prefer_offline: "true", npm_config_audit: "false", npm_config_fund: "false" };
  await run("npm", ["install", tarball], { ...opts(project), env: npmEnv });

  t.timeout(STEP_MS, "slotflow types and tsc");
  cpSync(join(ROOT, "examples/app/flows/credit-order.flow"), join(project, "flows/credit-order.flow"));
  cpSync(join(ROOT, "examples/app/src/main.ts"), join(project, "src/main.ts"));
  writeFileSync(join(project, "src/hang.ts"), HANG);
  writeFileSync(join(project, "src/serve.ts"), SERVE);
  const slotflow = join(project, "node_modules/.bin/slotflow");
  const typed = await run(slotflow, ["types", "flows/credit-order.flow", "--out", "src/workflows.ts"], opts(project));
  t.regex(typed.stdout, /declarations of 1 workflow \(CreditOrder\)/);
  const compilerOptions = {
    target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, outDir: "dist", rootDir: "src", skipLibCheck: true,
    types: ["node"], typeRoots: [join(ROOT, "node_modules/@types")],
  };
  writeFileSync(join(project, "tsconfig.json"), JSON.stringify({ compilerOptions, include: ["src"], exclude: ["src/wrong.ts"] }));
  const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
  await run(process.execPath, [tsc, "-p", "tsconfig.json"], opts(project));
  t.pass("the service compiles against the installed package's declarations");
  writeFileSync(join(project, "src/wrong.ts"), WRONG);
  writeFileSync(join(project, "tsconfig.wrong.json"), JSON.stringify({ compilerOptions: { ...compilerOptions, noEmit: true }, files: ["src/wrong.ts"] }));
  const wrong = await run(process.execPath, [tsc, "-p", "tsconfig.wrong.json"], opts(project)).then(
    () => ({ code: 0, stdout: "" }),
    (e: { code: number; stdout: string }) => e,
  );
  t.not(wrong.code, 0, "a wrong workflow name and a wrong input type do not compile");
  t.regex(wrong.stdout, /wrong\.ts\(4,\d+\): error TS\d+:.*CreditOrdr/);
  t.regex(wrong.stdout, /wrong\.ts\(5,\d+\): error TS\d+:.*string.*number|wrong\.ts\(5,\d+\): error TS\d+:.*number/);

  t.timeout(STEP_MS, "the service against a real server");
  cluster = await startCluster("packedsdk", { env: { SLOTFLOW_WORKER_TOKEN: WORKER_TOKEN } });
  const serverEnv = { ...env, BASE_URL: cluster.baseUrl, SLOTFLOW_ADMIN_TOKEN: ADMIN_TOKEN };
  await run(slotflow, ["deploy", "flows/credit-order.flow"], { ...opts(project), env: serverEnv });
  const appEnv = { PATH: env.PATH, HOME: env.HOME, BASE_URL: cluster.baseUrl, SLOTFLOW_ADMIN_TOKEN: ADMIN_TOKEN, SLOTFLOW_WORKER_TOKEN: WORKER_TOKEN };
  const app = await run(process.execPath, ["dist/main.js", "Acme Ltd", "1200"], { cwd: project, env: appEnv, timeout: 120_000 });
  const [first, second] = app.stdout.trim().split("\n");
  const runId = /^started ([0-9a-f-]{36})$/.exec(first ?? "")?.[1];
  t.truthy(runId, app.stdout + app.stderr);
  t.regex(second ?? "", /^(Accepted|Declined): score \d+, credit band [ABC]$/);
  t.is((await showRun(cluster.baseUrl, runId!)).state, second!.split(":")[0]);

  t.timeout(STEP_MS, "kill -9 a worker mid-task");
  writeFileSync(join(project, "flows/quick-lease.flow"), QUICK_LEASE);
  await run(slotflow, ["deploy", "flows/quick-lease.flow"], { ...opts(project), env: serverEnv });
  const holder = spawnNode(project, "dist/hang.js", appEnv);
  const quick = await startRun(cluster.baseUrl, "QuickLease", { customer: "Kill Nine" });
  await eventually(async () => holder.lines.some((l) => /^took .* attempt 1$/.test(l)), 60_000);
  holder.child.kill("SIGKILL");
  const serving = spawnNode(project, "dist/serve.js", appEnv);
  const ended = await eventually(async () => {
    const r = await showRun(cluster!.baseUrl, quick);
    return r.status !== "running" ? r : null;
  }, 60_000);
  t.is(ended.state, "Scored", JSON.stringify(ended.history.slice(-5)));
  t.is(ended.history.filter((h) => h.kind === "call-answered").length, 1, "the answer applied once");
  t.like(ended.history.find((h) => h.kind === "call-answered")!.data as Record<string, unknown>, { attempt: 2 });
  t.true(serving.lines.some((l) => /^answered .* attempt 2$/.test(l)), serving.lines.join("\n"));
  t.false(serving.lines.some((l) => /attempt 1$/.test(l)), "the second worker got the task only after the lease ran out, as attempt 2");
  serving.child.kill("SIGTERM");
});
