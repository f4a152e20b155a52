/**
 * The inbox of a principal (v0.4 "People inside the company": `GET /inbox`, `GET /api/inbox`;
 * docs/inbox.md): the open and waiting slots of running runs whose `Candidates` name the
 * principal by `user(id)` or by a `role(r)` it holds, as they were evaluated when each slot was
 * created (lifecycles/slot.ts `createSlot`). A slot without `Candidates` is listed nowhere.
 *
 * `parseInboxQuery(query)` checks `workflow`, `order` (`newest` | `deadline`), `limit` (1–100,
 * default 25) and `cursor`; anything else it refuses with 400 invalid-query naming the parameter.
 * A cursor is opaque (base64url of JSON) and checked strictly: it must be one this server wrote
 * for the same order and workflow filter.
 *
 * `inboxPage(deps, principal, filter)` reads a page (sql/inbox.ts: one statement, index range scans
 * per principal), the counts (one statement), and, only when some task of the page has a `Title`
 * or waits on `After`, the worlds of those runs (one statement for all of them) to evaluate the
 * titles read-only and name the predecessors not yet completed. Nothing is written.
 */
import type { Db } from "../../db.js";
import { nextDepth } from "../../json/depth.js";
import type { CompiledWorkflow, TypeSpec } from "../../lang/compiled.js";
import { RefusalCode, RefusalError, refuse } from "../refusals.js";
import type { Sealer } from "../sealing/seal.js";
import { readInboxCounts, readInboxDone, readInboxPage, readInboxWorlds, type InboxCounts, type InboxDoneKey, type InboxDoneRow, type InboxKey, type InboxOrder, type InboxRow } from "../sql/inbox.js";
import { Step, type SlotRecord } from "../step.js";
import { LIFECYCLES } from "../lifecycles/lifecycles.js";
import { isAliasDone, slotScope } from "../lifecycles/slot.js";
import { Scope } from "../../lang/runtime/interpreter.js";
import { loadVersion } from "../versions/workflows.js";
import { slotText, slotVariants } from "./responder.js";
import { LOWER_UUID as UUID } from "../../json/uuid.js";

export type { InboxCounts, InboxOrder };

export const INBOX_DEFAULT_LIMIT = 25;
export const INBOX_MAX_LIMIT = 100;
export const INBOX_ORDERS: readonly InboxOrder[] = ["newest", "deadline"];

/** `?view=`: the tasks waiting on the principal (default) or those it answered lately (issue 43 item 4). */
export type InboxView = "open" | "done";
export const INBOX_VIEWS: readonly InboxView[] = ["open", "done"];

/** How far back the done view looks: 30 days, in milliseconds (interfaces.md "Insiders' pages"). */
export const INBOX_DONE_WINDOW_MS = 30 * 24 * 60 * 60 * 1000;

export interface InboxFilter {
  /** Absent: `open`. */
  view?: InboxView;
  workflow: string | null;
  order: InboxOrder;
  limit: number;
  after: InboxKey | null;
  /** The done view's cursor (view `done` only). */
  doneAfter?: InboxDoneKey | null;
}

export interface InboxDeps {
  db: Db;
  sealer: Sealer;
  /** `{base_url}`, no trailing slash: the origin of each task URL. */
  baseUrl: string;
}

/** Who the inbox is for: the principal's id and roles (src/web/identity/signed-in.ts). */
export interface InboxPrincipal {
  id: string;
  roles: string[];
}

export interface InboxTask {
  runId: string;
  workflow: string;
  version: number;
  /** The run's current state. */
  state: string;
  alias: string;
  element: number | null;
  event: string;
  /** The event's parameters at the run's version (the signature the raise path checks). */
  params: { name: string; type: string; optional: boolean }[];
  /** The author's `Title`, evaluated now; null without one (the page then says `Answer: <event>`). */
  title: string | null;
  /** The `Title`'s language variants by BCP 47 tag, evaluated now (the inbox page shows its language's). */
  titles: Record<string, string>;
  status: "open" | "waiting";
  /** Since when it is open; null while waiting on `After`. */
  openedAt: Date | null;
  deadline: Date | null;
  /** The `After` aliases not yet completed (empty for an open slot). */
  waitingOn: string[];
  /** `{base_url}/inbox/tasks/{runId}/{alias}[?element=N]`. */
  taskUrl: string;
  /** When the task entered the inbox (the page order `newest`). */
  listedAt: Date;
}

export interface InboxPage {
  tasks: InboxTask[];
  nextCursor: string | null;
  counts: InboxCounts;
}

const NAME = /^(?:slotflow\.)?[A-Za-z_][A-Za-z0-9_]{0,199}$/;
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const bad = (param: string, detail: string) => new RefusalError(refuse(RefusalCode.InvalidQuery, `?${param}: ${detail}`, { parameter: param }));

/** The entry principals of `p` (`user:<id>`, `role:<name>` per role), each once. */
export function entryPrincipals(p: InboxPrincipal): string[] {
  return [...new Set([`user:${p.id}`, ...p.roles.map((r) => `role:${r}`)])];
}

/** Writes the done view's cursor that starts the page after `key` under `workflow`. */
export function encodeDoneCursor(workflow: string | null, key: InboxDoneKey): string {
  return Buffer.from(JSON.stringify(["done", workflow, key.closedAt.toISOString(), key.runId, key.slotId]), "utf8").toString("base64url");
}

/** A done-view cursor back into its key; 400 invalid-query for anything encodeDoneCursor did not write for this filter. */
function decodeDoneCursor(text: string, workflow: string | null): InboxDoneKey {
  const refused = bad("cursor", "not a cursor this server gave for this listing (use nextCursor as it is, with the same workflow and view).");
  if (!/^[A-Za-z0-9_-]{1,600}$/.test(text)) throw refused;
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    throw refused;
  }
  if (!Array.isArray(doc) || doc.length !== 5) throw refused;
  const [tag, w, closed, runId, slotId] = doc as unknown[];
  const closedAt = instantOf(closed);
  if (tag !== "done" || w !== workflow || !closedAt) throw refused;
  if (typeof runId !== "string" || !UUID.test(runId) || typeof slotId !== "string" || !UUID.test(slotId)) throw refused;
  if (Buffer.from(JSON.stringify(doc), "utf8").toString("base64url") !== text) throw refused;
  return { closedAt, runId, slotId };
}

/** Writes the cursor that starts the page after `key` in `order` under `workflow`. */
export function encodeInboxCursor(order: InboxOrder, workflow: string | null, key: InboxKey): string {
  const doc = [order, workflow, key.listedAt.toISOString(), key.deadline?.toISOString() ?? null, key.runId, key.slotId];
  return Buffer.from(JSON.stringify(doc), "utf8").toString("base64url");
}

function instantOf(v: unknown): Date | null {
  if (typeof v !== "string" || !INSTANT.test(v)) return null;
  const d = new Date(v);
  return Number.isNaN(d.getTime()) || d.toISOString() !== v ? null : d;
}

/** A cursor back into its key; 400 invalid-query for anything encodeInboxCursor did not write for this order and filter. */
function decodeInboxCursor(text: string, order: InboxOrder, workflow: string | null): InboxKey {
  const refused = bad("cursor", "not a cursor this server gave for this listing (use nextCursor as it is, with the same workflow and order).");
  if (!/^[A-Za-z0-9_-]{1,600}$/.test(text)) throw refused;
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    throw refused;
  }
  if (!Array.isArray(doc) || doc.length !== 6) throw refused;
  const [o, w, listed, deadline, runId, slotId] = doc as unknown[];
  const listedAt = instantOf(listed);
  const due = deadline === null ? null : instantOf(deadline);
  if (o !== order || w !== workflow || !listedAt || (deadline !== null && !due)) throw refused;
  if (typeof runId !== "string" || !UUID.test(runId) || typeof slotId !== "string" || !UUID.test(slotId)) throw refused;
  if (Buffer.from(JSON.stringify(doc), "utf8").toString("base64url") !== text) throw refused;
  return { listedAt, deadline: due, runId, slotId };
}

/**
 * Parses the query of `GET /api/inbox` and `GET /inbox` (strings; a repeated parameter is refused;
 * `view` is `open` (default) or `done` (issue 43 item 4; `done` takes no `order` but `newest`);
 * an empty value counts as absent, as a form submits it). Throws 400 invalid-query naming the
 * parameter.
 */
export function parseInboxQuery(query: Record<string, string | string[] | undefined>): InboxFilter {
  const one = (name: string): string | undefined => {
    const v = query[name];
    if (Array.isArray(v)) throw bad(name, "give it once.");
    return v === undefined || v === "" ? undefined : v;
  };
  const workflow = one("workflow") ?? null;
  if (workflow !== null && !NAME.test(workflow)) throw bad("workflow", "a workflow name (an identifier).");
  const orderText = one("order") ?? "newest";
  if (!(INBOX_ORDERS as readonly string[]).includes(orderText)) throw bad("order", `one of ${INBOX_ORDERS.join(", ")}.`);
  const order = orderText as InboxOrder;
  let limit = INBOX_DEFAULT_LIMIT;
  const limitText = one("limit");
  if (limitText !== undefined) {
    limit = Number(limitText);
    if (!/^\d{1,3}$/.test(limitText) || limit < 1 || limit > INBOX_MAX_LIMIT) throw bad("limit", `an integer from 1 to ${INBOX_MAX_LIMIT}.`);
  }
  const viewText = one("view") ?? "open";
  if (!(INBOX_VIEWS as readonly string[]).includes(viewText)) throw bad("view", `one of ${INBOX_VIEWS.join(", ")}.`);
  const view = viewText as InboxView;
  // the done view is newest first only (its order is when the answer was given)
  if (view === "done" && order !== "newest") throw bad("order", "the done view lists answers newest first only (leave order out).");
  const cursor = one("cursor");
  if (view === "done") return { view, workflow, order, limit, after: null, doneAfter: cursor === undefined ? null : decodeDoneCursor(cursor, workflow) };
  return { view, workflow, order, limit, after: cursor === undefined ? null : decodeInboxCursor(cursor, order, workflow), doneAfter: null };
}

/** A parameter's type as the language writes it, without the `?` of an optional (`list<string?>`, `Vendor`). */
export function typeText(type: TypeSpec, depth = 0): string {
  if (type.kind === "list") return `list<${typeText(type.element, nextDepth(depth))}${type.element.optional ? "?" : ""}>`;
  if (type.kind === "entity") return type.name;
  return type.kind;
}

/** One page of `principal`'s inbox (see the module header). Database faults propagate (the caller answers 503). */
export async function inboxPage(deps: InboxDeps, principal: InboxPrincipal, filter: InboxFilter): Promise<InboxPage> {
  const principals = entryPrincipals(principal);
  const rows = await readInboxPage(deps.db, { principals, workflow: filter.workflow, order: filter.order, limit: filter.limit, after: filter.after });
  const counts = await readInboxCounts(deps.db, principals, filter.workflow);
  const pageRows = rows.slice(0, filter.limit);
  const last = pageRows[pageRows.length - 1];
  const nextCursor =
    rows.length > filter.limit && last
      ? encodeInboxCursor(filter.order, filter.workflow, { listedAt: last.listed_at, deadline: last.deadline, runId: last.run_id, slotId: last.slot_id })
      : null;
  // Entries leave with their slot's last step; a row read in between is dropped, never shown closed.
  const live = pageRows.filter((r) => (r.status === "open" || r.status === "waiting") && r.run_status === "running");
  const versions = new Map<string, CompiledWorkflow>();
  for (const r of live) {
    const key = `${r.workflow_name}@${r.version}`;
    if (!versions.has(key)) versions.set(key, await loadVersion(deps.db, r.workflow_name, r.version));
  }
  const wfOf = (r: InboxRow) => versions.get(`${r.workflow_name}@${r.version}`)!;
  const declOf = (r: InboxRow) => wfOf(r).states[r.state]?.slots.find((s) => s.alias === r.alias);
  const needWorld = [...new Set(live.filter((r) => declOf(r)?.title || (r.status === "waiting" && (declOf(r)?.after.length ?? 0) > 0)).map((r) => r.run_id))];
  const steps = new Map<string, Step>();
  if (needWorld.length > 0) {
    const services = { tx: deps.db, sealer: deps.sealer, baseUrl: deps.baseUrl, lifecycles: LIFECYCLES };
    for (const read of await readInboxWorlds(deps.db, needWorld)) {
      const r = live.find((x) => x.run_id === read.run?.id);
      if (r && read.run) steps.set(r.run_id, Step.fromRead(services, wfOf(r), read));
    }
  }
  const tasks = live.map((r): InboxTask => {
    const wf = wfOf(r);
    const decl = declOf(r);
    const step = steps.get(r.run_id);
    const slot: SlotRecord | undefined = step?.slots.find((s) => s.id === r.slot_id);
    const waitingOn = r.status === "waiting" && step && decl ? decl.after.filter((a) => !isAliasDone(step, a)) : [];
    const params = (wf.events[r.event]?.params ?? []).map((p) => ({ name: p.name, type: typeText(p.type), optional: p.type.optional }));
    const path = `/inbox/tasks/${r.run_id}/${encodeURIComponent(r.alias)}${r.element === null ? "" : `?element=${r.element}`}`;
    return {
      runId: r.run_id,
      workflow: r.workflow_name,
      version: r.version,
      state: r.run_state,
      alias: r.alias,
      element: r.element,
      event: r.event,
      params,
      title: step && decl ? slotText(step, slot ? slotScope(step, slot) : Scope.of({}), decl.title) : null,
      titles: step && decl ? slotVariants(step, slot ? slotScope(step, slot) : Scope.of({}), decl.titles) : {},
      status: r.status as "open" | "waiting",
      openedAt: r.opened_at,
      deadline: r.deadline,
      waitingOn,
      taskUrl: deps.baseUrl + path,
      listedAt: r.listed_at,
    };
  });
  return { tasks, nextCursor, counts };
}

/** The names of the deployed workflows, for the inbox's filter (at most 500, by name). */
export async function inboxWorkflows(db: Db): Promise<string[]> {
  const rows = await db.workflow.findMany({ select: { name: true }, orderBy: { name: "asc" }, take: 500 });
  return rows.map((r) => r.name);
}

/** A slot the principal answered (the done view, issue 43 item 4). */
export interface InboxDoneTask {
  runId: string;
  workflow: string;
  version: number;
  /** The run's current state and status. */
  state: string;
  runStatus: string;
  alias: string;
  element: number | null;
  event: string;
  /** The event's parameters at the run's version (how the answer's values are labelled and shown). */
  params: CompiledWorkflow["events"][string]["params"];
  /** The author's `Title`, evaluated now (null without one; outside its visit, without the slot's own scope). */
  title: string | null;
  /** The `Title`'s language variants by BCP 47 tag, evaluated now. */
  titles: Record<string, string>;
  /** When the answer completed the slot. */
  answeredAt: Date;
  /** What was answered: the slot's completion arguments (JSON form). */
  answer: Record<string, unknown>;
  taskUrl: string;
}

export interface InboxDonePage {
  tasks: InboxDoneTask[];
  nextCursor: string | null;
}

/**
 * One page of the done view (issue 43 item 4): the slots `principal` answered (`answered_by` with
 * `via: principal` and its id) in the last 30 days before `now`, newest first, at most
 * `filter.limit` (sql/inbox.ts `readInboxDone`: one index range scan), with what was answered and
 * when; the titles of those still in their run's current visit evaluated read-only (one statement
 * for all their runs). Nothing is written. Database faults propagate (the caller answers 503).
 */
export async function inboxDonePage(deps: InboxDeps, principal: InboxPrincipal, filter: InboxFilter, now = new Date()): Promise<InboxDonePage> {
  const rows = await readInboxDone(deps.db, { principalId: principal.id, workflow: filter.workflow, since: new Date(now.getTime() - INBOX_DONE_WINDOW_MS), limit: filter.limit, after: filter.doneAfter ?? null });
  const pageRows = rows.slice(0, filter.limit);
  const last = pageRows[pageRows.length - 1];
  const nextCursor = rows.length > filter.limit && last ? encodeDoneCursor(filter.workflow, { closedAt: last.closed_at, runId: last.run_id, slotId: last.slot_id }) : null;
  const versions = new Map<string, CompiledWorkflow>();
  for (const r of pageRows) {
    const key = `${r.workflow_name}@${r.version}`;
    if (!versions.has(key)) versions.set(key, await loadVersion(deps.db, r.workflow_name, r.version));
  }
  const wfOf = (r: InboxDoneRow) => versions.get(`${r.workflow_name}@${r.version}`)!;
  const declOf = (r: InboxDoneRow) => wfOf(r).states[r.state]?.slots.find((s) => s.alias === r.alias);
  const steps = new Map<string, Step>();
  const needWorld = [...new Set(pageRows.filter((r) => declOf(r)?.title).map((r) => r.run_id))];
  if (needWorld.length > 0) {
    const services = { tx: deps.db, sealer: deps.sealer, baseUrl: deps.baseUrl, lifecycles: LIFECYCLES };
    for (const read of await readInboxWorlds(deps.db, needWorld)) {
      const r = pageRows.find((x) => x.run_id === read.run?.id);
      if (r && read.run) steps.set(r.run_id, Step.fromRead(services, wfOf(r), read));
    }
  }
  const tasks = pageRows.map((r): InboxDoneTask => {
    const decl = declOf(r);
    const step = steps.get(r.run_id);
    const slot: SlotRecord | undefined = step?.slots.find((s) => s.id === r.slot_id);
    const path = `/inbox/tasks/${r.run_id}/${encodeURIComponent(r.alias)}${r.element === null ? "" : `?element=${r.element}`}`;
    return {
      runId: r.run_id,
      workflow: r.workflow_name,
      version: r.version,
      state: r.run_state,
      runStatus: r.run_status,
      alias: r.alias,
      element: r.element,
      event: r.event,
      params: wfOf(r).events[r.event]?.params ?? [],
      title: step && decl ? slotText(step, slot ? slotScope(step, slot) : Scope.of({}), decl.title) : null,
      titles: step && decl ? slotVariants(step, slot ? slotScope(step, slot) : Scope.of({}), decl.titles) : {},
      answeredAt: r.closed_at,
      answer: r.args ?? {},
      taskUrl: deps.baseUrl + path,
    };
  });
  return { tasks, nextCursor };
}
