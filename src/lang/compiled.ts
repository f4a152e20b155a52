/**
 * The compiled form of a checked workflow: what `compile()` returns and what each deployed
 * version stores (column `WorkflowVersion.compiled`). It is plain JSON; the engine runs it
 * directly and never parses source at run time.
 *
 * Statements and expressions are the checked syntax tree nodes of `ast.ts` (with the checker's
 * annotations); declarations are indexed by name so the engine finds them in O(1).
 *
 * `format` changes whenever this shape changes incompatibly; the engine refuses a stored form
 * whose format it does not know.
 */
import type { Arm, AuthorizeAttr, Expr, Handler, Statement } from "./ast.js";

export const COMPILED_FORMAT = 1 as const;

/** A resolved type. Entity types name a declared entity. */
export type TypeSpec =
  | { kind: "bool" | "int" | "decimal" | "string" | "datetime" | "date" | "duration" | "principal"; optional: boolean }
  | { kind: "list"; element: TypeSpec; optional: boolean }
  | { kind: "entity"; name: string; optional: boolean };

export interface CompiledParam {
  name: string;
  type: TypeSpec;
  /**
   * The responder page's wording for an event parameter (`@label`, `@help`, `@multiline`); the
   * key is absent when the author gave none (and in forms compiled before it existed).
   */
  page?: ParamPage;
}

/** From `@label("…")`, `@help("…")`, `@multiline` on an event parameter. */
export interface ParamPage {
  label?: string;
  help?: string;
  /** `@label("…", de: "…")` (v0.5, issue 42): the label's wording by BCP 47 tag; absent without variants. */
  labels?: Record<string, string>;
  /** `@help("…", de: "…")`: the help's wording by BCP 47 tag; absent without variants. */
  helps?: Record<string, string>;
  multiline?: true;
  /**
   * Built-in workflows only (src/mcp/builtins.ts, issue 33 item 3; no annotation writes it): an
   * expression over the workflow's parameters whose value, a `list<string>`, is the allowed
   * answers of this `string` parameter. The responder page evaluates it over the run's data and,
   * when the list is not empty, shows the answers as radio buttons instead of a text field.
   */
  choices?: Expr;
  /** The values of `choices` for one page (engine/views/responder.ts fills it in); never stored. */
  options?: string[];
}

export interface CompiledField {
  type: TypeSpec;
  /** From `@maxLength(n)` / `@minLength(n)`, in UTF-16 code units (JavaScript string length). */
  maxLength: number | null;
  minLength: number | null;
}

export interface CompiledEntity {
  name: string;
  /** Fields in declaration order. */
  fields: Record<string, CompiledField>;
}

export interface CompiledEvent {
  name: string;
  params: CompiledParam[];
  /** Every `[Authorize(p => …)]` attribute; all must hold on an ordinary raise. */
  authorize: AuthorizeAttr[];
}

export interface CompiledSlot {
  alias: string;
  event: string;
  /** The names in `subscribe E(a, b)`: equal to the event's parameter names, in order. */
  params: string[];
  /** Fan-out: the variable, the list expression, and the type of its elements. */
  forEach: { variable: string; iterable: Expr; elementType: TypeSpec } | null;
  /** Matcher expressions (`role("r")`, `user("id")`); null when the setting is absent. */
  candidates: Expr[] | null;
  requires: Expr | null;
  /**
   * `Requires: … else wording` — a `string`/`string?` expression in the scope of `requires` (run
   * data, the fan-out variable, the event's parameters): the refusal's `detail` when `requires`
   * does not hold; a null or a runtime fault falls back to the generic wording. Absent when not
   * given (issue 30 item 8).
   */
  requiresWording?: Expr;
  /** Aliases of slots of the same state that must be completed before this one opens. */
  after: string[];
  deadline: Expr | null;
  /**
   * `Title:` / `Intro:` — `string`/`string?` expressions over the workflow parameters, evaluated
   * read-only when the slot's responder page is shown. Keys absent when not given (and in forms
   * compiled before they existed).
   */
  title?: Expr;
  intro?: Expr;
  /**
   * Language variants (v0.5, issue 42): `Title: …, de: …` — by BCP 47 tag (canonical, as
   * `Intl.getCanonicalLocales` writes it), the wording for readers of that language; the default
   * wording (`title`, `intro`, `requiresWording`) for every other. Keys absent without variants.
   */
  titles?: Record<string, Expr>;
  intros?: Record<string, Expr>;
  requiresWordings?: Record<string, Expr>;
  /** `Language: expr` (v0.5): the responder's language, a BCP 47 tag string over the run's data; absent when not given. */
  language?: Expr;
  /**
   * `Quorum: k` (v0.4 Many responders; fanned-out slots only): an `int` over literals and the
   * workflow's input parameters (never a tracked row: FLOW356), so it has one value for the run;
   * read when the slots are created (1 ≤ k ≤ elements, else a runtime error) and whenever an
   * element completes. Absent when not given: every element is needed.
   */
  quorum?: Expr;
  /**
   * `each { … }` (v0.4; fanned-out slots only): run once per element in the step that creates its
   * slot, the fan-out variable bound and the alias naming that element's slot. Absent when not given.
   */
  each?: Statement[];
  /**
   * `Forwardable: expr` (v0.4 "Many responders, forwarding, and receipts") — a `bool` over the
   * workflow parameters and the fan-out variable, evaluated when a link holder asks to forward
   * (`POST …/callback/{token}/forward`); absent (the default) or false: not forwardable.
   */
  forwardable?: Expr;
}

export interface CompiledOnEvent {
  alias: string;
  /** Names bound to the event's arguments, positionally. */
  params: string[];
  handler: Handler;
}

export interface CompiledMilestone {
  name: string;
  condition: Expr;
  body: Statement[];
}

/**
 * A timer of a state (issue 19; language reference §10). `index` is its position among the
 * state's timers in source order — its identity in a run (the run view's `timers[].index`, and
 * across an upgrade). `duration` is the delay (`after`) or the period (`every`); `first` the delay
 * of an `every`'s first run (null: one period). `schedule` is the source text of its header, for
 * people (`every 2d after 1d`).
 */
/** The shortest period of `every` (language reference §10), in milliseconds. */
export const MIN_TIMER_PERIOD_MS = 60_000;

export interface CompiledTimer {
  index: number;
  every: boolean;
  duration: Expr;
  first: Expr | null;
  schedule: string;
  handler: Handler;
}

export interface CompiledState {
  name: string;
  initial: boolean;
  terminal: boolean;
  /** Slots in declaration order. */
  slots: CompiledSlot[];
  /** The bodies of every `enter` block, in source order (run one after another). */
  enter: Statement[][];
  /**
   * Routing on entry (issue 19): the arms of the one `enter` block that has them, which is then
   * the state's only `enter` block (the checker's FLOW342 makes sure). Absent when none (and in
   * forms compiled before v0.3).
   */
  enterArms?: Arm[];
  /** Timers in source order; absent when none (and in forms compiled before v0.3). */
  timers?: CompiledTimer[];
  /** `on x(...)` handlers by alias. */
  on: Record<string, CompiledOnEvent>;
  /** `on x.expired` handlers by alias. */
  expired: Record<string, Handler>;
  milestones: CompiledMilestone[];
}

/** `map event E(<previous params>) to E2(name: expr, …)`, authored with the version that holds it. */
export interface CompiledEventMap {
  from: string;
  fromParams: CompiledParam[];
  to: string;
  args: { name: string; value: Expr }[];
}

export interface CompiledWorkflow {
  format: typeof COMPILED_FORMAT;
  name: string;
  params: CompiledParam[];
  entities: Record<string, CompiledEntity>;
  events: Record<string, CompiledEvent>;
  initialState: string;
  states: Record<string, CompiledState>;
  maps: CompiledEventMap[];
}
