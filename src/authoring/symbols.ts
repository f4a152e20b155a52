/**
 * Every named thing of a checked `.flow` file and every place it is written: the index the
 * language server answers definition, references, rename, hover and the outline from (issue 21
 * item 2). Built from the syntax tree the compiler produced (src/lang/ast.ts), with the scope
 * rules of docs/language.md "Scopes" (as src/lang/check-states.ts and scope.ts apply them):
 *
 * - states, events, entities, workflow parameters: file-wide;
 * - an entity's fields: by entity (a member `x.f` resolves through the type of `x`);
 * - an event's parameters: by event; the names of `subscribe E(a, b)` and the names used in that
 *   slot's `Requires` are that event's parameters, and so are the names of a `map event … to E(a: …)`;
 * - slot aliases: by state (a name in another state resolves to the first state declaring it);
 * - `let` bindings: from the statement on, to the end of their block; handler parameters, fan-out
 *   variables and an `[Authorize(p => …)]` parameter: in their handler, slot or predicate.
 *
 * Node kinds this module does not know (syntax added later) are walked generically: their
 * expressions, statements and arms are still found, so names inside them resolve. Depth-bounded.
 */
import type {
  Arm, CallDecl, EntityDecl, EventDecl, Expr, FlowFile, Handler, Ident, Param, Range, Statement, StateDecl, Subscribe, TypeRef,
} from "../lang/ast.js";

export type SymbolKind = "workflow" | "state" | "event" | "entity" | "field" | "eventParam" | "param" | "alias" | "let" | "handlerParam" | "fanOut" | "principal" | "milestone";

export interface FlowSymbol {
  id: number;
  kind: SymbolKind;
  name: string;
  /** The range of the declaring name. */
  decl: Range;
  /** The whole declaration (for hover and the outline). */
  full: Range;
  /** The state of an alias, the entity of a field, the event of an event parameter. */
  container: string | null;
  /** The declared type of a value (source text), when it has one. */
  type: TypeRef | null;
  children: FlowSymbol[];
}

export interface Occurrence {
  symbol: FlowSymbol;
  range: Range;
  isDecl: boolean;
}

export interface SymbolIndex {
  symbols: FlowSymbol[];
  occurrences: Occurrence[];
  /** The occurrence whose range holds `offset` (end inclusive, so a cursor right after a name finds it). */
  at(offset: number): Occurrence | null;
  /** Every occurrence of `symbol`, declaration first. */
  occurrencesOf(symbol: FlowSymbol): Occurrence[];
  /** The top-level symbol of `kind` named `name`. */
  find(kind: SymbolKind, name: string, container?: string | null): FlowSymbol | undefined;
  /** The state whose declaration holds `offset`. */
  stateAt(offset: number): FlowSymbol | undefined;
}

const MAX_DEPTH = 500;

interface Scope {
  parent: Scope | null;
  names: Map<string, FlowSymbol>;
}

const child = (parent: Scope | null): Scope => ({ parent, names: new Map() });
function lookup(scope: Scope | null, name: string): FlowSymbol | undefined {
  for (let s = scope; s !== null; s = s.parent) {
    const hit = s.names.get(name);
    if (hit !== undefined) return hit;
  }
  return undefined;
}

/** Builds the index of `file` (a tree from `compile`, checked or not). */
export function buildIndex(file: FlowFile): SymbolIndex {
  return new Indexer(file).build();
}

class Indexer {
  private nextId = 1;
  private readonly symbols: FlowSymbol[] = [];
  private readonly occurrences: Occurrence[] = [];
  private readonly top = new Map<string, FlowSymbol>();
  private readonly eventDecls = new Map<string, EventDecl>();
  private readonly entityDecls = new Map<string, EntityDecl>();
  private readonly aliases = new Map<string, Map<string, FlowSymbol>>();
  /** The members that declare each state's aliases: a `subscribe`, or (v0.5) a `call`. */
  private readonly subscribes = new Map<string, Map<string, Subscribe | CallDecl>>();
  private readonly root: Scope = child(null);

  constructor(private readonly file: FlowFile) {}

  build(): SymbolIndex {
    const f = this.file;
    this.declare("workflow", f.name, f.range, null, null);
    for (const e of f.entities) {
      const sym = this.declare("entity", e.name, e.range, null, null, `entity:${e.name.name}`);
      this.entityDecls.set(e.name.name, e);
      for (const fd of e.fields) sym.children.push(this.declare("field", fd.name, fd.range, e.name.name, fd.type, `field:${e.name.name}.${fd.name.name}`, false));
    }
    for (const ev of f.events) {
      const sym = this.declare("event", ev.name, ev.range, null, null, `event:${ev.name.name}`);
      this.eventDecls.set(ev.name.name, ev);
      for (const p of ev.params) sym.children.push(this.declare("eventParam", p.name, p.range, ev.name.name, p.type, `eventParam:${ev.name.name}.${p.name.name}`, false));
    }
    for (const p of f.params) this.root.names.set(p.name.name, this.declare("param", p.name, p.range, null, p.type, `param:${p.name.name}`));
    for (const s of f.states) {
      const sym = this.declare("state", s.name, s.range, null, null, `state:${s.name.name}`);
      const aliases = new Map<string, FlowSymbol>();
      const subs = new Map<string, Subscribe | CallDecl>();
      for (const m of s.members) {
        if ((m.kind === "subscribe" || m.kind === "call") && !aliases.has(m.alias.name)) {
          const a = this.declare("alias", m.alias, m.range, s.name.name, null, null, false);
          aliases.set(m.alias.name, a);
          subs.set(m.alias.name, m);
          sym.children.push(a);
        } else if (m.kind === "milestone") {
          sym.children.push(this.declare("milestone", m.name, m.range, s.name.name, null, null, false));
        }
      }
      this.aliases.set(s.name.name, aliases);
      this.subscribes.set(s.name.name, subs);
    }

    // Types in declarations.
    for (const p of f.params) this.typeRef(p.type, 0);
    for (const e of f.entities) for (const fd of e.fields) this.typeRef(fd.type, 0);
    for (const ev of f.events) {
      for (const p of ev.params) this.typeRef(p.type, 0);
      const params = this.eventParamScope(ev.name.name, this.root);
      for (const a of ev.authorize) {
        const scope = child(params);
        scope.names.set(a.param.name, this.declare("principal", a.param, a.range, null, null, null, false));
        this.expr(a.body, scope, 0);
      }
    }
    if (f.returns) this.ref("event", f.returns.name, f.returns.range); // v0.5 Results
    for (const s of f.states) this.state(s);
    for (const m of f.maps) {
      this.ref("event", m.from.name, m.from.range);
      this.ref("event", m.to.name, m.to.range);
      const scope = child(this.root);
      for (const p of m.fromParams) {
        this.typeRef(p.type, 0);
        const prev = this.declare("eventParam", p.name, p.range, m.from.name, p.type, null, false);
        scope.names.set(p.name.name, prev);
      }
      for (const a of m.args) {
        const target = this.top.get(`eventParam:${m.to.name}.${a.name.name}`);
        if (target) this.occur(target, a.name.range, false);
        this.expr(a.value, scope, 0);
      }
    }
    return this.index();
  }

  private index(): SymbolIndex {
    const occurrences = this.occurrences.sort((a, b) => a.range.start.offset - b.range.start.offset);
    const bySymbol = new Map<FlowSymbol, Occurrence[]>();
    for (const o of occurrences) {
      const list = bySymbol.get(o.symbol) ?? [];
      if (o.isDecl) list.unshift(o);
      else list.push(o);
      bySymbol.set(o.symbol, list);
    }
    const top = this.top;
    const states = this.symbols.filter((s) => s.kind === "state");
    return {
      symbols: this.symbols,
      occurrences,
      at(offset) {
        let lo = 0;
        let hi = occurrences.length - 1;
        let found: Occurrence | null = null;
        // Occurrences never overlap; find the last one starting at or before `offset`.
        while (lo <= hi) {
          const mid = (lo + hi) >> 1;
          if (occurrences[mid].range.start.offset <= offset) {
            found = occurrences[mid];
            lo = mid + 1;
          } else hi = mid - 1;
        }
        return found !== null && offset <= found.range.end.offset ? found : null;
      },
      occurrencesOf: (symbol) => bySymbol.get(symbol) ?? [],
      find: (kind, name, container) => top.get(container ? `${kind}:${container}.${name}` : `${kind}:${name}`),
      stateAt: (offset) => states.find((s) => s.full.start.offset <= offset && offset <= s.full.end.offset),
    };
  }

  private declare(kind: SymbolKind, name: Ident, full: Range, container: string | null, type: TypeRef | null, key: string | null = null, listed = true): FlowSymbol {
    const sym: FlowSymbol = { id: this.nextId++, kind, name: name.name, decl: name.range, full, container, type, children: [] };
    if (listed) this.symbols.push(sym);
    if (key !== null && !this.top.has(key)) this.top.set(key, sym);
    this.occur(sym, name.range, true);
    return sym;
  }

  private occur(symbol: FlowSymbol, range: Range, isDecl: boolean): void {
    if (range.end.offset <= range.start.offset && range.start.offset === 0 && range.end.offset === 0) return;
    this.occurrences.push({ symbol, range, isDecl });
  }

  private ref(kind: SymbolKind, name: string, range: Range, container?: string): void {
    const sym = this.top.get(container ? `${kind}:${container}.${name}` : `${kind}:${name}`);
    if (sym) this.occur(sym, range, false);
  }

  private typeRef(t: TypeRef | null, depth: number): void {
    if (t === null || depth > MAX_DEPTH) return;
    if (t.name === "list") return this.typeRef(t.element, depth + 1);
    const start = t.range.start;
    const range: Range = { start, end: { line: start.line, column: start.column + t.name.length, offset: start.offset + t.name.length } };
    this.ref("entity", t.name, range);
  }

  /** A scope holding event `name`'s parameters (for `Requires` and `[Authorize]`). */
  private eventParamScope(name: string, parent: Scope): Scope {
    const scope = child(parent);
    for (const p of this.eventDecls.get(name)?.params ?? []) {
      const sym = this.top.get(`eventParam:${name}.${p.name.name}`);
      if (sym) scope.names.set(p.name.name, sym);
    }
    return scope;
  }

  private stateScope(state: string): Scope {
    const scope = child(this.root);
    for (const [name, sym] of this.aliases.get(state) ?? []) scope.names.set(name, sym);
    return scope;
  }

  private aliasRef(state: string, id: Ident): void {
    const sym = this.aliases.get(state)?.get(id.name) ?? [...this.aliases.values()].find((m) => m.has(id.name))?.get(id.name);
    if (sym) this.occur(sym, id.range, false);
  }

  private state(s: StateDecl): void {
    const state = s.name.name;
    const scope = this.stateScope(state);
    const fanOuts = new Map<string, FlowSymbol>();
    for (const m of s.members) {
      if (m.kind !== "subscribe" && m.kind !== "call") continue;
      if (m.kind === "subscribe") {
        this.ref("event", m.event.name, m.event.range);
        for (const p of m.params) this.ref("eventParam", p.name, p.range, m.event.name);
      } else if (m.returns) this.ref("event", m.returns.name, m.returns.range); // v0.5 calls
      let base = scope;
      if (m.forEach !== null) {
        this.expr(m.forEach.iterable, scope, 0);
        base = child(scope);
        const v = this.declare("fanOut", m.forEach.variable, m.forEach.variable.range, state, null, null, false);
        base.names.set(v.name, v);
        if (!fanOuts.has(m.alias.name)) fanOuts.set(m.alias.name, v);
      }
      for (const setting of m.settings) {
        if (setting.kind === "after") for (const a of setting.aliases) this.aliasRef(state, a);
        else if (setting.kind === "candidates") for (const e of setting.matchers) this.expr(e, base, 0);
        else if (setting.kind === "requires" && m.kind === "subscribe") {
          const params = this.eventParamScope(m.event.name, base);
          this.expr(setting.expr, params, 0);
          if (setting.wording) this.expr(setting.wording, params, 0);
        }
        else if (setting.kind === "each") this.statements(setting.body, base, 0); // v0.4: its locals, the fan-out variable, the aliases
        else this.generic(setting, base, 0);
      }
    }
    for (const m of s.members) {
      switch (m.kind) {
        case "subscribe":
        case "call":
          break;
        case "enter":
          this.statements(m.body, scope, 0);
          break;
        case "milestone":
          this.expr(m.condition, scope, 0);
          this.statements(m.body, scope, 0);
          break;
        case "on":
        case "onExpired":
        case "onFailed": {
          this.aliasRef(state, m.alias);
          let hs = child(scope);
          const fan = fanOuts.get(m.alias.name);
          if (fan) hs.names.set(fan.name, fan);
          if (m.kind === "on") {
            hs = child(hs);
            const sub = this.subscribes.get(state)?.get(m.alias.name);
            const eventName = sub?.kind === "subscribe" ? sub.event.name : sub?.returns?.name;
            const eventParams = eventName ? this.eventDecls.get(eventName)?.params ?? [] : [];
            m.params.forEach((p, i) => {
              if (hs.names.has(p.name)) return;
              hs.names.set(p.name, this.declare("handlerParam", p, p.range, state, eventParams[i]?.type ?? null, null, false));
            });
          }
          this.handler(m.handler, hs, 0);
          break;
        }
        default:
          this.generic(m, scope, 0);
      }
    }
  }

  private handler(h: Handler, scope: Scope, depth: number): void {
    const s = child(scope);
    this.statements(h.statements, s, depth + 1);
    for (const arm of h.arms) this.arm(arm, s, depth + 1);
  }

  private arm(arm: Arm, scope: Scope, depth: number): void {
    if (arm.condition) this.expr(arm.condition, scope, depth + 1);
    if (arm.body) this.statements(arm.body, child(scope), depth + 1);
    this.ref("state", arm.target.name, arm.target.range);
  }

  private statements(list: Statement[], scope: Scope, depth: number): void {
    if (depth > MAX_DEPTH) return;
    const block = child(scope);
    for (const st of list) this.statement(st, block, depth + 1);
  }

  private statement(st: Statement, scope: Scope, depth: number): void {
    if (depth > MAX_DEPTH) return;
    switch (st.kind) {
      case "let": {
        this.expr(st.value, scope, depth + 1);
        const type = this.typeOf(st.value, scope, 0);
        scope.names.set(st.name.name, this.declare("let", st.name, st.range, null, type, null, false));
        return;
      }
      case "assign": {
        const [head, ...path] = st.target;
        const sym = lookup(scope, head.name);
        if (sym) this.occur(sym, head.range, false);
        let type = sym?.type ?? null;
        for (const p of path) type = this.field(type, p);
        this.expr(st.value, scope, depth + 1);
        return;
      }
      case "sendEmail":
        this.expr(st.to, scope, depth + 1);
        this.expr(st.subject, scope, depth + 1);
        this.expr(st.body, scope, depth + 1);
        this.generic({ ...st, kind: "?", to: null, subject: null, body: null }, scope, depth + 1);
        return;
      case "dropSlot": {
        const state = this.stateOf(st.range.start.offset);
        if (state) this.aliasRef(state, st.alias);
        return;
      }
      case "if":
        this.expr(st.condition, scope, depth + 1);
        this.statements(st.then, scope, depth + 1);
        if (st.else) this.statements(st.else, scope, depth + 1);
        return;
      case "expr":
        this.expr(st.expr, scope, depth + 1);
        return;
      default:
        this.generic(st, scope, depth + 1);
    }
  }

  private stateOf(offset: number): string | undefined {
    return this.file.states.find((s) => s.range.start.offset <= offset && offset <= s.range.end.offset)?.name.name;
  }

  /** Walks a node of a kind not listed above: its expressions, statements and arms. */
  private generic(node: unknown, scope: Scope, depth: number): void {
    if (depth > MAX_DEPTH || node === null || typeof node !== "object") return;
    if (Array.isArray(node)) {
      if (node.length > 0 && isStatement(node[0])) this.statements(node as Statement[], scope, depth + 1);
      else for (const x of node) this.generic(x, scope, depth + 1);
      return;
    }
    const n = node as Record<string, unknown>;
    if (isExpr(n)) return this.expr(n as unknown as Expr, scope, depth + 1);
    if (isStatement(n)) return this.statement(n as unknown as Statement, scope, depth + 1);
    if (isArm(n)) return this.arm(n as unknown as Arm, scope, depth + 1);
    if (Array.isArray(n.statements) && Array.isArray(n.arms)) return this.handler(n as unknown as Handler, scope, depth + 1);
    for (const [k, v] of Object.entries(n)) if (k !== "range") this.generic(v, scope, depth + 1);
  }

  private expr(e: Expr, scope: Scope, depth: number): void {
    if (depth > MAX_DEPTH) return;
    switch (e.kind) {
      case "name": {
        const sym = lookup(scope, e.name);
        if (sym) this.occur(sym, e.range, false);
        return;
      }
      case "member": {
        this.expr(e.object, scope, depth + 1);
        this.field(this.typeOf(e.object, scope, 0), e.property);
        return;
      }
      case "call":
        this.expr(e.callee, scope, depth + 1);
        for (const a of e.args) this.expr(a, scope, depth + 1);
        return;
      case "binary":
        this.expr(e.left, scope, depth + 1);
        this.expr(e.right, scope, depth + 1);
        return;
      case "unary":
        this.expr(e.operand, scope, depth + 1);
        return;
      case "list":
        for (const x of e.elements) this.expr(x, scope, depth + 1);
        return;
      case "literal":
        return;
      default:
        this.generic({ ...(e as object), kind: "?" }, scope, depth + 1);
    }
  }

  /** Records `prop` as a field of entity type `type`; returns the field's type. */
  private field(type: TypeRef | null, prop: Ident): TypeRef | null {
    if (type === null || type.name === "list") return null;
    const sym = this.top.get(`field:${type.name}.${prop.name}`);
    if (!sym) return null;
    this.occur(sym, prop.range, false);
    return sym.type;
  }

  /** The declared type of `e` when it is a name or a path of fields (enough to resolve members). */
  private typeOf(e: Expr, scope: Scope, depth: number): TypeRef | null {
    if (depth > MAX_DEPTH) return null;
    if (e.kind === "name") return lookup(scope, e.name)?.type ?? null;
    if (e.kind === "member") {
      const t = this.typeOf(e.object, scope, depth + 1);
      if (t === null || t.name === "list") return null;
      return this.top.get(`field:${t.name}.${e.property.name}`)?.type ?? null;
    }
    if (e.kind === "binary" && e.op === "??") return this.typeOf(e.left, scope, depth + 1);
    return null;
  }
}

const EXPR_KINDS = new Set(["literal", "name", "member", "call", "binary", "unary", "list"]);
const STATEMENT_KINDS = new Set(["let", "assign", "sendEmail", "dropSlot", "if", "expr"]);
const isExpr = (n: unknown) => typeof n === "object" && n !== null && EXPR_KINDS.has((n as { kind?: string }).kind ?? "");
const isStatement = (n: unknown) => typeof n === "object" && n !== null && STATEMENT_KINDS.has((n as { kind?: string }).kind ?? "");
const isArm = (n: unknown) => typeof n === "object" && n !== null && ((n as Arm).kind === "when" || (n as Arm).kind === "default") && "target" in n;

/** The parameters of a declaration as they read in source (`a: int, b: string?`). */
export function paramsText(params: Param[], source: string): string {
  return params.map((p) => source.slice(p.range.start.offset, p.range.end.offset)).join(", ");
}
