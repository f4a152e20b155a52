/**
 * `slotflow fmt`: the one canonical layout of a `.flow` file (issue 21 item 1; docs/authoring.md).
 *
 * The formatter works on the lexer's token stream (comments included) and bracket nesting, not on
 * the syntax tree, so syntax added to the language later formats without changes here:
 *
 * - line breaks are the author's (a newline ends a statement in this language, so they carry
 *   meaning); runs of blank lines become one, blank lines after `{` and before `}` and at the start
 *   and end of the file are dropped; lines end with `\n`, without trailing blanks; one final `\n`;
 * - indentation is two spaces per open `{`, `(` or `[` at the start of the line (brackets opened on
 *   one line count once), plus one level for a continuation line of a statement (after an operator,
 *   `=`, `,` or `:`, or a line starting with `->`);
 * - within a line, one space between tokens, except none after `(` `[` `.` `@` `!` and a unary
 *   `-`; none before `)` `]` `,` `;` `.` `:` `?`; none between a name and its `(`/`[` (a call);
 *   none around the `<` `>` of `list<…>`; `{}` for an empty pair of braces;
 * - comments stay where they are: a line comment keeps its line (one space before it when it
 *   follows code), a block comment its place among the tokens; the lines inside a multi-line block
 *   comment are kept as written.
 *
 * Safety: a source with any lexical or syntax error is refused (the reasons are its diagnostics),
 * and so is an output whose tokens or syntax tree (ranges aside) differ from the input's — the
 * formatter never changes what a file means (the compiled forms are then equal too). The language
 * server proves the same on the parser's input instead of compiling the output again (issue 21
 * item 2; FormatVerify). An output equal to its input is returned without either check.
 */
import type { IToken } from "chevrotain";
import { compile, type CompileResult, type ParsedSource } from "../lang/compile.js";
import type { Diagnostic } from "../lang/diagnostics.js";
import { lex, tokensWithComments, withComments, type LexResult } from "../lang/lexer.js";
import { LineIndex } from "../lang/positions.js";
import { Codes } from "../lang/codes.js";

/** The lexical diagnostics (FLOW001–FLOW007, FLOW009): a file that has one is not formatted. */
const LEXICAL_CODES = new Set<string>([
  Codes.UnexpectedCharacter, Codes.UnterminatedString, Codes.UnterminatedComment, Codes.InvalidEscape,
  Codes.InvalidNumber, Codes.NumberOutOfRange, Codes.TooDeep, Codes.UnstorableCharacter,
]);

/**
 * The tokens of `source` with its comments (`LineComment`, `BlockComment`) and every `Newline`;
 * never throws (lexer.ts tokensWithComments: the compiler's own tokenization).
 */
export const lexWithComments = tokensWithComments;

export type FormatResult =
  | { ok: true; text: string; changed: boolean }
  | { ok: false; reason: string; diagnostics: Diagnostic[] };

const INDENT = "  ";
const isComment = (t: IToken) => t.tokenType.name === "LineComment" || t.tokenType.name === "BlockComment";
const isNewline = (t: IToken) => t.tokenType.name === "Newline";
const name = (t: IToken | undefined) => t?.tokenType.name ?? "";
const OPENERS: Record<string, string> = { LParen: "RParen", LBracket: "RBracket", LCurly: "RCurly" };
const CLOSERS = new Set(["RParen", "RBracket", "RCurly"]);
/** A token after which a line continues the same statement (lexer.ts CONTINUES_AFTER, brackets aside). */
const CONTINUES_AFTER = new Set([
  "Coalesce", "OrOr", "AndAnd", "EqEq", "NotEq", "LtEq", "GtEq", "Lt", "Gt", "Plus", "Minus", "Star", "Slash",
  "Percent", "Bang", "Comma", "Assign", "Colon", "Dot", "FatArrow", "Arrow", "At",
]);
/** Tokens after which `-` and `!` are binary (lexer.ts ENDS_OPERAND). */
const ENDS_OPERAND = new Set(["Identifier", "NumberLit", "StringLit", "RParen", "RBracket", "Kw_true", "Kw_false", "Kw_null"]);
const NO_SPACE_BEFORE = new Set(["RParen", "RBracket", "Comma", "Semi", "Dot", "Colon", "Question"]);
const NO_SPACE_AFTER = new Set(["LParen", "LBracket", "Dot", "At", "Bang"]);

/**
 * How `format` proves its output means what its input meant (issue 21 items 1 and 2):
 *
 * - `"compile"` (the default; `slotflow fmt`): the output is compiled and its syntax tree and
 *   compiled workflow, ranges aside, must equal the input's.
 * - `"parser-input"` (the language server, where a second compile of a 2,000-line file costs more
 *   than the 50 ms a request may take): the output, run through the compiler's own lexer
 *   (lexer.ts `lex`, the token stream the parser reads, after its newline pass), must give the
 *   same tokens — type and text, one for one — and the same lexical diagnostics as the input. The
 *   parser and tree builder read nothing else but token positions (which become `range`s), so the
 *   tree, ranges aside, is the same, and with it what the checker and emitter derive from it (the
 *   one source slice emit.ts reads, a timer's header, is compared with its blanks collapsed, and
 *   the formatter moves only blanks and line breaks). The property tests of
 *   test/authoring/format.test.ts compile both sides to hold this to the stronger statement.
 */
export type FormatVerify = "compile" | "parser-input";

/**
 * Formats `source` (`compiled`: its compile result, when the caller has it — then the input is not
 * compiled again). Never throws. Refuses (ok: false) a source with a lexical or syntax error, or
 * (an internal fault) when its output would not mean the same, as `verify` proves it (default
 * "compile", see FormatVerify); `changed` says whether the text differs from the input.
 */
export function format(source: string, compiled?: CompileResult, options: { verify?: FormatVerify } = {}): FormatResult {
  const before = compiled ?? compile(source);
  const refused = refusal(before);
  if (refused) return refused;
  const text = layout(lexWithComments(source));
  if (text === source) return { ok: true, text, changed: false };
  let same: boolean;
  if (options.verify === "parser-input") {
    same = sameParserInput(source, text);
  } else {
    const after = compile(text);
    same =
      after.ast !== null &&
      sameTokens(source, text) &&
      sameTree(before.ast, after.ast, 0) &&
      sameTree(before.workflow, after.workflow, 0);
  }
  return same ? { ok: true, text, changed: true } : unsure();
}

/**
 * `format(source, compile(source), { verify: "parser-input" })` from the parse alone (compile.ts
 * `parseSource(source)`, before the checker): the layout is made from the lexer's tokens and
 * comments of `parsed` and the proof reads its parser input, so `source` is lexed nowhere again and
 * only the output is lexed once (the language server, issue 21 item 2). The same answer as that
 * call, except that a lexical error past the compiler's diagnostic cap (FLOW008) is still seen.
 */
export function formatParsed(source: string, parsed: ParsedSource): FormatResult {
  const refused = refusal(parsed);
  if (refused) return refused;
  const text = layout(withComments(parsed.lexed.raw, parsed.lexed.comments));
  if (text === source) return { ok: true, text, changed: false };
  return sameLexed(parsed.lexed, text) ? { ok: true, text, changed: true } : unsure();
}

/**
 * Since issue 19 item 5 a lexical error (a bad number, a stray character) keeps the tree so the
 * checker can report the rest; the formatter still refuses such a file (it would drop a stray
 * character, which is no token).
 */
function refusal(before: Pick<CompileResult, "ast" | "diagnostics">): FormatResult | null {
  const lexical = before.diagnostics.some((d) => d.severity === "error" && LEXICAL_CODES.has(d.code));
  if (before.ast !== null && !lexical) return null;
  const errors = before.diagnostics.filter((d) => d.severity === "error");
  return { ok: false, reason: "the file does not parse", diagnostics: errors };
}

function unsure(): FormatResult {
  return { ok: false, reason: "internal formatter error: the formatted text would not mean the same (file left unchanged)", diagnostics: [] };
}

/**
 * True when the parser would read the same thing from `a` and `b` (FormatVerify "parser-input"):
 * the compiler's lexer gives both the same tokens (type and text) and the same lexical diagnostics
 * (code and message), and every timer header emit.ts copies from the source reads the same with
 * its blanks collapsed.
 */
export function sameParserInput(a: string, b: string): boolean {
  return sameLexed(lex(a, new LineIndex(a)), b);
}

/** `sameParserInput(a, b)` with `a` already lexed (`x = lex(a, …)`); lexes `b` once. */
function sameLexed(x: LexResult, b: string): boolean {
  const y = lex(b, new LineIndex(b));
  if (x.tooDeep !== y.tooDeep || x.tokens.length !== y.tokens.length || x.diagnostics.length !== y.diagnostics.length) return false;
  for (let i = 0; i < x.tokens.length; i++) {
    if (x.tokens[i].tokenType !== y.tokens[i].tokenType || x.tokens[i].image !== y.tokens[i].image) return false;
  }
  for (let i = 0; i < x.diagnostics.length; i++) {
    if (x.diagnostics[i].code !== y.diagnostics[i].code || x.diagnostics[i].message !== y.diagnostics[i].message) return false;
  }
  // emit.ts copies a timer's header (`after …`/`every …` up to its handler) from the source with
  // blanks collapsed: the same tokens with the same comments between them read the same.
  const collapsed = (t: IToken) => t.image.replace(/\s+/g, " ").trim();
  return x.comments.length === y.comments.length && x.comments.every((c, i) => collapsed(c) === collapsed(y.comments[i]));
}

/**
 * The layout alone, without the parse and meaning checks of `format` — for tests that show syntax
 * the parser does not know yet is laid out by the same rules. Never use it to write files.
 */
export function layoutOnly(source: string): string {
  return layout(lexWithComments(source));
}

/** True when both texts have the same tokens (comments and newlines aside), image by image. */
function sameTokens(a: string, b: string): boolean {
  const code = (s: string) => lexWithComments(s).filter((t) => !isComment(t) && !isNewline(t)).map((t) => t.image);
  const x = code(a);
  const y = code(b);
  return x.length === y.length && x.every((img, i) => img === y[i]);
}

/** Deep equality of two JSON-like trees, `range` keys aside (positions move when the layout does). Depth-bounded. */
function sameTree(a: unknown, b: unknown, depth: number): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null || depth > 10_000) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameTree(a[i], b[i], depth + 1)) return false;
    return true;
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  let keys = 0;
  for (const k in ra) {
    if (k === "range") continue;
    keys++;
    if (!(k in rb) || !sameTree(ra[k], rb[k], depth + 1)) return false;
  }
  for (const k in rb) if (k !== "range") keys--;
  return keys === 0;
}

/** A JSON copy of `v` without `range` keys (positions move when the layout does). Depth-bounded. */
export function stripRanges(v: unknown, depth = 0): unknown {
  if (depth > 10_000) throw new Error("tree too deep");
  if (Array.isArray(v)) return v.map((x) => stripRanges(x, depth + 1));
  if (v !== null && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (k !== "range") out[k] = stripRanges(x, depth + 1);
    return out;
  }
  return v;
}

interface Open {
  closer: string;
  /** The indentation level of the line the bracket was opened on. */
  lineLevel: number;
}

/**
 * What the spacing rules need to know of each code token, from one pass over the stream, by the
 * token's index in it (arrays, not maps keyed by token: the bench of issue 21 item 2 found the
 * maps a quarter of the layout's time on a 2,000-line file).
 */
interface Marks {
  /** The index of the previous code token (comments and newlines aside), or -1. */
  prev: Int32Array;
  /** 1 for the `<` and `>` of `list<…>` (a `<` right after the name `list`, as in lexer.ts). */
  typeBracket: Uint8Array;
}

function mark(tokens: IToken[]): Marks {
  const prev = new Int32Array(tokens.length).fill(-1);
  const typeBracket = new Uint8Array(tokens.length);
  let last = -1;
  let open = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (isComment(t) || isNewline(t)) continue;
    prev[i] = last;
    const n = name(t);
    if (n === "Lt" && last >= 0 && name(tokens[last]) === "Identifier" && tokens[last].image === "list") {
      open++;
      typeBracket[i] = 1;
    } else if (n === "Gt" && open > 0) {
      open--;
      typeBracket[i] = 1;
    } else if (n !== "Identifier" && n !== "Question" && n !== "Comma") {
      open = 0;
    }
    last = i;
  }
  return { prev, typeBracket };
}

/** The canonical text of a token stream (see the header for the rules). */
function layout(tokens: IToken[]): string {
  const marks = mark(tokens);
  // Lines of tokens (their indices in `tokens`), each with the count of blank lines before it.
  const lines: { tokens: number[]; blanksBefore: number }[] = [];
  let newlines = 0;
  for (let ti = 0; ti < tokens.length; ti++) {
    if (isNewline(tokens[ti])) {
      newlines++;
      continue;
    }
    if (lines.length === 0 || newlines > 0) lines.push({ tokens: [], blanksBefore: Math.max(0, newlines - 1) });
    newlines = 0;
    lines[lines.length - 1].tokens.push(ti);
  }

  const out: string[] = [];
  const stack: Open[] = [];
  /** The last code token before the current line (its index, or -1), and the level of its statement's first line. */
  let lastCode = -1;
  let statementLevel = 0;
  let continuing = false;
  for (let li = 0; li < lines.length; li++) {
    const line = lines[li].tokens;
    const first = tokens[line[0]];
    // A line that starts by closing brackets sits at the level their opener's line had.
    let level: number;
    let leadingClose = 0;
    while (leadingClose < line.length && CLOSERS.has(name(tokens[line[leadingClose]]))) leadingClose++;
    if (leadingClose > 0) {
      const opener = stack[Math.max(0, stack.length - leadingClose)];
      level = opener ? opener.lineLevel : 0;
    } else {
      level = stack.length > 0 ? stack[stack.length - 1].lineLevel + 1 : 0;
    }
    const inBraces = stack.length === 0 || stack[stack.length - 1].closer === "RCurly";
    const lastName = lastCode >= 0 ? name(tokens[lastCode]) : "";
    const cont =
      leadingClose === 0 &&
      inBraces &&
      lastCode >= 0 &&
      ((CONTINUES_AFTER.has(lastName) && marks.typeBracket[lastCode] === 0) || name(first) === "Arrow");
    if (cont) {
      if (!continuing) statementLevel = stack.length > 0 ? stack[stack.length - 1].lineLevel + 1 : 0;
      continuing = true;
      level = statementLevel + 1;
    } else if (line.some((ti) => !isComment(tokens[ti]))) {
      continuing = false;
    }

    const prevLine = li > 0 ? lines[li - 1].tokens : null;
    const afterOpen = prevLine !== null && name(tokens[prevLine[prevLine.length - 1]]) === "LCurly";
    const blanks = li === 0 || afterOpen || name(first) === "RCurly" ? 0 : Math.min(1, lines[li].blanksBefore);
    for (let b = 0; b < blanks; b++) out.push("");

    let text = INDENT.repeat(level);
    for (let i = 0; i < line.length; i++) {
      const t = tokens[line[i]];
      const n = name(t);
      if (i > 0 && spaceBetween(line[i - 1], line[i], tokens, marks)) text += " ";
      text += n === "BlockComment" ? t.image.replace(/\r\n?/g, "\n") : t.image;
      if (OPENERS[n] !== undefined) stack.push({ closer: OPENERS[n], lineLevel: level });
      else if (CLOSERS.has(n)) {
        let at = stack.length - 1;
        while (at >= 0 && stack[at].closer !== n) at--;
        if (at >= 0) stack.length = at;
      }
      if (!isComment(t)) lastCode = line[i];
    }
    out.push(text.replace(/[ \t]+$/, ""));
  }
  return out.length === 0 ? "" : `${out.join("\n")}\n`;
}

/** Whether one space separates the tokens at indices `ai` and `bi` (`bi` right after `ai`) on a line. */
function spaceBetween(ai: number, bi: number, tokens: IToken[], marks: Marks): boolean {
  const an = name(tokens[ai]);
  const bn = name(tokens[bi]);
  if (bn === "LineComment") return true;
  if (an === "BlockComment" || bn === "BlockComment") return !(an === "LParen" || an === "LBracket" || NO_SPACE_BEFORE.has(bn));
  if (an === "LCurly" && bn === "RCurly") return false;
  if (NO_SPACE_BEFORE.has(bn)) return false;
  if (NO_SPACE_AFTER.has(an)) return false;
  if (an === "Minus") {
    const p = marks.prev[ai];
    if (!ENDS_OPERAND.has(p >= 0 ? name(tokens[p]) : "")) return false;
  }
  if (marks.typeBracket[ai] === 1 && an === "Lt") return false;
  if (marks.typeBracket[bi] === 1) return false;
  if (bn === "LParen" || bn === "LBracket") {
    return !(an === "Identifier" || an === "RParen" || an === "RBracket" || (an === "Gt" && marks.typeBracket[ai] === 1));
  }
  return true;
}
