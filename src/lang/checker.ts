/**
 * The checker: names, types and every declaration rule of a parsed workflow (docs/language.md,
 * "Declarations", "Scopes", "Handlers", "CallbackUrl()", "Versioning"). It reports every problem
 * it finds (never only the first), each with a stable code (codes.ts) and the range of the
 * offending text, and annotates binary operators for the interpreter.
 *
 * Passes: entities → events → workflow parameters → states and their slots → event predicates →
 * state bodies → `map event` declarations → reachability.
 */
import type { EntityDecl, EventDecl, FlowFile, Handler, Ident, MapEventDecl, Member, Param, StateDecl, Subscribe, TypeRef } from "./ast.js";
import { Codes } from "./codes.js";
import type { Diagnostic } from "./diagnostics.js";
import { ExprChecker, type CheckContext, type ExprEnv } from "./check-expr.js";
import { StatementChecker, type StmtEnv } from "./check-stmt.js";
import { Reporter, type EntityInfo, type EventInfo, type FieldInfo, type ParamInfo, type SlotInfo, type StateInfo } from "./info.js";
import { Scope } from "./scope.js";
import { assignable, SCALAR_NAMES, showType, T, type ScalarKind, type Ty } from "./types.js";

/** Declarations as the checker resolved them (meaningful for emitting only when there is no error). */
export interface CheckedModel {
  params: ParamInfo[];
  entities: Map<string, EntityInfo>;
  events: Map<string, EventInfo>;
  states: Map<string, StateInfo>;
  initialState: string | null;
  maps: { decl: MapEventDecl; fromParams: ParamInfo[] }[];
}

export interface CheckResult {
  diagnostics: Diagnostic[];
  model: CheckedModel;
}

/**
 * Checks a parsed file. Returns all diagnostics in source order; annotates `file` in place
 * (BinaryExpr.numeric and BinaryExpr.operandTypes).
 */
export function check(file: FlowFile): CheckResult {
  const c = new Checker();
  c.run(file);
  const diagnostics = c.report.diagnostics.sort((a, b) => a.range.start.offset - b.range.start.offset);
  return { diagnostics, model: c.model() };
}

type TypeSite = "param" | "field" | "event" | "map";

const SITE_WORDS: Record<TypeSite, string> = {
  param: "a workflow parameter",
  field: "an entity field",
  event: "an event parameter",
  map: "an event parameter",
};

const SETTING_NAMES = { candidates: "Candidates", requires: "Requires", after: "After", deadline: "Deadline" } as const;

class Checker {
  readonly report = new Reporter();
  private readonly entities = new Map<string, EntityInfo>();
  private readonly events = new Map<string, EventInfo>();
  private readonly eventInfoOf = new Map<EventDecl, EventInfo>();
  private readonly states = new Map<string, StateInfo>();
  private readonly stateInfoOf = new Map<StateDecl, StateInfo>();
  private readonly params: ParamInfo[] = [];
  private readonly maps: { decl: MapEventDecl; fromParams: ParamInfo[] }[] = [];
  private readonly root = new Scope();
  private readonly aliasStates = new Map<string, string[]>();
  private initialState: string | null = null;
  private readonly exprs: ExprChecker;
  private readonly stmts: StatementChecker;

  constructor() {
    const ctx: CheckContext = { report: this.report, entities: this.entities, aliasStates: this.aliasStates };
    this.exprs = new ExprChecker(ctx);
    this.stmts = new StatementChecker(ctx, this.exprs);
  }

  model(): CheckedModel {
    return {
      params: this.params,
      entities: this.entities,
      events: this.events,
      states: this.states,
      initialState: this.initialState,
      maps: this.maps,
    };
  }

  run(file: FlowFile): void {
    this.declareEntities(file.entities);
    for (const e of file.entities) this.resolveFields(e);
    this.entityCycles(file.entities);
    this.declareEvents(file.events);
    this.declareParams(file.params);
    this.declareStates(file);
    for (const e of file.events) this.checkAuthorize(e);
    for (const s of file.states) this.checkState(s, this.stateInfoOf.get(s)!);
    for (const m of file.maps) this.checkMap(m);
    this.reachability(file);
  }

  // --- types ---

  private resolveType(ref: TypeRef, site: TypeSite): Ty {
    const report = this.report;
    if (ref.name === "list") {
      if (ref.element === null) {
        report.error(Codes.InvalidTypeArguments, "list needs an element type: list<T>", ref.range);
        return T.error;
      }
      const element = this.resolveType(ref.element, site);
      return element.kind === "error" ? T.error : { kind: "list", element, optional: ref.optional };
    }
    if (ref.element !== null) {
      report.error(Codes.InvalidTypeArguments, `${ref.name} takes no type argument (only list<T> does)`, ref.range);
    }
    if (SCALAR_NAMES.has(ref.name)) {
      if (ref.name === "principal") {
        report.error(
          Codes.PrincipalNotAllowed,
          `principal cannot be the type of ${SITE_WORDS[site]}: it is only the type of the parameter of [Authorize(p => …)]`,
          ref.range,
        );
        return T.error;
      }
      return { kind: ref.name as ScalarKind, optional: ref.optional };
    }
    if (this.entities.has(ref.name)) {
      if (site === "event" || site === "map") {
        report.error(
          Codes.EntityTypeNotAllowed,
          `entity ${ref.name} cannot be the type of ${SITE_WORDS[site]}: entities are workflow parameters and fields`,
          ref.range,
        );
        return T.error;
      }
      return { kind: "entity", name: ref.name, optional: ref.optional };
    }
    report.error(Codes.UnknownType, `unknown type '${ref.name}'`, ref.range);
    return T.error;
  }

  private params_(params: Param[], site: TypeSite, what: string, where: string): ParamInfo[] {
    const seen = new Set<string>();
    const out: ParamInfo[] = [];
    for (const p of params) {
      const type = this.resolveType(p.type, site);
      if (seen.has(p.name.name)) {
        this.duplicate(what, p.name, where);
        continue;
      }
      seen.add(p.name.name);
      out.push({ name: p.name.name, type, range: p.name.range });
    }
    return out;
  }

  /** FLOW100 at the second declaration of a name: "duplicate {what} 'x'[ in {where}]". */
  private duplicate(what: string, name: Ident, where = ""): void {
    this.report.error(Codes.DuplicateName, `duplicate ${what} '${name.name}'${where ? ` in ${where}` : ""}`, name.range);
  }

  // --- entities ---

  private declareEntities(entities: EntityDecl[]): void {
    for (const e of entities) {
      if (SCALAR_NAMES.has(e.name.name) || e.name.name === "list") {
        this.report.error(Codes.ReservedTypeName, `'${e.name.name}' is a built-in type name; an entity needs another name`, e.name.range);
        continue;
      }
      if (this.entities.has(e.name.name)) {
        this.duplicate("entity", e.name);
        continue;
      }
      this.entities.set(e.name.name, { name: e.name.name, fields: new Map(), decl: e });
    }
  }

  private resolveFields(e: EntityDecl): void {
    const info = this.entities.get(e.name.name);
    const own = info?.decl === e ? info : undefined;
    for (const f of e.fields) {
      const type = this.resolveType(f.type, "field");
      const field: FieldInfo = { name: f.name.name, type, range: f.name.range, maxLength: null, minLength: null };
      this.annotations(f.annotations, field);
      if (own === undefined) continue;
      if (own.fields.has(f.name.name)) this.duplicate("field", f.name, `entity ${e.name.name}`);
      else own.fields.set(f.name.name, field);
    }
  }

  private annotations(annotations: EntityDecl["fields"][number]["annotations"], field: FieldInfo): void {
    const report = this.report;
    for (const a of annotations) {
      const name = a.name.name;
      if (name !== "maxLength" && name !== "minLength") {
        report.error(Codes.UnknownAnnotation, `unknown annotation '@${name}': the annotations are @maxLength(n) and @minLength(n)`, a.name.range);
        continue;
      }
      if (field[name] !== null) {
        report.error(Codes.InvalidAnnotation, `@${name} is given twice`, a.range);
        continue;
      }
      if (field.type.kind !== "string" && field.type.kind !== "error") {
        report.error(Codes.InvalidAnnotation, `@${name} applies to string fields; '${field.name}' is ${showType(field.type)}`, a.range);
        continue;
      }
      const v = a.value;
      if (v.type !== "int" || v.value < 0) {
        report.error(Codes.InvalidAnnotation, `@${name} takes a non-negative integer, found ${v.raw}`, v.range);
        continue;
      }
      field[name] = v.value;
    }
    if (field.minLength !== null && field.maxLength !== null && field.minLength > field.maxLength) {
      report.error(
        Codes.InvalidAnnotation,
        `@minLength(${field.minLength}) is greater than @maxLength(${field.maxLength}): no value fits '${field.name}'`,
        field.range,
      );
    }
  }

  /** An entity may not contain itself through non-optional, non-list fields. */
  private entityCycles(decls: EntityDecl[]): void {
    const state = new Map<string, "active" | "done">();
    const reported = new Set<string>();
    const stack: { entity: string; field: FieldInfo | null }[] = [];
    const visit = (name: string): void => {
      state.set(name, "active");
      for (const f of this.entities.get(name)?.fields.values() ?? []) {
        if (f.type.kind !== "entity" || f.type.optional) continue;
        const to = f.type.name;
        stack.push({ entity: name, field: f });
        if (state.get(to) === "active") {
          const from = stack.findIndex((s) => s.entity === to);
          const cycle = stack.slice(from);
          const key = cycle.map((s) => s.entity).sort().join(",");
          if (!reported.has(key)) {
            reported.add(key);
            const path = [...cycle.map((s) => `${s.entity}.${s.field!.name}`), to].join(" → ");
            this.report.error(
              Codes.EntityCycle,
              `entity ${to} contains itself (${path}): make one of these fields optional`,
              cycle[0].field!.range,
            );
          }
        } else if (!state.has(to) && this.entities.has(to)) visit(to);
        stack.pop();
      }
      state.set(name, "done");
    };
    for (const d of decls) if (!state.has(d.name.name) && this.entities.get(d.name.name)?.decl === d) visit(d.name.name);
  }

  // --- events and parameters ---

  private declareEvents(events: EventDecl[]): void {
    for (const e of events) {
      const info: EventInfo = {
        name: e.name.name,
        params: this.params_(e.params, "event", "parameter", `event ${e.name.name}`),
        hasAuthorize: e.authorize.length > 0,
      };
      this.eventInfoOf.set(e, info);
      if (this.events.has(e.name.name)) this.duplicate("event", e.name);
      else this.events.set(e.name.name, info);
    }
  }

  private declareParams(params: Param[]): void {
    for (const p of this.params_(params, "param", "workflow parameter", "")) {
      if (p.type.kind === "entity" && p.type.optional) {
        this.report.error(
          Codes.EntityTypeNotAllowed,
          `the entity parameter '${p.name}' cannot be optional: each entity parameter is a row the run tracks`,
          p.range,
        );
      }
      this.params.push(p);
      this.root.declare({ kind: "workflowParam", name: p.name, type: p.type, range: p.range });
    }
  }

  private checkAuthorize(e: EventDecl): void {
    if (e.authorize.length === 0) return;
    const info = this.eventInfoOf.get(e)!;
    const scope = this.root.child();
    for (const p of info.params) this.stmts.declare(scope, { kind: "eventParam", name: p.name, type: p.type, range: p.range });
    for (const a of e.authorize) {
      const inner = scope.child();
      this.stmts.declare(inner, { kind: "principal", name: a.param.name, type: T.principal, range: a.param.range });
      this.stmts.condition(a.body, { scope: inner, closedAlias: null }, "an Authorize predicate");
    }
  }

  // --- states ---

  private declareStates(file: FlowFile): void {
    const initials: StateDecl[] = [];
    let terminals = 0;
    for (const s of file.states) {
      const info: StateInfo = { name: s.name.name, decl: s, terminal: s.modifier === "terminal", slots: new Map() };
      this.stateInfoOf.set(s, info);
      if (this.states.has(s.name.name)) this.duplicate("state", s.name);
      else this.states.set(s.name.name, info);
      if (s.modifier === "initial") initials.push(s);
      if (s.modifier === "terminal") terminals++;
      for (const m of s.members) {
        if (m.kind !== "subscribe") continue;
        const alias = m.alias.name;
        if (info.slots.has(alias)) {
          this.duplicate("slot alias", m.alias, `state ${s.name.name}`);
          continue;
        }
        info.slots.set(alias, {
          alias,
          state: s.name.name,
          event: this.events.get(m.event.name) ?? null,
          fannedOut: m.forEach !== null,
          elementType: T.error,
          hasDeadline: m.settings.some((x) => x.kind === "deadline"),
          decl: m,
        });
        const owners = this.aliasStates.get(alias) ?? [];
        if (!owners.includes(s.name.name)) owners.push(s.name.name);
        this.aliasStates.set(alias, owners);
      }
    }
    if (initials.length === 0) {
      this.report.error(Codes.NoInitialState, "the workflow has no initial state: mark one state 'initial'", file.name.range);
    } else {
      this.initialState = initials[0].name.name;
      for (const extra of initials.slice(1)) {
        this.report.error(
          Codes.MultipleInitialStates,
          `a second initial state '${extra.name.name}': the workflow already starts in '${this.initialState}'`,
          extra.name.range,
        );
      }
    }
    if (terminals === 0) {
      this.report.error(Codes.NoTerminalState, "the workflow has no terminal state: mark at least one state 'terminal'", file.name.range);
    }
  }

  private checkState(s: StateDecl, info: StateInfo): void {
    const scope = this.root.child();
    for (const slot of info.slots.values()) {
      this.stmts.declare(scope, { kind: "alias", name: slot.alias, type: { kind: "slot", alias: slot.alias }, range: slot.decl.alias.range, slot });
    }
    const env: StmtEnv = { scope, closedAlias: null, state: info };
    for (const m of s.members) {
      if (m.kind !== "subscribe") continue;
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
    const milestones = new Set<string>();
    for (const m of s.members) {
      switch (m.kind) {
        case "subscribe":
          break;
        case "enter":
          this.stmts.block(m.body, env);
          break;
        case "on":
        case "onExpired":
          if (info.terminal) this.terminalMember(m, s);
          else this.checkHandler(m, info, env, m.kind === "on" ? onSeen : expiredSeen);
          break;
        case "milestone":
          if (info.terminal) {
            this.terminalMember(m, s);
            break;
          }
          if (milestones.has(m.name.name)) this.duplicate("milestone", m.name, `state ${s.name.name}`);
          milestones.add(m.name.name);
          this.stmts.condition(m.condition, env, "the condition of a milestone");
          this.stmts.block(m.body, env);
          break;
      }
    }
  }

  private terminalMember(m: Exclude<Member, { kind: "enter" }>, s: StateDecl): void {
    const what = m.kind === "subscribe" ? "slots (subscribe)" : m.kind === "milestone" ? "milestones" : "event handlers";
    const at = m.kind === "milestone" ? m.name.range : m.alias.range;
    this.report.error(
      Codes.TerminalStateMember,
      `terminal state ${s.name.name} cannot have ${what}: a run is finished once it enters a terminal state (only 'enter' runs)`,
      at,
    );
  }

  private checkSubscribe(sub: Subscribe, state: StateInfo, slot: SlotInfo | null): void {
    const report = this.report;
    const event = this.events.get(sub.event.name) ?? null;
    if (event === null) {
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

    const base = this.root.child();
    if (sub.forEach !== null) {
      const t = this.exprs.check(sub.forEach.iterable, { scope: this.root, closedAlias: null });
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
        this.stmts.declare(base, { kind: "fanOut", name: v.name, type: element, range: v.range });
      }
    }
    const env: ExprEnv = { scope: base, closedAlias: null };

    const seen = new Set<string>();
    for (const setting of sub.settings) {
      const name = SETTING_NAMES[setting.kind];
      if (seen.has(setting.kind)) report.error(Codes.DuplicateSetting, `${name} is given twice`, setting.range);
      seen.add(setting.kind);
      switch (setting.kind) {
        case "candidates":
          for (const m of setting.matchers) this.exprs.checkMatcher(m, env);
          break;
        case "requires": {
          const scope = base.child();
          event?.params.forEach((p, i) => {
            const range = sub.params[i]?.range ?? p.range;
            this.stmts.declare(scope, { kind: "eventParam", name: p.name, type: p.type, range });
          });
          this.stmts.condition(setting.expr, { scope, closedAlias: null }, "Requires");
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
        case "deadline": {
          const t = this.exprs.check(setting.expr, env);
          if (t.kind !== "error" && t.kind !== "duration" && t.kind !== "datetime") {
            report.error(Codes.DeadlineType, `Deadline must be a duration or a datetime, found ${showType(t)}`, setting.expr.range);
          }
          break;
        }
      }
    }
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
            this.report.error(Codes.AfterCycle, `After makes a cycle: ${path}; these slots would wait for each other forever`, cycle[0].via!.range);
          }
        } else if (!color.has(to.name)) visit(to.name);
        stack.pop();
      }
      color.set(alias, "done");
    };
    for (const alias of edges.keys()) if (!color.has(alias)) visit(alias);
  }

  private checkHandler(m: Extract<Member, { kind: "on" | "onExpired" }>, state: StateInfo, env: StmtEnv, seen: Set<string>): void {
    const report = this.report;
    const alias = m.alias.name;
    const slot = state.slots.get(alias) ?? null;
    const header = m.kind === "on" ? `on ${alias}(…)` : `on ${alias}.expired`;
    if (slot === null) {
      report.error(Codes.UnknownAlias, `state ${state.name} has no slot alias '${alias}'`, m.alias.range);
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
          this.duplicate("parameter", p, `'${header}'`);
          return;
        }
        names.add(p.name);
        const type = event?.params[i]?.type ?? T.error;
        this.stmts.declare(scope, { kind: "eventParam", name: p.name, type, range: p.range });
      });
    } else if (slot !== null && !slot.hasDeadline) {
      report.warning(
        Codes.ExpiredWithoutDeadline,
        `slot '${alias}' has no Deadline, so 'on ${alias}.expired' never runs`,
        m.alias.range,
      );
    }
    this.handler(m.handler, { scope, closedAlias: slot ? alias : null, state });
  }

  private handler(h: Handler, env: StmtEnv): void {
    this.stmts.statements(h.statements, env);
    for (const arm of h.arms) {
      if (arm.condition !== null) this.stmts.condition(arm.condition, env, "the condition of when");
      if (arm.body !== null) this.stmts.block(arm.body, env);
      if (!this.states.has(arm.target.name)) {
        this.report.error(Codes.UnknownState, `unknown state '${arm.target.name}'`, arm.target.range);
      }
    }
  }

  // --- map event ---

  private checkMap(m: MapEventDecl): void {
    const report = this.report;
    if (this.maps.some((x) => x.decl.from.name === m.from.name)) {
      report.error(Codes.DuplicateName, `event ${m.from.name} is mapped twice`, m.from.range);
    }
    const fromParams = this.params_(m.fromParams, "map", "parameter", `map event ${m.from.name}`);
    this.maps.push({ decl: m, fromParams });
    const scope = new Scope();
    for (const p of fromParams) scope.declare({ kind: "eventParam", name: p.name, type: p.type, range: p.range });
    const env: ExprEnv = { scope, closedAlias: null };
    const target = this.events.get(m.to.name) ?? null;
    if (target === null) {
      report.error(Codes.UnknownEvent, `unknown event '${m.to.name}': a map names an event of this file after 'to'`, m.to.range);
    }
    const given = new Set<string>();
    for (const arg of m.args) {
      const t = this.exprs.check(arg.value, env);
      if (target === null) continue;
      const param = target.params.find((p) => p.name === arg.name.name);
      if (param === undefined) {
        report.error(Codes.MapUnknownParam, `event ${target.name} has no parameter '${arg.name.name}'`, arg.name.range);
        continue;
      }
      if (given.has(param.name)) {
        this.duplicate("argument", arg.name, `the map to ${target.name}`);
        continue;
      }
      given.add(param.name);
      if (t.kind !== "error" && !assignable(t, param.type)) {
        report.error(Codes.TypeMismatch, `'${param.name}' of ${target.name} is ${showType(param.type)}, found ${showType(t)}`, arg.value.range);
      }
    }
    if (target !== null) {
      const missing = target.params.filter((p) => !given.has(p.name)).map((p) => p.name);
      if (missing.length > 0) {
        report.error(Codes.MapMissingParam, `the map must give every parameter of ${target.name}; missing: ${missing.join(", ")}`, m.to.range);
      }
    }
  }

  // --- reachability ---

  private reachability(file: FlowFile): void {
    if (this.initialState === null) return;
    const next = new Map<string, string[]>();
    for (const s of file.states) {
      const targets = next.get(s.name.name) ?? [];
      for (const m of s.members) {
        if (m.kind === "on" || m.kind === "onExpired") for (const a of m.handler.arms) targets.push(a.target.name);
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
      this.report.warning(
        Codes.UnreachableState,
        `state ${s.name.name} is never entered: no arm leads to it from the initial state ${this.initialState}`,
        s.name.range,
      );
    }
  }
}
