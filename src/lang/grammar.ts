/**
 * The grammar of the flow language as a Chevrotain EmbeddedActionsParser (docs/language.md,
 * "Grammar"). Rules consume tokens (lexer.ts) and, inside ACTION blocks, build syntax-tree nodes
 * through an AstBuilder (build.ts). The parser is built once per process and reused.
 *
 * Shapes the grammar leaves to the builder:
 * - items of a `{ … }` body (declarations, members, fields, settings, statements, arms) are read
 *   in any order and separated by a newline or `;`; two items on one line without `;` are FLOW010
 *   (except before an arm), statements after an arm FLOW025;
 * - `a.b.c = e` is read as an expression followed by `=`; the left side must then be a dotted path
 *   of names (FLOW024);
 * - setting names, `email`, `slot`, `each`, `expired`, `Authorize`, `subject` and `body` are
 *   identifiers whose spelling is checked (FLOW020, FLOW021, FLOW026);
 * - binary operators are read flat and grouped by precedence afterwards.
 *
 * Recovery: a failing rule resynchronises at the next token that may follow it (usually a
 * separator) and returns a placeholder node; the tree of a file with syntax errors is discarded.
 */
import {
  EmbeddedActionsParser, EOF, type IParserErrorMessageProvider, type IRecognitionException, type IToken, type ParserMethod, type TokenType,
} from "chevrotain";
import type {
  Annotation, Arm, AuthorizeAttr, Callee, EntityDecl, EventDecl, Expr, FieldDecl, FieldInit, FlowFile,
  Handler, Ident, LiteralExpr, MapEventDecl, Member, Param, Range, Setting, StateDecl, Statement, Timer, TypeRef,
} from "./ast.js";
import { AstBuilder, describeToken } from "./build.js";
import { Codes } from "./codes.js";
import { MAX_DIAGNOSTICS, type Diagnostic } from "./diagnostics.js";
import {
  allTokens, Arrow, Assign, At, BinaryOp, Bang, Colon, Comma, Dot, FatArrow, Gt,
  Identifier, Kw, LBracket, LCurly, LParen, Lt, Minus, NumberLit, Question, RBracket, RCurly,
  RParen, Reserved, Sep, StringLit, unitWordMs,
} from "./lexer.js";
import { LineIndex } from "./positions.js";
import { buildDelivery } from "./send-delivery.js";

// --- error messages ----------------------------------------------------------------------------

function label(type: TokenType): string {
  return type.LABEL ?? type.name;
}

const RULE_WANTS: Record<string, string> = {
  topDecl: "a declaration (entity, event, state or map event)",
  member: "a state member (subscribe, call, enter, on, milestone, after or every)",
  callDecl: "'http \"endpoint\"', 'task \"type\"' or 'workflow Name' after 'call'",
  statement: "a statement",
  handlerItem: "a statement or an arm (when or default)",
  expression: "an expression",
  unary: "an expression",
  postfix: "an expression",
  primary: "an expression",
  onDecl: "'(', '.expired' or '.failed', then a handler '{ … }' or '-> State'",
  arm: "an arm",
  ifStmt: "'{' or 'if' after 'else'",
  literal: "a literal",
  stateDecl: "'state'",
  sendStmt: "'subject: …' or 'body: …'",
};

const messages: IParserErrorMessageProvider = {
  buildMismatchTokenMessage: ({ expected, actual }) =>
    expected === EOF
      ? `unexpected ${describeToken(actual)}: expected a declaration (entity, event, state or map event)`
      : `expected ${label(expected)}, found ${describeToken(actual)}`,
  buildNotAllInputParsedMessage: ({ firstRedundant }) =>
    `unexpected ${describeToken(firstRedundant)}: expected a declaration (entity, event, state or map event)`,
  buildNoViableAltMessage: ({ actual, ruleName }) =>
    `expected ${RULE_WANTS[ruleName] ?? "something else"}, found ${describeToken(actual[0])}`,
  buildEarlyExitMessage: ({ actual, ruleName }) =>
    `expected ${RULE_WANTS[ruleName] ?? "something else"}, found ${describeToken(actual[0])}`,
};

// --- helpers -----------------------------------------------------------------------------------

/**
 * One alternative of an OR. Passing the closure as an argument (not as an object property) keeps
 * it anonymous, so no per-call function naming happens when the code runs through esbuild/tsx.
 */
function alt<T>(f: () => T): { ALT: () => T } {
  return { ALT: f };
}

/**
 * An arm may follow the previous item on the same line (`when (a) -> X  default -> Y`, the
 * language reference §10's example): after `-> Name` nothing else can continue.
 */
const ARM_WORDS = new Set<TokenType>([Kw.when, Kw.default]);
/**
 * A bare `-> State` in a handler (FLOW028) follows the previous statement on one line: the lexer
 * joins a line starting with `->` to the one before. It is reported once, as the slip it is.
 */
const NO_SEP_BEFORE = new Set<TokenType>([...ARM_WORDS, Arrow]);

/** The words after `call` that name a callee by a string (v0.5; `workflow` is a keyword). */
const CALLEE_WORDS = new Set(["http", "task"]);

/** The words that start a timer member (contextual: identifiers elsewhere). */
const TIMER_WORDS = new Set(["after", "every"]);

/** The DSL index of `items()`'s MANY/OR/CONSUME/SUBRULE; no rule uses it otherwise. */
const ITEMS_IDX = 7;

/** Placeholders a rule returns after a recovered syntax error (such a tree is discarded). */
const NOWHERE: Range = { start: { line: 1, column: 1, offset: 0 }, end: { line: 1, column: 1, offset: 0 } };
const ERROR_EXPR: Expr = { kind: "name", name: "<error>", range: NOWHERE };
const ERROR_IDENT: Ident = { name: "<error>", range: NOWHERE };
const ERROR_TYPE: TypeRef = { kind: "type", name: "<error>", element: null, optional: false, range: NOWHERE };
const ERROR_STMT: Statement = { kind: "expr", expr: ERROR_EXPR, range: NOWHERE };
const ERROR_HANDLER: Handler = { statements: [], arms: [], range: NOWHERE };
const ERROR_ARM: Arm = { kind: "default", condition: null, body: null, target: ERROR_IDENT, range: NOWHERE };
const ERROR_MEMBER: Member = { kind: "enter", body: [], arms: [], range: NOWHERE };
const ERROR_LITERAL: LiteralExpr = { kind: "literal", type: "null", value: null, raw: "null", range: NOWHERE };
const ERROR_FILE: FlowFile = {
  kind: "file", name: ERROR_IDENT, params: [], entities: [], events: [], states: [], maps: [], range: NOWHERE,
};
const RECOVER = {
  expr: { recoveryValueFunc: () => ERROR_EXPR },
  stmt: { recoveryValueFunc: () => ERROR_STMT },
  member: { recoveryValueFunc: () => ERROR_MEMBER },
  handler: { recoveryValueFunc: () => ERROR_HANDLER },
};

type HandlerItem = { arm: Arm } | { stmt: Statement };
type EmailField = { name: Ident; value: Expr };
export type TopDecl =
  | { kind: "entity"; decl: EntityDecl }
  | { kind: "event"; decl: EventDecl }
  | { kind: "state"; decl: StateDecl }
  | { kind: "map"; decl: MapEventDecl }
  | null;

// --- the parser --------------------------------------------------------------------------------

/** Thrown out of the parser once MAX_DIAGNOSTICS syntax errors are recorded (see SAVE_ERROR). */
export class TooManySyntaxErrors extends Error {
  override name = "TooManySyntaxErrors";
}

class FlowParser extends EmbeddedActionsParser {
  private b = new AstBuilder(new LineIndex(""), []);

  constructor() {
    super(allTokens, { recoveryEnabled: true, maxLookahead: 3, errorMessageProvider: messages });
    this.performSelfAnalysis();
  }

  /** Points the builder at one source; `end()` lets go of it. */
  begin(lines: LineIndex, diags: Diagnostic[]): void {
    this.b = new AstBuilder(lines, diags);
  }

  /** True when every token of the input has been read. */
  atEnd(): boolean {
    return this.LA(1).tokenType === EOF;
  }

  end(): void {
    this.b = new AstBuilder(new LineIndex(""), []);
    this.input = [];
  }

  /**
   * How many syntax errors have been recorded so far. Chevrotain's public `errors` getter returns a
   * deep clone of the whole list, so reading `errors.length` once per item made a file with an
   * error on every line quadratic (issue 8 item 17: 200 KB took ~10 s, almost all in lodash's
   * clone). This reads the length of the list the recognizer appends to, without copying it.
   */
  private errorCount(): number {
    return (this as unknown as { _errors: unknown[] })._errors.length;
  }

  /**
   * Chevrotain calls this for every syntax error it records. After MAX_DIAGNOSTICS of them the
   * parse stops (parser.ts catches TooManySyntaxErrors): its recovery inside a repetition recurses
   * once per error, so an error on every line of a long file otherwise overflowed the stack.
   */
  SAVE_ERROR(error: IRecognitionException): IRecognitionException {
    const saved = (EmbeddedActionsParser.prototype as unknown as { SAVE_ERROR(e: IRecognitionException): IRecognitionException }).SAVE_ERROR.call(this, error);
    if (this.errorCount() >= MAX_DIAGNOSTICS) throw new TooManySyntaxErrors();
    return saved;
  }

  /**
   * The items of a body: `item { Sep item }`, where items are parsed by `rule` and handed to
   * `take`. Two items on one line without `;` are reported (FLOW010), except after an item that
   * already failed to parse. Uses DSL index ITEMS_IDX, so a rule may call it once.
   */
  private items<T>(rule: ParserMethod<[], T>, take: (item: T) => void, needSepFirst = false): void {
    let needSep = needSepFirst;
    this.many(ITEMS_IDX, () =>
      this.or(ITEMS_IDX, [
        alt(() => {
          this.consume(ITEMS_IDX, Sep);
          needSep = false;
        }),
        alt(() => {
          const first = this.LA(1);
          const errorsBefore = this.errorCount();
          const item = this.subrule(ITEMS_IDX, rule);
          this.ACTION(() => {
            const clean = this.errorCount() === errorsBefore;
            if (needSep && clean && !NO_SEP_BEFORE.has(first.tokenType)) this.b.missingSep(first);
            needSep = clean;
            take(item);
          });
        }),
      ]),
    );
  }

  // --- file and declarations ---

  file = this.RULE("file", (): FlowFile => {
    let kw: IToken | null = null;
    let name: IToken | null = null;
    let params: Param[] = [];
    let returns: IToken | null = null;
    const decls: TopDecl[] = [];
    this.OPTION(() => {
      kw = this.CONSUME(Kw.workflow);
      name = this.CONSUME(Identifier);
      this.OPTION2(() => {
        params = this.SUBRULE(this.paramList);
      });
      // v0.5 Results: `returns E` (a contextual word)
      this.OPTION3({
        GATE: () => this.LA(1).image === "returns",
        DEF: () => {
          this.CONSUME2(Identifier);
          returns = this.CONSUME3(Identifier);
        },
      });
    });
    this.items(this.topDecl, (d) => decls.push(d), kw !== null);
    return this.ACTION(() => {
      const whole = this.b.lines.range(0, this.b.lines.source.length);
      if (kw === null) {
        const first = this.b.lines.range(0, 0);
        this.b.error(Codes.ExpectedToken, "expected 'workflow Name(…)' at the start of the file", first);
      }
      const out: FlowFile = {
        kind: "file",
        name: name ? this.b.ident(name) : ERROR_IDENT,
        params,
        entities: [], events: [], states: [], maps: [],
        ...(returns ? { returns: this.b.ident(returns) } : {}),
        range: whole,
      };
      for (const d of decls) {
        if (d === null) continue;
        if (d.kind === "entity") out.entities.push(d.decl);
        else if (d.kind === "event") out.events.push(d.decl);
        else if (d.kind === "state") out.states.push(d.decl);
        else out.maps.push(d.decl);
      }
      return out;
    });
  }, { recoveryValueFunc: () => ERROR_FILE });

  /** One top-level declaration; the language server re-parses one alone (parser.ts parseDeclaration). */
  topDecl = this.RULE(
    "topDecl",
    (): TopDecl =>
      this.OR([
        alt(() => ({ kind: "entity" as const, decl: this.SUBRULE(this.entityDecl) })),
        alt(() => ({ kind: "event" as const, decl: this.SUBRULE(this.eventDecl) })),
        alt(() => ({ kind: "state" as const, decl: this.SUBRULE(this.stateDecl) })),
        alt(() => ({ kind: "map" as const, decl: this.SUBRULE(this.mapDecl) })),
      ]),
    { recoveryValueFunc: () => null },
  );

  private paramList = this.RULE(
    "paramList",
    (): Param[] => {
      const params: Param[] = [];
      this.CONSUME(LParen);
      this.OPTION(() => {
        params.push(this.SUBRULE(this.param));
        this.MANY(() => {
          this.CONSUME(Comma);
          params.push(this.SUBRULE2(this.param));
        });
        this.OPTION2(() => this.CONSUME2(Comma));
      });
      this.CONSUME(RParen);
      return params;
    },
    { recoveryValueFunc: () => [] },
  );

  /**
   * A name being declared or named again (parameters, `subscribe E(…)`, `on x(…)`): an Identifier,
   * or a reserved word, reported as FLOW029 with the fix (issue 30 item 10).
   */
  private declName = this.RULE(
    "declName",
    (): IToken =>
      this.OR([
        alt(() => this.CONSUME(Identifier)),
        alt(() => {
          const word = this.CONSUME(Reserved);
          // v0.5 Results: `state` may name a parameter, so that `event Done(state: string)` reads
          // the terminal state of a child's result (docs/language.md "Results")
          this.ACTION(() => {
            if (word.tokenType !== Kw.state) this.b.error(Codes.ReservedName, `\`${word.image}\` is a reserved word; choose another name`, this.b.tr(word));
          });
          return word;
        }),
      ]),
    { recoveryValueFunc: () => ({ image: "<error>", startOffset: 0 }) as IToken },
  );

  private param = this.RULE(
    "param",
    (): Param => {
      const name = this.SUBRULE(this.declName);
      this.CONSUME(Colon);
      const type = this.SUBRULE(this.typeRef);
      const annotations: Annotation[] = [];
      this.MANY(() => {
        annotations.push(this.SUBRULE(this.annotation));
      });
      return this.ACTION(() => {
        const last = annotations.length > 0 ? annotations[annotations.length - 1].range : type.range;
        return { name: this.b.ident(name), type, annotations, range: this.b.span(this.b.tr(name), last) };
      });
    },
    { recoveryValueFunc: () => ({ name: ERROR_IDENT, type: ERROR_TYPE, annotations: [], range: NOWHERE }) },
  );

  private typeRef = this.RULE(
    "typeRef",
    (): TypeRef => {
      const name = this.CONSUME(Identifier);
      let element: TypeRef | null = null;
      let close: IToken | null = null;
      let q: IToken | null = null;
      this.OPTION(() => {
        this.CONSUME(Lt);
        element = this.SUBRULE(this.typeRef);
        close = this.CONSUME(Gt);
      });
      this.OPTION2(() => {
        q = this.CONSUME(Question);
      });
      return this.ACTION(() => {
        const last = q ?? close ?? name;
        return { kind: "type", name: name.image, element, optional: q !== null, range: this.b.span(name, last) };
      });
    },
    { recoveryValueFunc: () => ERROR_TYPE },
  );

  private entityDecl = this.RULE(
    "entityDecl",
    (): EntityDecl => {
      const kw = this.CONSUME(Kw.entity);
      const name = this.CONSUME(Identifier);
      this.CONSUME(LCurly);
      const fields: FieldDecl[] = [];
      this.items(this.fieldDecl, (f) => fields.push(f));
      const close = this.CONSUME(RCurly);
      return this.ACTION(() => ({ kind: "entity", name: this.b.ident(name), fields, range: this.b.span(kw, close) }));
    },
    { recoveryValueFunc: () => ({ kind: "entity" as const, name: ERROR_IDENT, fields: [], range: NOWHERE }) },
  );

  private fieldDecl = this.RULE(
    "fieldDecl",
    (): FieldDecl => {
      const name = this.CONSUME(Identifier);
      this.CONSUME(Colon);
      const type = this.SUBRULE(this.typeRef);
      const annotations: Annotation[] = [];
      this.MANY(() => {
        annotations.push(this.SUBRULE(this.annotation));
      });
      return this.ACTION(() => {
        const last = annotations.length > 0 ? annotations[annotations.length - 1].range : type.range;
        return { name: this.b.ident(name), type, annotations, range: this.b.span(this.b.tr(name), last) };
      });
    },
    { recoveryValueFunc: () => ({ name: ERROR_IDENT, type: ERROR_TYPE, annotations: [], range: NOWHERE }) },
  );

  private annotation = this.RULE(
    "annotation",
    (): Annotation => {
      const at = this.CONSUME(At);
      const name = this.CONSUME(Identifier);
      let value: LiteralExpr | null = null;
      let word: IToken | null = null;
      const more: LiteralExpr[] = [];
      let close: IToken | null = null;
      // v0.5 (issue 42): `@label("…", de: "…", "pt-BR": "…")` — named language arguments
      const variants: { tag: IToken; value: LiteralExpr }[] = [];
      this.OPTION(() => {
        this.CONSUME(LParen);
        this.OR([
          alt(() => {
            value = this.SUBRULE(this.literal);
            // v0.5 constraints: `@oneOf("a", "b", …)`; v0.5 languages: `@label("…", de: "…", "pt-BR": "…")`;
            // a trailing comma allowed
            this.MANY(() => {
              this.CONSUME(Comma);
              this.OR2([
                alt(() => {
                  const tag = this.OR3([alt(() => this.CONSUME3(Identifier)), alt(() => this.CONSUME(StringLit))]);
                  this.CONSUME(Colon);
                  variants.push({ tag, value: this.SUBRULE3(this.literal) });
                }),
                alt(() => {
                  more.push(this.SUBRULE2(this.literal));
                }),
              ]);
            });
            this.OPTION2(() => this.CONSUME2(Comma));
          }),
          // v0.5 constraints: a bare word, `@max(today)`
          alt(() => (word = this.CONSUME2(Identifier))),
        ]);
        close = this.CONSUME(RParen);
      });
      return this.ACTION(() => ({
        name: this.b.ident(name),
        value,
        ...(word ? { word: this.b.ident(word) } : {}),
        ...(more.length > 0 ? { more } : {}),
        ...(variants.length > 0
          ? { variants: variants.map((v) => ({ tag: v.tag.tokenType === StringLit ? String(this.b.stringLiteral(v.tag).value) : v.tag.image, range: this.b.tr(v.tag), value: v.value })) }
          : {}),
        range: this.b.span(at, close ?? name),
      }));
    },
    { recoveryValueFunc: () => ({ name: ERROR_IDENT, value: ERROR_LITERAL, range: NOWHERE }) },
  );

  private literal = this.RULE("literal", (): LiteralExpr => {
    let minus: IToken | null = null;
    return this.OR([
      alt(() => {
        this.OPTION(() => {
          minus = this.CONSUME(Minus);
        });
        const t = this.CONSUME(NumberLit);
        return this.ACTION(() => this.b.numberLiteral(t, minus));
      }),
      alt(() => { const t = this.CONSUME(StringLit); return this.ACTION(() => this.b.stringLiteral(t)); }),
      alt(() => { const t = this.CONSUME(Kw.true); return this.ACTION(() => this.b.boolLiteral(t, true)); }),
      alt(() => { const t = this.CONSUME(Kw.false); return this.ACTION(() => this.b.boolLiteral(t, false)); }),
      alt(() => { const t = this.CONSUME(Kw.null); return this.ACTION(() => this.b.nullLiteral(t)); }),
    ]);
  }, { recoveryValueFunc: () => ERROR_LITERAL });

  private eventDecl = this.RULE("eventDecl", (): EventDecl => {
    const authorize: AuthorizeAttr[] = [];
    this.MANY(() => {
      authorize.push(this.SUBRULE(this.attribute));
      this.OPTION(() => this.CONSUME(Sep));
    });
    const kw = this.CONSUME(Kw.event);
    const name = this.CONSUME(Identifier);
    const params = this.SUBRULE(this.paramList);
    return this.ACTION(() => {
      const start = authorize.length > 0 ? authorize[0].range : this.b.tr(kw);
      const lastTok = this.LA(0);
      return { kind: "event", name: this.b.ident(name), params, authorize, range: this.b.span(start, lastTok) };
    });
  }, { recoveryValueFunc: () => ({ kind: "event" as const, name: ERROR_IDENT, params: [], authorize: [], range: NOWHERE }) });

  private attribute = this.RULE(
    "attribute",
    (): AuthorizeAttr => {
      const open = this.CONSUME(LBracket);
      const word = this.CONSUME(Identifier);
      this.CONSUME(LParen);
      const param = this.CONSUME2(Identifier);
      this.CONSUME(FatArrow);
      const body = this.SUBRULE(this.expression);
      this.CONSUME(RParen);
      const close = this.CONSUME(RBracket);
      return this.ACTION(() => {
        this.b.expectWord(word, "Authorize", "as the attribute of an event");
        return { param: this.b.ident(param), body, range: this.b.span(open, close) };
      });
    },
    { recoveryValueFunc: () => ({ param: ERROR_IDENT, body: ERROR_EXPR, range: NOWHERE }) },
  );

  private stateDecl = this.RULE("stateDecl", (): StateDecl => {
    let modifier: IToken | null = null;
    this.OPTION(() => {
      modifier = this.OR([alt(() => this.CONSUME(Kw.initial)), alt(() => this.CONSUME(Kw.terminal))]);
    });
    const kw = this.CONSUME(Kw.state);
    const name = this.CONSUME(Identifier);
    const members: Member[] = [];
    let close: IToken | null = null;
    this.OPTION2(() => {
      this.CONSUME(LCurly);
      this.items(this.member, (m) => {
        if (m) members.push(m);
      });
      close = this.CONSUME(RCurly);
    });
    return this.ACTION(() => {
      const m = modifier as IToken | null;
      return {
        kind: "state",
        name: this.b.ident(name),
        modifier: m === null ? null : (m.image as "initial" | "terminal"),
        members,
        range: this.b.span(m ?? kw, close ?? name),
      };
    });
  }, { recoveryValueFunc: () => ({ kind: "state" as const, name: ERROR_IDENT, modifier: null, members: [], range: NOWHERE }) });

  private member = this.RULE(
    "member",
    (): Member | null =>
      this.OR([
        alt(() => this.SUBRULE(this.subscribeDecl)),
        {
          GATE: () => this.LA(1).image === "call" && (CALLEE_WORDS.has(this.LA(2).image) || this.LA(2).tokenType === Kw.workflow),
          ALT: () => this.SUBRULE(this.callDecl),
        },
        alt(() => {
          const kw = this.CONSUME(Kw.enter);
          const body = this.SUBRULE(this.handlerBody);
          return this.ACTION(() => ({ kind: "enter" as const, body: body.statements, arms: body.arms, range: this.b.span(kw, body.range) }));
        }),
        alt(() => this.SUBRULE(this.onDecl)),
        alt(() => this.SUBRULE(this.milestoneDecl)),
        { GATE: () => TIMER_WORDS.has(this.LA(1).image), ALT: () => this.SUBRULE(this.timerDecl) },
      ]),
    { recoveryValueFunc: () => null },
  );

  /**
   * `after D handler` | `every P [after D] handler` (issue 19). `after` and `every` are contextual
   * words: identifiers everywhere else, so names such as `after` stay valid.
   */
  private timerDecl = this.RULE("timerDecl", (): Member => {
    const word = this.CONSUME(Identifier);
    const rest = this.SUBRULE(this.timerRest);
    return this.ACTION(() => this.buildTimer(word, rest));
  }, RECOVER.member);

  /**
   * What follows `after`/`every` in a timer, a state's member or (issue 43 item 3) a slot's
   * setting: the duration, an optional `after D` (for `every`), the handler.
   */
  private timerRest = this.RULE(
    "timerRest",
    (): { duration: Expr; second: IToken | null; first: Expr | null; handler: Handler } => {
      const duration = this.SUBRULE(this.expression);
      let second: IToken | null = null;
      let first: Expr | null = null;
      this.OPTION(() => {
        second = this.CONSUME(Identifier);
        first = this.SUBRULE2(this.expression);
      });
      const handler = this.SUBRULE(this.handlerOrArrow);
      return { duration, second, first, handler };
    },
    { recoveryValueFunc: () => ({ duration: ERROR_EXPR, second: null, first: null, handler: { statements: [], arms: [], range: NOWHERE } }) },
  );

  /** A `Timer` from its word and the rest; `after D after D2` is reported (UnexpectedToken). */
  private buildTimer(word: IToken, rest: { duration: Expr; second: IToken | null; first: Expr | null; handler: Handler }): Timer {
    const mode = word.image === "every" ? ("every" as const) : ("after" as const);
    const s = rest.second;
    if (s !== null) {
      if (mode === "after") this.b.error(Codes.UnexpectedToken, `'after D' takes one duration; write 'every P after D' for a repeating timer`, this.b.tr(s));
      else this.b.expectWord(s, "after", "after the period of 'every'");
    }
    return { kind: "timer" as const, mode, duration: rest.duration, first: mode === "every" ? rest.first : null, handler: rest.handler, range: this.b.span(word, rest.handler.range) };
  }

  private subscribeDecl = this.RULE("subscribeDecl", (): Member => {
    const kw = this.CONSUME(Kw.subscribe);
    const event = this.CONSUME(Identifier);
    const params: IToken[] = [];
    this.CONSUME(LParen);
    this.OPTION(() => {
      params.push(this.SUBRULE(this.declName));
      this.MANY(() => {
        this.CONSUME(Comma);
        params.push(this.SUBRULE2(this.declName));
      });
    });
    this.CONSUME(RParen);
    this.CONSUME(Kw.as);
    const alias = this.CONSUME4(Identifier);
    let forEach: { each: IToken; variable: IToken; iterable: Expr } | null = null;
    this.OPTION2(() => {
      this.CONSUME(Kw.for);
      const each = this.CONSUME5(Identifier);
      const variable = this.CONSUME6(Identifier);
      this.CONSUME(Kw.in);
      const iterable = this.SUBRULE(this.expression);
      forEach = { each, variable, iterable };
    });
    const settings: Setting[] = [];
    let close: IToken | null = null;
    this.OPTION3(() => {
      this.CONSUME(LCurly);
      this.items(this.setting, (s) => {
        if (s) settings.push(s);
      });
      close = this.CONSUME(RCurly);
    });
    return this.ACTION(() => {
      const fe = forEach as { each: IToken; variable: IToken; iterable: Expr } | null;
      if (fe) this.b.expectWord(fe.each, "each", "after 'for'");
      const end: Range | IToken = close ?? (fe ? fe.iterable.range : alias);
      return {
        kind: "subscribe",
        event: this.b.ident(event),
        params: params.map((p) => this.b.ident(p)),
        alias: this.b.ident(alias),
        forEach: fe ? { variable: this.b.ident(fe.variable), iterable: fe.iterable } : null,
        settings,
        range: this.b.span(kw, end),
      };
    });
  }, RECOVER.member);

  /**
   * `call http "endpoint" | task "type" | workflow Child  as x [returns E] [for each v in list]
   * [{ settings }]` (v0.5). `call`, `http`, `task` and `returns` are contextual words.
   */
  private callDecl = this.RULE("callDecl", (): Member => {
    const kw = this.CONSUME(Identifier);
    let callee: { word: IToken; name: IToken; child: boolean } | null = null;
    this.OR([
      alt(() => {
        const word = this.CONSUME2(Identifier);
        const name = this.CONSUME(StringLit);
        callee = { word, name, child: false };
      }),
      alt(() => {
        const word = this.CONSUME(Kw.workflow);
        const name = this.CONSUME3(Identifier);
        callee = { word, name, child: true };
      }),
    ]);
    this.CONSUME(Kw.as);
    const alias = this.CONSUME4(Identifier);
    let returns: IToken | null = null;
    this.OPTION({
      GATE: () => this.LA(1).image === "returns",
      DEF: () => {
        this.CONSUME5(Identifier);
        returns = this.CONSUME6(Identifier);
      },
    });
    let forEach: { each: IToken; variable: IToken; iterable: Expr } | null = null;
    this.OPTION2(() => {
      this.CONSUME(Kw.for);
      const each = this.CONSUME7(Identifier);
      const variable = this.CONSUME8(Identifier);
      this.CONSUME(Kw.in);
      const iterable = this.SUBRULE(this.expression);
      forEach = { each, variable, iterable };
    });
    const settings: Setting[] = [];
    let close: IToken | null = null;
    this.OPTION3(() => {
      this.CONSUME(LCurly);
      this.items(this.setting, (s) => {
        if (s) settings.push(s);
      });
      close = this.CONSUME(RCurly);
    });
    return this.ACTION(() => {
      const c = callee as unknown as { word: IToken; name: IToken; child: boolean };
      const fe = forEach as { each: IToken; variable: IToken; iterable: Expr } | null;
      if (fe) this.b.expectWord(fe.each, "each", "after 'for'");
      const r = returns as IToken | null;
      const calleeRange = this.b.span(c.word, c.name);
      let target: Callee;
      if (c.child) target = { type: "workflow", workflow: this.b.ident(c.name), range: calleeRange };
      else {
        const name = this.b.stringLiteral(c.name).value as string;
        if (c.word.image === "task") target = { type: "task", task: name, range: calleeRange };
        else {
          if (c.word.image !== "http" && !c.word.isInsertedInRecovery) {
            this.b.error(Codes.ExpectedContextualWord, `expected 'http', 'task' or 'workflow' after 'call', found '${c.word.image}'`, this.b.tr(c.word));
          }
          target = { type: "http", endpoint: name, range: calleeRange };
        }
      }
      const end: Range | IToken = close ?? (fe ? fe.iterable.range : (r ?? alias));
      return {
        kind: "call" as const,
        callee: target,
        alias: this.b.ident(alias),
        returns: r ? this.b.ident(r) : null,
        forEach: fe ? { variable: this.b.ident(fe.variable), iterable: fe.iterable } : null,
        settings,
        range: this.b.span(kw, end),
      };
    });
  }, RECOVER.member);

  /**
   * `{ name: expr, … }` — the fields of `Input { … }` and of `result { … }` (v0.5), separated by
   * a newline, `;` or `,`. Two fields on one line without a separator are FLOW010.
   */
  private fieldBlock = this.RULE(
    "fieldBlock",
    (): { fields: FieldInit[]; range: Range } => {
      const open = this.CONSUME(LCurly);
      const fields: FieldInit[] = [];
      let needSep = false;
      this.MANY(() =>
        this.OR([
          alt(() => { this.CONSUME(Sep); needSep = false; }),
          alt(() => { this.CONSUME(Comma); needSep = false; }),
          alt(() => {
            const first = this.LA(1);
            const errorsBefore = this.errorCount();
            const f = this.SUBRULE(this.fieldInit);
            this.ACTION(() => {
              if (needSep && this.errorCount() === errorsBefore) this.b.missingSep(first);
              needSep = this.errorCount() === errorsBefore;
              fields.push(f);
            });
          }),
        ]),
      );
      const close = this.CONSUME(RCurly);
      return this.ACTION(() => ({ fields, range: this.b.span(open, close) }));
    },
    { recoveryValueFunc: () => ({ fields: [], range: NOWHERE }) },
  );

  private fieldInit = this.RULE(
    "fieldInit",
    (): FieldInit => {
      const name = this.SUBRULE(this.declName);
      this.CONSUME(Colon);
      const value = this.SUBRULE(this.expression);
      return this.ACTION(() => ({ name: this.b.ident(name), value, range: this.b.span(this.b.tr(name), value.range) }));
    },
    { recoveryValueFunc: () => ({ name: ERROR_IDENT, value: ERROR_EXPR, range: NOWHERE }) },
  );

  private setting = this.RULE(
    "setting",
    (): Setting | null => {
      const name = this.CONSUME(Identifier);
      return this.OR([
        {
          // issue 43 item 3: a timer on a slot, `after D { … }` / `every P [after D] { … }`
          GATE: () => TIMER_WORDS.has(name.image) && this.LA(1).tokenType !== Colon && this.LA(1).tokenType !== LCurly,
          IGNORE_AMBIGUITIES: true,
          ALT: () => {
            const rest = this.SUBRULE2(this.timerRest);
            return this.ACTION(() => this.buildTimer(name, rest));
          },
        },
        {
          // `Input { name: expr, … }` (v0.5 calls): the setting with a block of fields
          GATE: () => name.image === "Input",
          IGNORE_AMBIGUITIES: true,
          ALT: () => {
            const block = this.SUBRULE(this.fieldBlock);
            return this.ACTION(() => this.b.buildFieldsSetting(name, block.fields, block.range));
          },
        },
        alt(() => {
          // `each { … }` (v0.4): the one setting with a block
          const block = this.SUBRULE(this.block);
          return this.ACTION(() => this.b.buildBlockSetting(name, block));
        }),
        alt(() => {
          this.CONSUME(Colon);
          const exprs: Expr[] = [this.SUBRULE(this.expression)];
          // v0.5 (issue 42): `, de: expr` — a language variant, told from another expression by the ':' after its tag
          const variants: { tag: IToken; expr: Expr; afterElse: boolean }[] = [];
          let wording: { kw: IToken; expr: Expr } | null = null;
          const isVariant = () => (this.LA(2).tokenType === Identifier || this.LA(2).tokenType === StringLit) && this.LA(3).tokenType === Colon;
          this.MANY({
            GATE: () => !isVariant(),
            DEF: () => {
              this.CONSUME(Comma);
              exprs.push(this.SUBRULE2(this.expression));
            },
          });
          this.MANY2({
            GATE: isVariant,
            DEF: () => {
              this.CONSUME2(Comma);
              const tag = this.OR2([alt(() => this.CONSUME2(Identifier)), alt(() => this.CONSUME(StringLit))]);
              this.CONSUME2(Colon);
              variants.push({ tag, expr: this.SUBRULE4(this.expression), afterElse: false });
            },
          });
          this.OPTION(() => {
            const kw = this.CONSUME(Kw.else);
            wording = { kw, expr: this.SUBRULE3(this.expression) };
            this.MANY3({
              GATE: isVariant,
              DEF: () => {
                this.CONSUME3(Comma);
                const tag = this.OR3([alt(() => this.CONSUME3(Identifier)), alt(() => this.CONSUME2(StringLit))]);
                this.CONSUME3(Colon);
                variants.push({ tag, expr: this.SUBRULE5(this.expression), afterElse: true });
              },
            });
          });
          return this.ACTION(() => this.b.buildSetting(name, exprs, wording, variants));
        }),
      ]);
    },
    { recoveryValueFunc: () => null },
  );

  private onDecl = this.RULE("onDecl", (): Member => {
    const kw = this.CONSUME(Kw.on);
    const alias = this.CONSUME(Identifier);
    const params: IToken[] = [];
    let expired: IToken | null = null;
    this.OR([
      alt(() => {
        this.CONSUME(LParen);
        this.OPTION(() => {
          params.push(this.SUBRULE(this.declName));
          this.MANY(() => {
            this.CONSUME(Comma);
            params.push(this.SUBRULE2(this.declName));
          });
        });
        this.CONSUME(RParen);
      }),
      alt(() => {
        this.CONSUME(Dot);
        expired = this.CONSUME4(Identifier);
      }),
    ]);
    const handler = this.SUBRULE(this.handlerOrArrow);
    return this.ACTION(() => {
      const range = this.b.span(kw, handler.range);
      const exp = expired as IToken | null;
      if (exp !== null && exp.image === "failed") {
        // v0.5 calls: `on x.failed`
        return { kind: "onFailed" as const, alias: this.b.ident(alias), handler, range };
      }
      if (exp !== null) {
        this.b.expectWord(exp, "expired", `after 'on ${alias.image}.' (or 'failed', for a call)`);
        return { kind: "onExpired" as const, alias: this.b.ident(alias), handler, range };
      }
      return { kind: "on" as const, alias: this.b.ident(alias), params: params.map((p) => this.b.ident(p)), handler, range };
    });
  }, RECOVER.member);

  private handlerOrArrow = this.RULE(
    "handlerOrArrow",
    (): Handler =>
      this.OR([
        alt(() => this.SUBRULE(this.handlerBody)),
        alt(() => {
          const arrow = this.CONSUME(Arrow);
          const target = this.CONSUME(Identifier);
          return this.ACTION(() => {
            const range = this.b.span(arrow, target);
            const arm: Arm = { kind: "default", condition: null, body: null, target: this.b.ident(target), range };
            return { statements: [], arms: [arm], range: { start: range.start, end: range.end } };
          });
        }),
      ]),
    { recoveryValueFunc: () => ERROR_HANDLER },
  );

  private handlerBody = this.RULE("handlerBody", (): Handler => {
    const open = this.CONSUME(LCurly);
    const statements: Statement[] = [];
    const arms: Arm[] = [];
    this.items(this.handlerItem, (item) => {
      if ("arm" in item) arms.push(item.arm);
      else if (arms.length > 0) {
        this.b.error(Codes.StatementAfterArm, "statements come before the arms (when/default) of a handler", item.stmt.range);
      } else statements.push(item.stmt);
    });
    const close = this.CONSUME(RCurly);
    return this.ACTION(() => ({ statements, arms, range: this.b.span(open, close) }));
  }, RECOVER.handler);

  private handlerItem = this.RULE(
    "handlerItem",
    (): HandlerItem =>
      this.OR([
        alt(() => ({ arm: this.SUBRULE(this.arm) })),
        alt(() => ({ stmt: this.SUBRULE(this.statement) })),
        alt(() => {
          // `-> State` alone: a slip for `default -> State` (issue 30 item 10)
          const arrow = this.CONSUME(Arrow);
          const target = this.CONSUME(Identifier);
          return this.ACTION(() => {
            const range = this.b.span(arrow, target);
            this.b.error(
              Codes.BareArrow,
              `'-> ${target.image}' alone is not a statement: a handler moves on with \`default -> ${target.image}\``,
              range,
            );
            return { arm: { kind: "default" as const, condition: null, body: null, target: this.b.ident(target), range } };
          });
        }),
      ]),
    { recoveryValueFunc: () => ({ stmt: ERROR_STMT }) },
  );

  private arm = this.RULE("arm", (): Arm => {
    let kw: IToken | null = null;
    let condition: Expr | null = null;
    this.OR([
      alt(() => {
        kw = this.CONSUME(Kw.when);
        this.CONSUME(LParen);
        condition = this.SUBRULE(this.expression);
        this.CONSUME(RParen);
      }),
      alt(() => { kw = this.CONSUME(Kw.default); }),
    ]);
    let body: Statement[] | null = null;
    this.OPTION(() => {
      body = this.SUBRULE(this.block).statements;
    });
    this.CONSUME(Arrow);
    const target = this.CONSUME(Identifier);
    return this.ACTION(() => {
      const k = kw as unknown as IToken;
      return {
        kind: k.image === "when" ? ("when" as const) : ("default" as const),
        condition,
        body,
        target: this.b.ident(target),
        range: this.b.span(k, target),
      };
    });
  }, { recoveryValueFunc: () => ERROR_ARM });

  private milestoneDecl = this.RULE("milestoneDecl", (): Member => {
    const kw = this.CONSUME(Kw.milestone);
    const name = this.CONSUME(Identifier);
    this.CONSUME(Kw.when);
    this.CONSUME(LParen);
    const condition = this.SUBRULE(this.expression);
    this.CONSUME(RParen);
    const body = this.SUBRULE(this.block);
    return this.ACTION(() => ({
      kind: "milestone" as const,
      name: this.b.ident(name),
      condition,
      body: body.statements,
      range: this.b.span(kw, body.range),
    }));
  }, RECOVER.member);

  private mapDecl = this.RULE("mapDecl", (): MapEventDecl => {
    const kw = this.CONSUME(Kw.map);
    this.CONSUME(Kw.event);
    const from = this.CONSUME(Identifier);
    const fromParams = this.SUBRULE(this.paramList);
    this.CONSUME(Kw.to);
    const to = this.CONSUME2(Identifier);
    this.CONSUME(LParen);
    const args: { name: Ident; value: Expr; range: Range }[] = [];
    this.OPTION(() => {
      args.push(this.SUBRULE(this.mapArg));
      this.MANY(() => {
        this.CONSUME(Comma);
        args.push(this.SUBRULE2(this.mapArg));
      });
      this.OPTION2(() => this.CONSUME2(Comma));
    });
    const close = this.CONSUME(RParen);
    return this.ACTION(() => ({
      kind: "map",
      from: this.b.ident(from),
      fromParams,
      to: this.b.ident(to),
      args,
      range: this.b.span(kw, close),
    }));
  }, { recoveryValueFunc: () => ({ kind: "map" as const, from: ERROR_IDENT, fromParams: [], to: ERROR_IDENT, args: [], range: NOWHERE }) });

  private mapArg = this.RULE(
    "mapArg",
    (): { name: Ident; value: Expr; range: Range } => {
      const name = this.CONSUME(Identifier);
      this.CONSUME(Colon);
      const value = this.SUBRULE(this.expression);
      return this.ACTION(() => ({ name: this.b.ident(name), value, range: this.b.span(this.b.tr(name), value.range) }));
    },
    { recoveryValueFunc: () => ({ name: ERROR_IDENT, value: ERROR_EXPR, range: NOWHERE }) },
  );

  // --- statements ---

  private block = this.RULE(
    "block",
    (): { statements: Statement[]; range: Range } => {
      const open = this.CONSUME(LCurly);
      const statements: Statement[] = [];
      this.items(this.statement, (s) => statements.push(s));
      const close = this.CONSUME(RCurly);
      return this.ACTION(() => ({ statements, range: this.b.span(open, close) }));
    },
    { recoveryValueFunc: () => ({ statements: [], range: NOWHERE }) },
  );

  private statement = this.RULE(
    "statement",
    (): Statement =>
      this.OR([
        alt(() => this.SUBRULE(this.letStmt)),
        alt(() => this.SUBRULE(this.sendStmt)),
        alt(() => this.SUBRULE(this.dropStmt)),
        alt(() => this.SUBRULE(this.ifStmt)),
        {
          // `result { … }` (v0.5 Results): `result` is a contextual word, a name elsewhere
          GATE: () => this.LA(1).image === "result" && this.LA(2).tokenType === LCurly,
          ALT: () => this.SUBRULE(this.resultStmt),
        },
        alt(() => this.SUBRULE(this.exprOrAssign)),
      ]),
    { recoveryValueFunc: () => ERROR_STMT },
  );

  private resultStmt = this.RULE("resultStmt", (): Statement => {
    const kw = this.CONSUME(Identifier);
    const block = this.SUBRULE(this.fieldBlock);
    return this.ACTION(() => ({ kind: "result" as const, fields: block.fields, range: this.b.span(kw, block.range) }));
  }, RECOVER.stmt);

  private letStmt = this.RULE("letStmt", (): Statement => {
    const kw = this.CONSUME(Kw.let);
    const name = this.CONSUME(Identifier);
    this.CONSUME(Assign);
    const value = this.SUBRULE(this.expression);
    return this.ACTION(() => ({ kind: "let" as const, name: this.b.ident(name), value, range: this.b.span(kw, value.range) }));
  }, RECOVER.stmt);

  private sendStmt = this.RULE("sendStmt", (): Statement => {
    const kw = this.CONSUME(Kw.send);
    const word = this.CONSUME(Identifier);
    this.CONSUME(Kw.to);
    const to = this.SUBRULE(this.expression);
    const open = this.CONSUME(LCurly);
    const fields: EmailField[] = [];
    let needSep = false;
    this.MANY(() =>
      this.OR([
        alt(() => { this.CONSUME(Sep); needSep = false; }),
        alt(() => { this.CONSUME(Comma); needSep = false; }),
        alt(() => {
          const first = this.LA(1);
          const errorsBefore = this.errorCount();
          const f = this.SUBRULE(this.emailField);
          this.ACTION(() => {
            if (needSep && this.errorCount() === errorsBefore) this.b.missingSep(first);
            needSep = this.errorCount() === errorsBefore;
            fields.push(f);
          });
        }),
      ]),
    );
    const close = this.CONSUME(RCurly);
    return this.ACTION(() => {
      if (word.image === "webhook" || word.image === "message") {
        // issue 18: the delivery statements share this shape (lang/send-delivery.ts)
        const err = (code: string, message: string, r: Range) => this.b.error(code, message, r);
        return buildDelivery({ error: err, word: word.image, to, fields, body: this.b.span(open, close), range: this.b.span(kw, close), missing: ERROR_EXPR });
      }
      this.b.expectWord(word, "email", "after 'send'");
      const range = this.b.span(kw, close);
      const given: Partial<Record<"subject" | "body" | "replyTo" | "cc", Expr>> = {};
      for (const f of fields) {
        const name = f.name.name;
        if (name !== "subject" && name !== "body" && name !== "replyTo" && name !== "cc") {
          this.b.error(Codes.SendEmailFields, `unknown field '${name}': an email has 'subject' and 'body', and may have 'replyTo' and 'cc'`, f.name.range);
        } else if (given[name] !== undefined) {
          this.b.error(Codes.SendEmailFields, `'${name}' is given twice`, f.name.range);
        } else given[name] = f.value;
      }
      const subject = given.subject ?? null;
      const body = given.body ?? null;
      const missing = [subject === null ? "subject" : null, body === null ? "body" : null].filter((x) => x !== null);
      if (missing.length > 0) {
        this.b.error(Codes.SendEmailFields, `the email needs ${missing.map((m) => `'${m}'`).join(" and ")}`, this.b.span(open, close));
      }
      return {
        kind: "sendEmail" as const, to, subject: subject ?? ERROR_EXPR, body: body ?? ERROR_EXPR,
        ...(given.replyTo ? { replyTo: given.replyTo } : {}), ...(given.cc ? { cc: given.cc } : {}), range,
      };
    });
  }, RECOVER.stmt);

  private emailField = this.RULE(
    "emailField",
    (): EmailField => {
      const name = this.CONSUME(Identifier);
      this.CONSUME(Colon);
      const value = this.SUBRULE(this.expression);
      return this.ACTION(() => ({ name: this.b.ident(name), value }));
    },
    { recoveryValueFunc: () => ({ name: { name: "subject", range: NOWHERE }, value: ERROR_EXPR }) },
  );

  private dropStmt = this.RULE("dropStmt", (): Statement => {
    const kw = this.CONSUME(Kw.drop);
    const word = this.CONSUME(Identifier);
    const alias = this.CONSUME2(Identifier);
    return this.ACTION(() => {
      this.b.expectWord(word, "slot", "after 'drop'");
      return { kind: "dropSlot" as const, alias: this.b.ident(alias), range: this.b.span(kw, alias) };
    });
  }, RECOVER.stmt);

  private ifStmt = this.RULE("ifStmt", (): Statement => {
    const kw = this.CONSUME(Kw.if);
    this.CONSUME(LParen);
    const condition = this.SUBRULE(this.expression);
    this.CONSUME(RParen);
    const then = this.SUBRULE(this.block);
    let elseBody: Statement[] | null = null;
    let end: Range = then.range;
    this.OPTION(() => {
      this.CONSUME(Kw.else);
      this.OR([
        alt(() => {
          const b = this.SUBRULE2(this.block);
          elseBody = b.statements;
          end = b.range;
        }),
        alt(() => {
          const nested = this.SUBRULE(this.ifStmt);
          elseBody = [nested];
          end = nested.range;
        }),
      ]);
    });
    return this.ACTION(() => ({
      kind: "if" as const,
      condition,
      then: then.statements,
      else: elseBody,
      range: this.b.span(kw, end),
    }));
  }, RECOVER.stmt);

  private exprOrAssign = this.RULE("exprOrAssign", (): Statement => {
    const left = this.SUBRULE(this.expression);
    let value: Expr | null = null;
    this.OPTION(() => {
      this.CONSUME(Assign);
      value = this.SUBRULE2(this.expression);
    });
    return this.ACTION(() => {
      const v = value as Expr | null;
      if (v === null) return { kind: "expr" as const, expr: left, range: left.range };
      const target = this.b.assignTarget(left);
      const range = this.b.span(left.range, v.range);
      if (target === null) return { kind: "expr" as const, expr: v, range };
      return { kind: "assign" as const, target, value: v, range };
    });
  }, RECOVER.stmt);

  // --- expressions ---

  private expression = this.RULE(
    "expression",
    (): Expr => {
      const first = this.SUBRULE(this.unary);
      const rest: { op: IToken; right: Expr }[] = [];
      this.MANY(() => {
        const op = this.CONSUME(BinaryOp);
        const right = this.SUBRULE2(this.unary);
        rest.push({ op, right });
      });
      return this.ACTION(() => this.b.binaryTree(first, rest));
    },
    { recoveryValueFunc: () => ERROR_EXPR },
  );

  private unary = this.RULE(
    "unary",
    (): Expr =>
      this.OR([
        alt(() => {
          const op = this.OR2([alt(() => this.CONSUME(Bang)), alt(() => this.CONSUME(Minus))]);
          const operand = this.SUBRULE(this.unary);
          return this.ACTION(() => ({
            kind: "unary" as const,
            op: op.image as "!" | "-",
            operand,
            range: this.b.span(op, operand.range),
          }));
        }),
        alt(() => this.SUBRULE(this.postfix)),
      ]),
    { recoveryValueFunc: () => ERROR_EXPR },
  );

  private postfix = this.RULE("postfix", (): Expr => {
    let expr = this.SUBRULE(this.primary);
    this.MANY(() =>
      this.OR([
        alt(() => {
          this.CONSUME(Dot);
          const prop = this.CONSUME(Identifier);
          this.ACTION(() => {
            expr = { kind: "member", object: expr, property: this.b.ident(prop), range: this.b.span(expr.range, prop) };
          });
        }),
        alt(() => {
          this.CONSUME(LParen);
          const args: Expr[] = [];
          this.OPTION(() => {
            args.push(this.SUBRULE(this.expression));
            this.MANY2(() => {
              this.CONSUME(Comma);
              args.push(this.SUBRULE2(this.expression));
            });
          });
          const close = this.CONSUME(RParen);
          this.ACTION(() => {
            expr = { kind: "call", callee: expr, args, range: this.b.span(expr.range, close) };
          });
        }),
      ]),
    );
    return expr;
  }, RECOVER.expr);

  private primary = this.RULE(
    "primary",
    (): Expr =>
      this.OR([
        alt(() => {
          const t = this.CONSUME(NumberLit);
          let unit: IToken | null = null;
          this.OPTION3({
            // `3 days`: a number, a space, a unit word (issue 30 item 10); never valid otherwise
            GATE: () => this.LA(1).tokenType === Identifier && unitWordMs(this.LA(1).image) !== null,
            DEF: () => {
              unit = this.CONSUME3(Identifier);
            },
          });
          return this.ACTION(() => (unit ? this.b.spacedDuration(t, unit, null) : this.b.numberLiteral(t, null)));
        }),
        alt(() => { const t = this.CONSUME(StringLit); return this.ACTION(() => this.b.stringLiteral(t)); }),
        alt(() => { const t = this.CONSUME(Kw.true); return this.ACTION(() => this.b.boolLiteral(t, true)); }),
        alt(() => { const t = this.CONSUME(Kw.false); return this.ACTION(() => this.b.boolLiteral(t, false)); }),
        alt(() => { const t = this.CONSUME(Kw.null); return this.ACTION(() => this.b.nullLiteral(t)); }),
        alt(() => {
          const t = this.CONSUME(Identifier);
          return this.ACTION(() => ({ kind: "name" as const, name: t.image, range: this.b.tr(t) }));
        }),
        alt(() => {
          // v0.5 Results: `state`, a parameter of the event a child's result is read as
          const t = this.CONSUME(Kw.state);
          return this.ACTION(() => ({ kind: "name" as const, name: t.image, range: this.b.tr(t) }));
        }),
        alt(() => {
          const open = this.CONSUME(LParen);
          const inner = this.SUBRULE(this.expression);
          const close = this.CONSUME(RParen);
          return this.ACTION(() => ({ ...inner, range: this.b.span(open, close) }) as Expr);
        }),
        alt(() => {
          const open = this.CONSUME(LBracket);
          const elements: Expr[] = [];
          this.OPTION(() => {
            elements.push(this.SUBRULE2(this.expression));
            this.MANY(() => {
              this.CONSUME(Comma);
              elements.push(this.SUBRULE3(this.expression));
            });
            this.OPTION2(() => this.CONSUME2(Comma));
          });
          const close = this.CONSUME(RBracket);
          return this.ACTION(() => ({ kind: "list" as const, elements, range: this.b.span(open, close) }));
        }),
      ]),
    { recoveryValueFunc: () => ERROR_EXPR },
  );
}

let instance: FlowParser | null = null;

/** The one parser of the process (Chevrotain parsers are costly to build and reusable). */
export function getParser(): FlowParser {
  instance ??= new FlowParser();
  return instance;
}
