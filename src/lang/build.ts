/**
 * Node builders for the grammar (grammar.ts): ranges from token offsets, literal values, operator
 * precedence, and the shapes the grammar reads loosely and settles here (slot settings, assignment
 * targets), with the diagnostics found while doing so. One builder serves one parse.
 */
import { EOF, type IToken } from "chevrotain";
import type { BinaryOp as BinaryOpName, Expr, FieldInit, Ident, LangVariant, LiteralExpr, Range, Setting, Statement } from "./ast.js";
import { Codes } from "./codes.js";
import type { Diagnostic } from "./diagnostics.js";
import { classifyNumber, decodeString, durationLiteral, Newline, unitWordMs } from "./lexer.js";
import type { LineIndex } from "./positions.js";

/** The settings that take one expression, by their name in source. */
const ONE_EXPRESSION_SETTINGS = {
  Deadline: "deadline", Title: "title", Intro: "intro", Quorum: "quorum", Forwardable: "forwardable", Language: "language",
  Path: "path", Timeout: "timeout", Attempts: "attempts",
} as const;
/**
 * Every setting's name in source. A slot's settings and a call's (v0.5) are read alike; the
 * checker refuses those that do not belong to the member (FLOW371).
 */
const SETTING_WORDS = {
  Candidates: 1, Requires: 1, After: 1, Deadline: 1, Title: 1, Intro: 1, Quorum: 1, Forwardable: 1, Language: 1,
  Method: 1, Path: 1, Input: 1, Timeout: 1, Attempts: 1,
} as const;
/** How the unknown-setting message lists the settings. */
const SETTINGS_LIST =
  "Candidates, Requires, After, Deadline, Title, Intro, Quorum, Forwardable, Language and each { … } (a call: Method, Path, Input { … }, Timeout, Attempts, After, Deadline, Quorum and each { … })";

/** Binding strength of the binary operators (higher binds tighter); all are left-associative. */
const PRECEDENCE: Record<string, number> = {
  "??": 1, "||": 2, "&&": 3, "==": 4, "!=": 4, "<": 5, "<=": 5, ">": 5, ">=": 5, "+": 6, "-": 6, "*": 7, "/": 7, "%": 7,
};

/** The offset just past `tok`. */
export function tokEnd(tok: IToken): number {
  return tok.startOffset + tok.image.length;
}

/** How a token reads in a message. */
export function describeToken(tok: IToken): string {
  if (tok.tokenType === EOF) return "end of file";
  if (tok.tokenType === Newline) return "end of line";
  const image = tok.image.length > 24 ? `${tok.image.slice(0, 24)}…` : tok.image;
  return `'${image}'`;
}

export class AstBuilder {
  constructor(
    readonly lines: LineIndex,
    private readonly diags: Diagnostic[],
  ) {}

  /** The range of one token. */
  tr(tok: IToken): Range {
    return this.lines.range(tok.startOffset, tokEnd(tok));
  }

  /** From the start of `a` to the end of `b` (positions of ranges are shared, not copied). */
  span(a: Range | IToken, b: Range | IToken): Range {
    const start = "start" in a ? a.start : this.lines.position(a.startOffset);
    const end = "end" in b ? b.end : this.lines.position(tokEnd(b));
    return end.offset >= start.offset ? { start, end } : { start, end: start };
  }

  ident(tok: IToken): Ident {
    return { name: tok.image, range: this.tr(tok) };
  }

  /** Records a syntax error. */
  error(code: string, message: string, range: Range): void {
    this.diags.push({ code, severity: "error", message, range });
  }

  /** Reports FLOW020 unless `tok` spells the contextual word `word`. */
  expectWord(tok: IToken, word: string, where: string): void {
    if (tok.isInsertedInRecovery || tok.image === word) return;
    this.error(Codes.ExpectedContextualWord, `expected '${word}' ${where}, found '${tok.image}'`, this.tr(tok));
  }

  /** FLOW010 before `tok`: two items on one line without `;`. */
  missingSep(tok: IToken): void {
    if (tok.isInsertedInRecovery || tok.tokenType === EOF) return;
    this.error(Codes.ExpectedToken, `expected a newline or ';' before ${describeToken(tok)}`, this.tr(tok));
  }

  /** An int, decimal or duration literal (FLOW005/FLOW006 when the token is none of them). */
  numberLiteral(tok: IToken, negative: IToken | null): LiteralExpr {
    const { value, problem } = classifyNumber(tok.image);
    const range = negative ? this.span(negative, tok) : this.tr(tok);
    const raw = negative ? `-${tok.image}` : tok.image;
    if (problem || !value) {
      if (problem) this.error(problem.code, problem.message, this.tr(tok));
      return { kind: "literal", type: "int", value: 0, raw, range, invalid: true };
    }
    const v = negative ? -value.value : value.value;
    return { kind: "literal", type: value.type, value: v, raw, range } as LiteralExpr;
  }

  /**
   * `3 days` — a number and a unit word apart: FLOW005 ending with the fix (`3d`; issue 30
   * item 10), and an invalid literal, so the rest of the file is still checked.
   */
  spacedDuration(tok: IToken, unit: IToken, negative: IToken | null): LiteralExpr {
    const range = this.span(negative ?? tok, unit);
    const raw = `${negative ? "-" : ""}${tok.image} ${unit.image}`;
    const count = /^[0-9]+$/.test(tok.image) ? Number(tok.image) : null;
    const ms = unitWordMs(unit.image) ?? 1000;
    const fix = count !== null && Number.isSafeInteger(count * ms) ? durationLiteral(count, ms) : `3${unit.image[0]!.toLowerCase() === "w" ? "d" : unit.image[0]!.toLowerCase()}`;
    this.error(Codes.InvalidNumber, `'${raw}' is not a duration: a duration is one number and a unit: \`${fix}\``, range);
    return { kind: "literal", type: "int", value: 0, raw, range, invalid: true };
  }

  /** A string literal with its escapes decoded (FLOW004 for a bad escape). */
  stringLiteral(tok: IToken): LiteralExpr {
    const { value, problems } = decodeString(tok.image);
    for (const p of problems) {
      this.error(p.code, p.message, this.lines.range(tok.startOffset + p.offset, tok.startOffset + p.offset + p.length));
    }
    return { kind: "literal", type: "string", value, raw: tok.image, range: this.tr(tok) };
  }

  /** Groups `first op right op right …` by precedence, left-associative. */
  binaryTree(first: Expr, rest: { op: IToken; right: Expr }[]): Expr {
    if (rest.length === 0) return first;
    const operands: Expr[] = [first];
    const ops: string[] = [];
    for (const { op, right } of rest) {
      const p = PRECEDENCE[op.image] ?? 0;
      while (ops.length > 0 && (PRECEDENCE[ops[ops.length - 1]] ?? 0) >= p) this.reduce(operands, ops);
      ops.push(op.image);
      operands.push(right);
    }
    while (ops.length > 0) this.reduce(operands, ops);
    return operands[0];
  }

  private reduce(operands: Expr[], ops: string[]): void {
    const right = operands.pop()!;
    const left = operands.pop()!;
    const op = ops.pop()! as BinaryOpName;
    operands.push({ kind: "binary", op, left, right, range: this.span(left.range, right.range) });
  }

  /** `a.b.c` as an assignment target, or null (and FLOW024) when `e` is not a dotted path. */
  assignTarget(e: Expr): Ident[] | null {
    const path: Ident[] = [];
    let cur: Expr = e;
    while (cur.kind === "member") {
      path.unshift(cur.property);
      cur = cur.object;
    }
    if (cur.kind === "name") {
      path.unshift({ name: cur.name, range: cur.range });
      return path;
    }
    this.error(Codes.InvalidAssignmentTarget, "only a name or a dotted path of names (a.b) can be assigned", e.range);
    return null;
  }

  boolLiteral(t: IToken, value: boolean): LiteralExpr {
    return { kind: "literal", type: "bool", value, raw: t.image, range: this.tr(t) };
  }

  nullLiteral(t: IToken): LiteralExpr {
    return { kind: "literal", type: "null", value: null, raw: t.image, range: this.tr(t) };
  }

  /**
   * A slot setting from `Name: e1, e2… [else wording]` (FLOW021–FLOW023 when it does not fit;
   * FLOW027 for `else` after any setting but `Requires`, issue 30 item 8).
   */
  buildSetting(
    name: IToken,
    exprs: Expr[],
    wording: { kw: IToken; expr: Expr } | null = null,
    rawVariants: { tag: IToken; expr: Expr; afterElse: boolean }[] = [],
  ): Setting | null {
    const lastExpr = [wording?.expr, ...rawVariants.map((v) => v.expr)].filter((e): e is Expr => !!e).sort((a, b) => b.range.end.offset - a.range.end.offset)[0];
    const range = this.span(name, (lastExpr ?? exprs[exprs.length - 1]).range);
    // v0.5 (issue 42): language variants belong to Title, Intro and the wording after Requires' else
    const variants: LangVariant[] = rawVariants.map((v) => ({
      tag: v.tag.tokenType.name === "StringLit" ? this.stringLiteral(v.tag).value as string : v.tag.image,
      range: this.tr(v.tag),
      expr: v.expr,
    }));
    const takesVariants = name.image === "Title" || name.image === "Intro" || (name.image === "Requires" && wording !== null && rawVariants.every((v) => v.afterElse));
    if (rawVariants.length > 0 && !takesVariants && name.image in SETTING_WORDS) {
      const first = rawVariants[0]!;
      this.error(
        Codes.VariantOutsideText,
        name.image === "Requires"
          ? "language variants of Requires follow the wording after 'else': Requires: cond else \"…\", de: \"…\""
          : `only Title, Intro and the wording after Requires' else take language variants (de: …); ${name.image} does not`,
        this.span(first.tag, first.expr.range),
      );
    }
    const withVariants = variants.length > 0 && takesVariants ? { variants } : {};
    if (wording && name.image !== "Requires" && name.image in SETTING_WORDS) {
      this.error(
        Codes.ElseOutsideRequires,
        `only Requires takes 'else' (the wording of its refusal); ${name.image} ends before 'else': remove it`,
        this.span(wording.kw, wording.expr.range),
      );
    }
    switch (name.image) {
      case "Candidates":
        return { kind: "candidates", matchers: exprs, range };
      case "Requires":
        if (exprs.length > 1) {
          this.error(Codes.SettingArity, `Requires takes one expression: join conditions with &&`, this.span(exprs[1].range, exprs[exprs.length - 1].range));
        }
        return { kind: "requires", expr: exprs[0], wording: wording?.expr ?? null, range, ...withVariants };
      case "Method": {
        // v0.5 calls: one bare word (GET, POST, PUT, PATCH, DELETE), spelling checked by the checker
        if (exprs.length > 1) {
          this.error(Codes.SettingArity, `Method takes one word`, this.span(exprs[1].range, exprs[exprs.length - 1].range));
        }
        const e = exprs[0];
        if (e.kind === "name") return { kind: "method", method: { name: e.name, range: e.range }, range };
        const fix = e.kind === "literal" && e.type === "string" && /^[A-Za-z]+$/.test(e.value) ? `: write Method: ${e.value.toUpperCase()}` : "";
        this.error(Codes.CallMethod, `Method is one of GET, POST, PUT, PATCH, DELETE, written as a bare word${fix}`, e.range);
        return null;
      }
      case "Input":
        this.error(Codes.UnknownSetting, "Input takes a block of fields, not a value: Input { name: expr, … }", this.tr(name));
        return null;
      case "Deadline":
      case "Title":
      case "Intro":
      case "Quorum":
      case "Forwardable":
      case "Language":
      case "Path":
      case "Timeout":
      case "Attempts": {
        if (exprs.length > 1) {
          this.error(Codes.SettingArity, `${name.image} takes one expression`, this.span(exprs[1].range, exprs[exprs.length - 1].range));
        }
        const kind = ONE_EXPRESSION_SETTINGS[name.image as keyof typeof ONE_EXPRESSION_SETTINGS];
        if (kind === "title" || kind === "intro") return { kind, expr: exprs[0], range, ...withVariants };
        return { kind, expr: exprs[0], range };
      }
      case "After": {
        const aliases: Ident[] = [];
        for (const e of exprs) {
          if (e.kind === "name") aliases.push({ name: e.name, range: e.range });
          else this.error(Codes.AfterNotAlias, "After lists slot aliases of this state, separated by commas", e.range);
        }
        return { kind: "after", aliases, range };
      }
      case "each":
        this.error(Codes.UnknownSetting, "each takes a block, not a value: each { … }", this.tr(name));
        return null;
      default:
        this.error(Codes.UnknownSetting, `unknown setting '${name.image}': the settings are ${SETTINGS_LIST}`, this.tr(name));
        return null;
    }
  }

  /**
   * `each { … }` (v0.4 Many responders): the one setting written with a block. Any other word
   * before a block is FLOW021.
   */
  /**
   * `Input { name: expr, … }` (v0.5 calls) from the fields the grammar read; any other word before
   * a block of fields is FLOW021 (`each` takes statements).
   */
  buildFieldsSetting(name: IToken, fields: FieldInit[], range: Range): Setting | null {
    if (name.image === "Input") return { kind: "input", fields, range: this.span(this.tr(name), range) };
    const hint = name.image === "each" ? "each takes statements: each { … }" : `the settings are ${SETTINGS_LIST}`;
    this.error(Codes.UnknownSetting, `unknown setting '${name.image}' with a block of fields: ${hint}`, this.tr(name));
    return null;
  }

  buildBlockSetting(name: IToken, block: { statements: Statement[]; range: Range }): Setting | null {
    if (name.image === "Input") {
      this.error(Codes.UnknownSetting, "Input holds fields (name: expr), not statements: Input { name: expr, … }", this.tr(name));
      return null;
    }
    if (name.image === "each") return { kind: "each", body: block.statements, range: this.span(this.tr(name), block.range) };
    const hint = name.image in SETTING_WORDS ? `${name.image} takes a value: ${name.image}: …` : `the settings are ${SETTINGS_LIST}`;
    this.error(Codes.UnknownSetting, `unknown setting '${name.image}' with a block: ${hint}`, this.tr(name));
    return null;
  }
}
