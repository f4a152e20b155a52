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
 *                      default wording); a string parameter whose compiled
 *                      `page.choices` (built-ins only) gives a list gets it in `page.options`;
 *   { ok: false, refusal } — the refusal the POST would get at this moment, so the page can say
 *                      what happened with the POST's status: 404 link-not-found (unknown or
 *                      checksum-invalid token: no database query), 410 link-burned /
 *                      link-retired / link-dead with its reason (a passed deadline counts even
 *                      before the sweeper runs), 409 slot-not-open (the slot waits on `After`).
 *
 * Title and Intro are typed `string`/`string?` over the workflow parameters only (language
 * reference, "The responder page"), so evaluating them reads and never writes; any callback URL in
 * their text is shown with its token as `[redacted]`. With `{ markNumbers: true }` each int or
 * decimal joined into their text is wrapped in NUMBER_MARK's two characters (private-use code
 * points), so the page can write it for the reader's locale (web/page/document.ts); so is each
 * bool (`b:true`) and datetime (`d:2026-11-25T14:00:00.000Z`) (issue 42: Yes/No in the reader's
 * language, the date in the reader's time zone).
 */
import type { Db } from "../../db.js";
import type { CompiledParam, CompiledSlot, CompiledWorkflow } from "../../lang/compiled.js";
import type { Expr } from "../../lang/ast.js";
import { display, evaluate, RuntimeFault, Scope, type World } from "../../lang/runtime/interpreter.js";
import { deadDetail, isTokenShaped, refusalForEndedLink, type LinkStatus } from "../lifecycles/link.js";
import { RefusalCode, refuse, type LinkEndReason, type Refusal } from "../refusals.js";
import { redactTokens, type Sealer } from "../sealing/seal.js";
import { Step, type RunRecord, type RunStatus } from "../step.js";
import { slotScope } from "../lifecycles/slot.js";
import { hashToken } from "../sealing/token.js";
import { loadVersion } from "../versions/workflows.js";
import { LIFECYCLES } from "../lifecycles/lifecycles.js";
import { FORWARD_LIMIT } from "../commands/forward.js";

export interface ResponderDeps {
  db: Db;
  sealer: Sealer;
  baseUrl: string;
}

export type ResponderPage =
  | {
      ok: true;
      workflow: string;
      event: string;
      params: CompiledParam[];
      title: string | null;
      intro: string | null;
      /** The slot's `Forwardable` holds now and its link was forwarded fewer than FORWARD_LIMIT times (v0.4). */
      forwardable: boolean;
      /** The slot's `Language` evaluated (v0.5, issue 42), or null (absent, null or failing). */
      language: string | null;
      /** The author's `Title`/`Intro` variants by BCP 47 tag, evaluated like `title`/`intro` (issue 42); empty without variants. */
      titles: Record<string, string>;
      intros: Record<string, string>;
    }
  /** `expiredAt`: the slot's deadline when the link died of it (the page says when; issue 19 item 4). */
  | { ok: false; refusal: Refusal; expiredAt?: Date | null };

/**
 * The characters around a number in a marked Title or Intro: U+E000, the number as JavaScript
 * prints it, U+E001 (Unicode private use: no text of the language means anything by them).
 */
export const NUMBER_MARK = { open: "\uE000", close: "\uE001" } as const;

const NOT_FOUND = refuse(RefusalCode.LinkNotFound, "No link matches this URL. Check that it was copied whole.");

/** The page for `token`; see the module header. Database faults propagate (the caller answers 503). */
export async function responderPage(deps: ResponderDeps, token: string, opts: { markNumbers?: boolean } = {}): Promise<ResponderPage> {
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
      slot: { select: { id: true, state: true, alias: true, status: true, deadline: true, forwards: true } },
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
  const text = await pageText(deps, current, run, link.slot, opts.markNumbers === true);
  const params = await withOptions(deps, current, run, event.params);
  return { ok: true, workflow: r.workflowName, event: event.name, params, ...text };
}

/** Most answers a page lists as radio buttons; a longer list stays a text field. */
const MAX_OPTIONS = 50;

/**
 * The parameters with the values of their `page.choices` (built-ins only; compiled.ts ParamPage)
 * evaluated over the run's data into `page.options`: a list of distinct strings, at most
 * MAX_OPTIONS; anything else (null, a fault, another type) leaves the parameter a text field.
 */
async function withOptions(deps: ResponderDeps, wf: CompiledWorkflow, run: RunRecord, params: CompiledParam[]): Promise<CompiledParam[]> {
  if (!params.some((p) => p.page?.choices)) return params;
  const step = await Step.load({ tx: deps.db, sealer: deps.sealer, baseUrl: deps.baseUrl, lifecycles: LIFECYCLES }, wf, run);
  return params.map((p) => {
    if (!p.page?.choices || p.type.kind !== "string") return p;
    let v: unknown;
    try {
      v = evaluate(step, Scope.of({}), p.page.choices);
    } catch (err) {
      if (err instanceof RuntimeFault) return p;
      throw err;
    }
    if (!Array.isArray(v) || v.length === 0 || v.length > MAX_OPTIONS || !v.every((c) => typeof c === "string")) return p;
    const options = [...new Set(v as string[])].map((c) => redactTokens(c));
    return { ...p, page: { ...p.page, options } };
  });
}

/**
 * The slot's Title and Intro in the run's current version, evaluated read-only; and whether it is
 * forwardable now (`Forwardable` true — a failure counts as false — and fewer than FORWARD_LIMIT
 * forwards so far).
 */
async function pageText(
  deps: ResponderDeps,
  wf: CompiledWorkflow,
  run: RunRecord,
  slotRow: { id: string; state: string; alias: string; forwards: number },
  markNumbers: boolean,
): Promise<PageText> {
  const decl = wf.states[slotRow.state]?.slots.find((s) => s.alias === slotRow.alias);
  if (!decl?.title && !decl?.intro && !decl?.forwardable && !decl?.language && !decl?.titles && !decl?.intros) {
    return { title: null, intro: null, forwardable: false, language: null, titles: {}, intros: {} };
  }
  const loaded = await Step.load({ tx: deps.db, sealer: deps.sealer, baseUrl: deps.baseUrl, lifecycles: LIFECYCLES }, wf, run);
  let forwardable = false;
  const slot = loaded.slots.find((s) => s.id === slotRow.id);
  if (decl.forwardable && slot && slotRow.forwards < FORWARD_LIMIT) {
    try {
      forwardable = evaluate(loaded, slotScope(loaded, slot), decl.forwardable) === true;
    } catch (err) {
      if (!(err instanceof RuntimeFault)) throw err;
    }
  }
  // The step with numbers marked: an object whose prototype is the step, so every other member is the step's.
  const numberText = (n: number) => `${NUMBER_MARK.open}${String(n)}${NUMBER_MARK.close}`;
  // issue 42: a bool as `b:true`, a datetime as `d:<ISO 8601>` between the marks (the page writes them in the reader's language)
  const valueText = (v: boolean | Date) => `${NUMBER_MARK.open}${typeof v === "boolean" ? `b:${v}` : `d:${v.toISOString()}`}${NUMBER_MARK.close}`;
  const step: World = markNumbers ? Object.create(loaded, { numberText: { value: numberText }, valueText: { value: valueText } }) : loaded;
  const scope = slot ? slotScope(loaded, slot) : Scope.of({});
  const variants = (exprs: Record<string, Expr> | undefined): Record<string, string> => slotVariants(step, scope, exprs);
  return {
    title: slotText(step, scope, decl.title),
    intro: slotText(step, scope, decl.intro),
    forwardable,
    language: slotText(loaded, scope, decl.language),
    titles: variants(decl.titles),
    intros: variants(decl.intros),
  };
}

/** What pageText reads of a slot (see ResponderPage). */
interface PageText {
  title: string | null;
  intro: string | null;
  forwardable: boolean;
  language: string | null;
  titles: Record<string, string>;
  intros: Record<string, string>;
}

/**
 * A slot's `Title` or `Intro` (`expr`) evaluated read-only over the run's data and, for a fanned-out
 * slot, its element (language reference, "The responder page"): the text with any callback URL's
 * token shown as `[redacted]`, or null when the setting is absent, is null, or fails at runtime
 * (the page then uses its default wording). `scope`: the slot's (slotScope: its fan-out variable) or an empty one.
 * Shared by the responder page and the inbox (v0.4 "People inside the company").
 */
export function slotText(step: World, scope: Scope, expr: Expr | null | undefined): string | null {
  if (!expr) return null;
  try {
    const v = evaluate(step, scope, expr);
    return v === null ? null : redactTokens(display(v));
  } catch (err) {
    if (err instanceof RuntimeFault) return null;
    throw err;
  }
}

/**
 * A slot declaration's `Title` and `Intro` together (see slotText), in `scope` (a fanned-out slot's:
 * its element's variable). Used by the task page (views/task.ts).
 */
export function slotTexts(
  step: World,
  decl: Pick<CompiledSlot, "title" | "intro" | "titles" | "intros">,
  scope: Scope = Scope.of({}),
): { title: string | null; intro: string | null; titles: Record<string, string>; intros: Record<string, string> } {
  return { title: slotText(step, scope, decl.title), intro: slotText(step, scope, decl.intro), titles: slotVariants(step, scope, decl.titles), intros: slotVariants(step, scope, decl.intros) };
}

/**
 * A text's language variants (`Title: …, de: …`; language.md "Languages of the responder"),
 * each evaluated as slotText does, by canonical BCP 47 tag; a variant that evaluates to null (or
 * fails) is left out, so the page falls back to the default wording. Empty without variants.
 */
export function slotVariants(step: World, scope: Scope, exprs: Record<string, Expr> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [tag, expr] of Object.entries(exprs ?? {})) {
    const text = slotText(step, scope, expr);
    if (text !== null) out[tag] = text;
  }
  return out;
}
