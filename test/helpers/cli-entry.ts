/**
 * How tests start a slotflow process (issue 34 item 1): the built package (`bin/slotflow.js` →
 * `dist/`), as production runs it, whenever `dist/` is at least as new as every source file;
 * otherwise the TypeScript sources through tsx. A process started from `dist/` is ready in about
 * half the time (no TypeScript transform at start: ~1.5 s against ~3.1 s measured on a loaded
 * 2-core machine), and the test suite starts a few hundred of them. `npm test` builds first, so
 * the whole suite always runs the current code built; a developer who edits a source file and runs
 * one test file with `npx ava` gets the sources (the staleness check below), never an old build.
 *
 * SLOTFLOW_TEST_FROM=src or SLOTFLOW_TEST_FROM=dist forces one or the other.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./root.js";


const BUILT_MAIN = join(ROOT, "dist", "src", "cli", "main.js");

/** The newest modification time (ms) of a `.ts` file under `dir` (recursive; skips generated code). */
function newestSource(dir: string): number {
  let newest = 0;
  const stack = [dir];
  while (stack.length > 0) {
    const d = stack.pop()!;
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) {
        if (e.name !== "generated") stack.push(p);
      } else if (e.name.endsWith(".ts")) newest = Math.max(newest, statSync(p).mtimeMs);
    }
  }
  return newest;
}

let decided: boolean | null = null;

/** True when spawned processes run the build in dist/ (see the module header). */
export function runsBuilt(): boolean {
  if (decided !== null) return decided;
  const forced = process.env.SLOTFLOW_TEST_FROM;
  if (forced === "src" || forced === "dist") return (decided = forced === "dist");
  if (!existsSync(BUILT_MAIN)) return (decided = false);
  const built = statSync(BUILT_MAIN).mtimeMs;
  // tsc rewrites every output file on each build, so main.js's time is the build's time.
  return (decided = newestSource(join(ROOT, "src")) <= built && newestSource(join(ROOT, "workers")) <= built);
}

/**
 * The node arguments that run the slotflow CLI: `["bin/slotflow.js"]` for the build, else
 * `["--import=tsx", "src/cli/main.ts"]` (relative to the repository root: spawn with `cwd: ROOT`).
 */
export function cliEntry(): string[] {
  return runsBuilt() ? ["bin/slotflow.js"] : ["--import=tsx", "src/cli/main.ts"];
}
