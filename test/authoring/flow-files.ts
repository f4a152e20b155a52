/** Every `.flow` file of the repository (examples/ and test/), for the formatter and grammar tests. */
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { ROOT } from "../helpers/root.js";



function walk(dir: string, depth = 0): string[] {
  if (depth > 8) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name), depth + 1) : e.name.endsWith(".flow") ? [join(dir, e.name)] : [],
  );
}

/** Repository-relative paths of every `.flow` under examples/ and test/, sorted. */
export function flowFiles(): string[] {
  return [...walk(join(ROOT, "examples")), ...walk(join(ROOT, "test"))].map((p) => relative(ROOT, p)).sort();
}

export const repoRoot = ROOT;
