/**
 * Name scopes of the checker (docs/language.md, "Scopes"). A scope maps names to bindings and has
 * a parent; a name may not be declared again while an outer binding of it is visible (no
 * shadowing), which `declare` reports by returning the binding it would hide.
 */
import type { Range } from "./ast.js";
import type { SlotInfo } from "./info.js";
import type { Ty } from "./types.js";

export type BindingKind =
  | "workflowParam" // read-only; its fields are assignable when it is entity-typed
  | "eventParam" // read-only
  | "fanOut" // read-only
  | "let" // assignable
  | "alias" // a slot alias: not a value
  | "principal"; // the parameter of an Authorize predicate

export interface Binding {
  kind: BindingKind;
  name: string;
  type: Ty;
  range: Range;
  slot?: SlotInfo;
}

const KIND_WORDS: Record<BindingKind, string> = {
  workflowParam: "workflow parameter",
  eventParam: "event parameter",
  fanOut: "fan-out variable",
  let: "local",
  alias: "slot alias",
  principal: "principal parameter",
};

/** How a binding's kind reads in a message ("workflow parameter"). */
export function bindingWord(kind: BindingKind): string {
  return KIND_WORDS[kind];
}

export class Scope {
  private readonly names = new Map<string, Binding>();

  constructor(readonly parent: Scope | null = null) {}

  /** A new scope inside this one. */
  child(): Scope {
    return new Scope(this);
  }

  /** The visible binding of `name`, innermost first. */
  lookup(name: string): Binding | undefined {
    for (let s: Scope | null = this; s !== null; s = s.parent) {
      const b = s.names.get(name);
      if (b !== undefined) return b;
    }
    return undefined;
  }

  /**
   * Declares `b` here unless `b.name` is already visible; returns the visible binding it would
   * have hidden (and then declares nothing), or undefined when it was declared.
   */
  declare(b: Binding): Binding | undefined {
    const existing = this.lookup(b.name);
    if (existing !== undefined) return existing;
    this.names.set(b.name, b);
    return undefined;
  }
}
