/**
 * The TextMate grammar of the VS Code extension (issue 21 items 3 and 4): the assertion files of
 * test/grammar/ through `vscode-tmgrammar-test`, and every .flow of the repository tokenized by
 * vscode-textmate, cross-checked against the compiler's own lexer — each comment, string, number
 * and keyword the lexer sees gets the grammar's scope of that kind, and nothing is scoped invalid.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import test from "ava";
import { lexWithComments } from "../../src/authoring/format.js";
import { tokenizeFlow } from "../../scripts/highlight-flow.js";
import { flowFiles, repoRoot } from "./flow-files.js";

const run = promisify(execFile);

test("vscode-tmgrammar-test passes the assertion files of test/grammar/", async (t) => {
  const r = await run(join(repoRoot, "node_modules/.bin/vscode-tmgrammar-test"), ["-g", "editors/vscode/syntaxes/flow.tmLanguage.json", "--config", "editors/vscode/package.json", "test/grammar/*.flowtest"], { cwd: repoRoot });
  t.regex(r.stdout, /expense-report\.flowtest run successfuly/);
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
    const scoped = await tokenizeFlow(source);
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
