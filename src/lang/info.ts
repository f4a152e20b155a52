/**
 * What the checker knows about each declaration once it has resolved it, and the one place that
 * collects diagnostics.
 */
import type { CallDecl, EntityDecl, Ident, Range, StateDecl, Subscribe } from "./ast.js";
import type { ParamPage, ParamRules } from "./compiled.js";
import type { Diagnostic } from "./diagnostics.js";
import type { Ty } from "./types.js";

export interface FieldInfo {
  name: string;
  type: Ty;
  range: Range;
  maxLength: number | null;
  minLength: number | null;
}

export interface EntityInfo {
  name: string;
  fields: Map<string, FieldInfo>;
  decl: EntityDecl;
}

export interface ParamInfo {
  name: string;
  type: Ty;
  range: Range;
  /** An event parameter's responder-page wording (check-page.ts); absent when none is given. */
  page?: ParamPage;
  /** An event parameter's constraints (check-constraints.ts); absent when none is given. */
  rules?: ParamRules;
}

export interface EventInfo {
  name: string;
  params: ParamInfo[];
  hasAuthorize: boolean;
}

/** A slot declared by `subscribe E(…) as alias` (or, v0.5, `call … as alias`) in a state. */
export interface SlotInfo {
  alias: string;
  state: string;
  /** The subscribed event; for a call, its `returns` event (null without `returns`, or when unknown). */
  event: EventInfo | null;
  fannedOut: boolean;
  /** The fan-out variable's element type (`error` when not fanned out or unknown). */
  elementType: Ty;
  hasDeadline: boolean;
  decl: Subscribe | CallDecl;
  /** v0.5: set when the slot is a call's (answered by its callee only; `x.error`, `on x.failed`). */
  call?: CallDecl;
}

/** The workflow's `returns E` (v0.5 Results), as the checker resolved it. */
export interface ReturnsInfo {
  name: Ident;
  /** Null when E names no event (already reported, FLOW378). */
  event: EventInfo | null;
}

export interface StateInfo {
  name: string;
  decl: StateDecl;
  terminal: boolean;
  /** The first slot of each alias, by alias. */
  slots: Map<string, SlotInfo>;
}

/** Collects diagnostics in the order they are found. */
export class Reporter {
  readonly diagnostics: Diagnostic[] = [];

  error(code: string, message: string, range: Range): void {
    this.diagnostics.push({ code, severity: "error", message, range });
  }

  warning(code: string, message: string, range: Range): void {
    this.diagnostics.push({ code, severity: "warning", message, range });
  }
}
