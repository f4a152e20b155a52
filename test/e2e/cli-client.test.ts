/**
 * The CLI's client commands against a running server (issue 9 §1, §3): `--version` and `--help`
 * answer without a server; `deploy` prints a refused workflow's diagnostics as `check` does
 * (`FILE:LINE:COL: error FLOWnnn: message`, the source line, a caret) and exits 1; `start` needs no
 * `--input` for a workflow without parameters and `raise` no `--args` for an event without any;
 * raising a fanned-out slot without `--element` prints a hint naming `--element`.
 */
import test from "ava";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { dropDatabase } from "../helpers/db.js";
import { ROOT, startCluster, type Cluster } from "../helpers/server.js";
import { cliEntry } from "../helpers/cli-entry.js";

const run = promisify(execFile);

let cluster: Cluster;
let scratch = "";
test.before(async () => {
  cluster = await startCluster("cliclient");
  scratch = mkdtempSync(join(tmpdir(), "slotflow-cli-"));
});
test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

async function cli(...args: string[]): Promise<Result> {
  try {
    const r = await run(process.execPath, [...cliEntry(), ...args], { cwd: ROOT, env: cluster.env });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

test.serial("--version prints the package's version and --help lists the commands", async (t) => {
  const version = await cli("--version");
  t.is(version.code, 0);
  t.is(version.stdout, `${JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version}\n`);
  const help = await cli("--help");
  t.is(help.code, 0);
  for (const command of ["check", "migrate", "serve", "web", "worker", "sweeper", "deploy", "start", "show", "raise", "token"]) {
    t.regex(help.stdout, new RegExp(`^  ${command}\\b`, "m"));
  }
});

test.serial("deploy prints a refused workflow's diagnostics exactly as check does, caret line included, and exits 1", async (t) => {
  const file = join(scratch, "broken.flow");
  writeFileSync(file, readFileSync(join(ROOT, "test/fixtures/cli-no-input.flow"), "utf8").replace("on go() -> Done", "on go() -> Nowhere"));
  const r = await cli("deploy", file);
  t.is(r.code, 1);
  const lines = r.stdout.trimEnd().split("\n");
  const header = /^(.+):(\d+):(\d+): error (FLOW\d{3}): .+$/.exec(lines[0]);
  t.truthy(header, r.stdout);
  t.is(header![1], file);
  const source = readFileSync(file, "utf8").split("\n");
  const [line, column] = [Number(header![2]), Number(header![3])];
  t.is(lines[1], source[line - 1]);
  t.regex(lines[2], new RegExp(`^ {${column - 1}}\\^~*$`));
  t.regex(lines.at(-1)!, /^1 file not deployed: [1-9]\d* errors?, \d+ warnings?$/);
  // Every diagnostic reads exactly as check prints it: header, source line, caret line.
  const checked = (await cli("check", file)).stdout.trimEnd().split("\n");
  t.deepEqual(lines.slice(0, -1), checked.slice(0, -1));
});

test.serial("start needs no --input for a workflow without parameters, raise no --args for an event without any", async (t) => {
  const deployed = await cli("deploy", "test/fixtures/cli-no-input.flow");
  t.is(deployed.code, 0, deployed.stdout + deployed.stderr);
  t.is(JSON.parse(deployed.stdout).name, "CliNoInput");
  const started = await cli("start", "CliNoInput");
  t.is(started.code, 0, started.stdout + started.stderr);
  const id = JSON.parse(started.stdout).id as string;
  const raised = await cli("raise", id, "go", "--as", "ann");
  t.is(raised.code, 0, raised.stdout + raised.stderr);
  t.is(JSON.parse(raised.stdout).run.state, "Done");
});

test.serial("raising a fanned-out slot without --element hints at --element and its elements", async (t) => {
  // v0.5: the example's signatures are link-only (no Candidates); this copy lets signed-in principals raise them
  const file = join(scratch, "contract-signing.flow");
  writeFileSync(file, readFileSync(join(ROOT, "examples/contract-signing.flow"), "utf8").replace("    Deadline: 14d\n    Quorum: 2\n", "    Deadline: 14d\n    Quorum: 2\n    Candidates: anyone()\n"));
  const deployed = await cli("deploy", file);
  t.is(deployed.code, 0, deployed.stdout + deployed.stderr);
  const input = { contract: { title: "NDA", value: 10 }, signers: ["ann@example.test", "bob@example.test"] };
  const id = JSON.parse((await cli("start", "ContractSigning", "--input", JSON.stringify(input))).stdout).id as string;
  const r = await cli("raise", id, "signatures", "--args", '{"agree": true}', "--as", "ann");
  t.is(r.code, 1);
  t.is(r.stderr, 'hint: slot "signatures" is fanned out: name its element with --element N (elements: 0, 1)\n');
  const ok = await cli("raise", id, "signatures", "--args", '{"agree": true}', "--as", "ann", "--element", "0");
  t.is(ok.code, 0, ok.stdout + ok.stderr);
});
