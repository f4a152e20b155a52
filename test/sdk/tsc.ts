/**
 * The project's real `tsc` (node_modules/.bin/tsc, TypeScript 7, as `npm run typecheck` runs it)
 * on some files alone, with the project's compiler options (tsconfig.json: strict, NodeNext,
 * the `slotflow-src` condition, so `slotflow/client` is src/sdk/client.ts). For the SDK's
 * compile-time tests (issue 41).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { ROOT } from "../helpers/server.js";

const run = promisify(execFile);

/** tsc's exit code and output for `files` (absolute paths); 0 and "" when they compile. */
export async function tsc(files: string[]): Promise<{ code: number; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), "slotflow-tsc-"));
  const config = join(dir, "tsconfig.json");
  writeFileSync(
    config,
    JSON.stringify({
      extends: join(ROOT, "tsconfig.json"),
      compilerOptions: { noEmit: true, typeRoots: [join(ROOT, "node_modules", "@types")] },
      include: [],
      exclude: [],
      files,
    }),
  );
  try {
    const { stdout, stderr } = await run(join(ROOT, "node_modules", ".bin", "tsc"), ["-p", config], { cwd: ROOT });
    return { code: 0, output: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : 1, output: `${e.stdout ?? ""}${e.stderr ?? ""}` };
  }
}
