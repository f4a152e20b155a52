/**
 * Hover of a timer's words `after` and `every` (features.ts `hover`): inside a `subscribe` or
 * `call` block, a timer on the slot (docs/language.md "Timers on a slot, per element"); as a
 * member of a state, the state's timer (docs/language.md section 14). Found in the syntax tree:
 * the word must stand in a timer's header (from the timer's start up to its handler), so `after`
 * of `After:` or of `every P after D`'s delay is told apart by position, not by spelling.
 */
import type { FlowFile, Timer } from "../../lang/ast.js";

/** What the hover says of a timer's word: `signature` (a code span) and `text` (Markdown). */
export interface TimerWord {
  kind: "slot timer" | "timer";
  signature: string;
  text: string;
}

const SLOT_TIMER: Record<"after" | "every", string> = {
  after:
    "A timer on the slot: runs once, D after the slot opens (at entry, or when its `After` is satisfied) — on a fanned-out slot once per open element. It stops when the slot closes (answered, quorum reached, expired, dropped, failed, or the state left). The fan-out variable is in scope and the alias stands for the element's slot, as in `each { … }`, so `x.CallbackUrl()` mints a fresh link for it. May end with arms (`after 10d -> Late`).",
  every:
    "A timer on the slot: runs every P while the slot (each element, when fanned out) is open, the first time P (or D, with `after D`) after it opens; it stops when the slot closes. The fan-out variable is in scope and the alias stands for the element's slot, as in `each { … }`, so `x.CallbackUrl()` mints a fresh link (a reminder with a new link; the old one answers 410 `link-retired`).",
};

const STATE_TIMER: Record<"after" | "every", string> = {
  after: "A timer of the state: runs once, D after the state was entered, while the run stays. May end with arms (`after 3d -> Escalated`).",
  every: "A timer of the state: runs every P while the run stays, the first time P (or D, with `after D`) after entry.",
};

/** The timer whose header (`after D` / `every P [after D]`, before its handler) holds `offset`, and whether it is a slot's. */
function timerAt(ast: FlowFile, offset: number): { timer: Timer; slot: boolean } | null {
  const inHeader = (t: Timer) => t.range.start.offset <= offset && offset <= t.handler.range.start.offset;
  for (const s of ast.states) {
    for (const m of s.members) {
      if (m.kind === "timer" && inHeader(m)) return { timer: m, slot: false };
      if (m.kind === "subscribe" || m.kind === "call") {
        for (const st of m.settings) if (st.kind === "timer" && inHeader(st)) return { timer: st, slot: true };
      }
    }
  }
  return null;
}

/**
 * The hover of `word` (the word under the cursor, at `offset`) when it is a timer's `after` or
 * `every`; null for anything else (a word outside a timer's header, another word, no tree).
 */
export function timerHover(ast: FlowFile | null, offset: number, word: string): TimerWord | null {
  if (ast === null || (word !== "after" && word !== "every")) return null;
  const found = timerAt(ast, offset);
  if (!found) return null;
  const mode = found.timer.mode;
  const signature = mode === "after" ? "after D { … }" : "every P [after D] { … }";
  // the delay `after D` of an `every` timer: that timer's word, explained as such
  const text = (found.slot ? SLOT_TIMER : STATE_TIMER)[mode];
  return { kind: found.slot ? "slot timer" : "timer", signature, text: word === mode ? text : `The first run's delay of this \`every\` timer. ${text}` };
}
