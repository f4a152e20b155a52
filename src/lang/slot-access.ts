/**
 * Who may answer a slot through the ordinary path — the raise API, a task page, Slack — as the
 * version a run runs says (issue 38 M2; docs/language.md "Who may answer").
 *
 *   slot has `Candidates`                        "candidates"  its matchers decide (`anyone()`
 *                                                               admits any signed-in principal)
 *   no `Candidates`, form compiled since v0.5     "link-only"   nobody: answered only through its link
 *   no `Candidates`, form compiled before v0.5    "anyone"      any signed-in principal (v0.4 meaning,
 *                                                               kept by the runs of those versions)
 *
 * The rule is stored in the compiled form (`CompiledWorkflow.withoutCandidates`), never taken
 * from the release running it: a version keeps the meaning it was deployed with.
 */
import type { CompiledSlot, CompiledWorkflow } from "./compiled.js";

export type SlotAccess = "candidates" | "link-only" | "anyone";

/** How `decl` (a slot of `wf`) may be answered by a principal; see the module header. */
export function slotAccess(wf: Pick<CompiledWorkflow, "withoutCandidates">, decl: Pick<CompiledSlot, "candidates">): SlotAccess {
  if (decl.candidates) return "candidates";
  return wf.withoutCandidates === "link-only" ? "link-only" : "anyone";
}

/** The refusal's detail when a principal raises a link-only slot (403 not-a-candidate). */
export function linkOnlyDetail(alias: string): string {
  return `Slot "${alias}" has no Candidates: it is answered only through its link, never by a signed-in principal.`;
}
