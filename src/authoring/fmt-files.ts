/**
 * `slotflow fmt [--check] FILE…` over files (issue 21 item 1; docs/authoring.md): rewrites each
 * file in its canonical layout (format.ts), in place, or with `check` only lists the files that
 * would change. A file that cannot be read or does not parse is reported — the reason and its
 * diagnostics as `slotflow check` prints them — and left untouched.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { formatDiagnostic } from "../lang/compile.js";
import { format } from "./format.js";

/**
 * Formats `paths`; `out` gets the names of changed (or, with `check`, unformatted) files, `err`
 * every refusal. Returns the exit code: 1 when a file was refused, or with `check` when a file
 * would change; else 0. Writes go through a temporary file and a rename, so a file is either
 * left as it was or replaced whole.
 */
export function fmtFiles(paths: string[], opts: { check: boolean }, out: (line: string) => void, err: (line: string) => void): number {
  let code = 0;
  for (const path of paths) {
    let source: string;
    try {
      source = readFileSync(path, "utf8");
    } catch (e) {
      err(`${path}: error: cannot read the file: ${e instanceof Error ? e.message : String(e)}`);
      code = 1;
      continue;
    }
    const result = format(source);
    if (!result.ok) {
      err(`${path}: not formatted: ${result.reason}`);
      for (const d of result.diagnostics) for (const line of formatDiagnostic(d, source, path).split("\n")) err(line);
      code = 1;
      continue;
    }
    if (!result.changed) continue;
    out(path);
    if (opts.check) {
      code = 1;
      continue;
    }
    const tmp = `${path}.fmt-${process.pid}.tmp`;
    try {
      writeFileSync(tmp, result.text);
      renameSync(tmp, path);
    } catch (e) {
      rmSync(tmp, { force: true });
      err(`${path}: error: cannot write the file: ${e instanceof Error ? e.message : String(e)}`);
      code = 1;
    }
  }
  return code;
}
