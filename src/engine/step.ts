/**
 * A step: one change to one run (start, deposit, raise, expiry), applied as one atomic unit
 * (language reference, "Handlers and execution": all of it commits or none of it does).
 *
 * The step is built from one read (sql/step-read.ts: the run locked, its current slots, tracked
 * rows and live links); the lifecycle modules (run.ts, slot.ts, link.ts) and the interpreter
 * change that model in memory and record effects; `flush()` writes everything, with the
 * command's outcome record, in one statement (sql/step-write.ts) through the caller's
 * transaction. A runtime error thrown before `flush()` leaves the database untouched, and the
 * caller's rollback covers a failure during it.
 *
 * Every string written by `flush()` that carries a callback link is sealed first (seal.ts).
 */
import { randomBytes, randomUUID } from "node:crypto";
import type { Limits } from "../config.js";
import type { Tx } from "../db.js";
import type { QueuedDelivery, World } from "../lang/runtime/interpreter.js";
import { jsonDate, readStepUnlocked, type StepRead } from "./sql/step-read.js";
import { writeStep, type SlotWriteRow, type StepWrite } from "./sql/step-write.js";
import type { CompiledWorkflow } from "../lang/compiled.js";
import type { IdempotencyFingerprint } from "./values/idempotency.js";
import type { ReceiptKeySource } from "./receipts/keys.js";
import type { LinkEndReason } from "./refusals.js";
import { linkHashesIn, type Sealer } from "./sealing/seal.js";
import { writeDeliveries, writeMailExtra, type DeliveryKey, type DeliveryWriteRow, type MailExtraRow, type MailKey } from "./sql/deliveries-write.js";
import { writeStart } from "./sql/start-write.js";
import { changeCalls, writeCalls, type CallWriteRow } from "./sql/calls.js";
import { endDeliveriesOfDeadLinks } from "./sql/delivery-status.js";
import { controlsFor, type AnswerSpec } from "./values/answer-controls.js";
import { deadAtCommit, writeWithdrawn, type WithdrawnDelivery, type WithdrawnMail } from "./sql/dead-at-commit.js";
import { fromJson, toJson, type Value } from "../lang/runtime/values.js";

/** "cancelled": an operator ended the run (issue 23, commands/cancel.ts). */
export type RunStatus = "running" | "finished" | "cancelled";
/** "failed": a call slot whose call failed (v0.5 calls, lifecycles/call.ts). */
export type SlotStatus = "waiting" | "open" | "completed" | "cancelled" | "expired" | "dropped" | "failed";

export interface RunRecord {
  id: string;
  workflowName: string;
  version: number;
  state: string;
  status: RunStatus;
  visit: number;
  input: Record<string, unknown>;
  milestones: string[];
  finishedAt: Date | null;
  /**
   * v0.5 Results: the fields of the last `result { … }` that ran (their JSON form; column
   * `runs.result`, sealed like the input); null or absent while none has run.
   */
  result?: Record<string, unknown> | null;
  /**
   * v0.5 child runs (issue 40 item 3; columns `runs.parent_run_id`, `parent_call_id`): the parent
   * run and the call this run answers when it ends; null or absent for a run started otherwise.
   */
  parent?: { runId: string; callId: string } | null;
  /** 0, or the parent's + 1 for a child run (column `runs.call_depth`; at most 10). */
  depth?: number;
}

/**
 * How the answer that completed a slot came (v0.4 "Who answered"): through its link, as a signed-in
 * or bearer principal, or as a Slack user. Stored in `slots.answered_by`, shown as `answeredBy`.
 */
export type AnsweredBy =
  /**
   * v0.5 (issue 43 item 2): `element` the fanned-out element answered; `recipient` the address
   * slotflow mailed or forwarded the link to (when it did); `forwardedBy` the address of the holder
   * who forwarded it. Each absent when not known (and in answers recorded before v0.5).
   */
  | { via: "link"; element?: number; recipient?: string; forwardedBy?: string }
  | { via: "principal"; id: string; email: string | null }
  | { via: "slack"; id: string; email: string | null }
  /** v0.5: a call slot answered by its callee (lifecycles/call.ts). */
  | { via: "call"; callId: string };

/**
 * A call of a call slot (v0.5, issue 40; lifecycles/call.ts, sql/calls.ts): what the step knows of
 * it — read under the run lock for the run's current slots when its state declares calls, or
 * created by this step.
 */
export interface CallRecord {
  id: string;
  slotId: string;
  alias: string;
  element: number | null;
  type: string;
  endpoint: string | null;
  method: string | null;
  status: "pending" | "answered" | "failed" | "cancelled";
  /** Attempts started so far (the calls worker counts them). */
  attempts: number;
  maxAttempts: number;
  timeoutMs: number;
  deadline: Date | null;
  nextAttemptAt: Date | null;
  lastStatus: number | null;
  lastError: string | null;
  error: string | null;
  endedAt: Date | null;
  /** v0.5 child runs: the run a `call workflow` started (`calls.child_run_id`); null otherwise. */
  childRunId?: string | null;
}

/**
 * A child run to start (v0.5 `call workflow`; commands/child.ts), in the transaction of the step
 * that opened its call slot, after that step's write: the call, the workflow's name and the input
 * (JSON form) evaluated when the slot opened.
 */
export interface ChildStart {
  call: CallRecord;
  workflow: string;
  input: Record<string, unknown>;
}

/**
 * A command for another run (a `call` or `cancel` of commands/types.ts, built by commands/child.ts;
 * typed by shape here, as this layer imports nothing of the commands layer).
 */
export interface CrossRunCommand {
  kind: "call" | "cancel";
  commandId: string;
  runId: string;
}

/** A call attempt to hand to the calls worker after commit (`attempt`: 1-based; `delayMs` from now). */
export interface CallJob {
  callId: string;
  runId: string;
  attempt: number;
  delayMs: number;
  /**
   * A `call task`'s type (v0.5 SDK, issue 41 item 3): no job is queued for it — the worker that
   * committed the step wakes the task polls waiting for this type (src/calls/task/waiters.ts).
   */
  task?: string;
}

export interface SlotRecord {
  id: string;
  state: string;
  visit: number;
  alias: string;
  element: number | null;
  elementValue: Value;
  event: string;
  status: SlotStatus;
  openedAt: Date | null;
  deadline: Date | null;
  closedAt: Date | null;
  args: Record<string, unknown> | null;
  /** Candidates evaluated at creation (ids of user(…), names of role(…)); null without Candidates. */
  candidateUsers: string[] | null;
  candidateRoles: string[] | null;
  /** How the completing answer came; null until completed. */
  answeredBy: AnsweredBy | null;
  /** The receipt (compact JWS) of the completing deposit; null without one. */
  receipt: string | null;
  /** How many times the slot's link was forwarded. */
  forwards: number;
}

export type LinkStatus = "live" | "burned" | "retired" | "dead";

/** A link as read under the run lock (a deposit's own link; link.ts decides its transitions). */
export interface LinkRow {
  id: string;
  runId: string;
  slotId: string;
  mintedVersion: number;
  status: LinkStatus;
  endReason: LinkEndReason | null;
  idempotencyKeySha256: string | null;
  idempotencyBodySha256: string | null;
}

/** Every link write of a step, as link.ts `settleLinks` decides it and sql/step-write.ts writes it. */
export interface LinkSettlement {
  /** Links that existed before the step and end now, by id (the burned one with its idempotency hashes). */
  ended: {
    id: string;
    status: "burned" | "retired" | "dead";
    end_reason: LinkEndReason | null;
    idempotency_key_sha256: string | null;
    idempotency_body_sha256: string | null;
  }[];
  /** Links minted during the step, with the status they have when it commits. */
  minted: { id: string; token_sha256: string; slot_id: string; status: LinkStatus; end_reason: LinkEndReason | null }[];
}

export interface EntityRecord {
  /** The workflow parameter naming the row. */
  name: string;
  entity: string;
  data: Record<string, Value>;
}

/**
 * What the step asks of the lifecycles above it (style.md 12–13, issue 34 item 2): the step is the
 * unit of work *below* the slot and link lifecycles, so it never imports them; it is handed these
 * operations instead (lifecycles.ts builds them from slot.ts and link.ts). Each takes the step it
 * acts on.
 */
export interface StepLifecycles {
  /** `x.done`: every slot of the alias is completed (slot.ts). */
  isAliasDone(step: Step, alias: string): boolean;
  /**
   * `x.CallbackUrl()`: mints a link for the alias's live slot, or for element `element`'s slot
   * inside `each` (v0.4); null when it has none (slot.ts, link.ts).
   */
  mintCallbackUrl(step: Step, alias: string, element: number | null): string | null;
  /** `x.count` (v0.4, slot.ts). */
  aliasCount(step: Step, alias: string): number;
  /** `drop slot x` (slot.ts). */
  dropSlot(step: Step, alias: string): void;
  /** Which links the step ends and mints, and how (link.ts `settleLinks`). */
  settleLinks(step: Step): LinkSettlement;
}

export interface StepServices {
  tx: Tx;
  sealer: Sealer;
  /** `{base_url}` of minted links, no trailing slash. */
  baseUrl: string;
  /** Input and fan-out limits (config.ts); the defaults when absent. */
  limits?: Limits;
  /** The slot and link operations the step delegates to (lifecycles.ts `LIFECYCLES`). */
  lifecycles: StepLifecycles;
  /** The receipt keys (receipts/keys.ts), newest first; absent or empty: completions carry no receipt. */
  receiptKeys?: ReceiptKeySource;
}

export interface PendingMint {
  linkId: string;
  slotId: string;
  tokenSha256: string;
}

/** A queued message, every text already in its stored form (`Sealer.sealText`: sealed when it carries a link). */
interface PendingMail {
  id: string;
  to: string;
  subject: string;
  body: string;
  /** Sealed `replyTo` / `cc` (issue 19), when given. */
  replyTo?: string;
  cc?: string;
  /** SHA-256 of each callback token its text carries (to, subject, body, replyTo, cc). */
  linkHashes: string[];
}

/**
 * A message the step withdrew because a link it carries is not live at commit (issue 38): which
 * channel, its outbox or delivery id, the endpoint of a chat message, and the reason
 * (`withdrawn: link burned`). Never its text: it may carry a link.
 */
export type WithdrawnNote =
  | { channel: "email"; outboxId: string; reason: string }
  | { channel: "message"; deliveryId: string; endpoint: string; reason: string };

export class Step implements World {
  readonly now = new Date();
  /** State entries during this step (bounded by run.ts). */
  entries = 0;
  /** Slots of the run's current visit (and any created during this step). */
  slots: SlotRecord[];
  readonly entities: Map<string, EntityRecord>;
  private readonly isNewRun: boolean;
  private readonly inputCache = new Map<string, Value>();
  private readonly newSlots = new Set<string>();
  private readonly dirtySlots = new Set<string>();
  private readonly dirtyEntities = new Set<string>();
  readonly mints: PendingMint[] = [];
  /** Slot id → why its live link dies at flush (slot closed during this step). */
  readonly linkEnds = new Map<string, LinkEndReason>();
  /** Link id → why it is retired at flush when not simply replaced ("forwarded", v0.4); link.ts keeps it. */
  readonly retireReasons = new Map<string, LinkEndReason>();
  burned: { linkId: string; idempotency: IdempotencyFingerprint | null } | null = null;
  /** Slot id → id of its live link, as loaded and as changed by this step (link.ts keeps it). */
  private readonly liveLinks: Map<string, string>;
  /** Live links of the run's current slots as read under the lock (link.ts `settleLinks` decides their ends). */
  readonly loadedLiveLinks: { id: string; slotId: string }[];
  /** The link a deposit names, as read under the lock (null for other commands). */
  depositLink: LinkRow | null = null;
  private readonly mail: PendingMail[] = [];
  private readonly history: { kind: string; data: Record<string, unknown> }[] = [];
  /** Outbox rows queued by this step (id and run id: a `mail` job), for the caller to enqueue after commit. */
  readonly queuedMail: MailKey[] = [];
  private readonly deliveries: Omit<DeliveryWriteRow, "created_at">[] = [];
  /** Delivery rows queued by this step (issue 18; id and run id: a `deliveries` job), for the caller to enqueue after commit. */
  readonly queuedDeliveries: DeliveryKey[] = [];
  /** Whether the run had pending webhook/chat deliveries when read (issue 18 item 4). */
  hasPendingDeliveries = false;
  /**
   * Messages of this step withdrawn at flush because a link they carry is not live
   * (sql/dead-at-commit.ts): `send email` and `send message` only — a `send webhook` is data
   * (v0.5 "Answers people can trust", issue 38) and is queued whatever links it carries.
   */
  private readonly withdrawnMail: WithdrawnMail[] = [];
  /**
   * What was withdrawn (`{channel, id, reason}`, no text, no token), for the caller to log at
   * `warn` once the step committed (commands/apply.ts `logWithdrawn`).
   */
  readonly withdrawn: WithdrawnNote[] = [];
  private readonly withdrawnDeliveries: WithdrawnDelivery[] = [];
  /** Calls of the run's current call slots by slot id (apply.ts loads them when the state declares calls; v0.5). */
  readonly calls = new Map<string, CallRecord>();
  /** Calls this step opened, as rows (request sealed), and the ids of calls it changed. */
  private readonly newCalls: CallWriteRow[] = [];
  private readonly changedCalls = new Set<string>();
  /** Call attempts to hand to the calls worker after commit (new calls and scheduled retries). */
  readonly queuedCalls: CallJob[] = [];
  /** Call slots this step opened, whose calls start at the end of the command (slot.ts `startOpenedCalls`). */
  readonly openedCalls: SlotRecord[] = [];
  /** Calls this step cancelled (their slot closed first): the `cancelled` outcome of slotflow_calls_total. */
  cancelledCalls = 0;
  /** Of those, the `call workflow` calls (their child cancelled): counted with `type="workflow"`. */
  cancelledChildCalls = 0;
  /** Child runs to start after this step's write, in its transaction (v0.5 `call workflow`; commands/child.ts). */
  readonly childStarts: ChildStart[] = [];
  /**
   * Commands for OTHER runs that this step causes (v0.5 child runs: a child's end answers its
   * parent's call; a closed `call workflow` slot cancels its child): recorded in `pending_commands`
   * in this step's transaction (commands/child.ts) and queued once it committed, like a 202 command.
   */
  readonly queuedCommands: CrossRunCommand[] = [];
  /** Why the run was cancelled, when this step cancelled it (run.ts `cancelRun`): the parent's call error names it. */
  cancelReason: string | null = null;
  /** Who cancelled the run, when this step cancelled it (`run:<id>` when its parent run did). */
  cancelActor: string | null = null;
  /** Message id → its creation offset in ms after `now`, fixed when some of the step's messages are withdrawn (keeps the order of the rest). */
  private readonly createdOffsets = new Map<string, number>();

  constructor(
    readonly services: StepServices,
    readonly workflow: CompiledWorkflow,
    readonly run: RunRecord,
    slots: SlotRecord[],
    entities: EntityRecord[],
    isNewRun: boolean,
    liveLinks: { id: string; slotId: string }[] = [],
  ) {
    this.slots = slots;
    this.loadedLiveLinks = liveLinks;
    this.liveLinks = new Map(liveLinks.map((l) => [l.slotId, l.id]));
    this.entities = new Map(entities.map((e) => [e.name, e]));
    this.isNewRun = isNewRun;
    if (isNewRun) for (const e of entities) this.dirtyEntities.add(e.name);
  }

  /**
   * Builds the step from its read (sql/step-read.ts: the run locked, its current slots, tracked
   * rows and live links). Sealed values are opened here, inside the engine only.
   */
  static fromRead(services: StepServices, workflow: CompiledWorkflow, read: StepRead): Step {
    const { sealer } = services;
    const r = read.run!;
    const run: RunRecord = {
      id: r.id as string,
      workflowName: r.workflow_name as string,
      version: r.version as number,
      state: r.state as string,
      status: r.status as RunStatus,
      visit: r.visit as number,
      input: sealer.unsealJson(r.input) as Record<string, unknown>,
      milestones: (r.milestones as string[] | null) ?? [],
      finishedAt: jsonDate(r.finished_at),
      result: r.result === null || r.result === undefined ? null : (sealer.unsealJson(r.result) as Record<string, unknown>),
      parent: r.parent_run_id ? { runId: r.parent_run_id as string, callId: r.parent_call_id as string } : null,
      depth: (r.call_depth as number | undefined) ?? 0,
    };
    const slots: SlotRecord[] = read.slots.map((row) => {
      const slot = workflow.states[row.state as string]?.slots.find((s) => s.alias === row.alias);
      const elementType = slot?.forEach?.elementType ?? null;
      const elementValue = (row.element_value ?? null) as Value;
      return {
        id: row.id as string,
        state: row.state as string,
        visit: row.visit as number,
        alias: row.alias as string,
        element: (row.element as number | null) ?? null,
        elementValue: elementValue === null ? null : elementType ? fromJson(elementValue, elementType) : elementValue,
        event: row.event as string,
        status: row.status as SlotStatus,
        openedAt: jsonDate(row.opened_at),
        deadline: jsonDate(row.deadline),
        closedAt: jsonDate(row.closed_at),
        args: (row.args ?? null) as Record<string, unknown> | null,
        candidateUsers: (row.candidate_users ?? null) as string[] | null,
        candidateRoles: (row.candidate_roles ?? null) as string[] | null,
        answeredBy: (row.answered_by ?? null) as AnsweredBy | null,
        receipt: (row.receipt ?? null) as string | null,
        forwards: (row.forwards as number | null) ?? 0,
      };
    });
    const entities: EntityRecord[] = read.entities.map((row) => {
      const decl = workflow.entities[row.entity as string];
      const raw = sealer.unsealJson(row.data) as Record<string, unknown>;
      const data: Record<string, Value> = {};
      for (const [field, spec] of Object.entries(decl?.fields ?? {})) data[field] = fromJson(raw[field] ?? null, spec.type);
      return { name: row.name as string, entity: row.entity as string, data };
    });
    const liveLinks = read.liveLinks.map((l) => ({ id: l.id, slotId: l.slot_id }));
    const step = new Step(services, workflow, run, slots, entities, false, liveLinks);
    step.hasPendingDeliveries = read.pendingDeliveries === true;
    return step;
  }

  /**
   * Loads a run's world without locking it, for read-only evaluation (the responder page); a
   * step built this way is never flushed.
   */
  static async load(services: StepServices, workflow: CompiledWorkflow, run: Pick<RunRecord, "id">): Promise<Step> {
    const read = await readStepUnlocked(services.tx, run.id);
    if (!read.run) throw new Error(`run ${run.id} does not exist`);
    return Step.fromRead(services, workflow, read);
  }

  /** The runtime value of a scalar workflow parameter (read-only input). */
  inputValue(name: string): Value {
    const cached = this.inputCache.get(name);
    if (cached !== undefined) return cached;
    const param = this.workflow.params.find((p) => p.name === name);
    const value = param ? fromJson(this.run.input[name] ?? null, param.type) : null;
    this.inputCache.set(name, value);
    return value;
  }

  // --- the interpreter's world (interpreter.ts `World`): slot and link effects via the lifecycles it was handed ---

  isAliasDone(alias: string): boolean {
    return this.services.lifecycles.isAliasDone(this, alias);
  }

  mintCallbackUrl(alias: string, element: number | null = null): string | null {
    return this.services.lifecycles.mintCallbackUrl(this, alias, element);
  }

  aliasCount(alias: string): number {
    return this.services.lifecycles.aliasCount(this, alias);
  }

  /**
   * `x.TaskUrl()` (v0.4, "People inside the company"): `{BASE_URL}/inbox/tasks/{runId}/{alias}`,
   * plus `?element=N` inside `each`. Not a credential; names the slot whatever its status.
   */
  taskUrl(alias: string, element: number | null = null): string {
    const base = `${this.services.baseUrl}/inbox/tasks/${encodeURIComponent(this.run.id)}/${encodeURIComponent(alias)}`;
    return element === null ? base : `${base}?element=${element}`;
  }

  dropSlot(alias: string): void {
    this.services.lifecycles.dropSlot(this, alias);
  }

  // --- recording (used by the lifecycle modules only) -------------------------------------------

  addSlot(slot: SlotRecord): void {
    this.slots.push(slot);
    this.newSlots.add(slot.id);
  }

  markSlotDirty(slot: SlotRecord): void {
    if (!this.newSlots.has(slot.id)) this.dirtySlots.add(slot.id);
  }

  markEntityDirty(name: string): void {
    this.dirtyEntities.add(name);
  }

  recordMint(mint: PendingMint): void {
    this.mints.push(mint);
  }

  recordLinkEnd(slotId: string, reason: LinkEndReason): void {
    this.linkEnds.set(slotId, reason);
  }

  /** The id of the slot's live link (loaded, or minted during this step); null when none. */
  liveLinkOf(slotId: string): string | null {
    return this.liveLinks.get(slotId) ?? null;
  }

  /** Records which link is now the slot's live one (null: none). Used by link.ts only. */
  setLiveLink(slotId: string, linkId: string | null): void {
    if (linkId) this.liveLinks.set(slotId, linkId);
    else this.liveLinks.delete(slotId);
  }

  recordBurn(linkId: string, idempotency: IdempotencyFingerprint | null): void {
    this.burned = { linkId, idempotency };
  }

  /**
   * Queues a message. Recipient, subject and body are sealed here (issue 8 item 7: any of them may
   * carry a link), so the pending record already holds what the outbox row stores.
   */
  queueMail(to: string, subject: string, body: string, extra: { replyTo?: string; cc?: string } = {}): string {
    const id = randomUUID();
    const { sealer } = this.services;
    const linkHashes = linkHashesIn([to, subject, body, extra.replyTo ?? "", extra.cc ?? ""].join("\n"));
    const mail: PendingMail = { id, to: sealer.sealText(to), subject: sealer.sealText(subject), body: sealer.sealText(body), linkHashes };
    if (extra.replyTo !== undefined) mail.replyTo = sealer.sealText(extra.replyTo);
    if (extra.cc !== undefined) mail.cc = sealer.sealText(extra.cc);
    this.mail.push(mail);
    return id;
  }

  /**
   * Queues a `send webhook` / `send message` delivery (issue 18). Its payload is sealed whole
   * (it may carry a link and any data), the SHA-256 of each token it carries is kept beside it
   * (so a delivery's link is checked without opening it), and its `webhook-id` is fixed here.
   */
  queueDelivery(d: QueuedDelivery): string {
    const id = randomUUID();
    const answer = d.statement === "message" && d.answer ? this.answerSpec(d.answer) : null;
    const text = JSON.stringify(answer ? { ...d.payload, answer } : d.payload);
    this.deliveries.push({
      id,
      run_id: this.run.id,
      endpoint: d.endpoint,
      statement: d.statement,
      webhook_id: `msg_${id.replace(/-/g, "")}`,
      payload: JSON.stringify(this.services.sealer.seal(text)),
      link_sha256: linkHashesIn(text),
    });
    return id;
  }

  /**
   * `send message … { answer: alias }` (v0.4 "Answers inside Slack"): the live (open or waiting)
   * slot of `alias` in the current state and its controls, with a new opaque reference (128 random
   * bits, base64url); null when the alias has no live slot (the message then goes without controls).
   */
  private answerSpec(alias: string): AnswerSpec | null {
    const slot = this.slots.find((s) => s.alias === alias && s.element === null && s.state === this.run.state && (s.status === "open" || s.status === "waiting"));
    if (!slot) return null;
    const event = this.workflow.events[slot.event];
    return { ref: randomBytes(16).toString("base64url"), slotId: slot.id, alias, element: null, controls: controlsFor(event.name, event.params) };
  }

  /**
   * The links minted in this step whose token the queued mail `outboxId` carries (v0.5: who a link
   * was mailed to, sql/link-recipient.ts); empty when none.
   */
  mailedLinks(outboxId: string): string[] {
    const mail = this.mail.find((m) => m.id === outboxId);
    if (!mail || mail.linkHashes.length === 0) return [];
    const hashes = new Set(mail.linkHashes);
    return this.mints.filter((m) => hashes.has(m.tokenSha256)).map((m) => m.linkId);
  }

  /**
   * `x.error` / `x.status` / `x.attempts` (v0.5 calls; interpreter.ts `World.callInfo`): of the
   * call of `alias` (of element `element`'s when fanned out) in the current visit; a slot with no
   * call yet reads `{error: null, status: null, attempts: 0}`.
   */
  callInfo(alias: string, element: number | null): { error: string | null; status: number | null; attempts: number } {
    const slot = this.slots.find((s) => s.alias === alias && s.element === element && s.state === this.run.state && s.visit === this.run.visit);
    const call = slot ? this.calls.get(slot.id) : undefined;
    return { error: call?.error ?? null, status: call?.lastStatus ?? null, attempts: call?.attempts ?? 0 };
  }

  /** Records a call the step opened (lifecycles/call.ts): `request` {path, input} is sealed here. */
  queueCall(call: CallRecord, request: { path: string | null; input: Record<string, unknown> }): void {
    this.calls.set(call.slotId, call);
    this.newCalls.push({
      id: call.id,
      run_id: this.run.id,
      slot_id: call.slotId,
      alias: call.alias,
      element: call.element,
      type: call.type,
      endpoint: call.endpoint,
      method: call.method,
      request: JSON.stringify(this.services.sealer.seal(JSON.stringify(request))),
      timeout_ms: call.timeoutMs,
      max_attempts: call.maxAttempts,
      deadline: call.deadline?.toISOString() ?? null,
      created_at: this.now.toISOString(),
    });
  }

  /** Marks a call changed (lifecycles/call.ts), to be written at flush. */
  changeCall(call: CallRecord): void {
    this.changedCalls.add(call.id);
  }

  /** Whether a `result { … }` ran in this step (v0.5 Results): `runs.result` is written at flush. */
  private resultChanged = false;

  /**
   * `result { … }` (v0.5 Results; interpreter.ts World.setResult): the fields replace the run's
   * pending result; written at flush, so kept only if the step commits.
   */
  setResult(fields: Record<string, unknown>): void {
    this.run.result = fields;
    this.resultChanged = true;
  }

  /** Writes `runs.result` when a `result { … }` ran in this step (same transaction as the step's write). */
  private async writeResult(): Promise<void> {
    if (!this.resultChanged) return;
    const sealed = JSON.stringify(this.services.sealer.sealJson(this.run.result ?? null));
    await this.services.tx.$executeRawUnsafe("UPDATE runs SET result = $2::jsonb WHERE id = $1::uuid", this.run.id, sealed);
  }

  addHistory(kind: string, data: Record<string, unknown> = {}): void {
    this.history.push({ kind, data });
  }

  // --- writing ---------------------------------------------------------------------------------

  /**
   * Writes every change of the step, and the command's outcome record, in one statement
   * (sql/step-write.ts). Mail and delivery rows are handed to `queuedMail` / `queuedDeliveries`
   * (each with the run's id) for the caller to enqueue after commit.
   */
  async flush(applied: { id: string; kind: string; outcome: unknown }): Promise<void> {
    const links = this.services.lifecycles.settleLinks(this);
    await this.withdrawDeadLinkMessages(links);
    const { write, endedLinks } = this.buildWrite(applied, links);
    await writeStep(this.services.tx, write);
    await this.writeResult();
    await writeWithdrawn(this.services.tx, this.run.id, this.withdrawnMail, this.withdrawnDeliveries);
    // replyTo / cc (issue 19) are set after the write, in the same transaction, only when some mail
    // has them: the write function and its cost for every other step stay as they are.
    await writeMailExtra(this.services.tx, this.run.id, this.mailExtraRows());
    // after the mail, in creation order (issue 18: same transaction, so only if the step commits)
    await writeDeliveries(this.services.tx, this.deliveryRows());
    // A link ended by this step takes the run's pending deliveries that carried only dead links
    // with it, at once (issue 18 item 4); runs without pending deliveries send nothing more.
    if (this.hasPendingDeliveries && endedLinks > 0) await endDeliveriesOfDeadLinks(this.services.tx, this.run.id);
    await this.writeCalls(this.services.tx);
    this.queueJobs();
  }

  /** The calls this step opened and changed (v0.5), in its transaction; nothing when none. */
  private async writeCalls(tx: Tx): Promise<void> {
    // a call opened and ended in the same step (its state left at once) is written as it ended
    const fresh = new Set(this.newCalls.map((c) => c.id));
    await writeCalls(tx, this.newCalls);
    const changed = [...this.calls.values()].filter((c) => this.changedCalls.has(c.id));
    await changeCalls(
      tx,
      this.run.id,
      changed.map((c) => ({
        id: c.id,
        type: c.type,
        status: c.status,
        next_attempt_at: c.nextAttemptAt?.toISOString() ?? null,
        last_status: c.lastStatus,
        last_error: c.lastError,
        error: c.error,
        ended_at: c.endedAt?.toISOString() ?? null,
      })),
    );
    for (const c of this.newCalls) {
      const call = [...this.calls.values()].find((x) => x.id === c.id);
      if (call?.status === "pending" && fresh.has(c.id) && call.type !== "workflow") this.queuedCalls.push({ callId: c.id, runId: this.run.id, attempt: 1, delayMs: 0, ...(call.type === "task" && call.endpoint ? { task: call.endpoint } : {}) });
    }
  }

  /**
   * The write of a new run's step (issue 22 item 1): the step's write, its mail's reply_to / cc
   * and its deliveries in ONE statement on its own, outside any transaction (sql/start-write.ts).
   * Resolves null when written (mail and delivery rows are then in `queuedMail` /
   * `queuedDeliveries`), or the outcome an earlier application of the same command recorded.
   */
  async flushStart(applied: { id: string; kind: string; outcome: unknown }): Promise<unknown | null> {
    if (!this.isNewRun) throw new Error("flushStart writes a new run only");
    const links = this.services.lifecycles.settleLinks(this);
    await this.withdrawDeadLinkMessages(links);
    const { write } = this.buildWrite(applied, links);
    const startWrite = { ...write, mailExtra: this.mailExtraRows(), deliveries: this.deliveryRows() };
    let prior: unknown | null;
    if (this.newCalls.length === 0) prior = await writeStart(this.services.tx, startWrite);
    else {
      // calls opened at start (v0.5) are written with the start, all or none: one transaction
      const db = this.services.tx as unknown as { $transaction?: <T>(fn: (tx: Tx) => Promise<T>) => Promise<T> };
      const both = async (tx: Tx) => {
        const p = await writeStart(tx, startWrite);
        if (p === null) await this.writeCalls(tx);
        return p;
      };
      prior = db.$transaction ? await db.$transaction(both) : await both(this.services.tx);
    }
    if (prior !== null) return prior;
    // v0.5 Results: a result set by the start's own step (a run that finishes at once) follows the
    // start's one statement; before it lands the run reads as finished with {state} only.
    await this.writeResult();
    await writeWithdrawn(this.services.tx, this.run.id, this.withdrawnMail, this.withdrawnDeliveries);
    this.queueJobs();
    return null;
  }

  /** Hands the written mail and deliveries, with the run's id, to `queuedMail` / `queuedDeliveries`. */
  private queueJobs(): void {
    const runId = this.run.id;
    this.queuedMail.push(...this.mail.map((m) => ({ outboxId: m.id, runId })));
    this.queuedDeliveries.push(...this.deliveries.map((d) => ({ deliveryId: d.id, runId })));
  }

  /**
   * Takes out of the step's mail and chat/`send message` deliveries every message carrying a link
   * that is not live at commit (sql/dead-at-commit.ts), to be written as withdrawn with the
   * reason, records `message-withdrawn` {outboxId | deliveryId, reason} in the history and notes
   * it in `withdrawn` (logged at `warn` after commit). A `send webhook` is data: never withdrawn
   * here, whatever links it carries (issue 38). The others keep their order.
   */
  private async withdrawDeadLinkMessages(links: LinkSettlement): Promise<void> {
    const messages = [
      ...this.mail.map((m) => ({ id: m.id, hashes: m.linkHashes })),
      ...this.deliveries.filter((d) => d.statement !== "webhook").map((d) => ({ id: d.id, hashes: d.link_sha256 })),
    ];
    const dead = await deadAtCommit(this.services.tx, this.run.id, this.isNewRun, links, messages);
    if (dead.size === 0) return;
    const at = (offset: number) => new Date(this.now.getTime() + offset);
    this.mail.forEach((m, i) => this.createdOffsets.set(m.id, i));
    this.deliveries.forEach((d, i) => this.createdOffsets.set(d.id, this.mail.length + i));
    for (const m of this.mail.filter((x) => dead.has(x.id))) {
      const reason = dead.get(m.id)!;
      this.withdrawnMail.push({ id: m.id, to: m.to, subject: m.subject, replyTo: m.replyTo, cc: m.cc, createdAt: at(this.createdOffsets.get(m.id)!), reason });
      this.addHistory("message-withdrawn", { outboxId: m.id, reason });
      this.withdrawn.push({ channel: "email", outboxId: m.id, reason });
    }
    for (const d of this.deliveries.filter((x) => dead.has(x.id))) {
      const reason = dead.get(d.id)!;
      this.withdrawnDeliveries.push({
        id: d.id, endpoint: d.endpoint, statement: d.statement, webhookId: d.webhook_id, linkSha256: d.link_sha256, createdAt: at(this.createdOffsets.get(d.id)!), reason,
      });
      this.addHistory("message-withdrawn", { deliveryId: d.id, reason });
      this.withdrawn.push({ channel: "message", deliveryId: d.id, endpoint: d.endpoint, reason });
    }
    const keepMail = this.mail.filter((m) => !dead.has(m.id));
    const keepDeliveries = this.deliveries.filter((d) => !dead.has(d.id));
    this.mail.splice(0, this.mail.length, ...keepMail);
    this.deliveries.splice(0, this.deliveries.length, ...keepDeliveries);
  }

  /** The reply_to / cc of the step's mail that has them (issue 19). */
  private mailExtraRows(): MailExtraRow[] {
    return this.mail.filter((m) => m.replyTo !== undefined || m.cc !== undefined).map((m) => ({ id: m.id, reply_to: m.replyTo ?? null, cc: m.cc ?? null }));
  }

  /** The step's deliveries as rows, created after its mail, 1 ms apart (creation order). */
  private deliveryRows(): DeliveryWriteRow[] {
    return this.deliveries.map((d, i) => ({ ...d, created_at: new Date(this.now.getTime() + (this.createdOffsets.get(d.id) ?? this.mail.length + i)).toISOString() }));
  }

  /** The StepWrite document of this step (sql/step-write.ts), and how many links it ends. */
  private buildWrite(applied: { id: string; kind: string; outcome: unknown }, links: LinkSettlement): { write: StepWrite; endedLinks: number } {
    const { sealer } = this.services;
    const run = this.run;
    const write: StepWrite = {
      now: this.now.toISOString(),
      newRun: this.isNewRun,
      run: {
        id: run.id,
        workflow_name: run.workflowName,
        version: run.version,
        state: run.state,
        status: run.status,
        visit: run.visit,
        input: this.isNewRun ? sealer.sealJson(run.input) : null,
        milestones: run.milestones,
        finished_at: run.finishedAt?.toISOString() ?? null,
      },
      slotsNew: this.slots.filter((s) => this.newSlots.has(s.id)).map((s) => this.slotRow(s)),
      slotsChanged: this.slots.filter((s) => this.dirtySlots.has(s.id)).map((s) => this.slotRow(s)),
      linksEnded: links.ended,
      linksMinted: links.minted.map((m) => ({ ...m, minted_version: run.version })),
      entities: [...this.dirtyEntities].map((name) => {
        const e = this.entities.get(name)!;
        return { name, entity: e.entity, data: sealer.sealJson(entityJson(e)) };
      }),
      // 1 ms apart, so that reading the outbox in creation order keeps the order of `send email`.
      outbox: this.mail.map((m, i) => ({
        id: m.id,
        created_at: new Date(this.now.getTime() + (this.createdOffsets.get(m.id) ?? i)).toISOString(),
        to: m.to,
        subject: m.subject,
        body: m.body,
      })),
      history: this.history.map((h) => ({ kind: h.kind, data: sealer.sealJson(h.data) })),
      applied,
    };
    return { write, endedLinks: links.ended.length };
  }

  /** A slot as the write's JSON row; null JSON columns are left out so they stay SQL NULL. */
  private slotRow(s: SlotRecord): SlotWriteRow {
    const row: Partial<SlotWriteRow> = {
      id: s.id,
      run_id: this.run.id,
      state: s.state,
      visit: s.visit,
      alias: s.alias,
      element: s.element,
      event: s.event,
      status: s.status,
      opened_at: s.openedAt?.toISOString() ?? null,
      deadline: s.deadline?.toISOString() ?? null,
      closed_at: s.closedAt?.toISOString() ?? null,
    };
    if (s.element !== null) row.element_value = this.services.sealer.sealJson(toJson(s.elementValue));
    if (s.args !== null) row.args = this.services.sealer.sealJson(s.args);
    if (s.candidateUsers !== null) row.candidate_users = s.candidateUsers;
    if (s.candidateRoles !== null) row.candidate_roles = s.candidateRoles;
    if (s.answeredBy !== null) row.answered_by = s.answeredBy;
    if (s.receipt !== null) row.receipt = s.receipt;
    row.forwards = s.forwards;
    return row as SlotWriteRow;
  }
}

/** The JSON form of a tracked row's fields. */
export function entityJson(e: EntityRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(e.data)) out[k] = toJson(v);
  return out;
}
