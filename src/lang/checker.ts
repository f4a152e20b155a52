/**
 * The checker: names, types and every declaration rule of a parsed workflow (docs/language.md,
 * "Declarations", "Scopes", "CallbackUrl()", "Versioning"). It reports every problem it finds
 * (never only the first), each with a stable code (codes.ts) and the range of the offending text,
 * and annotates binary operators for the interpreter.
 *
 * Passes: entities → events → workflow parameters → states and their slots → event predicates →
 * state bodies (check-states.ts) → `map event` declarations → reachability. Expressions are typed by
 * check-expr.ts, statements by check-stmt.ts.
 */
import type { EntityDecl, EventDecl, FlowFile, Ident, MapEventDecl, Param, TypeRef } from "./ast.js";
import { Codes } from "./codes.js";
import type { Diagnostic } from "./diagnostics.js";
import { checkParamAnnotations } from "./check-page.js";
import { ExprChecker, type CheckContext, type ExprEnv } from "./check-expr.js";
import { StateChecker } from "./check-states.js";
import { warnDeadLinkSends } from "./check-dead-links.js";
import { StatementChecker } from "./check-stmt.js";
import { Reporter, type EntityInfo, type EventInfo, type FieldInfo, type ParamInfo, type ReturnsInfo, type StateInfo } from "./info.js";
import { checkWorkflowReturns } from "./check-calls.js";
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
  /** `returns E` of the workflow (v0.5 Results); null when it declares none. */
  returns: ReturnsInfo | null;
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

class Checker {
  readonly report = new Reporter();
  private readonly entities = new Map<string, EntityInfo>();
  private readonly events = new Map<string, EventInfo>();
  private readonly eventInfoOf = new Map<EventDecl, EventInfo>();
  private readonly params: ParamInfo[] = [];
  private readonly maps: { decl: MapEventDecl; fromParams: ParamInfo[] }[] = [];
  private readonly root = new Scope();
  private readonly aliasStates = new Map<string, string[]>();
  private readonly exprs: ExprChecker;
  private readonly stmts: StatementChecker;
  private readonly statesChecker: StateChecker;
  private readonly ctx: CheckContext;
  /** The workflow's `returns E` (v0.5 Results); null when it declares none. */
  private returns: ReturnsInfo | null = null;

  constructor() {
    const ctx: CheckContext = { report: this.report, entities: this.entities, aliasStates: this.aliasStates, returns: null };
    this.ctx = ctx;
    this.exprs = new ExprChecker(ctx);
    this.stmts = new StatementChecker(ctx, this.exprs);
    this.statesChecker = new StateChecker({
      report: this.report,
      events: this.events,
      root: this.root,
      aliasStates: this.aliasStates,
      exprs: this.exprs,
      stmts: this.stmts,
      duplicate: (what, name, where) => this.duplicate(what, name, where),
    });
  }

  model(): CheckedModel {
    return {
      params: this.params,
      entities: this.entities,
      events: this.events,
      states: this.statesChecker.states,
      initialState: this.statesChecker.initialState,
      maps: this.maps,
      returns: this.returns,
    };
  }

  run(file: FlowFile): void {
    this.declareEntities(file.entities);
    for (const e of file.entities) this.resolveFields(e);
    this.entityCycles(file.entities);
    this.declareEvents(file.events);
    this.returns = checkWorkflowReturns(this.report, file, this.events);
    this.ctx.returns = this.returns;
    this.declareParams(file.params);
    this.statesChecker.declare(file);
    for (const e of file.events) this.checkAuthorize(e);
    this.statesChecker.checkAll(file);
    for (const m of file.maps) this.checkMap(m);
    this.statesChecker.reachability(file);
    this.statesChecker.leftAtOnce(file);
    warnDeadLinkSends(file, this.report);
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
      const { page, rules } = checkParamAnnotations(this.report, p, type, site === "event");
      out.push({ name: p.name.name, type, range: p.name.range, ...(page ? { page } : {}), ...(rules ? { rules } : {}) });
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
      if (v !== null && (v.type === "int" || v.type === "decimal") && v.invalid) continue;
      if (v === null || v.type !== "int" || v.value < 0) {
        report.error(Codes.InvalidAnnotation, `@${name} takes a non-negative integer, found ${v?.raw ?? "nothing"}`, v?.range ?? a.range);
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

}
