/**
 * The TextMate grammar of the VS Code extension (issue 21 items 3 and 4): the assertion files of
 * test/grammar/ — one per example — through `vscode-tmgrammar-test`, and every .flow of the
 * repository tokenized by vscode-textmate (src/authoring/highlight.ts, what the console and the
 * docs use), cross-checked against the compiler's own lexer — each comment, string, number
 * and keyword the lexer sees gets the grammar's scope of that kind, and nothing is scoped invalid.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import test from "ava";
import { lexWithComments } from "../../src/authoring/format.js";
import { tokenizeFlow } from "../../src/authoring/highlight.js";
import { flowFiles, repoRoot } from "./flow-files.js";

const run = promisify(execFile);
const TOOL = join(repoRoot, "node_modules/.bin/vscode-tmgrammar-test");
const GRAMMAR_ARGS = ["-g", "editors/vscode/syntaxes/flow.tmLanguage.json", "--config", "editors/vscode/package.json"];

/** The examples' names, and the assertion files of test/grammar/. */
const examples = () => readdirSync(join(repoRoot, "examples")).filter((f) => f.endsWith(".flow")).map((f) => f.slice(0, -".flow".length)).sort();
const flowtests = () => readdirSync(join(repoRoot, "test/grammar")).filter((f) => f.endsWith(".flowtest")).sort();

test("every example has its assertion file in test/grammar/, with assertions on keywords, names, strings, comments and durations", (t) => {
  for (const name of examples()) {
    const file = join(repoRoot, "test/grammar", `${name}.flowtest`);
    t.true(existsSync(file), `test/grammar/${name}.flowtest`);
    if (!existsSync(file)) continue;
    const text = readFileSync(file, "utf8");
    t.regex(text.split("\n")[0], /^\/\/ SYNTAX TEST "source\.flow" /, name);
    const asserted = [...text.matchAll(/^\/\/\s*(?:\^+|<-+)\s+(.+)$/gm)].flatMap((m) => m[1].split(/\s+/));
    t.true(asserted.length >= 12, `${name}: ${asserted.length} assertions`);
    for (const kind of [/^keyword\.control/, /^entity\.name\.type\.state/, /^string\./, /^comment\./, /^constant\.numeric\.duration/])
      t.true(asserted.some((s) => kind.test(s)), `${name} asserts a ${kind.source}`);
  }
});

test("vscode-tmgrammar-test passes every assertion file of test/grammar/", async (t) => {
  const files = flowtests();
  t.true(files.length >= examples().length);
  const r = await run(TOOL, [...GRAMMAR_ARGS, "test/grammar/*.flowtest"], { cwd: repoRoot });
  for (const f of files) t.true(r.stdout.includes(`test/grammar/${f} run successfuly`), `${f}:\n${r.stdout}`);
});

test("vscode-tmgrammar-test fails on a wrong assertion (the test above can fail)", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "flowtest-"));
  try {
    writeFileSync(join(dir, "wrong.flowtest"), '// SYNTAX TEST "source.flow" "a wrong scope"\nevery 1d { }\n// <----- string.quoted.double.flow\n');
    const err = await t.throwsAsync(run(TOOL, [...GRAMMAR_ARGS, join(dir, "wrong.flowtest")], { cwd: repoRoot }));
    t.regex(String((err as { stdout?: string }).stdout), /string\.quoted\.double\.flow/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const EXPECT: [RegExp, RegExp][] = [
  [/^(LineComment|BlockComment)$/, /^comment\./],
  [/^StringLit$/, /^string\./],
  [/^NumberLit$/, /^constant\.numeric\./],
  [/^Kw_(true|false|null)$/, /^constant\.language/],
  [/^Kw_/, /^(keyword|storage)\./],
];

test("every repository .flow: the grammar's scopes agree with the lexer's tokens", async (t) => {
  let checked = 0;
  for (const file of flowFiles()) {
    const source = readFileSync(join(repoRoot, file), "utf8");
    const scoped = await tokenizeFlow(source, { lineTimeLimitMs: 0, totalTimeLimitMs: Infinity }); // exact, whatever the machine's load
    t.false(scoped.some((s) => s.scopes.some((x) => x.startsWith("invalid"))), `${file}: an invalid scope`);
    const lineStarts = [0];
    for (let i = 0; i < source.length; i++) if (source[i] === "\n") lineStarts.push(i + 1);
    for (const tok of lexWithComments(source)) {
      const rule = EXPECT.find(([kind]) => kind.test(tok.tokenType.name));
      if (!rule) continue;
      let line = 0;
      while (line + 1 < lineStarts.length && lineStarts[line + 1] <= tok.startOffset) line++;
      const col = tok.startOffset - lineStarts[line];
      const at = scoped.find((s) => s.line === line && s.start <= col && col < s.end);
      const ok = at !== undefined && at.scopes.some((x) => rule[1].test(x));
      if (!ok) t.fail(`${file}:${line + 1}:${col + 1} ${tok.tokenType.name} '${tok.image}' scoped ${at?.scopes.join(" ")}`);
      checked++;
    }
  }
  t.true(checked > 500, `${checked} tokens checked`);
});
