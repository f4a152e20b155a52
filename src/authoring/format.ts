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
 * formatter never changes what a file means (the compiled forms are then equal too).
 */
import { createToken, Lexer, type IToken, type TokenType } from "chevrotain";
import { compile, type CompileResult } from "../lang/compile.js";
import type { Diagnostic } from "../lang/diagnostics.js";
import { allTokens } from "../lang/lexer.js";

// The lexer's own token types (lexer.ts), with its two skipped comment types replaced by kept ones.
const LineComment = createToken({ name: "LineComment", pattern: /\/\/[^\r\n]*/ });
const BlockComment = createToken({ name: "BlockComment", pattern: /\/\*[\s\S]*?\*\//, line_breaks: true });

let triviaLexer: Lexer | null = null;
/** The tokens of `source` with its comments (`LineComment`, `BlockComment`) and every `Newline`; never throws. */
export function lexWithComments(source: string): IToken[] {
  if (triviaLexer === null) {
    const tokens: TokenType[] = allTokens.map((t) =>
      t.name === "LineComment" ? LineComment : t.name === "BlockComment" ? BlockComment : t,
    );
    triviaLexer = new Lexer(tokens, { positionTracking: "onlyOffset" });
  }
  return triviaLexer.tokenize(source).tokens;
}

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
 * Formats `source` (`compiled`: its compile result, when the caller has it). Never throws.
 * Refuses (ok: false) a source with a lexical or syntax error, or (an internal fault) when its
 * output would not mean the same; `changed` says whether the text differs from the input.
 */
export function format(source: string, compiled?: CompileResult): FormatResult {
  const before = compiled ?? compile(source);
  if (before.ast === null) {
    const errors = before.diagnostics.filter((d) => d.severity === "error");
    return { ok: false, reason: "the file does not parse", diagnostics: errors };
  }
  const text = layout(lexWithComments(source));
  const after = compile(text);
  const same =
    after.ast !== null &&
    sameTokens(source, text) &&
    sameTree(before.ast, after.ast, 0) &&
    sameTree(before.workflow, after.workflow, 0);
  if (!same) {
    return { ok: false, reason: "internal formatter error: the formatted text would not mean the same (file left unchanged)", diagnostics: [] };
  }
  return { ok: true, text, changed: text !== source };
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

/** What the spacing rules need to know of each code token, from one pass over the stream. */
interface Marks {
  prev: Map<IToken, IToken | undefined>;
  /** The `<` and `>` of `list<…>` (a `<` right after the name `list`, as in lexer.ts). */
  typeBrackets: Set<IToken>;
}

function mark(tokens: IToken[]): Marks {
  const prev = new Map<IToken, IToken | undefined>();
  const typeBrackets = new Set<IToken>();
  let last: IToken | undefined;
  let open = 0;
  for (const t of tokens) {
    if (isComment(t) || isNewline(t)) continue;
    prev.set(t, last);
    if (name(t) === "Lt" && name(last) === "Identifier" && last!.image === "list") {
      open++;
      typeBrackets.add(t);
    } else if (name(t) === "Gt" && open > 0) {
      open--;
      typeBrackets.add(t);
    } else if (name(t) !== "Identifier" && name(t) !== "Question" && name(t) !== "Comma") {
      open = 0;
    }
    last = t;
  }
  return { prev, typeBrackets };
}

/** The canonical text of a token stream (see the header for the rules). */
function layout(tokens: IToken[]): string {
  const marks = mark(tokens);
  // Lines of tokens, each with the count of blank lines before it.
  const lines: { tokens: IToken[]; blanksBefore: number }[] = [];
  let newlines = 0;
  for (const t of tokens) {
    if (isNewline(t)) {
      newlines++;
      continue;
    }
    if (lines.length === 0 || newlines > 0) lines.push({ tokens: [], blanksBefore: Math.max(0, newlines - 1) });
    newlines = 0;
    lines[lines.length - 1].tokens.push(t);
  }

  const out: string[] = [];
  const stack: Open[] = [];
  /** The last code token before the current line, and the level of its statement's first line. */
  let lastCode: IToken | undefined;
  let statementLevel = 0;
  let continuing = false;
  for (let li = 0; li < lines.length; li++) {
    const line = lines[li].tokens;
    const first = line[0];
    // A line that starts by closing brackets sits at the level their opener's line had.
    let level: number;
    let leadingClose = 0;
    while (leadingClose < line.length && CLOSERS.has(name(line[leadingClose]))) leadingClose++;
    if (leadingClose > 0) {
      const opener = stack[Math.max(0, stack.length - leadingClose)];
      level = opener ? opener.lineLevel : 0;
    } else {
      level = stack.length > 0 ? stack[stack.length - 1].lineLevel + 1 : 0;
    }
    const inBraces = stack.length === 0 || stack[stack.length - 1].closer === "RCurly";
    const lastName = name(lastCode);
    const cont =
      leadingClose === 0 &&
      inBraces &&
      lastCode !== undefined &&
      ((CONTINUES_AFTER.has(lastName) && !marks.typeBrackets.has(lastCode)) || name(first) === "Arrow");
    if (cont) {
      if (!continuing) statementLevel = stack.length > 0 ? stack[stack.length - 1].lineLevel + 1 : 0;
      continuing = true;
      level = statementLevel + 1;
    } else if (line.some((t) => !isComment(t))) {
      continuing = false;
    }

    const prevLine = li > 0 ? lines[li - 1].tokens : null;
    const afterOpen = prevLine !== null && name(prevLine.at(-1)) === "LCurly";
    const blanks = li === 0 || afterOpen || name(first) === "RCurly" ? 0 : Math.min(1, lines[li].blanksBefore);
    for (let b = 0; b < blanks; b++) out.push("");

    let text = INDENT.repeat(level);
    for (let i = 0; i < line.length; i++) {
      const t = line[i];
      const n = name(t);
      if (i > 0 && spaceBetween(line[i - 1], t, marks)) text += " ";
      text += n === "BlockComment" ? t.image.replace(/\r\n?/g, "\n") : t.image;
      if (OPENERS[n] !== undefined) stack.push({ closer: OPENERS[n], lineLevel: level });
      else if (CLOSERS.has(n)) {
        const at = stack.map((o) => o.closer).lastIndexOf(n);
        if (at >= 0) stack.length = at;
      }
      if (!isComment(t)) lastCode = t;
    }
    out.push(text.replace(/[ \t]+$/, ""));
  }
  return out.length === 0 ? "" : `${out.join("\n")}\n`;
}

/** Whether one space separates `a` and `b` on a line. */
function spaceBetween(a: IToken, b: IToken, marks: Marks): boolean {
  const an = name(a);
  const bn = name(b);
  if (bn === "LineComment") return true;
  if (an === "BlockComment" || bn === "BlockComment") return !(an === "LParen" || an === "LBracket" || NO_SPACE_BEFORE.has(bn));
  if (an === "LCurly" && bn === "RCurly") return false;
  if (NO_SPACE_BEFORE.has(bn)) return false;
  if (NO_SPACE_AFTER.has(an)) return false;
  if (an === "Minus" && !ENDS_OPERAND.has(name(marks.prev.get(a)))) return false;
  if (marks.typeBrackets.has(a) && an === "Lt") return false;
  if (marks.typeBrackets.has(b)) return false;
  if (bn === "LParen" || bn === "LBracket") {
    return !(an === "Identifier" || an === "RParen" || an === "RBracket" || (an === "Gt" && marks.typeBrackets.has(a)));
  }
  return true;
}
