/**
 * The checks of states (docs/language.md, "States", "Slots", "Scopes", "Execution"): initial and
 * terminal states, slots and their settings, `After` cycles, handlers and their arms, milestones,
 * and which states can be reached.
 */
import type { Arm, CallDecl, Expr, FlowFile, Handler, Ident, Member, Setting, StateDecl, Subscribe, Timer } from "./ast.js";
import { callSettingProblem, checkCallSetting, checkReturnsOfCall } from "./check-calls.js";
import { checkPageText } from "./check-page.js";
import { canonicalTag, checkCoverage, checkVariantTags } from "./check-languages.js";
import { MIN_TIMER_PERIOD_MS } from "./compiled.js";
import { Codes } from "./codes.js";
import type { ExprChecker, ExprEnv } from "./check-expr.js";
import type { StatementChecker, StmtEnv } from "./check-stmt.js";
import type { EventInfo, Reporter, SlotInfo, StateInfo } from "./info.js";
import type { Scope } from "./scope.js";
import { showType, T, type Ty } from "./types.js";

/** What the state checks need from the rest of the checker. */
export interface StateContext {
  report: Reporter;
  events: Map<string, EventInfo>;
  /** The workflow parameters. */
  root: Scope;
  aliasStates: Map<string, string[]>;
  exprs: ExprChecker;
  stmts: StatementChecker;
  duplicate(what: string, name: Ident, where?: string): void;
}


/**
 * The first name in `e` that is an entity-typed workflow parameter (a tracked row the workflow may
 * change), or null. Used by `Quorum` (v0.4), whose value must not move after the slots are
 * created. Depth-bounded (expressions are bounded by the parser; this bounds the walk anyway).
 */
function trackedRowIn(e: Expr, root: Scope, depth = 0): { name: string; range: Expr["range"] } | null {
  if (depth > 256) return null;
  const next = (x: Expr) => trackedRowIn(x, root, depth + 1);
  switch (e.kind) {
    case "name": {
      const b = root.lookup(e.name);
      return b?.kind === "workflowParam" && b.type.kind === "entity" ? { name: e.name, range: e.range } : null;
    }
    case "member":
      return next(e.object);
    case "call":
      return (e.callee.kind === "member" ? next(e.callee.object) : null) ?? e.args.reduce<ReturnType<typeof next>>((found, a) => found ?? next(a), null);
    case "binary":
      return next(e.left) ?? next(e.right);
    case "unary":
      return next(e.operand);
    case "list":
      return e.elements.reduce<ReturnType<typeof next>>((found, a) => found ?? next(a), null);
    case "literal":
      return null;
  }
}

/** True when one of `arms` is always taken: a `default`, or a `when (true)`. */
function alwaysTaken(arms: Arm[]): boolean {
  return arms.some((a) => a.kind === "default" || (a.condition?.kind === "literal" && a.condition.value === true));
}

const SETTING_NAMES = {
  candidates: "Candidates", requires: "Requires", after: "After", deadline: "Deadline", title: "Title", intro: "Intro",
  quorum: "Quorum", each: "each", forwardable: "Forwardable", language: "Language",
  method: "Method", path: "Path", input: "Input", timeout: "Timeout", attempts: "Attempts", timer: "a timer",
} as const satisfies Record<Setting["kind"], string>;

export class StateChecker {
  /** The first state of each name. */
  readonly states = new Map<string, StateInfo>();
  private readonly stateInfoOf = new Map<StateDecl, StateInfo>();
  initialState: string | null = null;

  constructor(private readonly ctx: StateContext) {}

  /** Checks every state of `file` (after `declare`). */
  checkAll(file: FlowFile): void {
    for (const s of file.states) this.checkState(s, this.stateInfoOf.get(s)!);
  }

  /** Registers the states and their slot aliases; checks the initial/terminal counts. */
  declare(file: FlowFile): void {
    const initials: StateDecl[] = [];
    let terminals = 0;
    for (const s of file.states) {
      const info: StateInfo = { name: s.name.name, decl: s, terminal: s.modifier === "terminal", slots: new Map() };
      this.stateInfoOf.set(s, info);
      if (this.states.has(s.name.name)) this.ctx.duplicate("state", s.name);
      else this.states.set(s.name.name, info);
      if (s.modifier === "initial") initials.push(s);
      if (s.modifier === "terminal") terminals++;
      for (const m of s.members) {
        if (m.kind !== "subscribe" && m.kind !== "call") continue;
        const alias = m.alias.name;
        if (info.slots.has(alias)) {
          this.ctx.duplicate("slot alias", m.alias, `state ${s.name.name}`);
          continue;
        }
        const eventName = m.kind === "subscribe" ? m.event.name : m.returns?.name;
        info.slots.set(alias, {
          alias,
          state: s.name.name,
          event: eventName === undefined ? null : (this.ctx.events.get(eventName) ?? null),
          fannedOut: m.forEach !== null,
          elementType: T.error,
          hasDeadline: m.settings.some((x) => x.kind === "deadline"),
          decl: m,
          ...(m.kind === "call" ? { call: m } : {}),
        });
        const owners = this.ctx.aliasStates.get(alias) ?? [];
        if (!owners.includes(s.name.name)) owners.push(s.name.name);
        this.ctx.aliasStates.set(alias, owners);
      }
    }
    if (initials.length === 0) {
      this.ctx.report.error(Codes.NoInitialState, "the workflow has no initial state: mark one state 'initial'", file.name.range);
    } else {
      this.initialState = initials[0].name.name;
      for (const extra of initials.slice(1)) {
        this.ctx.report.error(
          Codes.MultipleInitialStates,
          `a second initial state '${extra.name.name}': the workflow already starts in '${this.initialState}'`,
          extra.name.range,
        );
      }
    }
    if (terminals === 0) {
      this.ctx.report.error(Codes.NoTerminalState, "the workflow has no terminal state: mark at least one state 'terminal'", file.name.range);
    }
  }

  private checkState(s: StateDecl, info: StateInfo): void {
    const scope = this.ctx.root.child();
    for (const slot of info.slots.values()) {
      this.ctx.stmts.declare(scope, { kind: "alias", name: slot.alias, type: { kind: "slot", alias: slot.alias }, range: slot.decl.alias.range, slot });
    }
    const env: StmtEnv = { scope, closedAlias: null, state: info };
    for (const m of s.members) {
      if (m.kind !== "subscribe" && m.kind !== "call") continue;
      if (info.terminal) {
        this.terminalMember(m, s);
        continue;
      }
      const own = info.slots.get(m.alias.name);
      this.checkSubscribe(m, info, own?.decl === m ? own : null);
    }
    if (!info.terminal) this.afterCycles(info);
    const onSeen = new Set<string>();
    const expiredSeen = new Set<string>();
    const failedSeen = new Set<string>();
    const milestones = new Set<string>();
    let armedEnter = false;
    for (const m of s.members) {
      switch (m.kind) {
        case "subscribe":
        case "call":
          break;
        case "enter":
          if (m.arms.length === 0) {
            this.ctx.stmts.block(m.body, env);
            break;
          }
          if (info.terminal) {
            this.ctx.report.error(
              Codes.TerminalStateMember,
              `terminal state ${s.name.name} cannot route on entry: a run is finished once it enters a terminal state`,
              m.arms[0].range,
            );
          } else if (armedEnter) {
            this.ctx.report.error(
              Codes.EnterArmsTwice,
              `state ${s.name.name} routes on entry twice: only one 'enter' block of a state may end with arms`,
              m.arms[0].range,
            );
          }
          armedEnter = true;
          this.handler({ statements: m.body, arms: m.arms, range: m.range }, { ...env, scope: env.scope.child() });
          break;
        case "timer":
          if (info.terminal) this.terminalMember(m, s);
          else this.checkTimer(m, env);
          break;
        case "on":
        case "onExpired":
        case "onFailed":
          if (info.terminal) this.terminalMember(m, s);
          else this.checkHandler(m, info, env, m.kind === "on" ? onSeen : m.kind === "onExpired" ? expiredSeen : failedSeen);
          break;
        case "milestone":
          if (info.terminal) {
            this.terminalMember(m, s);
            break;
          }
          if (milestones.has(m.name.name)) this.ctx.duplicate("milestone", m.name, `state ${s.name.name}`);
          milestones.add(m.name.name);
          this.ctx.stmts.condition(m.condition, env, "the condition of a milestone");
          this.ctx.stmts.block(m.body, env);
          break;
      }
    }
  }

  private terminalMember(m: Exclude<Member, { kind: "enter" }>, s: StateDecl): void {
    const what =
      m.kind === "subscribe" ? "slots (subscribe)" : m.kind === "call" ? "calls" : m.kind === "milestone" ? "milestones" : m.kind === "timer" ? "timers" : "event handlers";
    const at = m.kind === "milestone" ? m.name.range : m.kind === "timer" ? m.duration.range : m.alias.range;
    this.ctx.report.error(
      Codes.TerminalStateMember,
      `terminal state ${s.name.name} cannot have ${what}: a run is finished once it enters a terminal state (only 'enter' runs)`,
      at,
    );
  }

  /** A `subscribe` or (v0.5) a `call`: its event or `returns`, its fan-out and its settings. */
  private checkSubscribe(sub: Subscribe | CallDecl, state: StateInfo, slot: SlotInfo | null): void {
    const report = this.ctx.report;
    const event = sub.kind === "subscribe" ? (this.ctx.events.get(sub.event.name) ?? null) : null;
    if (sub.kind === "call") checkReturnsOfCall(report, sub, this.ctx.events);
    else if (event === null) {
      report.error(Codes.UnknownEvent, `unknown event '${sub.event.name}'`, sub.event.range);
    } else {
      const names = event.params.map((p) => p.name);
      const expected = `subscribe ${event.name}(${names.join(", ")})`;
      if (sub.params.length !== names.length) {
        const range =
          sub.params.length > 0
            ? { start: sub.params[0].range.start, end: sub.params[sub.params.length - 1].range.end }
            : sub.event.range;
        report.error(Codes.SubscribeParams, `the names must be the event's parameters in order: ${expected}`, range);
      } else {
        sub.params.forEach((p, i) => {
          if (p.name !== names[i]) {
            report.error(Codes.SubscribeParams, `parameter ${i + 1} of ${event.name} is '${names[i]}', not '${p.name}' (${expected})`, p.range);
          }
        });
      }
    }

    const base = this.ctx.root.child();
    if (sub.forEach !== null) {
      const t = this.ctx.exprs.check(sub.forEach.iterable, { scope: this.ctx.root, closedAlias: null });
      let element: Ty = T.error;
      if (t.kind === "list" && !t.optional) element = t.element;
      else if (t.kind !== "error") {
        report.error(Codes.NotAList, `for each needs a list, found ${showType(t)}`, sub.forEach.iterable.range);
      }
      if (slot) slot.elementType = element;
      const v = sub.forEach.variable;
      if (state.slots.has(v.name)) {
        report.error(Codes.Shadowing, `'${v.name}' would hide the slot alias '${v.name}': choose another name`, v.range);
      } else {
        this.ctx.stmts.declare(base, { kind: "fanOut", name: v.name, type: element, range: v.range });
      }
    }
    const env: ExprEnv = { scope: base, closedAlias: null };

    checkCoverage(report, sub.settings);
    // issue 43 item 4: insiders read a slot with Candidates by its Title (inbox, task page, done view)
    if (sub.kind === "subscribe" && !sub.settings.some((s) => s.kind === "title")) {
      const candidates = sub.settings.find((s) => s.kind === "candidates");
      if (candidates) {
        report.warning(
          Codes.CandidatesWithoutTitle,
          `slot '${sub.alias.name}' has Candidates but no Title: the people it asks see only "Answer: ${sub.event.name}" in their inbox and on its task page — add a Title in their words`,
          candidates.range,
        );
      }
    }
    const seen = new Set<string>();
    for (const setting of sub.settings) {
      const name = SETTING_NAMES[setting.kind];
      // a slot may hold several timers (issue 43 item 3); every other setting is given once
      if (seen.has(setting.kind) && setting.kind !== "timer") report.error(Codes.DuplicateSetting, `${name} is given twice`, setting.range);
      seen.add(setting.kind);
      // v0.5: a person's settings on a call, a call's on a subscribe (FLOW371)
      const misplaced = callSettingProblem(sub, setting, name);
      if (misplaced !== null) {
        report.error(Codes.CallSettingMisplaced, misplaced, setting.range);
        continue;
      }
      switch (setting.kind) {
        case "method":
        case "path":
        case "input":
        case "timeout":
        case "attempts":
          checkCallSetting({ report, exprs: this.ctx.exprs }, setting, env);
          break;
        case "candidates":
          for (const m of setting.matchers) this.ctx.exprs.checkMatcher(m, env);
          break;
        case "requires": {
          const scope = base.child();
          event?.params.forEach((p, i) => {
            const range = (sub.kind === "subscribe" ? sub.params[i]?.range : undefined) ?? p.range;
            this.ctx.stmts.declare(scope, { kind: "eventParam", name: p.name, type: p.type, range });
          });
          this.ctx.stmts.condition(setting.expr, { scope, closedAlias: null }, "Requires");
          if (setting.wording) {
            // issue 30 item 8: the refusal's wording, in the condition's scope; null falls back to the generic one
            const t = this.ctx.exprs.check(setting.wording, { scope, closedAlias: null });
            if (t.kind !== "string" && t.kind !== "error" && t.kind !== "null") {
              report.error(
                Codes.RequiresWordingType,
                `the wording after 'else' is what the responder reads when Requires does not hold: it must be a string, found ${showType(t)} (write it as text, such as "at most " + limit)`,
                setting.wording.range,
              );
            }
          }
          // v0.5 (issue 42): the wording's language variants, in the same scope and of the same type
          checkVariantTags(report, setting.variants);
          for (const v of setting.variants ?? []) {
            const t = this.ctx.exprs.check(v.expr, { scope, closedAlias: null });
            if (t.kind !== "string" && t.kind !== "error" && t.kind !== "null") {
              report.error(Codes.RequiresWordingType, `the ${v.tag} wording after 'else' must be a string, found ${showType(t)}`, v.expr.range);
            }
          }
          break;
        }
        case "after":
          for (const a of setting.aliases) {
            if (a.name === sub.alias.name) {
              report.error(Codes.AfterSelf, `slot '${a.name}' cannot wait for itself`, a.range);
            } else if (!state.slots.has(a.name)) {
              report.error(Codes.UnknownAlias, `After names slots of this state; state ${state.name} has no slot alias '${a.name}'`, a.range);
            }
          }
          break;
        case "title":
        case "intro":
          checkPageText(report, name as "Title" | "Intro", this.ctx.exprs.check(setting.expr, env), setting.expr.range);
          // v0.5 (issue 42): each language variant is text over the same data
          checkVariantTags(report, setting.variants);
          for (const v of setting.variants ?? []) checkPageText(report, name as "Title" | "Intro", this.ctx.exprs.check(v.expr, env), v.expr.range);
          break;
        case "language": {
          // v0.5 (issue 42): the responder's language, a BCP 47 tag as text
          const t = this.ctx.exprs.check(setting.expr, env);
          if (t.kind !== "string" && t.kind !== "error" && t.kind !== "null") {
            report.error(Codes.LanguageType, `Language names the responder's language as a BCP 47 tag: it must be a string (such as "de" or vendor.language), found ${showType(t)}`, setting.expr.range);
          }
          if (setting.expr.kind === "literal" && typeof setting.expr.value === "string" && canonicalTag(setting.expr.value) === null) {
            report.error(Codes.UnknownLanguageTag, `'${setting.expr.value}' is not a language tag (BCP 47), such as "de" or "pt-BR"`, setting.expr.range);
          }
          break;
        }
        case "quorum": {
          this.fanOutOnly(sub, name);
          // Quorum sees the workflow parameters only (not the fan-out variable: it counts them all)
          const t = this.ctx.exprs.check(setting.expr, { scope: this.ctx.root, closedAlias: null });
          if (t.kind !== "error" && !(t.kind === "int" && !t.optional)) {
            report.error(Codes.TypeMismatch, `Quorum must be an int (how many elements complete the slot), found ${showType(t)}`, setting.expr.range);
          }
          const row = trackedRowIn(setting.expr, this.ctx.root);
          if (row) {
            report.error(
              Codes.QuorumReadsTrackedRow,
              `Quorum may not read the tracked row '${row.name}': the workflow can change it, and k must stay what it was when the slots were created; use a literal or an input parameter`,
              row.range,
            );
          }
          break;
        }
        case "timer": {
          // issue 43 item 3: a timer on a slot runs per open element, in the scope of `each`
          const scope = base.child();
          for (const other of state.slots.values()) {
            this.ctx.stmts.declare(scope, { kind: "alias", name: other.alias, type: { kind: "slot", alias: other.alias }, range: other.decl.alias.range, slot: other });
          }
          this.checkTimer(setting, { scope, closedAlias: null, elementAlias: sub.forEach ? sub.alias.name : null, state });
          break;
        }
        case "each": {
          this.fanOutOnly(sub, name);
          // v0.4 Many responders: the fan-out variable and the state's aliases in scope; the
          // alias stands for this element's slot, so its link and task URL may be named here.
          const scope = base.child();
          for (const other of state.slots.values()) {
            this.ctx.stmts.declare(scope, { kind: "alias", name: other.alias, type: { kind: "slot", alias: other.alias }, range: other.decl.alias.range, slot: other });
          }
          this.ctx.stmts.block(setting.body, { scope, closedAlias: null, elementAlias: sub.forEach ? sub.alias.name : null, state });
          break;
        }
        case "forwardable":
          // v0.4: a bool over the workflow parameters and the fan-out variable (FLOW202 otherwise)
          this.ctx.stmts.condition(setting.expr, env, "Forwardable");
          break;
        case "deadline": {
          const t = this.ctx.exprs.check(setting.expr, env);
          if (t.kind !== "error" && t.kind !== "duration" && t.kind !== "datetime") {
            report.error(Codes.DeadlineType, `Deadline must be a duration or a datetime, found ${showType(t)}`, setting.expr.range);
          }
          break;
        }
      }
    }
  }

  /** FLOW355 unless `sub` is fanned out: `Quorum` and `each` count and name elements (v0.4). */
  private fanOutOnly(sub: Subscribe | CallDecl, name: string): void {
    if (sub.forEach !== null) return;
    const setting = sub.settings.find((x) => SETTING_NAMES[x.kind] === name)!;
    this.ctx.report.error(
      Codes.FanOutSettingOnSingleSlot,
      `${name} applies only to a fanned-out slot (subscribe … as ${sub.alias.name} for each v in list): '${sub.alias.name}' is one slot`,
      setting.kind === "each" ? { start: setting.range.start, end: { ...setting.range.start, column: setting.range.start.column + 4, offset: setting.range.start.offset + 4 } } : setting.range,
    );
  }

  /** `After` may not make slots of one state wait for each other in a cycle. */
  private afterCycles(state: StateInfo): void {
    const edges = new Map<string, Ident[]>();
    for (const slot of state.slots.values()) {
      const next: Ident[] = [];
      for (const s of slot.decl.settings) {
        if (s.kind !== "after") continue;
        for (const a of s.aliases) if (a.name !== slot.alias && state.slots.has(a.name)) next.push(a);
      }
      edges.set(slot.alias, next);
    }
    const color = new Map<string, "active" | "done">();
    const stack: { alias: string; via: Ident | null }[] = [];
    const reported = new Set<string>();
    const visit = (alias: string): void => {
      color.set(alias, "active");
      for (const to of edges.get(alias) ?? []) {
        stack.push({ alias, via: to });
        if (color.get(to.name) === "active") {
          const cycle = stack.slice(stack.findIndex((s) => s.alias === to.name));
          const key = cycle.map((c) => c.alias).sort().join(",");
          if (!reported.has(key)) {
            reported.add(key);
            const path = [...cycle.map((c) => c.alias), to.name].join(" → ");
            this.ctx.report.error(Codes.AfterCycle, `After makes a cycle: ${path}; these slots would wait for each other forever`, cycle[0].via!.range);
          }
        } else if (!color.has(to.name)) visit(to.name);
        stack.pop();
      }
      color.set(alias, "done");
    };
    for (const alias of edges.keys()) if (!color.has(alias)) visit(alias);
  }

  private checkHandler(m: Extract<Member, { kind: "on" | "onExpired" | "onFailed" }>, state: StateInfo, env: StmtEnv, seen: Set<string>): void {
    const report = this.ctx.report;
    const alias = m.alias.name;
    const slot = state.slots.get(alias) ?? null;
    const header = m.kind === "on" ? `on ${alias}(…)` : m.kind === "onExpired" ? `on ${alias}.expired` : `on ${alias}.failed`;
    if (slot === null) {
      report.error(Codes.UnknownAlias, `state ${state.name} has no slot alias '${alias}'`, m.alias.range);
    } else if (m.kind === "onFailed" && !slot.call) {
      report.error(
        Codes.FailedNotACall,
        `'${alias}' is a person's slot (subscribe), which never fails: 'on ${alias}.failed' is for calls; a slot that gets no answer expires (on ${alias}.expired, with a Deadline)`,
        m.alias.range,
      );
    } else if (seen.has(alias)) {
      report.error(Codes.DuplicateHandler, `'${header}' is given twice in state ${state.name}`, m.alias.range);
    }
    seen.add(alias);

    let scope = env.scope.child();
    if (slot?.decl.forEach) {
      scope.declare({ kind: "fanOut", name: slot.decl.forEach.variable.name, type: slot.elementType, range: slot.decl.forEach.variable.range });
      scope = scope.child();
    }
    if (m.kind === "on") {
      const event = slot?.event ?? null;
      if (slot?.call && slot.call.returns === null && m.params.length > 0) {
        report.error(
          Codes.HandlerParamCount,
          `call '${alias}' declares no 'returns': its answer carries no parameters, so write 'on ${alias}()' (or declare 'returns E' on the call)`,
          { start: m.params[0].range.start, end: m.params[m.params.length - 1].range.end },
        );
      }
      if (event !== null && m.params.length !== event.params.length) {
        const range = m.params.length > 0 ? { start: m.params[0].range.start, end: m.params[m.params.length - 1].range.end } : m.alias.range;
        report.error(
          Codes.HandlerParamCount,
          `${event.name} has ${event.params.length} parameter(s) (${event.params.map((p) => p.name).join(", ")}); this handler binds ${m.params.length}`,
          range,
        );
      }
      const names = new Set<string>();
      m.params.forEach((p, i) => {
        if (names.has(p.name)) {
          this.ctx.duplicate("parameter", p, `'${header}'`);
          return;
        }
        names.add(p.name);
        const type = event?.params[i]?.type ?? T.error;
        this.ctx.stmts.declare(scope, { kind: "eventParam", name: p.name, type, range: p.range });
      });
    } else if (m.kind === "onExpired" && slot !== null && !slot.hasDeadline) {
      report.warning(
        Codes.ExpiredWithoutDeadline,
        `slot '${alias}' has no Deadline, so 'on ${alias}.expired' never runs`,
        m.alias.range,
      );
    }
    this.handler(m.handler, { scope, closedAlias: slot ? alias : null, ...(m.kind === "onFailed" && slot?.call ? { failedAlias: alias } : {}), state });
  }

  /**
   * A timer (issue 19): its durations are `duration`s over the workflow parameters (evaluated when
   * the state is entered); `every` needs a period of at least one minute (FLOW341, for a literal;
   * a computed period is held to it at run time). Its handler is checked like any handler. A
   * timer on a slot (issue 43 item 3) comes with `env` of that slot's `each` (the fan-out
   * variable, the alias standing for the element's slot).
   */
  private checkTimer(m: Timer, env: StmtEnv): void {
    const report = this.ctx.report;
    const what = m.mode === "every" ? "the period of 'every'" : "the delay of 'after'";
    const parts: [Expr, string][] = [[m.duration, what]];
    if (m.first !== null) parts.push([m.first, "the first delay ('after') of 'every'"]);
    for (const [e, name] of parts) {
      const t = this.ctx.exprs.check(e, { scope: this.ctx.root, closedAlias: null });
      if (t.kind !== "error" && !(t.kind === "duration" && !t.optional)) {
        report.error(Codes.TimerType, `${name} must be a duration, found ${showType(t)}`, e.range);
      }
    }
    if (m.mode === "every" && m.duration.kind === "literal" && m.duration.type === "duration" && m.duration.value < MIN_TIMER_PERIOD_MS) {
      report.error(Codes.TimerPeriodTooShort, `'every' needs a period of at least 1 minute, found ${m.duration.raw}`, m.duration.range);
    }
    this.handler(m.handler, { ...env, scope: env.scope.child(), closedAlias: null });
  }

  /**
   * FLOW343 (a warning) for every slot and timer of a state whose `enter` arms always move the run
   * on (a `default` arm, or a `when (true)`): the run never waits there, so they never open or fire.
   */
  leftAtOnce(file: FlowFile): void {
    for (const s of file.states) {
      if (s.modifier === "terminal") continue;
      const enter = s.members.find((m): m is Extract<Member, { kind: "enter" }> => m.kind === "enter" && m.arms.length > 0);
      if (!enter || !alwaysTaken(enter.arms)) continue;
      for (const m of s.members) {
        if (m.kind === "subscribe" || m.kind === "call") {
          this.ctx.report.warning(
            Codes.LeftAtOnce,
            `${m.kind === "call" ? "call" : "slot"} '${m.alias.name}' never ${m.kind === "call" ? "starts" : "opens"}: every path of state ${s.name.name}'s enter moves the run on at once`,
            m.alias.range,
          );
        } else if (m.kind === "timer") {
          this.ctx.report.warning(
            Codes.LeftAtOnce,
            `this timer never fires: every path of state ${s.name.name}'s enter moves the run on at once`,
            m.duration.range,
          );
        }
      }
    }
  }

  private handler(h: Handler, env: StmtEnv): void {
    this.ctx.stmts.statements(h.statements, env);
    for (const arm of h.arms) {
      if (arm.condition !== null) this.ctx.stmts.condition(arm.condition, env, "the condition of when");
      if (arm.body !== null) this.ctx.stmts.block(arm.body, env);
      if (!this.states.has(arm.target.name)) {
        this.ctx.report.error(Codes.UnknownState, `unknown state '${arm.target.name}'`, arm.target.range);
      }
    }
  }


  /** FLOW111 for each state no chain of arms from the initial state reaches. */
  reachability(file: FlowFile): void {
    if (this.initialState === null) return;
    const next = new Map<string, string[]>();
    for (const s of file.states) {
      const targets = next.get(s.name.name) ?? [];
      for (const m of s.members) {
        if (m.kind === "on" || m.kind === "onExpired" || m.kind === "onFailed" || m.kind === "timer") for (const a of m.handler.arms) targets.push(a.target.name);
        if (m.kind === "enter") for (const a of m.arms) targets.push(a.target.name);
        // issue 43 item 3: a timer on a slot may move the run on too
        if (m.kind === "subscribe" || m.kind === "call") for (const t of m.settings) if (t.kind === "timer") for (const a of t.handler.arms) targets.push(a.target.name);
      }
      next.set(s.name.name, targets);
    }
    const reached = new Set<string>([this.initialState]);
    const queue = [this.initialState];
    while (queue.length > 0) {
      for (const t of next.get(queue.pop()!) ?? []) {
        if (!reached.has(t)) {
          reached.add(t);
          queue.push(t);
        }
      }
    }
    for (const s of file.states) {
      if (reached.has(s.name.name) || this.states.get(s.name.name)?.decl !== s) continue;
      this.ctx.report.warning(
        Codes.UnreachableState,
        `state ${s.name.name} is never entered: no arm leads to it from the initial state ${this.initialState}`,
        s.name.range,
      );
    }
  }
}
