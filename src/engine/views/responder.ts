/**
 * What a link's responder page shows (issue 10 §1; HTTP API "The responder page"), read without
 * the run lock and without changing anything: the page never spends the link — only the POST does.
 *
 * `responderPage(deps, token)` answers one of:
 *   { ok: true, … }  — the link is live and its slot open: the workflow and event names, the event's
 *                      parameters as they were at the link's minting version (the same signature
 *                      the POST is checked against), with the author's `@label`/`@help`/
 *                      `@multiline`, and the slot's `Title`/`Intro` evaluated now over the run's
 *                      data (null when absent, null-valued or failing: the page then uses its
 *                      default wording);
 *   { ok: false, refusal } — the refusal the POST would get at this moment, so the page can say
 *                      what happened with the POST's status: 404 link-not-found (unknown or
 *                      checksum-invalid token: no database query), 410 link-burned /
 *                      link-retired / link-dead with its reason (a passed deadline counts even
 *                      before the sweeper runs), 409 slot-not-open (the slot waits on `After`).
 *
 * Title and Intro are typed `string`/`string?` over the workflow parameters only (language
 * reference, "The responder page"), so evaluating them reads and never writes; any callback URL in
 * their text is shown with its token as `[redacted]`.
 */
import type { Db } from "../../db.js";
import type { CompiledParam, CompiledSlot, CompiledWorkflow } from "../../lang/compiled.js";
import { display, evaluate, RuntimeFault, Scope } from "../interpreter.js";
import { deadDetail, isTokenShaped, refusalForEndedLink, type LinkStatus } from "../lifecycles/link.js";
import { RefusalCode, refuse, type LinkEndReason, type Refusal } from "../refusals.js";
import { redactTokens, type Sealer } from "../sealing/seal.js";
import { Step, type RunRecord, type RunStatus } from "../step.js";
import { hashToken } from "../sealing/token.js";
import { loadVersion } from "../versions/workflows.js";
import { LIFECYCLES } from "../lifecycles/lifecycles.js";

export interface ResponderDeps {
  db: Db;
  sealer: Sealer;
  baseUrl: string;
}

export type ResponderPage =
  | { ok: true; workflow: string; event: string; params: CompiledParam[]; title: string | null; intro: string | null }
  /** `expiredAt`: the slot's deadline when the link died of it (the page says when; issue 19 item 4). */
  | { ok: false; refusal: Refusal; expiredAt?: Date | null };

const NOT_FOUND = refuse(RefusalCode.LinkNotFound, "No link matches this URL. Check that it was copied whole.");

/** The page for `token`; see the module header. Database faults propagate (the caller answers 503). */
export async function responderPage(deps: ResponderDeps, token: string): Promise<ResponderPage> {
  if (!isTokenShaped(token)) return { ok: false, refusal: NOT_FOUND };
  // the token table first (its own key), then the link by its run (issue 20 item 2)
  const key = await deps.db.linkToken.findUnique({ where: { tokenSha256: hashToken(token) }, select: { runId: true, linkId: true } });
  if (!key) return { ok: false, refusal: NOT_FOUND };
  const link = await deps.db.link.findUnique({
    where: { runId_id: { runId: key.runId, id: key.linkId } },
    select: {
      mintedVersion: true,
      status: true,
      endReason: true,
      slot: { select: { state: true, alias: true, status: true, deadline: true } },
      run: {
        select: { id: true, workflowName: true, version: true, state: true, status: true, visit: true, input: true, milestones: true, finishedAt: true },
      },
    },
  });
  if (!link) return { ok: false, refusal: NOT_FOUND };
  const ended = refusalForEndedLink({ status: link.status as LinkStatus, endReason: link.endReason as LinkEndReason | null });
  if (ended) return { ok: false, refusal: ended, expiredAt: link.endReason === "expired" ? link.slot.deadline : null };
  if (link.run.status === "finished") return { ok: false, refusal: refuse(RefusalCode.LinkDead, deadDetail("run-finished"), { reason: "run-finished" }) };
  if (link.slot.status === "waiting") {
    return {
      ok: false,
      refusal: refuse(RefusalCode.SlotNotOpen, "This response is not open yet: it waits for earlier steps of the workflow. The link stays valid; try again later."),
    };
  }
  if (link.slot.deadline && link.slot.deadline.getTime() <= Date.now()) {
    return { ok: false, refusal: refuse(RefusalCode.LinkDead, deadDetail("expired"), { reason: "expired" }), expiredAt: link.slot.deadline };
  }
  const minted = await loadVersion(deps.db, link.run.workflowName, link.mintedVersion);
  const mintedSlot = minted.states[link.slot.state]?.slots.find((s) => s.alias === link.slot.alias);
  const event = mintedSlot ? minted.events[mintedSlot.event] : undefined;
  if (!event) return { ok: false, refusal: NOT_FOUND };

  const r = link.run;
  const run: RunRecord = {
    id: r.id,
    workflowName: r.workflowName,
    version: r.version,
    state: r.state,
    status: r.status as RunStatus,
    visit: r.visit,
    input: deps.sealer.unsealJson(r.input) as Record<string, unknown>,
    milestones: r.milestones,
    finishedAt: r.finishedAt,
  };
  const current = r.version === link.mintedVersion ? minted : await loadVersion(deps.db, r.workflowName, r.version);
  const text = await pageText(deps, current, run, link.slot.state, link.slot.alias);
  return { ok: true, workflow: r.workflowName, event: event.name, params: event.params, ...text };
}

/** The slot's Title and Intro in the run's current version, evaluated read-only. */
async function pageText(
  deps: ResponderDeps,
  wf: CompiledWorkflow,
  run: RunRecord,
  state: string,
  alias: string,
): Promise<{ title: string | null; intro: string | null }> {
  const decl = wf.states[state]?.slots.find((s) => s.alias === alias);
  if (!decl?.title && !decl?.intro) return { title: null, intro: null };
  const step = await Step.load({ tx: deps.db, sealer: deps.sealer, baseUrl: deps.baseUrl, lifecycles: LIFECYCLES }, wf, run);
  return slotText(step, decl);
}

/**
 * A slot declaration's `Title` and `Intro` evaluated read-only over `step` (null when absent,
 * null-valued or failing; tokens in their text redacted), in `scope` (a fanned-out slot's: its
 * element's variable). Shared by the responder page and the task page (views/task.ts).
 */
export function slotText(step: Step, decl: Pick<CompiledSlot, "title" | "intro">, scope: Scope = Scope.of({})): { title: string | null; intro: string | null } {
  const text = (expr: CompiledSlot["title"]): string | null => {
    if (!expr) return null;
    try {
      const v = evaluate(step, scope, expr);
      return v === null ? null : redactTokens(display(v));
    } catch (err) {
      if (err instanceof RuntimeFault) return null;
      throw err;
    }
  };
  return { title: text(decl.title), intro: text(decl.intro) };
}
