/**
 * `.flow` sources as highlighted HTML, coloured by the VS Code extension's own TextMate grammar
 * (editors/vscode/syntaxes/flow.tmLanguage.json) through vscode-textmate + vscode-oniguruma, the
 * engine VS Code uses — so the operators' console, the docs and the editor colour a source the
 * same way (issue 21 item 3: "the same grammar highlights `.flow` sources in docs and in the
 * console"). Used by the console's workflow page (src/web/console/source.ts) and by
 * scripts/highlight-flow.ts (docs, the README's picture).
 *
 * - The grammar and Oniguruma's WebAssembly (onig.wasm, found in node_modules through
 *   `require.resolve`) are loaded once per process, lazily, on the first call.
 * - A source is tokenized line by line; each token's innermost scope maps to one of a handful of
 *   CSS classes (FLOW_CLASSES: `com`, `str`, `kw`, …); operators and punctuation stay plain.
 * - Output is `<span class="…">` around text escaped by the console's `html` tag (escape-html):
 *   every character of the source goes through it, so `<script>` in a string or a comment is text.
 *   Spans never cross a line break.
 * - Bounded work: a source of more than MAX_HIGHLIGHT_BYTES (512 KiB) is shown as plain escaped
 *   text; a line longer than MAX_LINE_LENGTH is not tokenized (as VS Code's
 *   `editor.maxTokenizationLineLength`); each line gets LINE_TIME_LIMIT_MS (vscode-textmate's
 *   time limit; tried twice, as the limit is wall-clock time) — a line that still hits it is shown
 *   plain with the state before it kept, as VS Code does — and once TOTAL_TIME_LIMIT_MS have
 *   been spent on the source, the remaining lines are plain. Every YIELD_EVERY_LINES lines the
 *   event loop gets a turn (not counted in the budget), so a server rendering a big source keeps
 *   answering.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import oniguruma from "vscode-oniguruma";
import textmate from "vscode-textmate";
import { packageRoot } from "../package.js";
import { html, type Html } from "../web/page/html.js";

/** Sources above this many UTF-8 bytes are shown as plain escaped text (SLOTFLOW_MAX_SOURCE_BYTES' default). */
export const MAX_HIGHLIGHT_BYTES = 512 * 1024;
/** Lines longer than this (UTF-16 units) are not tokenized (VS Code's default `maxTokenizationLineLength`). */
export const MAX_LINE_LENGTH = 20_000;
/** vscode-textmate's time limit for one line, in ms (VS Code's editor allows 500). */
export const LINE_TIME_LIMIT_MS = 100;
/** After this many ms spent tokenizing one source, its remaining lines are shown plain. */
export const TOTAL_TIME_LIMIT_MS = 2_000;

/** Lines tokenized between two turns of the event loop. */
const YIELD_EVERY_LINES = 500;

/** The grammar's file, shipped in the package (package.json "files"). */
export const GRAMMAR_FILE = join(packageRoot(), "editors/vscode/syntaxes/flow.tmLanguage.json");

/**
 * Scope prefix → class, most specific first; the innermost scope of a token that matches one
 * decides. Operators and punctuation are left plain (`null`).
 */
const CLASS_OF_SCOPE: [prefix: string, cls: FlowClass | null][] = [
  ["comment", "com"],
  ["constant.character.escape", "esc"],
  ["string", "str"],
  ["constant.numeric", "num"],
  ["constant.language", "kw"],
  ["keyword.operator", null],
  ["keyword", "kw"],
  ["storage.type.annotation", "attr"],
  ["punctuation.definition.annotation", "attr"],
  ["storage", "kw"],
  ["entity.name", "name"],
  ["entity.other.attribute-name", "attr"],
  ["support.type", "type"],
  ["support.function", "fn"],
  ["variable", "prop"],
  ["punctuation", null],
];

/** The CSS classes a highlighted source uses (the console styles each as `.src .<class>`). */
export const FLOW_CLASSES = ["com", "str", "esc", "num", "kw", "name", "type", "fn", "attr", "prop"] as const;
export type FlowClass = (typeof FLOW_CLASSES)[number];

/**
 * The class of a token from its scopes (outermost first, as vscode-textmate gives them), or null
 * for plain text (issue 21 item 3).
 */
export function classOf(scopes: readonly string[]): FlowClass | null {
  for (let i = scopes.length - 1; i >= 0; i--) {
    const s = scopes[i];
    for (const [prefix, cls] of CLASS_OF_SCOPE) if (s === prefix || s.startsWith(`${prefix}.`)) return cls;
  }
  return null;
}

let grammar: Promise<textmate.IGrammar> | null = null;

function loadGrammar(): Promise<textmate.IGrammar> {
  grammar ??= (async () => {
    const require = createRequire(import.meta.url);
    const wasm = readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm"));
    await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength) as ArrayBuffer);
    const registry = new textmate.Registry({
      onigLib: Promise.resolve({
        createOnigScanner: (patterns: string[]) => new oniguruma.OnigScanner(patterns),
        createOnigString: (s: string) => new oniguruma.OnigString(s),
      }),
      loadGrammar: async (scope: string) => (scope === "source.flow" ? textmate.parseRawGrammar(readFileSync(GRAMMAR_FILE, "utf8"), GRAMMAR_FILE) : null),
    });
    const g = await registry.loadGrammar("source.flow");
    if (!g) throw new Error(`the flow grammar did not load from ${GRAMMAR_FILE}`);
    // Warm up without a time limit: each rule's scanner is compiled on first use (top level, inside
    // a block comment, inside a string), which must not count against the first source's lines.
    let stack = textmate.INITIAL;
    for (const line of ['workflow W(n: int) // c', '/* a', '*/ "s\\n', '" @label("x") -> S 1d 2.0']) stack = g.tokenizeLine(line, stack).ruleStack;
    return g;
  })();
  // A failed load (a missing file) is not remembered: the next call tries again. onig.wasm itself
  // loads once per process; vscode-oniguruma answers a second loadWASM with the first's promise.
  grammar.catch(() => {
    grammar = null;
  });
  return grammar;
}

/** One line of a source: its text without the line break, the `\r` of a CRLF, and its tokens (null: not tokenized). */
interface TokenizedLine {
  text: string;
  cr: boolean;
  tokens: { start: number; end: number; scopes: string[] }[] | null;
}

/** The bounds on one source's tokenizing (the defaults are the constants above). */
export interface HighlightLimits {
  /** vscode-textmate's time limit per line, ms; 0: none. */
  lineTimeLimitMs: number;
  /** Budget for the whole source, ms; the lines after it are left plain. */
  totalTimeLimitMs: number;
  /**
   * The clock the whole-source budget is read from, ms (default `performance.now`). Tests pass a
   * counting clock to check the budget stops the tokenizing without a stopwatch (issue 39 item 4).
   */
  now?: () => number;
}

const DEFAULT_HIGHLIGHT_LIMITS: HighlightLimits = { lineTimeLimitMs: LINE_TIME_LIMIT_MS, totalTimeLimitMs: TOTAL_TIME_LIMIT_MS };

async function tokenizeLines(source: string, limits: Partial<HighlightLimits> = {}): Promise<TokenizedLine[]> {
  const { lineTimeLimitMs, totalTimeLimitMs } = { ...DEFAULT_HIGHLIGHT_LIMITS, ...limits };
  const now = limits.now ?? (() => performance.now());
  const lines = source.split("\n").map((l) => (l.endsWith("\r") ? { text: l.slice(0, -1), cr: true } : { text: l, cr: false }));
  if (Buffer.byteLength(source, "utf8") > MAX_HIGHLIGHT_BYTES) return lines.map((l) => ({ ...l, tokens: null }));
  const g = await loadGrammar();
  let stack = textmate.INITIAL;
  const out: TokenizedLine[] = [];
  // Time spent on this source: the turns the event loop gives to others between chunks don't count.
  let spent = 0;
  let since = now();
  for (const [i, l] of lines.entries()) {
    if (i > 0 && i % YIELD_EVERY_LINES === 0) {
      spent += now() - since;
      await yieldToEventLoop(); // a big source does not stall the server
      since = now();
    }
    if (l.text.length > MAX_LINE_LENGTH || spent + (now() - since) > totalTimeLimitMs) {
      out.push({ ...l, tokens: null });
      continue;
    }
    // The limit is wall-clock time: on a busy machine a line can lose it to the scheduler, so a
    // line gets a second try; one that stops early twice stays plain, the state before it kept.
    let r = g.tokenizeLine(l.text, stack, lineTimeLimitMs);
    if (r.stoppedEarly) r = g.tokenizeLine(l.text, stack, lineTimeLimitMs);
    if (r.stoppedEarly) {
      out.push({ ...l, tokens: null });
      continue;
    }
    stack = r.ruleStack;
    out.push({ ...l, tokens: r.tokens.map((t) => ({ start: t.startIndex, end: Math.min(t.endIndex, l.text.length), scopes: t.scopes })) });
  }
  return out;
}

/** A token of the grammar: its line and columns (from 0, end exclusive), its text and scopes. */
export interface ScopedToken {
  line: number;
  start: number;
  end: number;
  text: string;
  scopes: string[];
}

/**
 * The grammar's tokens of `source`, line by line (issue 21 items 3–4; the grammar tests
 * cross-check them against the compiler's lexer, with no time limits). Lines left untokenized by
 * the bounds (see the module's comment; `limits` overrides the time limits) yield no tokens.
 */
export async function tokenizeFlow(source: string, limits: Partial<HighlightLimits> = {}): Promise<ScopedToken[]> {
  const out: ScopedToken[] = [];
  (await tokenizeLines(source, limits)).forEach((l, line) => {
    for (const t of l.tokens ?? []) if (t.end > t.start) out.push({ line, start: t.start, end: t.end, text: l.text.slice(t.start, t.end), scopes: t.scopes });
  });
  return out;
}

/** A range to wrap in a span of its own, around the colours (e.g. a diagnostic's squiggle). */
export interface HighlightMark {
  line: number;
  /** Columns from 0, end exclusive. */
  start: number;
  end: number;
  className: string;
  title?: string;
}

/**
 * `source` as highlighted HTML (issue 21 item 3): the lines joined by `\n` (a CRLF's `\r` kept),
 * each token in a `<span class="…">` of FLOW_CLASSES, every character escaped, no wrapper — the
 * caller puts it in its `<pre>`. `marks` wrap ranges of a line in spans of their own class (with
 * an escaped `title`). Sources past the bounds (see the module's comment; `limits` overrides the
 * time limits) come out as escaped text.
 */
export async function highlightFlow(source: string, options: { marks?: HighlightMark[]; limits?: Partial<HighlightLimits> } = {}): Promise<Html> {
  const marks = options.marks ?? [];
  const out: Html[] = [];
  for (const [i, l] of (await tokenizeLines(source, options.limits)).entries()) {
    if (i > 0) out.push(html`\n`);
    const lineMarks = marks.filter((m) => m.line === i && m.end > m.start);
    // Cut the line where a token or a mark begins or ends; colour each piece by its token.
    const cuts = new Set([0, l.text.length]);
    const classAt: { start: number; cls: FlowClass | null }[] = [];
    for (const t of l.tokens ?? []) {
      cuts.add(Math.min(t.start, l.text.length));
      classAt.push({ start: t.start, cls: classOf(t.scopes) });
    }
    for (const m of lineMarks) for (const c of [m.start, m.end]) if (c > 0 && c < l.text.length) cuts.add(c);
    const points = [...cuts].sort((a, b) => a - b);
    let run: { cls: FlowClass | null; mark: HighlightMark | undefined; text: string } | null = null;
    const flush = () => {
      if (!run || !run.text) return;
      const inner = run.cls ? html`<span class="${run.cls}">${run.text}</span>` : html`${run.text}`;
      out.push(run.mark ? html`<span class="${run.mark.className}"${run.mark.title !== undefined ? html` title="${run.mark.title}"` : null}>${inner}</span>` : inner);
    };
    let k = 0;
    for (let p = 0; p + 1 < points.length; p++) {
      const [from, to] = [points[p], points[p + 1]];
      while (k + 1 < classAt.length && classAt[k + 1].start <= from) k++;
      const cls = classAt.length && classAt[k].start <= from ? classAt[k].cls : null;
      const mark = lineMarks.find((m) => m.start <= from && to <= m.end);
      const text = l.text.slice(from, to);
      if (run && run.cls === cls && run.mark === mark) run.text += text;
      else {
        flush();
        run = { cls, mark, text };
      }
    }
    flush();
    if (l.cr) out.push(html`\r`);
  }
  return html`${out}`;
}
