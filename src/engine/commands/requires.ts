/**
 * The `Requires` gate of raise and deposit (docs/language.md, "Slots"): evaluates the condition in
 * the event's scope and, when it does not hold, answers the 409 `requires-failed` refusal worded by
 * the author (`Requires: … else "wording"`, issue 30 item 8) or, without a wording, by `generic`.
 *
 * The wording is evaluated in the same scope as the condition (run data, the fan-out variable, the
 * event's parameters). It is shown to whoever answered (the 409 `detail`, the responder page), so a
 * callback path in it is shown with its token as `[redacted]`, as the page's Title and Intro are.
 * A wording that evaluates to null, to blank text, or fails at run time (RuntimeFault) falls back to
 * `generic`: the responder is not at fault, and the refusal is what they need to see.
 * Throws RuntimeFault from the condition itself (the caller refuses with handler-failed, as before).
 *
 * Language variants (`else "…", de: "…"`; language.md "Languages of the responder"): `detail`
 * stays the default wording (the API's text does not depend on the caller's language); each
 * variant is evaluated the same way and, when any gives text, the refusal carries them as the
 * problem member `wordings` (`{"de": "…"}`, by canonical BCP 47 tag), from which a page picks the
 * one for its language (the responder page's script, the task page).
 */
import type { Expr } from "../../lang/ast.js";
import type { CompiledSlot } from "../../lang/compiled.js";
import { display, evaluate, RuntimeFault, type Scope } from "../../lang/runtime/interpreter.js";
import { RefusalCode, refuse, type Refusal } from "../refusals.js";
import { redactTokens } from "../sealing/seal.js";
import type { Step } from "../step.js";

/** The longest wording kept in a refusal (UTF-16 code units); longer text is cut with "…". */
export const MAX_REQUIRES_WORDING = 2000;

/** null when `decl` has no `Requires` or it holds; else the refusal. */
export function requiresRefusal(step: Step, scope: Scope, decl: CompiledSlot, generic: string): Refusal | null {
  if (!decl.requires || evaluate(step, scope, decl.requires)) return null;
  const detail = wording(step, scope, decl.requiresWording) ?? generic;
  const wordings: Record<string, string> = {};
  for (const [tag, expr] of Object.entries(decl.requiresWordings ?? {})) {
    const text = wording(step, scope, expr);
    if (text !== null) wordings[tag] = text;
  }
  return refuse(RefusalCode.RequiresFailed, detail, Object.keys(wordings).length > 0 ? { wordings } : undefined);
}

/** A wording evaluated (see the module header): null when absent, null, blank or failing. */
function wording(step: Step, scope: Scope, expr: Expr | undefined): string | null {
  if (!expr) return null;
  try {
    const v = evaluate(step, scope, expr);
    if (v === null) return null;
    const text = redactTokens(display(v)).trim();
    if (text === "") return null;
    return text.length > MAX_REQUIRES_WORDING ? `${text.slice(0, MAX_REQUIRES_WORDING - 1)}…` : text;
  } catch (err) {
    if (err instanceof RuntimeFault) return null;
    throw err;
  }
}
