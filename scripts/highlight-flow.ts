/**
 * Highlights `.flow` sources with the VS Code extension's TextMate grammar
 * (editors/vscode/syntaxes/flow.tmLanguage.json) through vscode-textmate + vscode-oniguruma — the
 * same engine VS Code uses — so docs, the README's screenshot and the grammar tests see exactly
 * what the editor shows (issue 21 item 3). Development tooling: both libraries are devDependencies.
 *
 *   node --import=tsx scripts/highlight-flow.ts FILE.flow > out.html   # a standalone HTML page
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import oniguruma from "vscode-oniguruma";
import textmate from "vscode-textmate";

const require = createRequire(import.meta.url);
const GRAMMAR = fileURLToPath(new URL("../editors/vscode/syntaxes/flow.tmLanguage.json", import.meta.url));

let grammar: Promise<textmate.IGrammar> | null = null;

function load(): Promise<textmate.IGrammar> {
  grammar ??= (async () => {
    const wasm = readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm"));
    await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength) as ArrayBuffer);
    const registry = new textmate.Registry({
      onigLib: Promise.resolve({
        createOnigScanner: (patterns: string[]) => new oniguruma.OnigScanner(patterns),
        createOnigString: (s: string) => new oniguruma.OnigString(s),
      }),
      loadGrammar: async (scope: string) => (scope === "source.flow" ? textmate.parseRawGrammar(readFileSync(GRAMMAR, "utf8"), GRAMMAR) : null),
    });
    const g = await registry.loadGrammar("source.flow");
    if (!g) throw new Error("the flow grammar did not load");
    return g;
  })();
  return grammar;
}

export interface ScopedToken {
  line: number;
  /** Columns from 0, end exclusive. */
  start: number;
  end: number;
  text: string;
  scopes: string[];
}

/** The grammar's tokens of `source`, line by line. */
export async function tokenizeFlow(source: string): Promise<ScopedToken[]> {
  const g = await load();
  const out: ScopedToken[] = [];
  let stack = textmate.INITIAL;
  source.split(/\r?\n/).forEach((line, i) => {
    const r = g.tokenizeLine(line, stack);
    for (const t of r.tokens) out.push({ line: i, start: t.startIndex, end: Math.min(t.endIndex, line.length), text: line.slice(t.startIndex, t.endIndex), scopes: t.scopes });
    stack = r.ruleStack;
  });
  return out;
}

/** A colour per scope prefix (VS Code's Light+ palette, roughly). */
const COLOURS: [string, string][] = [
  ["comment", "#008000"],
  ["string", "#a31515"],
  ["constant.character.escape", "#ee0000"],
  ["constant.numeric", "#098658"],
  ["constant.language", "#0000ff"],
  ["storage", "#0000ff"],
  ["keyword.control", "#af00db"],
  ["keyword.other", "#0000ff"],
  ["keyword.operator", "#000000"],
  ["entity.name", "#267f99"],
  ["entity.other.attribute-name", "#e50000"],
  ["support.type", "#267f99"],
  ["support.function", "#795e26"],
  ["variable.other.property.setting", "#001080"],
  ["variable", "#001080"],
];

const escape = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** `source` as `<pre class="flow">` HTML with a colour per token; `marks` wraps ranges (e.g. a diagnostic) in a class. */
export async function highlightHtml(source: string, marks: { line: number; start: number; end: number; className: string; title?: string }[] = []): Promise<string> {
  const tokens = await tokenizeFlow(source);
  const lines: string[] = source.split(/\r?\n/).map(() => "");
  for (const t of tokens) {
    const scope = [...t.scopes].reverse().find((s) => COLOURS.some(([p]) => s.startsWith(p)));
    const colour = scope ? COLOURS.find(([p]) => scope.startsWith(p))![1] : null;
    // Split the token at mark boundaries so a mark can wrap part of it.
    const cuts = new Set([t.start, t.end]);
    for (const m of marks) if (m.line === t.line) for (const c of [m.start, m.end]) if (c > t.start && c < t.end) cuts.add(c);
    const points = [...cuts].sort((a, b) => a - b);
    for (let k = 0; k + 1 < points.length; k++) {
      const text = escape(source.split(/\r?\n/)[t.line].slice(points[k], points[k + 1]));
      let html = colour ? `<span style="color:${colour}">${text}</span>` : text;
      const mark = marks.find((m) => m.line === t.line && m.start <= points[k] && points[k + 1] <= m.end);
      if (mark) html = `<span class="${mark.className}"${mark.title ? ` title="${escape(mark.title)}"` : ""}>${html}</span>`;
      lines[t.line] += html;
    }
  }
  return `<pre class="flow">${lines.join("\n")}</pre>`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write("usage: node --import=tsx scripts/highlight-flow.ts FILE.flow > out.html\n");
    process.exit(2);
  }
  const body = await highlightHtml(readFileSync(file, "utf8"));
  process.stdout.write(`<!doctype html><meta charset="utf-8"><title>${escape(file)}</title><style>pre.flow{font:14px/1.45 monospace;padding:1em;background:#fff}</style>${body}\n`);
}
