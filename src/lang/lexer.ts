/**
 * The lexer of the flow language (docs/language.md, "Lexical structure").
 *
 * `lex()` runs the Chevrotain lexer and then one pass that makes newlines mean what the language
 * says: a statement ends at the end of its line or at `;`, and an expression continues on the next
 * line only inside `( )` / `[ ]` or after an operator. The pass turns every newline into either
 * nothing or a `Sep` token (the category shared with `;`), so the parser only ever sees one `Sep`
 * between two items and never one at the start or end of a `{ … }` body. A newline is dropped
 *
 * - inside `( … )` and `[ … ]`;
 * - after a token that cannot end an expression or item: a binary operator, `!`, `,`, `=`, `:`,
 *   `.`, `=>`, `->`, `@`, `{`;
 * - before `}`, `{`, `->` and `else` (none of them can start a statement);
 * - when it repeats another separator, at the start of the file and before its end.
 *
 * `>` that closes `list<…>` is not an operator: a newline after it is kept.
 *
 * Contextual words (`email`, `slot`, `each`, `expired`, `Authorize`, `subject`, `body`, the setting
 * names) are ordinary identifiers here; the parser checks their spelling where the grammar needs
 * them. The type names (`int`, `string`, `list`, …) are identifiers too.
 */
import { createToken, Lexer, type IToken, type TokenType } from "chevrotain";
import type { Diagnostic } from "./diagnostics.js";
import { Codes } from "./codes.js";
import type { LineIndex } from "./positions.js";

// --- token types ------------------------------------------------------------------------------

export const Identifier = createToken({ name: "Identifier", pattern: /[A-Za-z_][A-Za-z0-9_]*/, label: "a name" });

/** Categories: `Sep` (newline or `;`) and `BinaryOp` (every binary operator). */
export const Sep = createToken({ name: "Sep", pattern: Lexer.NA, label: "a newline or ';'" });
export const BinaryOp = createToken({ name: "BinaryOp", pattern: Lexer.NA, label: "an operator" });

const RESERVED = [
  "workflow", "entity", "event", "state", "initial", "terminal", "subscribe", "as", "for", "in",
  "enter", "on", "when", "default", "milestone", "let", "send", "to", "drop", "if", "else", "map",
  "true", "false", "null",
] as const;
export type ReservedWord = (typeof RESERVED)[number];

/** Category of every reserved keyword: lets the parser name the slip of a keyword used as a name (FLOW029). */
export const Reserved = createToken({ name: "Reserved", pattern: Lexer.NA, label: "a reserved word" });

/** The reserved keywords' token types, by word. */
export const Kw = Object.fromEntries(
  RESERVED.map((word) => [
    word,
    createToken({ name: `Kw_${word}`, pattern: word, longer_alt: Identifier, label: `'${word}'`, categories: [Reserved] }),
  ]),
) as Record<ReservedWord, TokenType>;

function punct(name: string, text: string, categories: TokenType[] = []): TokenType {
  return createToken({ name, pattern: text, label: `'${text}'`, categories });
}

export const Newline = createToken({
  name: "Newline", pattern: /\r\n|\r|\n/, line_breaks: true, categories: [Sep], label: "end of line",
});
export const Semi = punct("Semi", ";", [Sep]);

export const Coalesce = punct("Coalesce", "??", [BinaryOp]);
export const OrOr = punct("OrOr", "||", [BinaryOp]);
export const AndAnd = punct("AndAnd", "&&", [BinaryOp]);
export const EqEq = punct("EqEq", "==", [BinaryOp]);
export const NotEq = punct("NotEq", "!=", [BinaryOp]);
export const LtEq = punct("LtEq", "<=", [BinaryOp]);
export const GtEq = punct("GtEq", ">=", [BinaryOp]);
export const Lt = punct("Lt", "<", [BinaryOp]);
export const Gt = punct("Gt", ">", [BinaryOp]);
export const Plus = punct("Plus", "+", [BinaryOp]);
export const Minus = punct("Minus", "-", [BinaryOp]);
export const Star = punct("Star", "*", [BinaryOp]);
export const Slash = punct("Slash", "/", [BinaryOp]);
export const Percent = punct("Percent", "%", [BinaryOp]);

export const FatArrow = punct("FatArrow", "=>");
export const Arrow = punct("Arrow", "->");
export const Assign = punct("Assign", "=");
export const Bang = punct("Bang", "!");
export const Question = punct("Question", "?");
export const LParen = punct("LParen", "(");
export const RParen = punct("RParen", ")");
export const LCurly = punct("LCurly", "{");
export const RCurly = punct("RCurly", "}");
export const LBracket = punct("LBracket", "[");
export const RBracket = punct("RBracket", "]");
export const Comma = punct("Comma", ",");
export const Colon = punct("Colon", ":");
export const Dot = punct("Dot", ".");
export const At = punct("At", "@");

/** An integer, a decimal or a duration; also a number with a bad suffix, which the parser reports. */
export const NumberLit = createToken({
  name: "NumberLit", pattern: /[0-9]+(?:\.[0-9]+)?(?:[A-Za-z_][A-Za-z0-9_]*)?/, label: "a number",
});
export const StringLit = createToken({
  name: "StringLit", pattern: /"(?:[^"\\\r\n]|\\[^\r\n])*"/, label: "a string",
});
const UnterminatedString = createToken({
  name: "UnterminatedString", pattern: /"(?:[^"\\\r\n]|\\[^\r\n])*\\?/, label: "a string",
});
// Comments are kept aside (the "comments" group, not the parser's input): the formatter lays them
// out from the same tokenization (format.ts), so one lexing serves compile and format alike.
export const LineComment = createToken({ name: "LineComment", pattern: /\/\/[^\r\n]*/, group: "comments" });
export const BlockComment = createToken({
  name: "BlockComment", pattern: /\/\*[\s\S]*?\*\//, line_breaks: true, group: "comments",
});
const UnterminatedComment = createToken({ name: "UnterminatedComment", pattern: /\/\*[\s\S]*/, line_breaks: true });
const Whitespace = createToken({ name: "Whitespace", pattern: /[ \t\f\v\u00a0\ufeff]+/, group: Lexer.SKIPPED });

const keywordsLongestFirst = [...RESERVED].sort((a, b) => b.length - a.length).map((w) => Kw[w]);

/** Every token type, in matching order; the parser is built over the same list. */
export const allTokens: TokenType[] = [
  Whitespace, Newline, LineComment, BlockComment, UnterminatedComment,
  StringLit, UnterminatedString, NumberLit,
  ...keywordsLongestFirst, Identifier,
  Coalesce, OrOr, AndAnd, EqEq, NotEq, LtEq, GtEq, FatArrow, Arrow,
  Semi, Lt, Gt, Plus, Minus, Star, Slash, Percent, Assign, Bang, Question,
  LParen, RParen, LCurly, RCurly, LBracket, RBracket, Comma, Colon, Dot, At,
  Sep, BinaryOp, Reserved,
];

const chevLexer = new Lexer(allTokens, { positionTracking: "onlyOffset", ensureOptimizations: true });

// --- the newline pass --------------------------------------------------------------------------

const BINARY_OPS = [Coalesce, OrOr, AndAnd, EqEq, NotEq, LtEq, GtEq, Lt, Gt, Plus, Minus, Star, Slash, Percent];
/** A newline right after one of these continues the line. */
const CONTINUES_AFTER = new Set<TokenType>([...BINARY_OPS, Bang, Comma, Assign, Colon, Dot, FatArrow, Arrow, At, LCurly, LParen, LBracket]);
/** A newline right before one of these continues the line. */
const CONTINUES_BEFORE = new Set<TokenType>([RCurly, LCurly, Arrow, Kw.else]);

export interface LexResult {
  /** Tokens for the parser, newlines already reduced to `Sep` where they end an item. */
  tokens: IToken[];
  diagnostics: Diagnostic[];
  /** True when the source exceeds a nesting limit (FLOW007); it is then not parsed. */
  tooDeep: boolean;
  /**
   * Every token as read, before the newline pass (each `Newline` and `;` included), without the
   * comments; an unterminated string here already has the type `StringLit`.
   */
  raw: IToken[];
  /** The comments (`LineComment`, `BlockComment`), in source order. */
  comments: IToken[];
}

/**
 * `raw` and `comments` merged in source order: every token of the source but blanks — the
 * formatter's input (format.ts). Linear in the tokens.
 */
export function withComments(raw: readonly IToken[], comments: readonly IToken[]): IToken[] {
  if (comments.length === 0) return [...raw];
  const out: IToken[] = [];
  let c = 0;
  for (const tok of raw) {
    while (c < comments.length && comments[c].startOffset < tok.startOffset) out.push(comments[c++]);
    out.push(tok);
  }
  while (c < comments.length) out.push(comments[c++]);
  return out;
}

/**
 * Every token of `source` but blanks, comments and newlines included, as read (no newline pass,
 * no diagnostics; an unterminated string keeps its own type): for the formatter's layout and the
 * completion's view of the text before the cursor. Never throws.
 */
export function tokensWithComments(source: string): IToken[] {
  const result = chevLexer.tokenize(source);
  return withComments(result.tokens, result.groups.comments ?? []);
}

/**
 * Limits that keep the recursive parser and checker within the stack: brackets nested more than
 * MAX_NESTING deep, more than MAX_NESTING unary operators in a row, more than MAX_OPERATORS binary
 * operators in one statement, or more than MAX_NESTING `else if` in one chain.
 */
export const MAX_NESTING = 64;
export const MAX_OPERATORS = 2000;

/**
 * Tokenizes `source` and applies the newline rules above. Never throws: characters that start no
 * token, unterminated strings and comments become diagnostics (FLOW001–FLOW003) and lexing goes
 * on; a source beyond the nesting limits gets FLOW007 and `tooDeep`. With `from`/`to`, only
 * `source.slice(from, to)` is read, as if it were a whole file, with every offset (tokens,
 * diagnostics) counted in `source` — the language server's re-parse of one declaration (reparse.ts).
 */
export function lex(source: string, lines: LineIndex, from = 0, to = source.length): LexResult {
  const diagnostics: Diagnostic[] = [];
  const whole = from === 0 && to === source.length;
  const result = chevLexer.tokenize(whole ? source : source.slice(from, to));
  if (!whole) {
    for (const tok of result.tokens) shift(tok, from);
    for (const tok of result.groups.comments ?? []) shift(tok, from);
    for (const err of result.errors) err.offset += from;
  }
  for (const err of result.errors) {
    const text = source.slice(err.offset, err.offset + err.length);
    diagnostics.push({
      code: Codes.UnexpectedCharacter,
      severity: "error",
      message: `unexpected character${[...text].length > 1 ? "s" : ""} '${text}'`,
      range: lines.range(err.offset, err.offset + err.length),
    });
  }

  const raw = result.tokens;
  const out: IToken[] = [];
  /** Open brackets: "(", "[", "{", and "<" for `list<`. */
  const stack: string[] = [];
  let prevType: TokenType | null = null;
  let prevClosesType = false;

  let i = 0;
  while (i < raw.length) {
    const tok = raw[i];
    const type = tok.tokenType;

    if (type === Newline || type === Semi) {
      // Take the whole run of separators and decide once.
      let j = i;
      let firstSemi: IToken | null = null;
      while (j < raw.length && (raw[j].tokenType === Newline || raw[j].tokenType === Semi)) {
        if (raw[j].tokenType === Semi && firstSemi === null) firstSemi = raw[j];
        j++;
      }
      const next = j < raw.length ? raw[j].tokenType : null;
      const top = stack.length > 0 ? stack[stack.length - 1] : "";
      i = j;
      if (prevType === null || next === null || next === RCurly || prevType === LCurly) continue;
      if (firstSemi !== null) {
        emit(firstSemi);
        continue;
      }
      if (top === "(" || top === "[") continue;
      if (!prevClosesType && CONTINUES_AFTER.has(prevType)) continue;
      if (CONTINUES_BEFORE.has(next)) continue;
      while (stack.length > 0 && stack[stack.length - 1] === "<") stack.pop();
      emit(tok);
      continue;
    }

    if (type === UnterminatedComment) {
      diagnostics.push({
        code: Codes.UnterminatedComment,
        severity: "error",
        message: "unterminated comment: '/*' has no closing '*/'",
        range: lines.range(tok.startOffset, tok.startOffset + 2),
      });
      i++;
      continue;
    }
    if (type === UnterminatedString) {
      diagnostics.push({
        code: Codes.UnterminatedString,
        severity: "error",
        message: "unterminated string: a string must end with '\"' on the same line",
        range: lines.range(tok.startOffset, tok.startOffset + tok.image.length),
      });
      tok.tokenType = StringLit;
      tok.tokenTypeIdx = StringLit.tokenTypeIdx!;
    }

    let closesType = false;
    if (type === LParen) stack.push("(");
    else if (type === LBracket) stack.push("[");
    else if (type === LCurly) stack.push("{");
    else if (type === Lt && prevType === Identifier && out[out.length - 1].image === "list") stack.push("<");
    else if (type === RParen) popTo("(");
    else if (type === RBracket) popTo("[");
    else if (type === RCurly) popTo("{");
    else if (type === Gt && stack.length > 0 && stack[stack.length - 1] === "<") {
      stack.pop();
      closesType = true;
    }
    emit(tok);
    prevClosesType = closesType;
    i++;
  }
  const tooDeep = checkLimits(out, lines, diagnostics);
  return { tokens: out, diagnostics, tooDeep, raw, comments: result.groups.comments ?? [] };

  function emit(tok: IToken): void {
    out.push(tok);
    prevType = tok.tokenType;
    prevClosesType = false;
  }

  function popTo(open: string): void {
    const at = stack.lastIndexOf(open);
    if (at >= 0) stack.length = at;
  }
}

function shift(tok: IToken, by: number): void {
  tok.startOffset += by;
  if (tok.endOffset !== undefined) tok.endOffset += by;
}

const UNARY = new Set<TokenType>([Bang, Minus]);

/** Reports the first nesting limit `tokens` exceeds (FLOW007); true when one is. */
function checkLimits(tokens: IToken[], lines: LineIndex, diagnostics: Diagnostic[]): boolean {
  let depth = 0;
  let unaryRun = 0;
  let operators = 0;
  let elseIfs = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i].tokenType;
    if (t === LParen || t === LBracket || t === LCurly) depth++;
    else if (t === RParen || t === RBracket || t === RCurly) depth = Math.max(0, depth - 1);
    if (t === LCurly || t === RCurly || t === Newline || t === Semi) operators = 0;
    if (t === Newline || t === Semi) elseIfs = 0;
    if (t === Kw.if && i > 0 && tokens[i - 1].tokenType === Kw.else) elseIfs++;
    const prev = i > 0 ? tokens[i - 1].tokenType : null;
    const unaryHere = UNARY.has(t) && (prev === null || !ENDS_OPERAND.has(prev));
    unaryRun = unaryHere ? unaryRun + 1 : 0;
    if (BINARY_OPS.includes(t) && !unaryHere) operators++;
    let what: string | null = null;
    if (depth > MAX_NESTING) what = `brackets nested more than ${MAX_NESTING} deep`;
    else if (unaryRun > MAX_NESTING) what = `more than ${MAX_NESTING} unary operators in a row`;
    else if (operators > MAX_OPERATORS) what = `more than ${MAX_OPERATORS} operators in one statement`;
    else if (elseIfs > MAX_NESTING) what = `more than ${MAX_NESTING} 'else if' in one chain`;
    if (what !== null) {
      const tok = tokens[i];
      diagnostics.push({
        code: Codes.TooDeep,
        severity: "error",
        message: `too deeply nested: ${what}; the file is not parsed further`,
        range: lines.range(tok.startOffset, tok.startOffset + tok.image.length),
      });
      return true;
    }
  }
  return false;
}

/** Tokens after which `-` or `!` is binary (`a - b`), not unary. */
const ENDS_OPERAND = new Set<TokenType>([Identifier, NumberLit, StringLit, RParen, RBracket, Kw.true, Kw.false, Kw.null]);

// --- literal values ----------------------------------------------------------------------------

/** A problem inside a literal, at `offset` (relative to the literal's first character). */
export interface LiteralProblem {
  code: string;
  message: string;
  offset: number;
  length: number;
}

/**
 * Decodes a string literal's source text (with its quotes; the closing one may be missing).
 * Escapes: `\"`, `\\`, `\n`, `\t`, `\u{X…}` (1–6 hex digits, a Unicode scalar value other than U+0000).
 */
export function decodeString(raw: string): { value: string; problems: LiteralProblem[] } {
  const problems: LiteralProblem[] = [];
  const end = raw.length > 1 && raw.endsWith('"') && !isEscapedQuoteAtEnd(raw) ? raw.length - 1 : raw.length;
  let value = "";
  let i = 1;
  while (i < end) {
    const c = raw[i];
    if (c !== "\\") {
      value += c;
      i++;
      continue;
    }
    const e = raw[i + 1];
    if (e === '"' || e === "\\") {
      value += e;
      i += 2;
    } else if (e === "n") {
      value += "\n";
      i += 2;
    } else if (e === "t") {
      value += "\t";
      i += 2;
    } else if (e === "u") {
      const m = /^\\u\{([0-9A-Fa-f]{1,6})\}/.exec(raw.slice(i, i + 10));
      const cp = m ? parseInt(m[1], 16) : NaN;
      // U+0000 is a scalar value but PostgreSQL cannot store it in text (issue 8 item 15).
      if (!m || cp === 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
        const len = m ? m[0].length : 2;
        problems.push({
          code: Codes.InvalidEscape,
          message: cp === 0 ? "invalid Unicode escape: \\u{0} (NUL) cannot be stored" : "invalid Unicode escape: write \\u{…} with 1 to 6 hex digits naming a Unicode scalar value",
          offset: i,
          length: len,
        });
        i += len;
      } else {
        value += String.fromCodePoint(cp);
        i += m[0].length;
      }
    } else {
      const len = e === undefined ? 1 : 2;
      problems.push({
        code: Codes.InvalidEscape,
        message: `invalid escape '\\${e ?? ""}': the escapes are \\" \\\\ \\n \\t \\u{…}`,
        offset: i,
        length: len,
      });
      i += len;
    }
  }
  return { value, problems };
}

function isEscapedQuoteAtEnd(raw: string): boolean {
  // `"abc\"` (unterminated): the final quote is escaped when an odd number of backslashes precede it.
  let n = 0;
  for (let k = raw.length - 2; k >= 1 && raw[k] === "\\"; k--) n++;
  return n % 2 === 1;
}

const DURATION_UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Unit words a newcomer writes after a number (`3 days`), by their length in ms (lower case). */
const UNIT_WORDS_MS: Record<string, number> = {
  s: 1000, sec: 1000, secs: 1000, second: 1000, seconds: 1000,
  m: 60_000, min: 60_000, mins: 60_000, minute: 60_000, minutes: 60_000,
  h: 3_600_000, hr: 3_600_000, hrs: 3_600_000, hour: 3_600_000, hours: 3_600_000,
  d: 86_400_000, day: 86_400_000, days: 86_400_000,
  w: 604_800_000, wk: 604_800_000, week: 604_800_000, weeks: 604_800_000,
};

/**
 * The length in ms of a unit word written apart from its number (`days` in `3 days`), or null
 * when `word` is none (issue 30 item 10: the parser names that slip and its fix).
 */
export function unitWordMs(word: string): number | null {
  return Object.hasOwn(UNIT_WORDS_MS, word.toLowerCase()) ? UNIT_WORDS_MS[word.toLowerCase()] : null;
}

/**
 * How `count` of a unit of `ms` is written as one duration literal: the largest of d, h, m, s
 * that divides it (`1 week` → `7d`, `90 minutes` → `90m`, never a fraction).
 */
export function durationLiteral(count: number, ms: number): string {
  const total = count * ms;
  for (const [unit, size] of [["d", 86_400_000], ["h", 3_600_000], ["m", 60_000]] as const) {
    if (ms >= size && total % size === 0) return `${total / size}${unit}`;
  }
  return `${total / 1000}s`;
}

export type NumberValue =
  | { type: "int" | "decimal"; value: number }
  | { type: "duration"; value: number; unit: "s" | "m" | "h" | "d" };

/**
 * Classifies a number token: `42` int, `3.5` decimal, `30s 15m 2h 7d` duration (value in
 * milliseconds). Returns a problem for an unknown suffix, a fractional duration or a value out of
 * range (integers and durations must stay within ±(2^53−1)).
 */
export function classifyNumber(image: string): { value: NumberValue | null; problem: LiteralProblem | null } {
  const m = /^([0-9]+)(\.[0-9]+)?([A-Za-z_][A-Za-z0-9_]*)?$/.exec(image);
  if (!m) return { value: null, problem: bad(Codes.InvalidNumber, `invalid number '${image}'`) };
  const [, whole, fraction, suffix] = m;
  if (suffix !== undefined) {
    const grouped = /^((?:_[0-9]+)+)([A-Za-z][A-Za-z0-9_]*)?$/.exec(suffix);
    if (grouped && fraction === undefined) {
      // `10_000`: digits grouped with `_` (issue 30 item 10: the message ends with the fix)
      const digits = whole + grouped[1].replaceAll("_", "");
      return { value: null, problem: bad(Codes.InvalidNumber, `a number has no '_' between its digits: write digits only: \`${digits}${grouped[2] ?? ""}\``) };
    }
    const unit = DURATION_UNIT_MS[suffix];
    if (unit === undefined) {
      return {
        value: null,
        problem: bad(Codes.InvalidNumber, `invalid number suffix '${suffix}': a duration takes one unit of s, m, h or d`),
      };
    }
    if (fraction !== undefined) {
      return { value: null, problem: bad(Codes.InvalidNumber, `a duration is a whole number of one unit ('${image}')`) };
    }
    const ms = Number(whole) * unit;
    if (!Number.isSafeInteger(ms)) return { value: null, problem: bad(Codes.NumberOutOfRange, `duration '${image}' is too large`) };
    return { value: { type: "duration", value: ms, unit: suffix as "s" | "m" | "h" | "d" }, problem: null };
  }
  if (fraction !== undefined) {
    const v = Number(image);
    if (!Number.isFinite(v)) return { value: null, problem: bad(Codes.NumberOutOfRange, `decimal '${image}' is too large`) };
    return { value: { type: "decimal", value: v }, problem: null };
  }
  const v = Number(whole);
  if (!Number.isSafeInteger(v)) {
    return { value: null, problem: bad(Codes.NumberOutOfRange, `integer '${image}' is outside ±(2^53−1)`) };
  }
  return { value: { type: "int", value: v }, problem: null };

  function bad(code: string, message: string): LiteralProblem {
    return { code, message, offset: 0, length: image.length };
  }
}
