/**
 * FLOW350, a warning: a message sends a link that cannot be live where it is sent (language
 * reference, "Sending a link that is no longer live"). At run time such a message is withdrawn when
 * its step commits, not sent (engine/sql/dead-at-commit.ts); this says so at `slotflow check`.
 *
 * A tracked-row field (`po.link`) assigned from an expression containing `x.CallbackUrl()` — in any
 * state — *holds x's link*. The warning is given where a `send email` or `send message` uses such
 * a field (a `send webhook` is data, delivered whatever links it carries: issue 38, so it is never
 * reported):
 *   - in the handler of `x.expired` of x's own state: x's link died with the deadline;
 *   - in any member (`enter`, `on …`, a timer, a milestone, a slot's `each` block or timer) of a
 *     state x does not belong to: x's slots are closed when their state is left, and their links
 *     with them.
 * A field assigned again earlier in the same block (before the send, in statement order) holds that
 * new value there and is not reported; nor is a field that some slot of the sending state's own
 * (other than the one expiring there) also fills, since it may hold that live link. A `let` assigned from such a field in the block carries it
 * too. Flow-insensitive otherwise: it cannot know whether a run takes a given path, so it warns
 * rather than refuses.
 *
 * Walks the syntax tree only (run after the checker, on a file without errors in these
 * statements); nesting is bounded by the parser's limit (FLOW007).
 */
import type { Expr, FlowFile, Statement, StateDecl } from "./ast.js";
import { Codes } from "./codes.js";
import type { Reporter } from "./info.js";

/** A link holder: the field path (`po.link`), and the slot whose link it holds. */
interface Holder {
  state: string;
  alias: string;
}

/** `a.b.c` for a member chain over a name; null for anything else. */
function pathOf(e: Expr): string | null {
  if (e.kind === "name") return e.name;
  if (e.kind === "member") {
    const head = pathOf(e.object);
    return head === null ? null : `${head}.${e.property.name}`;
  }
  return null;
}

/** Every sub-expression of `e`, `e` first. */
function subExprs(e: Expr, out: Expr[] = []): Expr[] {
  out.push(e);
  switch (e.kind) {
    case "member":
      subExprs(e.object, out);
      break;
    case "call":
      subExprs(e.callee, out);
      for (const a of e.args) subExprs(a, out);
      break;
    case "binary":
      subExprs(e.left, out);
      subExprs(e.right, out);
      break;
    case "unary":
      subExprs(e.operand, out);
      break;
    case "list":
      for (const x of e.elements) subExprs(x, out);
      break;
  }
  return out;
}

/** The aliases `x` of every `x.CallbackUrl()` in `e`. */
function mintedAliases(e: Expr): string[] {
  return subExprs(e).flatMap((s) =>
    s.kind === "call" && s.callee.kind === "member" && s.callee.property.name === "CallbackUrl" && s.callee.object.kind === "name" ? [s.callee.object.name] : [],
  );
}

/** Statements of a block and of the blocks inside it, in order. */
function flat(statements: Statement[], out: Statement[] = []): Statement[] {
  for (const st of statements) {
    out.push(st);
    if (st.kind === "if") {
      flat(st.then, out);
      if (st.else) flat(st.else, out);
    }
  }
  return out;
}

/** The expressions a send statement sends that can hand a person a link (not a `send webhook`'s: data). */
function sent(st: Statement): Expr[] {
  switch (st.kind) {
    case "sendEmail":
      return [st.to, st.subject, st.body, ...(st.replyTo ? [st.replyTo] : []), ...(st.cc ? [st.cc] : [])];
    case "sendMessage":
      return [st.text, ...(st.link ? [st.link] : []), ...(st.label ? [st.label] : [])];
    default:
      return [];
  }
}

/**
 * The blocks of a state's members, each with what runs it: `{ on: "x.expired" | null, statements }`;
 * a slot's `each` block and its timers (`after`/`every` inside `subscribe` or `call`) included.
 */
function blocks(state: StateDecl): { expiredOf: string | null; statements: Statement[] }[] {
  const out: { expiredOf: string | null; statements: Statement[] }[] = [];
  for (const m of state.members) {
    const arms = (a: { body: Statement[] | null }[]) => a.flatMap((x) => x.body ?? []);
    switch (m.kind) {
      case "enter":
        out.push({ expiredOf: null, statements: [...m.body, ...arms(m.arms)] });
        break;
      case "on":
      case "onFailed":
      case "timer":
        out.push({ expiredOf: null, statements: [...m.handler.statements, ...arms(m.handler.arms)] });
        break;
      case "onExpired":
        out.push({ expiredOf: m.alias.name, statements: [...m.handler.statements, ...arms(m.handler.arms)] });
        break;
      case "milestone":
        out.push({ expiredOf: null, statements: m.body });
        break;
      case "subscribe":
      case "call":
        // a slot's own bodies run in its state while it is open: its `each` block and its timers
        // (language reference "Timers on a slot, per element")
        for (const st of m.settings) {
          if (st.kind === "each") out.push({ expiredOf: null, statements: st.body });
          else if (st.kind === "timer") out.push({ expiredOf: null, statements: [...st.handler.statements, ...arms(st.handler.arms)] });
        }
        break;
    }
  }
  return out;
}

/** Reports FLOW350 for `program` (see the module header). */
export function warnDeadLinkSends(program: FlowFile, report: Reporter): void {
  const aliasesOf = new Map<string, Set<string>>();
  for (const s of program.states) {
    aliasesOf.set(s.name.name, new Set(s.members.flatMap((m) => (m.kind === "subscribe" ? [m.alias.name] : []))));
  }
  // Which fields hold which slot's link: assignments `a.b = …x.CallbackUrl()…` in x's state.
  const holders = new Map<string, Holder[]>();
  for (const s of program.states) {
    const own = aliasesOf.get(s.name.name)!;
    for (const b of blocks(s)) {
      for (const st of flat(b.statements)) {
        if (st.kind !== "assign" || st.target.length < 2) continue;
        const path = st.target.map((t) => t.name).join(".");
        for (const alias of mintedAliases(st.value)) {
          if (!own.has(alias)) continue;
          const list = holders.get(path) ?? [];
          if (!list.some((h) => h.state === s.name.name && h.alias === alias)) list.push({ state: s.name.name, alias });
          holders.set(path, list);
        }
      }
    }
  }
  if (holders.size === 0) return;
  for (const s of program.states) {
    const here = s.name.name;
    for (const b of blocks(s)) {
      const reassigned = new Set<string>();
      const lets = new Map<string, string>();
      for (const st of flat(b.statements)) {
        if (st.kind === "assign") reassigned.add(st.target.map((t) => t.name).join("."));
        if (st.kind === "let") {
          const from = subExprs(st.value).map(pathOf).find((p) => p !== null && holders.has(p) && !reassigned.has(p));
          if (from) lets.set(st.name.name, from);
        }
        for (const e of sent(st)) {
          for (const sub of subExprs(e)) {
            const p = pathOf(sub);
            if (p === null) continue;
            const field = lets.get(p) ?? p;
            if (reassigned.has(field)) continue;
            const held = holders.get(field) ?? [];
            // A link of this state's own slot (not the one expiring here) may be what the field holds: no warning.
            if (held.length === 0 || held.some((h) => h.state === here && b.expiredOf !== h.alias)) continue;
            const dead = held.find((h) => h.state === here) ?? held[0];
            const where = dead.state === here ? `in the handler of '${dead.alias}.expired', where that link has expired` : `in state ${here}, where the slot '${dead.alias}' of state ${dead.state} is closed and its link dead`;
            report.warning(
              Codes.DeadLinkSent,
              `'${field}' holds the link of '${dead.alias}' (${dead.alias}.CallbackUrl() in state ${dead.state}); sent ${where}, the message would be withdrawn, not sent. Send a link that is live here, or leave the link out`,
              sub.range,
            );
          }
        }
      }
    }
  }
}
