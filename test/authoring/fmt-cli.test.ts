/**
 * `slotflow fmt [--check] FILE…` as a process (issue 21 item 1; interfaces.md "Authoring tools"):
 * rewrites in place; `--check` lists the files that would change, exits 1 and writes nothing; a
 * file that does not parse is left byte for byte as it was, with the reason and its diagnostics.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import test from "ava";
import { cliEntry } from "../helpers/cli-entry.js";
import { ROOT } from "../helpers/root.js";


const run = promisify(execFile);

async function fmt(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [...cliEntry(), "fmt", ...args], { cwd: ROOT });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const messy = "workflow  W\ninitial state A {\nenter {  }\n}\n\n\n\nterminal state B";
const tidy = "workflow W\ninitial state A {\n  enter {}\n}\n\nterminal state B\n";
const broken = "workflow W\ninitial state A {\n  on ->\n}\n";

test("fmt rewrites in place; --check lists what would change and exits 1; a non-parsing file is untouched", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "slotflow-fmt-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const a = join(dir, "a.flow");
  const b = join(dir, "b.flow");
  const c = join(dir, "c.flow");
  writeFileSync(a, messy);
  writeFileSync(b, tidy);
  writeFileSync(c, broken);

  const check = await fmt(["--check", a, b]);
  t.is(check.code, 1);
  t.is(check.stdout, `${a}\n`);
  t.is(readFileSync(a, "utf8"), messy);

  const bad = await fmt([c]);
  t.is(bad.code, 1);
  t.regex(bad.stderr, /c\.flow: not formatted: the file does not parse/);
  t.regex(bad.stderr, /c\.flow:3:6: error FLOW01\d/);
  t.is(readFileSync(c, "utf8"), broken);

  const write = await fmt([a, b]);
  t.is(write.code, 0);
  t.is(write.stdout, `${a}\n`);
  t.is(readFileSync(a, "utf8"), tidy);
  t.is(readFileSync(b, "utf8"), tidy);

  const again = await fmt(["--check", a, b]);
  t.is(again.code, 0);
  t.is(again.stdout, "");
});
