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
 * Needs the npm registry (or npm's cache): the tarball's dependencies and ava are installed with
 * `--prefer-offline`. Takes about a minute on a quiet machine; each step has its own timeout.
 */
import test from "ava";
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { dropDatabase } from "../helpers/db.js";
import { ROOT } from "../helpers/server.js";

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

let dir = "";
let databaseUrl = "";
test.after.always(async () => {
  if (databaseUrl) await dropDatabase(databaseUrl);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test("the packed package installs into a fresh project, whose documented ava test passes without a loader", async (t) => {
  t.timeout(STEP_MS, "npm pack");
  dir = mkdtempSync(join(tmpdir(), "slotflow-packed-"));
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: "" };
  delete env.DATABASE_URL;
  delete env.SLOTFLOW_TEST_DATABASE_URL;
  const opts = (cwd: string) => ({ cwd, env, maxBuffer: 64 * 1024 * 1024 });

  const packed = await run("npm", ["pack", "--json", "--pack-destination", dir], opts(ROOT));
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
