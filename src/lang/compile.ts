/**
 * The compiler's front door: source text in, diagnostics and the compiled form out
 * (docs/language.md; the codes are listed in docs/diagnostics.md).
 */
import { readFileSync } from "node:fs";
import type { FlowFile } from "./ast.js";
import { check } from "./checker.js";
import { Codes } from "./codes.js";
import type { CompiledWorkflow } from "./compiled.js";
import { unstorableCharacters } from "../json/storable.js";
import { MAX_DIAGNOSTICS, type Diagnostic } from "./diagnostics.js";
import { emit } from "./emit.js";
import { lex, type LexResult } from "./lexer.js";
import { parse } from "./parser.js";
import { LineIndex } from "./positions.js";

export interface CompileResult {
  /** Every error and warning, in source order. */
  diagnostics: Diagnostic[];
  /** The compiled workflow; null exactly when `diagnostics` holds an error. */
  workflow: CompiledWorkflow | null;
  /**
   * The checked syntax tree; null when the source has a syntax error (a recovered lexical error,
   * such as a bad number, keeps the tree: parser.ts, RECOVERED_LEXICAL).
   */
  ast: FlowFile | null;
  /** Diagnostics past the cap, counted in the final FLOW008 and not listed (absent when none). */
  omitted?: { errors: number; warnings: number };
}

/**
 * Compiles one `.flow` source. Never throws: an internal fault becomes a FLOW999 diagnostic.
 * `file` names the source in that diagnostic's message only (formatDiagnostic takes it again).
 * Every diagnostic range lies within `source`. `parsed`: `parseSource(source)`, when the caller
 * already has it (the result is the same as without it).
 */
export function compile(source: string, file = "<input>", parsed?: ParsedSource): CompileResult {
  let lines: LineIndex | null = null;
  try {
    const p = parsed ?? parseSource(source);
    lines = p.lines;
    if (p.ast === null) return { ...cap(clamp([...p.diagnostics], lines), lines), workflow: null, ast: null };
    const checked = check(p.ast);
    const { diagnostics, omitted } = cap(clamp([...p.diagnostics, ...checked.diagnostics], lines), lines);
    const failed = diagnostics.some((d) => d.severity === "error");
    return { diagnostics, ...(omitted ? { omitted } : {}), workflow: failed ? null : emit(p.ast, checked.model, source), ast: p.ast };
  } catch (err) {
    const where = (lines ?? new LineIndex("")).range(0, 0);
    const message = err instanceof Error ? err.message : String(err);
    return {
      diagnostics: [
        { code: Codes.InternalError, severity: "error", message: `internal compiler error in ${file}: ${message}`, range: where },
      ],
      workflow: null,
      ast: null,
    };
  }
}

/**
 * The first half of `compile`: `source` lexed and parsed, before the checker. The language server
 * (src/authoring/lsp/analysis.ts) keeps it per document version: the symbol index and the
 * formatter need only this, and `compile(source, file, parsed)` finishes it into exactly what
 * `compile(source, file)` returns (issue 21 item 2: 50 ms per request on a 2,000-line file).
 */
export interface ParsedSource {
  lines: LineIndex;
  /** The lexer's output (the parser's tokens, and the raw tokens and comments the formatter lays out). */
  lexed: LexResult;
  /** The parser's tree (parser.ts ParseResult), before the checker reads it; null on a syntax error. */
  ast: FlowFile | null;
  /** The unstorable-character (FLOW009) and the lexer's and parser's diagnostics, neither sorted nor capped. */
  diagnostics: Diagnostic[];
}

/**
 * Lexes and parses `source` (`lines`: its line index, when the caller has one). May throw on an
 * internal fault (`compile` turns that into FLOW999).
 */
export function parseSource(source: string, lines: LineIndex = new LineIndex(source)): ParsedSource {
  const unstorable = unstorableDiagnostics(source, lines);
  const lexed = lex(source, lines);
  const parsed = parse(source, lines, lexed);
  return { lines, lexed, ast: parsed.ast, diagnostics: [...unstorable, ...parsed.diagnostics] };
}

/**
 * FLOW009 for each character PostgreSQL cannot store (U+0000, a lone surrogate), wherever it is —
 * in a string literal or a comment too, since the source itself is stored with each version
 * (issue 8 item 15). A NUL outside a literal is then not reported again as FLOW001.
 */
export function unstorableDiagnostics(source: string, lines: LineIndex): Diagnostic[] {
  return unstorableCharacters(source, MAX_DIAGNOSTICS + 1).map((u) => ({
    code: Codes.UnstorableCharacter,
    severity: "error" as const,
    message: `the source ${u.problem}`,
    range: lines.range(u.offset, u.offset + 1),
  }));
}

/**
 * Sorts by position and keeps the first MAX_DIAGNOSTICS; the rest become one FLOW008 diagnostic
 * at the first one left out, saying how many errors and warnings it stands for (issue 8 item 17).
 */
function cap(diagnostics: Diagnostic[], lines: LineIndex): { diagnostics: Diagnostic[]; omitted?: { errors: number; warnings: number } } {
  const sorted = diagnostics.sort((a, b) => a.range.start.offset - b.range.start.offset);
  if (sorted.length <= MAX_DIAGNOSTICS) return { diagnostics: sorted };
  const rest = sorted.slice(MAX_DIAGNOSTICS);
  const errors = rest.filter((d) => d.severity === "error").length;
  const warnings = rest.length - errors;
  const parts = [errors ? `${errors} more error${errors === 1 ? "" : "s"}` : "", warnings ? `${warnings} more warning${warnings === 1 ? "" : "s"}` : ""];
  const at = rest[0].range.start.offset;
  const summary: Diagnostic = {
    code: Codes.TooManyDiagnostics,
    severity: errors ? "error" : "warning",
    message: `${parts.filter(Boolean).join(" and ")} not shown (at most ${MAX_DIAGNOSTICS} diagnostics are reported per file)`,
    range: lines.range(at, at),
  };
  return { diagnostics: [...sorted.slice(0, MAX_DIAGNOSTICS), summary], omitted: { errors, warnings } };
}

/** Re-derives every position from its offset, clamped into the source, and drops repeats. */
function clamp(diagnostics: Diagnostic[], lines: LineIndex): Diagnostic[] {
  const seen = new Set<string>();
  const out: Diagnostic[] = [];
  const unstorableAt = new Set(diagnostics.filter((d) => d.code === Codes.UnstorableCharacter).map((d) => d.range.start.offset));
  for (const d of diagnostics) {
    const key = `${d.code}:${d.range.start.offset}:${d.range.end.offset}:${d.message}`;
    if (seen.has(key)) continue;
    if (d.code === Codes.UnexpectedCharacter && unstorableAt.has(d.range.start.offset)) continue;
    seen.add(key);
    out.push({ ...d, range: lines.range(d.range.start.offset, d.range.end.offset) });
  }
  return out;
}

let cached: { source: string; lines: LineIndex } | null = null;

/**
 * Renders a diagnostic as three lines: `FILE:LINE:COL: error FLOWnnn: message`, the source line,
 * and a caret line (`^` under the start, `~` to the end of the range on that line).
 */
export function formatDiagnostic(d: Diagnostic, source: string, file: string): string {
  if (cached === null || cached.source !== source) cached = { source, lines: new LineIndex(source) };
  const { start, end } = d.range;
  const text = cached.lines.lineText(start.line);
  const header = `${file}:${start.line}:${start.column}: ${d.severity} ${d.code}: ${d.message}`;
  const indent = text.slice(0, start.column - 1).replace(/[^\t]/g, " ");
  const endColumn = end.line === start.line ? end.column : text.length + 1;
  const width = Math.max(1, endColumn - start.column);
  return `${header}\n${text}\n${indent}^${"~".repeat(width - 1)}`;
}

/**
 * One diagnostic as `slotflow check --json` prints it (issue 19 item 5): 1-based line and column,
 * `end` exclusive. `code` is null only for a file that cannot be read (then at 1:1).
 */
export interface JsonDiagnostic {
  code: string | null;
  severity: "error" | "warning";
  message: string;
  file: string;
  line: number;
  column: number;
  end: { line: number; column: number };
}

/**
 * `slotflow check [--json] FILE…`: compiles each file. Without `json`, writes every diagnostic
 * (formatted, line by line) and a summary line to `out`; with it, writes one JSON document
 * `{ "diagnostics": JsonDiagnostic[], "files": n, "errors": n, "warnings": n }` (the counts
 * include diagnostics past the per-file cap). A file that cannot be read is reported as an error.
 * Returns the exit code: 1 when any file has an error or cannot be read, else 0.
 */
/**
 * The line `slotflow check` and `slotflow deploy` print above their summary when some link
 * bypasses `[Authorize]` (FLOW312, issue 38 L7: a warning among others was easy to miss), e.g.
 * `security: 2 links bypass [Authorize] and Candidates (FLOW312): whoever holds one answers — see docs/diagnostics.md#flow312`.
 */
export function linksPastAuthorizeLine(n: number): string {
  return `security: ${n} ${n === 1 ? "link bypasses" : "links bypass"} [Authorize] and Candidates (FLOW312): whoever holds one answers — see docs/diagnostics.md#flow312`;
}

export function checkFiles(paths: string[], out: (line: string) => void, options: { json?: boolean } = {}): number {
  let errors = 0;
  let warnings = 0;
  let linksPastAuthorize = 0;
  const json: JsonDiagnostic[] = [];
  for (const path of paths) {
    let source: string;
    try {
      source = readFileSync(path, "utf8");
    } catch (err) {
      errors++;
      const message = `cannot read the file: ${err instanceof Error ? err.message : String(err)}`;
      if (options.json) json.push({ code: null, severity: "error", message, file: path, line: 1, column: 1, end: { line: 1, column: 1 } });
      else out(`${path}: error: ${message}`);
      continue;
    }
    const result = compile(source, path);
    linksPastAuthorize += result.diagnostics.filter((d) => d.code === Codes.CallbackUrlAuthorize).length;
    for (const d of result.diagnostics) {
      if (options.json) {
        const { start, end } = d.range;
        json.push({
          code: d.code, severity: d.severity, message: d.message, file: path,
          line: start.line, column: start.column, end: { line: end.line, column: end.column },
        });
      } else {
        for (const line of formatDiagnostic(d, source, path).split("\n")) out(line);
      }
      // A capped file's last FLOW008 stands for the omitted diagnostics, counted below instead.
      const summary = result.omitted !== undefined && d === result.diagnostics.at(-1);
      if (summary) continue;
      if (d.severity === "error") errors++;
      else warnings++;
    }
    errors += result.omitted?.errors ?? 0;
    warnings += result.omitted?.warnings ?? 0;
  }
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  if (options.json) out(JSON.stringify({ diagnostics: json, files: paths.length, errors, warnings }));
  else {
    if (linksPastAuthorize > 0) out(linksPastAuthorizeLine(linksPastAuthorize));
    out(`${plural(paths.length, "file")} checked: ${plural(errors, "error")}, ${plural(warnings, "warning")}`);
  }
  return errors > 0 ? 1 : 0;
}
