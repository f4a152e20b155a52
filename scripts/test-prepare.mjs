#!/usr/bin/env node
/**
 * The first step of `npm test` (issue 39 item 4): the typecheck of everything (tsconfig.json),
 * which also writes the JavaScript of the tests and of what they import to `.tmp/tests/` (what
 * `npm test` runs: ava.built.config.js), and the build of dist/ (`npm run build`, which spawned
 * test servers run: test/helpers/cli-entry.ts) — each skipped when it already succeeded for
 * exactly these inputs.
 *
 * Why the tests run as JavaScript: loading a test file and the sources it imports through tsx's
 * loader hooks cost about 2–3 s of CPU per test file more than loading the same modules compiled
 * (measured on this project's 2-core CI machine: engine/retention 9.5 s against 6.3 s of CPU,
 * lang/calls 5.5 s against 3.4 s) — a fifth of what the whole suite spends, on a machine whose
 * limit is CPU. The typecheck already reads every file; writing them out costs little more.
 * `npx ava test/….test.ts` (package.json's ava settings) still runs one file from its sources.
 *
 * Each step's inputs are fingerprinted (SHA-256 over the path and content of every file under its
 * folders, the tsconfig files, package.json, package-lock.json and the TypeScript version); after
 * a step succeeds its fingerprint is kept in `.tmp/test-prepare.json` (git-ignored). The next run
 * with the same fingerprint skips the step — so CI, which runs `npm test` once per Node version on
 * the same checkout, typechecks and builds once (TypeScript's output does not depend on the Node
 * that runs the tests). The build is redone anyway when dist/ is missing or older than a source
 * file (as cli-entry.ts would then run the sources, not dist/).
 *
 * Usage: node scripts/test-prepare.mjs [--force]   (--force: run both steps regardless)
 * Exit status: that of the failing step, else 0.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const STAMPS = join(ROOT, ".tmp", "test-prepare.json");
const force = process.argv.includes("--force");
/** Folders never read as inputs: outputs, caches, test artifacts. */
const SKIP = new Set(["node_modules", "dist", ".tmp", "artifacts", "results", ".git"]);

/** Every file under `path` (a file or a folder), recursively, skipping SKIP. */
function filesUnder(path, out = []) {
  if (!existsSync(path)) return out;
  const st = statSync(path);
  if (st.isFile()) out.push(path);
  else if (st.isDirectory()) for (const e of readdirSync(path)) if (!SKIP.has(e)) filesUnder(join(path, e), out);
  return out;
}

function fingerprint(paths) {
  const hash = createHash("sha256");
  const ts = JSON.parse(readFileSync(join(ROOT, "node_modules", "typescript", "package.json"), "utf8")).version;
  hash.update(`typescript ${ts}\0`);
  const files = paths.flatMap((p) => filesUnder(join(ROOT, p))).sort();
  for (const f of files) hash.update(`${relative(ROOT, f)}\0`).update(readFileSync(f)).update("\0");
  return hash.digest("hex");
}

/** Newest modification time (ms) of a `.ts` file under `dir`, skipping generated code. */
function newestTs(dir) {
  return filesUnder(join(ROOT, dir))
    .filter((f) => f.endsWith(".ts") && !f.includes(`${join("src", "generated")}`))
    .reduce((m, f) => Math.max(m, statSync(f).mtimeMs), 0);
}

const stamps = existsSync(STAMPS) ? JSON.parse(readFileSync(STAMPS, "utf8")) : {};
const COMMON = ["tsconfig.json", "tsconfig.build.json", "package.json", "package-lock.json", "prisma/schema.prisma"];
const TESTS_OUT = join(ROOT, ".tmp", "tests");
const steps = [
  {
    name: "typecheck",
    inputs: [...COMMON, "src", "workers", "test", "bench", "scripts", "prisma.config.ts"],
    // the typecheck, writing the JavaScript the tests run (a clean folder: no removed test lingers)
    command: [process.execPath, [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json", "--noEmit", "false", "--outDir", TESTS_OUT, "--rootDir", ROOT]],
    before: () => rmSync(TESTS_OUT, { recursive: true, force: true }),
    fresh: () => existsSync(join(TESTS_OUT, "test")),
  },
  {
    name: "build",
    command: ["npm", ["run", "--silent", "build"]],
    inputs: [...COMMON, "src", "workers"],
    fresh: () => {
      const main = join(ROOT, "dist", "src", "cli", "main.js");
      return existsSync(main) && Math.max(newestTs("src"), newestTs("workers")) <= statSync(main).mtimeMs;
    },
  },
];
for (const step of steps) {
  const key = fingerprint(step.inputs);
  if (!force && stamps[step.name] === key && step.fresh()) {
    process.stdout.write(`[test-prepare] ${step.name}: unchanged since it last passed, skipped\n`);
    continue;
  }
  step.before?.();
  const r = spawnSync(step.command[0], step.command[1], { cwd: ROOT, stdio: "inherit" });
  if (r.status !== 0) process.exit(r.status ?? 1);
  stamps[step.name] = key;
  mkdirSync(join(ROOT, ".tmp"), { recursive: true });
  writeFileSync(STAMPS, `${JSON.stringify(stamps, null, 2)}\n`);
}
