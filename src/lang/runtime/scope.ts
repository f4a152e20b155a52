/**
 * Variable bindings of the runtime: `let` locals, bound event and fan-out parameters, innermost
 * first (language reference "Semantics"). A block runs in a child scope; its `let`s end with it.
 */
import type { Value } from "./values.js";

/** A chain of variable bindings. */
export class Scope {
  private readonly vars = new Map<string, Value>();
  constructor(readonly parent: Scope | null = null) {}
  static of(bindings: Record<string, Value>, parent: Scope | null = null): Scope {
    const s = new Scope(parent);
    for (const [k, v] of Object.entries(bindings)) s.vars.set(k, v);
    return s;
  }
  child(): Scope {
    return new Scope(this);
  }
  declare(name: string, value: Value): void {
    this.vars.set(name, value);
  }
  lookup(name: string): { found: boolean; value?: Value; scope?: Scope } {
    for (let s: Scope | null = this; s; s = s.parent) {
      if (s.vars.has(name)) return { found: true, value: s.vars.get(name), scope: s };
    }
    return { found: false };
  }
  set(name: string, value: Value): boolean {
    for (let s: Scope | null = this; s; s = s.parent) {
      if (s.vars.has(name)) {
        s.vars.set(name, value);
        return true;
      }
    }
    return false;
  }
}
