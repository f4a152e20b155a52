/**
 * What a task page shows (v0.4 "People inside the company": `GET /inbox/tasks/{runId}/{alias}
 * [?element=N]`), read without the run lock and changing nothing.
 *
 * `taskView(deps, runId, alias, element, principal)` answers null when the run or its slot is
 * unknown (a run id that is not a UUID, no slot of that alias — the slot of the latest visit that
 * has one — or of that element; a fanned-out slot without `?element`): the page is then a 404.
 * Otherwise:
 *   slot        the slot's status, times, who answered (`answeredBy`, v0.4 "Who answered") and
 *               what (`answer`, the completion arguments; issue 43 item 4);
 *   live        true when the slot is open or waiting in the run's current state and visit of a
 *               running run (only then is there a form);
 *   params      the event's parameters in the run's current version (the responder page's form);
 *   title/intro the slot's `Title`/`Intro` evaluated now (responder.ts `slotTexts`) — only when
 *               the principal may answer (else null, and `answeredBy`, `answer` null: issue 38 L1);
 *   candidates  who may answer (the `Candidates` matchers evaluated now: user ids, role names and
 *               `anyone()`; for a slot of an earlier visit, as recorded at its creation), null when
 *               the slot has none; a name no principal can hold (specials.ts principalName) is left out;
 *   access      lang/slot-access.ts: "candidates", "link-only" (no Candidates, v0.5: nobody
 *               signed in; shown so too when the Candidates name only names no principal can
 *               hold — a built-in's question sent by link, src/mcp/builtins.ts) or "anyone" (no
 *               Candidates in a version compiled before v0.5);
 *   refusal     whether the slot is open or closed, why `principal` may not answer: 403
 *               not-a-candidate when the slot is link-only or `Candidates` admits it not, 403
 *               authorize-denied when an `[Authorize]` predicate of the event is false for it (a
 *               predicate that needs the answer's arguments cannot be judged before the answer:
 *               the raise judges it); else null. Decided by the raise's own gate
 *               (commands/gate.ts; issue 39 item 1: the page had a copy of it).
 * Reads: one statement for the run and its current visit (sql/step-read.ts `readStepUnlocked`;
 * the run is read once), one more only for a slot of an earlier visit; the version from the
 * process's cache. The task page's `POST` submits on this view's gate (engine-client
 * `raiseChecked`); the raise itself checks everything again under the run lock (commands/raise.ts).
 */
import type { Db } from "../../db.js";
import type { CompiledParam, CompiledWorkflow } from "../../lang/compiled.js";
import { linkOnlyDetail, slotAccess, type SlotAccess } from "../../lang/slot-access.js";
import { principalName, RuntimeFault, type Principal } from "../../lang/runtime/interpreter.js";
import { slotScope } from "../lifecycles/slot.js";
import { LIFECYCLES } from "../lifecycles/lifecycles.js";
import type { PrincipalClaims, AnsweredBy } from "../commands/types.js";
import { authorizeRefusal, candidateGate, recordedCandidates } from "../commands/gate.js";
import { RUN_ID } from "../commands/prepare.js";
import { RefusalCode, refuse, type Refusal } from "../refusals.js";
import type { Sealer } from "../sealing/seal.js";
import { readStepUnlocked } from "../sql/step-read.js";
import { Step } from "../step.js";
import { loadVersion } from "../versions/workflows.js";
import { slotTexts } from "./responder.js";

export interface TaskDeps {
  db: Db;
  sealer: Sealer;
  baseUrl: string;
}

export interface TaskView {
  run: { id: string; workflow: string; version: number; state: string; status: string };
  slot: {
    alias: string;
    element: number | null;
    event: string;
    status: string;
    openedAt: Date | null;
    deadline: Date | null;
    closedAt: Date | null;
    answeredBy: AnsweredBy | null;
    /** What was answered: the completion arguments (JSON form) of a completed slot, else null (issue 43 item 4). */
    answer: Record<string, unknown> | null;
  };
  live: boolean;
  params: CompiledParam[];
  title: string | null;
  intro: string | null;
  /** The `Title`/`Intro` language variants by BCP 47 tag (language.md "Languages of the responder"); empty without variants or when refused. */
  titles: Record<string, string>;
  intros: Record<string, string>;
  /** `anyone`: an `anyone()` entry admits any signed-in principal. */
  candidates: { users: string[]; roles: string[]; anyone: boolean } | null;
  /** Who may answer through the ordinary path (lang/slot-access.ts); null when the version lacks the slot. */
  access: SlotAccess | null;
  refusal: Refusal | null;
}

/** What the view reads of a slot: a step's slot (current visit) or a slot row (an earlier visit). */
interface SlotRow {
  state: string;
  visit: number;
  event: string;
  status: string;
  openedAt: Date | null;
  deadline: Date | null;
  closedAt: Date | null;
  answeredBy: unknown;
  args: unknown;
  candidateUsers: string[] | null;
  candidateRoles: string[] | null;
}

interface MatcherValue {
  matcher: "role" | "user" | "anyone";
  value: string;
}

/** The task page of slot `alias` (element `element`) of run `runId` for `principal`; see the module header. */
export async function taskView(deps: TaskDeps, runId: string, alias: string, element: number | null, principal: PrincipalClaims): Promise<TaskView | null> {
  if (!RUN_ID.test(runId)) return null;
  // One round trip for the run and its current visit (sql/step-read.ts `readStepUnlocked`): the
  // run is read once; a slot of an earlier visit costs one more read.
  const read = await readStepUnlocked(deps.db, runId.toLowerCase());
  if (!read.run) return null;
  const wf: CompiledWorkflow = await loadVersion(deps.db, read.run.workflow_name as string, read.run.version as number);
  const step = Step.fromRead({ tx: deps.db, sealer: deps.sealer, baseUrl: deps.baseUrl, lifecycles: LIFECYCLES }, wf, read);
  const run = step.run;
  // the slot of the latest visit that has one: the current visit's (in the step), else an earlier one's
  const slot = step.slots.find((s) => s.alias === alias && s.element === element);
  const row: SlotRow | null = slot ?? (await deps.db.slot.findFirst({ where: { runId: run.id, alias, element }, orderBy: { visit: "desc" } }));
  if (!row) return null;
  const decl = wf.states[row.state]?.slots.find((s) => s.alias === alias);
  const event = wf.events[row.event];
  const live = run.status === "running" && row.state === run.state && row.visit === run.visit && (row.status === "open" || row.status === "waiting");
  const view: TaskView = {
    run: { id: run.id, workflow: run.workflowName, version: run.version, state: run.state, status: run.status },
    slot: {
      alias,
      element,
      event: row.event,
      status: row.status,
      openedAt: row.openedAt,
      deadline: row.deadline,
      closedAt: row.closedAt,
      answeredBy: (row.answeredBy ?? null) as AnsweredBy | null,
      answer: row.status === "completed" && row.args !== null && typeof row.args === "object" && !Array.isArray(row.args) ? (row.args as Record<string, unknown>) : null,
    },
    live,
    params: event?.params ?? [],
    title: null,
    intro: null,
    titles: {},
    intros: {},
    candidates: null,
    access: null,
    refusal: null,
  };
  if (!decl) return view;
  const who: Principal = { kind: "principal", ...principal };
  view.access = slotAccess(wf, decl);
  // the raise's own gate (commands/gate.ts), asked read-only: no second copy of Candidates or [Authorize]
  try {
    if (slot) {
      // the slot of the run's current visit: its Candidates evaluated now, as the raise does
      const gate = candidateGate(step, decl, slot, who);
      if (gate.matchers) {
        // a name no principal can hold names nobody: left out (lang/runtime/specials.ts principalName)
        const all = gate.matchers as unknown as MatcherValue[];
        const list = all.filter((m) => m.matcher === "anyone" || principalName(m.value));
        // Candidates that name only such names (a built-in's question sent by link) are, to people, "only through its link"
        if (list.length === 0 && all.length > 0) view.access = "link-only";
        view.candidates = { users: list.filter((m) => m.matcher === "user").map((m) => m.value), roles: list.filter((m) => m.matcher === "role").map((m) => m.value), anyone: list.some((m) => m.matcher === "anyone") };
      }
      view.refusal = gate.refusal;
    } else if (view.access === "link-only") {
      view.refusal = refuse(RefusalCode.NotACandidate, linkOnlyDetail(alias));
    } else if (decl.candidates) {
      // a slot of an earlier visit: the candidates recorded when it was created (lifecycles/slot.ts)
      const { refusal, ...candidates } = recordedCandidates(decl, { candidateUsers: row.candidateUsers ?? [], candidateRoles: row.candidateRoles ?? [] }, who);
      view.candidates = candidates;
      view.refusal = refusal;
    }
  } catch (err) {
    if (!(err instanceof RuntimeFault)) throw err;
    // Candidates that cannot be evaluated now admit nobody (the raise would refuse too)
    view.refusal = refuse(RefusalCode.NotACandidate, `The candidates of slot "${alias}" cannot be evaluated now.`);
  }
  if (!view.refusal && event) view.refusal = authorizeRefusal(step, event, who, null);
  // L1 (issue 38): a principal who may not answer learns nothing of the task — open or closed —
  // but who may answer it: no Title, no Intro, no answerer.
  if (view.refusal) {
    view.slot.answeredBy = null;
    view.slot.answer = null;
    return view;
  }
  Object.assign(view, slotTexts(step, decl, slot ? slotScope(step, slot) : undefined));
  return view;
}
