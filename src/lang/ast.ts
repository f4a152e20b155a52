/**
 * The syntax tree of a `.flow` file (the flow language v1, see docs/language.md).
 *
 * Every node carries a `range` into its source so that diagnostics can point at it. The tree is
 * plain JSON (no classes, no cycles): the checker annotates it and the compiled form stores it,
 * so the engine runs a deployed version without parsing its source again.
 *
 * Positions: `line` and `column` are 1-based and count UTF-16 code units; `offset` is the 0-based
 * index into the source string. `end` is exclusive.
 */

export interface Position {
  line: number;
  column: number;
  offset: number;
}

export interface Range {
  start: Position;
  end: Position;
}

export interface Ident {
  name: string;
  range: Range;
}

/** Names of the built-in scalar types; anything else in a type position names an entity. */
export type ScalarTypeName = "bool" | "int" | "decimal" | "string" | "datetime" | "date" | "duration" | "principal";

export interface TypeRef {
  kind: "type";
  /** A scalar name, "list", or an entity name. */
  name: ScalarTypeName | "list" | string;
  /** The element type when `name` is "list". */
  element: TypeRef | null;
  optional: boolean;
  range: Range;
}

export interface Param {
  name: Ident;
  type: TypeRef;
  /** `@label("…")`, `@help("…")`, `@multiline` — the responder page's wording; event parameters only. */
  annotations: Annotation[];
  range: Range;
}

// ---------------------------------------------------------------------------------------------
// Declarations

export interface FlowFile {
  kind: "file";
  name: Ident;
  params: Param[];
  entities: EntityDecl[];
  events: EventDecl[];
  states: StateDecl[];
  maps: MapEventDecl[];
  /**
   * `workflow W(…) returns E` (v0.5 Results): the event whose parameters a `result { … }` sets;
   * absent when the workflow declares no result (and in trees parsed before v0.5).
   */
  returns?: Ident;
  range: Range;
}

export interface Annotation {
  name: Ident;
  /** The literal in `@name(literal)`; null for a bare `@name` (such as `@multiline`) or `@name(word)`. */
  value: LiteralExpr | null;
  /**
   * v0.5 constraints (issue 43): a bare word as the only argument, `@max(today)`; absent otherwise
   * (and in trees made before it existed).
   */
  word?: Ident;
  /** v0.5 constraints: the literals after the first, `@oneOf("a", "b", "c")`; absent when none. */
  more?: LiteralExpr[];
  /** `@label("…", de: "…")` (v0.5, issue 42): named language arguments after the literal; absent without them. */
  variants?: { tag: string; range: Range; value: LiteralExpr }[];
  range: Range;
}

export interface FieldDecl {
  name: Ident;
  type: TypeRef;
  annotations: Annotation[];
  range: Range;
}

export interface EntityDecl {
  kind: "entity";
  name: Ident;
  fields: FieldDecl[];
  range: Range;
}

/** `[Authorize(p => expr)]`: a `principal => bool` predicate, evaluated on ordinary raises only. */
export interface AuthorizeAttr {
  param: Ident;
  body: Expr;
  range: Range;
}

export interface EventDecl {
  kind: "event";
  name: Ident;
  params: Param[];
  authorize: AuthorizeAttr[];
  range: Range;
}

export interface StateDecl {
  kind: "state";
  name: Ident;
  modifier: "initial" | "terminal" | null;
  /** Members in source order. */
  members: Member[];
  range: Range;
}

export type Member = Subscribe | CallDecl | EnterBlock | OnEvent | OnExpired | OnFailed | Milestone | Timer;

/**
 * Who answers a `call` (v0.5, language reference "A call is a slot that a machine answers"):
 * `http "endpoint"` (an endpoint of kind `http`), `task "type"` (the user's own task workers) or
 * `workflow Child` (a child run of another deployed workflow). `range` covers the callee's words.
 */
export type Callee =
  | { type: "http"; endpoint: string; range: Range }
  | { type: "task"; task: string; range: Range }
  | { type: "workflow"; workflow: Ident; range: Range };

/**
 * `call <callee> as x [returns E] [for each v in list] { settings }` (v0.5): a state member like
 * `subscribe` that creates a slot of the state, answered by a machine instead of a person. Its
 * settings are the call settings (`Method`, `Path`, `Input`, `Timeout`, `Attempts`) and the slot
 * settings `After`, `Deadline`, `Quorum`, `each`; the checker refuses the others (FLOW371).
 */
export interface CallDecl {
  kind: "call";
  callee: Callee;
  alias: Ident;
  /** `returns E`: the event whose parameters the answer carries; null: an answer without parameters. */
  returns: Ident | null;
  forEach: { variable: Ident; iterable: Expr } | null;
  settings: Setting[];
  range: Range;
}

/** The HTTP methods of `Method:` (v0.5 calls). */
export const HTTP_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** One `name: expr` of an `Input { … }` setting or a `result { … }` statement (v0.5). */
export interface FieldInit {
  name: Ident;
  value: Expr;
  range: Range;
}

/**
 * One language variant of a text (v0.5, issue 42): `de: expr` after `Title`, `Intro` or the
 * wording of `Requires … else`; `tag` as written (a bare word, or a quoted string's value).
 */
export interface LangVariant {
  tag: string;
  /** The tag's range. */
  range: Range;
  expr: Expr;
}

export interface Subscribe {
  kind: "subscribe";
  event: Ident;
  params: Ident[];
  alias: Ident;
  forEach: { variable: Ident; iterable: Expr } | null;
  settings: Setting[];
  range: Range;
}

export type Setting =
  | { kind: "candidates"; matchers: Expr[]; range: Range }
  /**
   * `Requires: expr [else wording]` — `wording` (a `string`/`string?` expression, null when not
   * given) is the refusal's text when `expr` does not hold (issue 30 item 8).
   */
  | { kind: "requires"; expr: Expr; wording: Expr | null; range: Range; variants?: LangVariant[] }
  | { kind: "after"; aliases: Ident[]; range: Range }
  | { kind: "deadline"; expr: Expr; range: Range }
  /** `Title: expr` / `Intro: expr` — the responder page's heading and text (a `string` or `string?`). */
  | { kind: "title"; expr: Expr; range: Range; variants?: LangVariant[] }
  | { kind: "intro"; expr: Expr; range: Range; variants?: LangVariant[] }
  /** `Language: expr` (v0.5, issue 42) — the responder's language, a BCP 47 tag (`string`/`string?`). */
  | { kind: "language"; expr: Expr; range: Range }
  /** `Quorum: k` — an `int`; only on a fanned-out slot: done once k elements are completed (v0.4 Many responders). */
  | { kind: "quorum"; expr: Expr; range: Range }
  /**
   * `each { … }` — only on a fanned-out slot: statements run once per element when its slot is
   * created, the fan-out variable in scope and the alias standing for that element's slot.
   */
  | { kind: "each"; body: Statement[]; range: Range }
  /** `Forwardable: expr` — a bool: whether the holder of the slot's link may forward it (v0.4). */
  | { kind: "forwardable"; expr: Expr; range: Range }
  /** `Method: POST` (v0.5; `call http` only): the word as written (FLOW373 unless one of HTTP_METHODS). */
  | { kind: "method"; method: Ident; range: Range }
  /** `Path: expr` (v0.5; `call http` only): a `string` appended to the endpoint's URL. */
  | { kind: "path"; expr: Expr; range: Range }
  /** `Input { name: expr, … }` (v0.5; calls only): the JSON object sent (the child's input, the task's input). */
  | { kind: "input"; fields: FieldInit[]; range: Range }
  /** `Timeout: expr` (v0.5; calls only): a `duration`, per attempt. */
  | { kind: "timeout"; expr: Expr; range: Range }
  /** `Attempts: expr` (v0.5; calls only): an `int` ≥ 1, attempts in all. */
  | { kind: "attempts"; expr: Expr; range: Range }
  /**
   * `after D { … }` / `every P [after D] { … }` inside a `subscribe` or `call` (issue 43 item 3,
   * language reference "Timers on a slot, per element"): runs while the slot (each element, when
   * fanned out) is open, its clock starting when it opens.
   */
  | Timer;

export interface EnterBlock {
  kind: "enter";
  body: Statement[];
  /**
   * Routing on entry (language reference §10): the arms that end the block, evaluated after its
   * statements; the first that holds moves the run on in the same step. Empty when none.
   */
  arms: Arm[];
  range: Range;
}

/**
 * A timer member of a state (language reference §10; issue 19): `after D { … }` runs once, D after
 * the state was entered; `every P [after D] { … }` runs every P while the run stays, the first
 * time P (or D) after entry. Both expressions are `duration`s evaluated when the state is entered.
 */
export interface Timer {
  kind: "timer";
  mode: "after" | "every";
  /** `after`: the delay; `every`: the period. */
  duration: Expr;
  /** `every P after D`: D, the delay of the first run; null otherwise. */
  first: Expr | null;
  handler: Handler;
  range: Range;
}

/** `on x(a, b) { … }` or `on x(a, b) -> S`. An arrow is a handler of one `default` arm. */
export interface OnEvent {
  kind: "on";
  alias: Ident;
  params: Ident[];
  handler: Handler;
  range: Range;
}

export interface OnExpired {
  kind: "onExpired";
  alias: Ident;
  handler: Handler;
  range: Range;
}

/**
 * `on x.failed` (v0.5 calls): runs when call x fails for good (attempts spent, a non-retryable
 * answer, a child run cancelled…), with `x.error` and `x.status` in scope. Only for call aliases.
 */
export interface OnFailed {
  kind: "onFailed";
  alias: Ident;
  handler: Handler;
  range: Range;
}

export interface Handler {
  statements: Statement[];
  arms: Arm[];
  range: Range;
}

export interface Arm {
  kind: "when" | "default";
  /** null for `default`. */
  condition: Expr | null;
  /** null when the arm has no block. */
  body: Statement[] | null;
  target: Ident;
  range: Range;
}

export interface Milestone {
  kind: "milestone";
  name: Ident;
  condition: Expr;
  body: Statement[];
  range: Range;
}

/** `map event E(<previous params>) to E2(name: expr, …)`. */
export interface MapEventDecl {
  kind: "map";
  from: Ident;
  fromParams: Param[];
  to: Ident;
  args: { name: Ident; value: Expr; range: Range }[];
  range: Range;
}

// ---------------------------------------------------------------------------------------------
// Statements

export type Statement = LetStmt | AssignStmt | SendEmailStmt | SendWebhookStmt | SendMessageStmt | DropSlotStmt | IfStmt | ExprStmt | ResultStmt;

/**
 * `result { name: expr, … }` (v0.5 Results): sets the run's result to the workflow's `returns`
 * event's parameters (type-checked against it; every required parameter given). The last one
 * that runs before the run finishes counts.
 */
export interface ResultStmt {
  kind: "result";
  fields: FieldInit[];
  range: Range;
}

export interface LetStmt {
  kind: "let";
  name: Ident;
  value: Expr;
  range: Range;
}

/** `a.b.c = expr`; `target` is the path, at least one name. */
export interface AssignStmt {
  kind: "assign";
  target: Ident[];
  value: Expr;
  range: Range;
}

export interface SendEmailStmt {
  kind: "sendEmail";
  to: Expr;
  subject: Expr;
  body: Expr;
  /** `replyTo: expr` (v0.3, issue 19): one address, checked like `to`; absent when not given. */
  replyTo?: Expr;
  /** `cc: expr` (v0.3, issue 19): one address, checked like `to`; absent when not given. */
  cc?: Expr;
  range: Range;
}

/** The endpoint a delivery names: a string literal (issue 18; lang/send-delivery.ts). */
export interface EndpointRef {
  name: string;
  range: Range;
  /**
   * Built-in workflows only (src/mcp/builtins.ts, issue 33 item 2): the endpoint is the value of
   * this expression when the statement runs, so one deployed workflow sends to the endpoint each
   * run names. No source can write it (FLOW031: a source names its endpoint with a literal).
   */
  expr?: Expr;
}

/** `send webhook to "NAME" { type: …, field: … }`: `type` is the event type, every other field goes into `data`. */
export interface SendWebhookStmt {
  kind: "sendWebhook";
  endpoint: EndpointRef;
  type: Expr;
  data: { name: Ident; value: Expr }[];
  range: Range;
}

/**
 * `send message to "NAME" { text: …, link: …, label: …, answer: alias }` (link, label and answer
 * optional). `answer` names a slot of the enclosing state whose event's controls the message
 * carries (v0.4 "Answers inside Slack"; a `slack-app` endpoint).
 */
export interface SendMessageStmt {
  kind: "sendMessage";
  endpoint: EndpointRef;
  text: Expr;
  link: Expr | null;
  label: Expr | null;
  /** Absent in trees compiled before v0.4. */
  answer?: Ident | null;
  range: Range;
}

export interface DropSlotStmt {
  kind: "dropSlot";
  alias: Ident;
  range: Range;
}

export interface IfStmt {
  kind: "if";
  condition: Expr;
  then: Statement[];
  /** `else { … }` gives a list; `else if …` gives a list holding one IfStmt. */
  else: Statement[] | null;
  range: Range;
}

export interface ExprStmt {
  kind: "expr";
  expr: Expr;
  range: Range;
}

// ---------------------------------------------------------------------------------------------
// Expressions

export type Expr = LiteralExpr | NameExpr | MemberExpr | CallExpr | BinaryExpr | UnaryExpr | ListExpr;

export type DurationUnit = "s" | "m" | "h" | "d";

export type LiteralExpr =
  /**
   * `invalid`: a number token the lexer could not read (`1.5h`, FLOW005/FLOW006, already
   * reported); it stands in the tree so the rest of the file is still checked (issue 19 item 5),
   * and the checker gives it the error type so it causes no second diagnostic.
   */
  | { kind: "literal"; type: "int" | "decimal"; value: number; raw: string; range: Range; invalid?: true }
  | { kind: "literal"; type: "string"; value: string; raw: string; range: Range }
  | { kind: "literal"; type: "bool"; value: boolean; raw: string; range: Range }
  | { kind: "literal"; type: "null"; value: null; raw: string; range: Range }
  /** `value` is the duration in milliseconds; `raw` is the source text (`7d`). */
  | { kind: "literal"; type: "duration"; value: number; raw: string; range: Range };

export interface NameExpr {
  kind: "name";
  name: string;
  range: Range;
}

export interface MemberExpr {
  kind: "member";
  object: Expr;
  property: Ident;
  range: Range;
}

export interface CallExpr {
  kind: "call";
  callee: Expr;
  args: Expr[];
  range: Range;
}

export type BinaryOp = "??" | "||" | "&&" | "==" | "!=" | "<" | "<=" | ">" | ">=" | "+" | "-" | "*" | "/" | "%";

export interface BinaryExpr {
  kind: "binary";
  op: BinaryOp;
  left: Expr;
  right: Expr;
  /**
   * Filled by the checker for arithmetic: "int" when both operands are `int` (then `/` truncates
   * toward zero and `%` is the integer remainder), "decimal" otherwise. Absent before checking.
   */
  numeric?: "int" | "decimal";
  /**
   * Filled by the checker for every binary operator: the kinds of the two operand types, without
   * `?`. The interpreter picks the operation from it, never from run-time values: `+` with a
   * "string" side concatenates; "datetime"/"duration" sides select time arithmetic
   * (datetime ± duration, datetime − datetime, duration ± duration) and time comparisons;
   * "date" sides select calendar arithmetic (date ± duration, date − date).
   * Absent before checking.
   */
  operandTypes?: { left: OperandKind; right: OperandKind };
  range: Range;
}

/** The kind of an operand's type, without `?` (see BinaryExpr.operandTypes). */
export type OperandKind = "bool" | "int" | "decimal" | "string" | "datetime" | "date" | "duration" | "null" | "list" | "entity" | "principal";

export interface UnaryExpr {
  kind: "unary";
  op: "!" | "-";
  operand: Expr;
  range: Range;
}

export interface ListExpr {
  kind: "list";
  elements: Expr[];
  range: Range;
}
