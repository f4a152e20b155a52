/**
 * The repository's root folder, for tests that read files beside the sources (examples, fixtures,
 * editors/, docs/). Found by walking up from this module to the nearest folder with a
 * `package.json` — so it is the same whether the test runs from its TypeScript source (tsx, `npx
 * ava test/…`) or from the JavaScript that `npm test` runs (`.tmp/tests/test/…`, emitted by
 * scripts/test-prepare.mjs; `.tmp/tests` has no package.json of its own). src/package.ts finds the
 * package's own root the same way.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  // bounded: a path has few segments; stop at the file system's root
  for (let i = 0; i < 64; i++) {
    if (existsSync(join(dir, "package.json"))) return dir;
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
}

/** The repository root, with a trailing slash (so `${ROOT}examples/x.flow` and join(ROOT, …) both work). */
export const ROOT = `${findRoot()}/`;
