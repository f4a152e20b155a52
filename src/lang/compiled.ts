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
import type { Arm, AuthorizeAttr, Expr, Handler, HttpMethod, Statement } from "./ast.js";

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
  /**
   * Constraints on an event parameter (v0.5, issue 43: `@min`, `@max`, `@minLength`, `@maxLength`,
   * `@pattern`, `@email`, `@oneOf`), checked on every door by engine/values/body.ts; the key is
   * absent when there are none (and in forms compiled before they existed).
   */
  rules?: ParamRules;
}

/**
 * The constraints of one event parameter (language reference "Constraints on event parameters").
 * A `null` value of an optional parameter satisfies them all.
 */
export interface ParamRules {
  /** `int`/`decimal`: a number; `date`: `"YYYY-MM-DD"` or `"today"` (the UTC day of the check). Inclusive. */
  min?: number | string;
  max?: number | string;
  /** `string`: a length in UTF-16 code units (JavaScript string length), inclusive. */
  minLength?: number;
  maxLength?: number;
  /** `string`: an RE2 pattern the whole value must match (anchored at both ends), run in linear time. */
  pattern?: string;
  /** `string`: one plain email address, as `send email to` checks it. */
  email?: true;
  /** `string`: the value is one of these, exactly. */
  oneOf?: string[];
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
  /**
   * `subscribe E(…)`: E. A call's slot (`kind: "call"`): its `returns` event, or `""` when the
   * call declares no `returns` (its answer then carries no parameters).
   */
  event: string;
  /**
   * The names in `subscribe E(a, b)`: equal to the event's parameter names, in order. A call's
   * slot: the `returns` event's parameter names in order (empty without `returns`), so the answer
   * binds `on x(…)`'s names positionally like a deposit.
   */
  params: string[];
  /**
   * v0.5: `"call"` for a slot a `call` member creates (answered by its callee, see `call`);
   * absent for a `subscribe` (and in every form compiled before v0.5).
   */
  kind?: "call";
  /** v0.5: the call of a `kind: "call"` slot (see CompiledCall); absent otherwise. */
  call?: CompiledCall;
  /** Fan-out: the variable, the list expression, and the type of its elements. */
  forEach: { variable: string; iterable: Expr; elementType: TypeSpec } | null;
  /**
   * Matcher expressions (`role("r")`, `user("id")`, `anyone()`); null when the setting is absent —
   * then who may answer through the ordinary path depends on the workflow's `withoutCandidates`.
   */
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
   * Timers on the slot (issue 43 item 3; language reference "Timers on a slot, per element"), in
   * source order, `index` their position among this slot's timers: each runs while the slot (every
   * element, when fanned out) is open, its clock starting when it opens, and stops when it closes;
   * the handler runs with the fan-out variable bound and the alias naming the element's slot.
   * Absent when none (an additive key: forms compiled before read as having none).
   */
  timers?: CompiledTimer[];
  /**
   * `Forwardable: expr` (v0.4 "Many responders, forwarding, and receipts") — a `bool` over the
   * workflow parameters and the fan-out variable, evaluated when a link holder asks to forward
   * (`POST …/callback/{token}/forward`); absent (the default) or false: not forwardable.
   */
  forwardable?: Expr;
}

/**
 * The callee and settings of a `call` (v0.5; docs/language.md "Calls"; issue 40). It lives on
 * the slot the call creates (`CompiledSlot.kind === "call"`), which has the slot's usual
 * `after`, `deadline`, `forEach`, `quorum` and `each`, and never `candidates`, `requires`,
 * `requiresWording`, `title`, `intro` or `forwardable` (the checker refuses them: FLOW371).
 *
 * What the runtime must do with it:
 * - **Start.** When the slot opens (created open at state entry after the state's `enter`
 *   statements, or opened later when its `after` aliases are done; for a fanned-out call once per
 *   element, with the fan-out variable bound), evaluate `path` and `input` (and `timeout`,
 *   `attempts`) in the step that opens it, with the slot's scope (workflow parameters, the
 *   fan-out variable, the state's aliases), and record them with the call; a runtime fault there
 *   aborts that step like any other. Start the call only **after that step commits**, never
 *   inside the run's transaction or under the run lock.
 * - **Input** is evaluated field by field, in order, into one JSON object (values in their JSON
 *   form as for a webhook's data: tracked rows as objects of their fields, datetimes RFC 3339,
 *   durations ISO 8601, dates YYYY-MM-DD). `http`: the request body (none for GET and DELETE);
 *   `task`: the task's input; `workflow`: the child run's input, checked like a start (an input
 *   that does not fit the child's current version fails the call at once).
 * - **Defaults** when a key is null: `method` is always set (POST when not written); `timeout`
 *   http 30 s, task 5 min (per attempt; a task's lease), never set for `workflow`; `attempts` 3
 *   (http, task) and 1 (workflow). A `timeout` ≤ 0 or an `attempts` < 1 evaluated at run time is
 *   a runtime fault of the step that opens the slot (literals are refused at compile time).
 * - **Answer.** The answer completes the slot through the deposit path (one step under the run
 *   lock, exactly once per call): the `returns` event (`CompiledSlot.event`) parameters are read
 *   by name from the answer's JSON object (each present with its type, `null`/absent for an
 *   optional one; extra properties dropped for http and workflow answers, refused for task
 *   answers), bound to `on x(…)`'s names in `CompiledSlot.params` order, then `on x` runs as for a
 *   deposit. A child run's answer is its result object `{state, …fields}` (CompiledWorkflow.returns).
 * - **Failure** closes the slot as `failed` and runs `CompiledState.failed[alias]` when present
 *   (else the run just stays, the slot failed). Inside any handler the interpreter reads
 *   `x.error` (string, null until failed), `x.status` (int or null, the last HTTP status) and
 *   `x.attempts` (int) through `World.callInfo` (lang/runtime/interpreter.ts); in `on x(…)`,
 *   `on x.failed`, `on x.expired` and `each` of a fanned-out call the alias stands for that
 *   element's call (bind it with `elementRef(alias, element)`).
 * - **Cancel.** Leaving the state, `drop slot x` or the run cancelled cancels a call not yet
 *   answered (an attempt under way is let finish and its answer refused as for a closed slot; a
 *   child run is cancelled with the reason; a task is withdrawn).
 * - A call's slot has no link and no task page (`x.CallbackUrl()`/`x.TaskUrl()` are FLOW376) and
 *   no principal may raise it.
 */
export interface CompiledCall {
  /** Who answers: an endpoint of kind `http` and the method; a task type; a deployed workflow's name. */
  callee:
    | { type: "http"; endpoint: string; method: HttpMethod }
    | { type: "task"; task: string }
    | { type: "workflow"; workflow: string };
  /** `Path:` (http only): a `string` appended to the endpoint's URL; null when not given. */
  path: Expr | null;
  /** `Input { … }`: the fields of the JSON object sent, in source order; empty when not given (`{}` is sent). */
  input: { name: string; value: Expr }[];
  /** `Timeout:` — a `duration` per attempt; null: the default (http 30 s, task 5 min; never for workflow). */
  timeout: Expr | null;
  /** `Attempts:` — an `int` ≥ 1, attempts in all; null: the default (3, workflow 1). */
  attempts: Expr | null;
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
  /**
   * `on x.failed` handlers by alias (v0.5 calls): run in the step that records call x as failed,
   * like `expired`. Absent when the state has none (and in forms compiled before v0.5).
   */
  failed?: Record<string, Handler>;
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
  /**
   * Who may answer a slot without `Candidates` through the ordinary path (issue 38 M2; language
   * reference "Who may answer a slot without Candidates"): `"link-only"` — nobody (the slot is
   * answered only through its link); every form compiled since v0.5 says so. Absent in forms
   * compiled before v0.5: any signed-in principal (the v0.4 meaning, kept by the runs of those
   * versions). Read only through `engine/access.ts` (`whoMayRaise`).
   */
  withoutCandidates?: "link-only";
  /**
   * `workflow W(…) returns E` (v0.5 Results): E, an event of `events`. Absent when the workflow
   * declares no result (and in forms compiled before v0.5).
   *
   * What the runtime must do: a `result { … }` statement (a `ResultStmt` in any handler body)
   * evaluates its fields and stores them as the run's pending result, replacing any earlier one
   * (the last that runs before the run finishes counts; it commits with its step like any other
   * effect). When the run finishes (enters a terminal state), its result is the object
   * `{state: "<terminal state>", …fields}` — without `returns` just `{state}`; the stored fields
   * never include `state`, which the checker refuses in `result`. A run that declares `returns`
   * and finishes without any `result` having run still gets `{state}` and is recorded as
   * finished without a result (a parent's call of it fails: `child finished in state X without a
   * result`).
   */
  returns?: string;
}
