/**
 * Read models for the API: a run with its tracked rows, slots, incidents and history; its outbox.
 * Nothing here ever returns a token: sealed values are shown with the token as `[redacted]`.
 * A fanned-out slot shows its element's value beside its index (`element`, `elementValue`; issue 9
 * §5); the history lists every end of a link (link.ts).
 */
import type { Db } from "../../db.js";
import type { AnsweredBy } from "../commands/types.js";
import { isTimerAlias, slotTimerOf, timerIndex } from "../lifecycles/timer.js";
import { loadVersion } from "../versions/workflows.js";
import { redactForOutput, redactStoredText, redactTokens, type Sealer } from "../sealing/seal.js";

export async function showRun(db: Db, sealer: Sealer, runId: string) {
  // Each relation is read with its own statement: one REPEATABLE READ snapshot makes them agree,
  // so a view never shows a step's history without the rows that step wrote. The statements run
  // one after another: an `include` of several relations would have Prisma send them at once on the
  // transaction's single connection (pg's "client is already executing a query"; issue 16 item 6).
  const run = await db.$transaction(
    async (tx) => {
      const row = await tx.run.findUnique({ where: { id: runId } });
      if (!row) return null;
      const entities = await tx.entityRow.findMany({ where: { runId } });
      const slots = await tx.slot.findMany({ where: { runId }, orderBy: [{ visit: "asc" }, { alias: "asc" }, { element: "asc" }] });
      const incidents = await tx.incident.findMany({ where: { runId }, orderBy: { id: "asc" } });
      const history = await tx.historyEntry.findMany({ where: { runId }, orderBy: { id: "asc" } });
      const calls = await tx.call.findMany({ where: { runId } });
      // v0.5 child runs: the parent's call this run answers (its slot's alias and element)
      const parentCall =
        row.parentRunId && row.parentCallId
          ? await tx.call.findUnique({ where: { runId_id: { runId: row.parentRunId, id: row.parentCallId } }, select: { alias: true, element: true } })
          : null;
      return { ...row, entities, slots, incidents, history, calls, parentCall };
    },
    { isolationLevel: "RepeatableRead" },
  );
  if (!run) return null;
  const compiled = run.slots.some((s) => isTimerAlias(s.alias) && s.status === "open")
    ? await loadVersion(db, run.workflowName, run.version).catch(() => null)
    : null;
  const callOfSlot = new Map(run.calls.map((c) => [c.slotId, c]));
  const scheduleOf = (alias: string): string | null =>
    compiled?.states[run.state]?.timers?.find((t) => t.index === timerIndex(alias))?.schedule ?? null;
  return {
    id: run.id,
    workflow: run.workflowName,
    version: run.version,
    state: run.state,
    status: run.status,
    input: redactForOutput(run.input, sealer),
    entities: Object.fromEntries(run.entities.map((e) => [e.name, redactForOutput(e.data, sealer)])),
    slots: run.slots.filter((s) => !isTimerAlias(s.alias)).map((s) => ({
      alias: s.alias,
      element: s.element,
      /** The fan-out element's value (JSON form, links redacted) beside its index; null when not fanned out. */
      elementValue: s.element === null ? null : redactForOutput(s.elementValue, sealer),
      state: s.state,
      visit: s.visit,
      event: s.event,
      status: s.status,
      openedAt: s.openedAt,
      deadline: s.deadline,
      closedAt: s.closedAt,
      /**
       * Who completed the slot (v0.4 "Who answered"): `{via: "link"}`, `{via: "principal", id,
       * email}` or `{via: "slack", id, email}`; null while it is not completed (or for a slot
       * completed before v0.4).
       */
      answeredBy: (s.answeredBy ?? null) as AnsweredBy | null,
      /** `"subscribe"`, or `"call"` for a slot a call answers (v0.5), with what callView adds. */
      kind: callOfSlot.has(s.id) ? ("call" as const) : ("subscribe" as const),
      ...(callOfSlot.has(s.id) ? callView(callOfSlot.get(s.id)!, sealer) : {}),
    })),
    /**
     * The scheduled timers of the current state (issue 19): `index` (its place among the state's
     * timers), `schedule` (its header as written, `every 2d after 1d`), `next` (the next firing).
     */
    timers: run.slots
      .filter((s) => isTimerAlias(s.alias) && slotTimerOf(s.alias) === null && s.status === "open" && s.visit === run.visit && s.state === run.state)
      .map((s) => ({ index: timerIndex(s.alias), schedule: scheduleOf(s.alias), next: s.deadline }))
      .sort((a, b) => (a.index ?? 0) - (b.index ?? 0)),
    /**
     * The scheduled timers on the current state's slots (issue 43 item 3), one per open slot
     * (element) and timer: `alias`, `element` (null unless fanned out), `index` (its place among
     * the slot's timers), `schedule` (its header as written), `next` (the next firing).
     */
    slotTimers: run.slots
      .filter((s) => slotTimerOf(s.alias) !== null && s.status === "open" && s.visit === run.visit && s.state === run.state)
      .map((s) => {
        const { alias, index } = slotTimerOf(s.alias)!;
        const schedule = compiled?.states[run.state]?.slots.find((d) => d.alias === alias)?.timers?.find((t) => t.index === index)?.schedule ?? null;
        return { alias, element: s.element, index, schedule, next: s.deadline };
      })
      .sort((a, b) => a.alias.localeCompare(b.alias) || (a.element ?? -1) - (b.element ?? -1) || a.index - b.index),
    incidents: run.incidents.map((i) => ({ at: i.at, command: i.command, code: i.code, message: redactTokens(i.message) })),
    history: run.history.map((h) => ({ at: h.at, kind: h.kind, data: redactForOutput(h.data, sealer) })),
    createdAt: run.createdAt,
    finishedAt: run.finishedAt,
    /**
     * v0.5 child runs (issue 40 item 3, interfaces.md "Calls"): the run and call slot this run was
     * started by (`call workflow`) — `{runId, alias, element}` — else null. The slot's `callee`
     * names the child the other way (`{type: "workflow", workflow, runId}`).
     */
    parent: run.parentRunId ? { runId: run.parentRunId, alias: run.parentCall?.alias ?? null, element: run.parentCall?.element ?? null } : null,
    /**
     * v0.5 Results: once finished, `{state: "<terminal state>", …fields of the last result { … }}`
     * (without `returns`, or without a result having run, `{state}`); null while running or when
     * cancelled. Links in it are redacted like any output.
     */
    result: runResult(run.status, run.state, run.result === null ? null : redactForOutput(run.result, sealer)),
  };
}

/**
 * A run's result as the API shows it (v0.5 Results): `{state, …fields}` once `finished`, else null.
 * `fields` is the (redacted) JSON of `runs.result`; a `state` key in it never wins over the state.
 */
export function runResult(status: string, state: string, fields: unknown): Record<string, unknown> | null {
  if (status !== "finished") return null;
  const own = fields && typeof fields === "object" && !Array.isArray(fields) ? (fields as Record<string, unknown>) : {};
  return { ...own, state };
}

export type RunView = NonNullable<Awaited<ReturnType<typeof showRun>>>;

/**
 * A call slot's fields in the run view (v0.5, interfaces.md "Calls"): `callee` `{type: "http",
 * endpoint, method, path}` (the path with any link token redacted) or `{type: "workflow", workflow,
 * runId}` (the child run; null when it could not start), `callId`, `callStatus`
 * (pending, answered, failed, cancelled), `attempts` (started so far), `nextAttemptAt`,
 * `lastError`, and once failed `error` and `httpStatus` (the last HTTP status: the slot's own
 * `status` already says `failed`, so the HTTP status cannot share its name). Never a header value,
 * never the request's body.
 */
function callView(c: { id: string; type: string; endpoint: string | null; method: string | null; request: string; status: string; attempts: number; nextAttemptAt: Date | null; lastError: string | null; lastStatus: number | null; error: string | null; childRunId: string | null }, sealer: Sealer) {
  let path: string | null = null;
  try {
    path = (JSON.parse(redactStoredText(c.request, sealer)) as { path?: string | null }).path ?? null;
  } catch {
    path = null;
  }
  return {
    // a `call task` keeps its task type in `endpoint` (v0.5 SDK, issue 41 item 3; interfaces.md: `{type: "task", task}`);
    // a `call workflow` (v0.5 child runs) the child workflow's name, and its run (null when it could not start)
    callee:
      c.type === "task" ? { type: c.type, task: c.endpoint }
      : c.type === "workflow" ? { type: c.type, workflow: c.endpoint, runId: c.childRunId }
      : { type: c.type, endpoint: c.endpoint, method: c.method, path },
    callId: c.id,
    callStatus: c.status,
    attempts: c.attempts,
    nextAttemptAt: c.status === "pending" ? c.nextAttemptAt : null,
    lastError: c.lastError === null ? null : redactTokens(c.lastError),
    ...(c.status === "failed" ? { error: c.error === null ? null : redactTokens(c.error), httpStatus: c.lastStatus } : {}),
  };
}

/** The run's outbox: recipient, subject, status; bodies only while undelivered, tokens redacted. */
export async function showOutbox(db: Db, sealer: Sealer, runId: string) {
  const rows = await db.outboxMessage.findMany({ where: { runId }, orderBy: { createdAt: "asc" } });
  return rows.map((m) => ({
    id: m.id,
    to: redactStoredText(m.to, sealer),
    subject: redactStoredText(m.subject, sealer),
    status: m.status,
    body: m.body === null ? null : redactStoredText(m.body, sealer),
    /** One address each when the `send email` gave them (issue 19); null otherwise. */
    replyTo: m.replyTo === null ? null : redactStoredText(m.replyTo, sealer),
    cc: m.cc === null ? null : redactStoredText(m.cc, sealer),
    messageId: m.messageId,
    attempts: m.attempts,
    /** Why it failed or was withdrawn (`withdrawn: link dead (expired)`); null otherwise. */
    lastError: m.lastError === null ? null : redactTokens(m.lastError),
    createdAt: m.createdAt,
    deliveredAt: m.deliveredAt,
  }));
}
