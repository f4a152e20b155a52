/**
 * Parsing: source text to the syntax tree of ast.ts (every node with its range) plus every lexical
 * and syntax diagnostic (FLOW0xx). The grammar is grammar.ts, the lexer lexer.ts.
 */
import { EOF, type IToken } from "chevrotain";
import type { FlowFile } from "./ast.js";
import { tokEnd } from "./build.js";
import { Codes } from "./codes.js";
import { MAX_DIAGNOSTICS, type Diagnostic } from "./diagnostics.js";
import { getParser, TooManySyntaxErrors, type TopDecl } from "./grammar.js";
import { lex, Newline, Semi, type LexResult } from "./lexer.js";
import { LineIndex } from "./positions.js";

/**
 * Lexical problems that leave the token stream whole: a skipped character, a string closed at the
 * end of its line, a bad escape, a number that cannot be read. The tree is still built and checked
 * after them, so one bad token never hides the file's other errors (issue 19 item 5).
 */
const RECOVERED_LEXICAL = new Set<string>([
  Codes.UnexpectedCharacter, Codes.UnterminatedString, Codes.InvalidEscape, Codes.InvalidNumber, Codes.NumberOutOfRange,
]);

export interface ParseResult {
  /**
   * The tree, or null when the source has a syntax error (or an unterminated comment, or is too
   * deep). After only recovered lexical errors (RECOVERED_LEXICAL) the tree is given, its bad
   * numbers marked `invalid`, so that the checker can report the rest.
   */
  ast: FlowFile | null;
  diagnostics: Diagnostic[];
}

/**
 * Parses one `.flow` source. Never throws on any input; every problem is a diagnostic (FLOW0xx).
 * `lines` may be passed when the caller already built the index of `source`, and `lexed` when it
 * already lexed it (`lex(source, lines)`; the language server keeps it for the formatter).
 */
export function parse(source: string, lines: LineIndex = new LineIndex(source), lexed: LexResult = lex(source, lines)): ParseResult {
  const diagnostics: Diagnostic[] = [...lexed.diagnostics];
  if (lexed.tooDeep) return { ast: null, diagnostics };
  const parser = getParser();
  parser.begin(lines, diagnostics);
  parser.input = lexed.tokens;
  let file: FlowFile | null = null;
  let stoppedAt: number | null = null;
  try {
    file = parser.file();
  } catch (err) {
    if (!(err instanceof TooManySyntaxErrors)) throw err;
    stoppedAt = offsetOf(parser.errors.at(-1)!.token, 0);
  }
  const lastEnd = lexed.tokens.length > 0 ? tokEnd(lexed.tokens[lexed.tokens.length - 1]) : 0;
  // One syntax error per item: errors before the next separator after a reported one are the
  // same mistake seen again by the recovering parser.
  const separators = lexed.tokens.filter((t) => t.tokenType === Newline || t.tokenType === Semi).map((t) => t.startOffset);
  let quietUntil = -1;
  // Errors are visited in offset order, so one cursor walks the separators once (linear in the
  // file, issue 8 item 17; a search from the start per error was quadratic).
  let nextSep = 0;
  const errors = [...parser.errors].sort((a, b) => offsetOf(a.token, lastEnd) - offsetOf(b.token, lastEnd));
  for (const err of errors) {
    const tok = err.token;
    const real = Number.isFinite(tok.startOffset) && tok.tokenType !== EOF;
    const start = real ? tok.startOffset : lastEnd;
    if (start <= quietUntil) continue;
    while (nextSep < separators.length && separators[nextSep] < start) nextSep++;
    quietUntil = separators[nextSep] ?? Infinity;
    diagnostics.push({
      code: err.name === "MismatchedTokenException" ? Codes.ExpectedToken : Codes.UnexpectedToken,
      severity: "error",
      message: err.message,
      range: lines.range(start, real ? tokEnd(tok) : lastEnd),
    });
  }
  parser.end();
  if (stoppedAt !== null) {
    diagnostics.push({
      code: Codes.TooManyDiagnostics,
      severity: "error",
      message: `more than ${MAX_DIAGNOSTICS} syntax errors: the rest of the file is not parsed`,
      range: lines.range(stoppedAt, stoppedAt),
    });
  }
  diagnostics.sort((a, b) => a.range.start.offset - b.range.start.offset);
  const failed = diagnostics.some((d) => d.severity === "error" && !RECOVERED_LEXICAL.has(d.code));
  return { ast: failed ? null : file, diagnostics };
}

function offsetOf(tok: IToken, fallback: number): number {
  return Number.isFinite(tok.startOffset) && tok.tokenType !== EOF ? tok.startOffset : fallback;
}

/**
 * Parses one top-level declaration (an entity, event, state or `map event`) from `lexed`, the
 * tokens of just that declaration (`lex(source, lines, from, to)`), with ranges in `lines`'s
 * source. Null unless it parses with no diagnostic at all and reads every token: the caller
 * (reparse.ts) then parses the whole file instead, which reports what is wrong.
 */
export function parseDeclaration(lexed: LexResult, lines: LineIndex): Exclude<TopDecl, null> | null {
  if (lexed.tooDeep || lexed.diagnostics.length > 0 || lexed.tokens.length === 0) return null;
  const diagnostics: Diagnostic[] = [];
  const parser = getParser();
  parser.begin(lines, diagnostics);
  parser.input = lexed.tokens;
  try {
    const decl = parser.topDecl();
    const clean = parser.errors.length === 0 && diagnostics.length === 0 && parser.atEnd();
    return clean ? decl : null;
  } catch (err) {
    if (err instanceof TooManySyntaxErrors) return null;
    throw err;
  } finally {
    parser.end();
  }
}
