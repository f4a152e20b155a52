/**
 * docs/tutorial.md, followed end to end, so the tutorial cannot rot: its workflow, its test and
 * its package.json fields are read from the page (the blocks after `<!-- tutorial-file: PATH -->`
 * and `<!-- tutorial-json: package.json -->`) into a fresh project directory, and every command of
 * the blocks marked `<!-- tutorial-run -->` is run by the shell, in order, as written — with the
 * placeholders a reader fills in filled in: `<run id>` from the `start` output, `<link>` from the
 * email the server printed, and a fresh database instead of `po_test`. Each `# → …` line after a
 * command is what the command must print: the `"key": "value"` pairs it shows, or its text.
 *
 * Two steps are stood in for, both tested elsewhere: `npm ci && npm start` is one
 * `slotflow serve --migrate` on a fresh database (the helper every end-to-end test uses, on a free
 * port: the CLI is pointed at it with BASE_URL, which is what `http://localhost:3000` is by
 * default); installing the packed tarball (test/package/packed-kit.test.ts runs that exact line)
 * is links in the project's node_modules to this checkout, to ava, tsx, typescript and @types/node.
 * `npx slotflow`, `npx ava`, `npx tsc` and `npx tsx` then run this checkout's CLI and tools, and
 * `../slotflow/` (the checkout beside the project) is this checkout.
 *
 * Step 9's program (`npx tsx src/purchase.ts`) starts a run and waits for its result while the
 * reader answers in a second terminal: it runs in the background, its printed run id becomes
 * `<run id>`, the raise waits until that run is in ManualReview (as a reader would see it there),
 * and the program must then print the `<!-- tutorial-output: src/purchase.ts -->` block and exit 0.
 */
import test from "ava";
import { exec, spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { cliEntry, runsBuilt } from "../helpers/cli-entry.js";
import { dropDatabase } from "../helpers/db.js";
import { linkIn, waitForEmail } from "../helpers/mail.js";
import { ADMIN_TOKEN, request, ROOT, startCluster, type Cluster } from "../helpers/server.js";

const sh = promisify(exec);
const PAGE = readFileSync(join(ROOT, "docs/tutorial.md"), "utf8");

/** The fenced block right after each `<!-- marker: arg -->` (or `<!-- marker -->`) of the page. */
function blocksAfter(marker: string): { arg: string; body: string }[] {
  const re = new RegExp(`<!-- ${marker}(?::\\s*(\\S+))? -->\\n\`\`\`\\w*\\n([\\s\\S]*?)\`\`\``, "g");
  return [...PAGE.matchAll(re)].map((m) => ({ arg: m[1] ?? "", body: m[2] }));
}

/** The commands of the `tutorial-run` blocks, each with the `# → …` lines after it. */
function commands(): { line: string; expect: string[] }[] {
  const out: { line: string; expect: string[] }[] = [];
  for (const { body } of blocksAfter("tutorial-run")) {
    for (const raw of body.split("\n")) {
      const line = raw.trim();
      if (line.startsWith("# →")) out.at(-1)!.expect.push(line.slice(3).trim());
      else if (line !== "" && !line.startsWith("#")) out.push({ line, expect: [] });
    }
  }
  return out;
}

const squeeze = (s: string) => s.replace(/\s+/g, "");

let cluster: Cluster;
let project = "";
let kitDatabase = "";

test.before(async () => {
  cluster = await startCluster("tutorial");
  project = mkdtempSync(join(tmpdir(), "slotflow-tutorial-"));
  const name = `slotflow_t_tutorial_${Math.random().toString(16).slice(2, 10)}`;
  const url = new URL(cluster.databaseUrl);
  url.pathname = `/${name}`;
  kitDatabase = url.toString();
});

test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
  if (kitDatabase) await dropDatabase(kitDatabase).catch(() => undefined);
  if (project) rmSync(project, { recursive: true, force: true });
});

test("the tutorial, followed as written: check, deploy, start, the vendor's link, finance's raise, and the kit's tests of the timers", async (t) => {
  t.timeout(15 * 60_000, "the whole tutorial: two kit test runs, tsc, and a program waiting for a run's result"); // one test of many steps
  // The project: the page's files, its package.json fields, and the installed packages.
  const files = blocksAfter("tutorial-file");
  t.deepEqual(files.map((f) => f.arg), ["purchase-order.flow", "test/purchase-order.test.ts", "test/purchase-request.test.ts", "src/purchase.ts", "tsconfig.json"]);
  for (const f of files) {
    mkdirSync(dirname(join(project, f.arg)), { recursive: true });
    writeFileSync(join(project, f.arg), f.body);
  }
  const [pkg] = blocksAfter("tutorial-json");
  t.is(pkg?.arg, "package.json");
  const fields = JSON.parse(pkg!.body) as { ava: { nodeArguments: string[] } };
  // The packed package runs its compiled dist/; this checkout's sources need the condition that selects them.
  if (!runsBuilt()) fields.ava.nodeArguments.unshift("--conditions=slotflow-src");
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "po-workflows", version: "1.0.0", private: true, ...fields }, null, 2));
  mkdirSync(join(project, "node_modules"));
  symlinkSync(ROOT, join(project, "node_modules", "slotflow"));
  mkdirSync(join(project, "node_modules", "@types"));
  for (const dep of ["ava", "tsx", "typescript", "@types/node"]) symlinkSync(join(ROOT, "node_modules", dep), join(project, "node_modules", dep));

  const slotflow = [process.execPath, ...cliEntry().map((a) => (a.startsWith("--") ? a : join(ROOT, a)))].map((a) => `'${a}'`).join(" ");
  const ava = `'${process.execPath}' '${join(ROOT, "node_modules/ava/entrypoints/cli.mjs")}'`;
  const tsc = `'${process.execPath}' '${join(ROOT, "node_modules/typescript/bin/tsc")}'`;
  const tsx = `'${process.execPath}' ${runsBuilt() ? "" : "--conditions=slotflow-src "}'${join(ROOT, "node_modules/tsx/dist/cli.mjs")}'`;
  let runId = "";
  // Step 9's program waits for its run's result while the reader answers in a second terminal: it runs in the background.
  let program: { child: ChildProcess; output: () => string; exited: Promise<number | null> } | undefined;
  const steps = commands();
  t.true(steps.length >= 7, steps.map((s) => s.line).join("\n"));
  for (const step of steps) {
    let line = step.line
      .replaceAll("npx slotflow", slotflow)
      .replaceAll("npx ava", ava)
      .replaceAll("npx tsc", tsc)
      .replaceAll("npx tsx", tsx)
      .replaceAll("../slotflow/", `${ROOT}/`)
      .replaceAll("postgresql://postgres@127.0.0.1:5432/po_test", kitDatabase);
    if (line.includes("<run id>")) line = line.replaceAll("<run id>", runId);
    if (/ raise <run id> review /.test(step.line)) {
      // The reader answers once the run waits in ManualReview (its credit check failed: no endpoint); wait for that fact.
      let state = "";
      for (let i = 0; i < 1200 && state !== "ManualReview"; i++) {
        state = ((await request(cluster.baseUrl, "GET", `/api/runs/${runId}`, { token: ADMIN_TOKEN })).body as { state?: string } | undefined)?.state ?? "";
        if (state !== "ManualReview") await new Promise((r) => setTimeout(r, 100));
      }
      t.is(state, "ManualReview", "the failed credit check routed the run to ManualReview");
    }
    if (line.includes("<link>")) line = line.replaceAll("<link>", linkIn(await waitForEmail(() => cluster.output(), "Please confirm a delivery date for 200 pallets")));
    if (line.includes("src/purchase.ts")) {
      const child = spawn(line, { cwd: project, env: { ...cluster.env, NODE_OPTIONS: "" }, shell: "/bin/bash", stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr!.on("data", (d: Buffer) => (out += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
      program = { child, output: () => out, exited };
      let started: RegExpExecArray | null = null;
      for (let i = 0; i < 1200 && !(started = /started ([0-9a-f-]{36}): waiting for its result/.exec(out)); i++) {
        if (child.exitCode !== null) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      if (!started) {
        t.fail(`${step.line}\ndid not print its run id:\n${out}`);
        child.kill();
        return;
      }
      runId = started[1];
      continue;
    }
    let stdout = "";
    let stderr = "";
    try {
      ({ stdout, stderr } = await sh(line, { cwd: project, env: { ...cluster.env, NODE_OPTIONS: "" }, shell: "/bin/bash", timeout: 120_000 }));
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; code?: number };
      t.fail(`${step.line}\nexited ${e.code}\n${e.stdout ?? ""}\n${e.stderr ?? ""}`);
      return;
    }
    const printed = `${stdout}\n${stderr}`;
    if (/ start PurchaseOrder /.test(step.line)) runId = (JSON.parse(stdout) as { id: string }).id;
    for (const expected of step.expect) {
      const pairs = [...expected.matchAll(/"(\w+)":\s*"([^"]*)"/g)];
      if (pairs.length > 0) {
        for (const [, key, value] of pairs) {
          if (value.startsWith("<")) continue; // a placeholder such as "<run id>"
          t.true(squeeze(printed).includes(squeeze(`"${key}":"${value}"`)), `${step.line}\nshould print "${key}": "${value}", printed:\n${printed}`);
        }
      } else {
        t.true(squeeze(printed).includes(squeeze(expected)), `${step.line}\nshould print ${expected}, printed:\n${printed}`);
      }
    }
  }
  t.regex(runId, /^[0-9a-f-]{36}$/);
  // The program printed the run's result once the run ended (its long poll answered).
  t.truthy(program, "step 9 ran src/purchase.ts");
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([program!.exited, new Promise<"late">((r) => (timer = setTimeout(() => r("late"), 120_000)))]);
  clearTimeout(timer);
  if (code === "late") program!.child.kill();
  t.is(code, 0, program!.output());
  const [expected] = blocksAfter("tutorial-output");
  t.is(expected?.arg, "src/purchase.ts");
  t.true(program!.output().includes(expected!.body.trim()), `src/purchase.ts should print ${expected!.body.trim()}, printed:\n${program!.output()}`);
});

test("the tutorial's workflow is formatted as slotflow fmt writes it, and every step it names is in the page", async (t) => {
  const flow = blocksAfter("tutorial-file").find((f) => f.arg === "purchase-order.flow")!.body;
  const { format } = await import("../../src/authoring/format.js");
  const r = format(flow);
  t.true(r.ok && !r.changed, "the page's workflow is as slotflow fmt writes it");
  // The excerpts of examples shown in the page are in those files, as written.
  const excerpts = blocksAfter("tutorial-excerpt");
  t.true(excerpts.length >= 2);
  for (const { arg, body } of excerpts) t.true(readFileSync(join(ROOT, arg), "utf8").includes(body), `${arg} holds the page's excerpt:\n${body}`);
  for (const words of ["npm ci && npm start", "npm pack", "npx slotflow check", "npx slotflow deploy", "npx slotflow raise", "advanceTime"]) {
    t.true(PAGE.includes(words), words);
  }
});
