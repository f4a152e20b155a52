#!/usr/bin/env node
/**
 * The first step of `npm test` (issue 39 item 4): the typecheck of everything (`npm run typecheck`,
 * tsconfig.json) and the build of dist/ (`npm run build`, which spawned test servers run:
 * test/helpers/cli-entry.ts) — each skipped when it already succeeded for exactly these inputs.
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
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
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
const steps = [
  { name: "typecheck", inputs: [...COMMON, "src", "workers", "test", "bench", "scripts", "prisma.config.ts"], fresh: () => true },
  {
    name: "build",
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
  const r = spawnSync("npm", ["run", "--silent", step.name], { cwd: ROOT, stdio: "inherit" });
  if (r.status !== 0) process.exit(r.status ?? 1);
  stamps[step.name] = key;
  mkdirSync(join(ROOT, ".tmp"), { recursive: true });
  writeFileSync(STAMPS, `${JSON.stringify(stamps, null, 2)}\n`);
}
