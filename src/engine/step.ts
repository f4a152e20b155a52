/**
 * A step: one change to one run (start, deposit, raise, expiry), applied as one atomic unit
 * (language reference, "Handlers and execution": all of it commits or none of it does).
 *
 * The step loads the run (locked by the caller), its current slots and its tracked rows into
 * memory; the lifecycle modules (run.ts, slot.ts, link.ts) and the interpreter change that model
 * and record effects; `flush()` writes everything through the caller's transaction. A runtime
 * error thrown before `flush()` leaves the database untouched, and the caller's rollback covers a
 * failure during it.
 *
 * Every string written by `flush()` that carries a callback link is sealed first (seal.ts).
 */
import { randomUUID } from "node:crypto";
import type { Limits } from "../config.js";
import type { Tx } from "../db.js";
import type { CompiledWorkflow } from "../lang/compiled.js";
import type { IdempotencyFingerprint } from "./idempotency.js";
import type { LinkEndReason } from "./refusals.js";
import type { Sealer } from "./seal.js";
import { fromJson, toJson, type Value } from "./values.js";

export type RunStatus = "running" | "finished";
export type SlotStatus = "waiting" | "open" | "completed" | "cancelled" | "expired" | "dropped";

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
}

export interface EntityRecord {
  /** The workflow parameter naming the row. */
  name: string;
  entity: string;
  data: Record<string, Value>;
}

export interface StepServices {
  tx: Tx;
  sealer: Sealer;
  /** `{base_url}` of minted links, no trailing slash. */
  baseUrl: string;
  /** Input and fan-out limits (config.ts); the defaults when absent. */
  limits?: Limits;
}

interface PendingMint {
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
}

export class Step {
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
  private readonly mints: PendingMint[] = [];
  /** Slot id → why its live link dies at flush (slot closed during this step). */
  private readonly linkEnds = new Map<string, LinkEndReason>();
  private burned: { linkId: string; idempotency: IdempotencyFingerprint | null } | null = null;
  /** Slot id → id of its live link, as loaded and as changed by this step (link.ts keeps it). */
  private readonly liveLinks: Map<string, string>;
  private readonly mail: PendingMail[] = [];
  private readonly history: { kind: string; data: Record<string, unknown> }[] = [];
  /** Outbox ids queued by this step, for the caller to hand to the mailer after commit. */
  readonly queuedMail: string[] = [];

  constructor(
    readonly services: StepServices,
    readonly workflow: CompiledWorkflow,
    readonly run: RunRecord,
    slots: SlotRecord[],
    entities: EntityRecord[],
    isNewRun: boolean,
    liveLinks: Map<string, string> = new Map(),
  ) {
    this.slots = slots;
    this.liveLinks = liveLinks;
    this.entities = new Map(entities.map((e) => [e.name, e]));
    this.isNewRun = isNewRun;
    if (isNewRun) for (const e of entities) this.dirtyEntities.add(e.name);
  }

  /** Loads the run's current slots and tracked rows. The caller holds the run's row lock. */
  static async load(services: StepServices, workflow: CompiledWorkflow, run: RunRecord): Promise<Step> {
    const { tx, sealer } = services;
    const [slotRows, entityRows, liveLinks] = await Promise.all([
      tx.slot.findMany({ where: { runId: run.id, visit: run.visit }, orderBy: [{ alias: "asc" }, { element: "asc" }] }),
      tx.entityRow.findMany({ where: { runId: run.id } }),
      tx.link.findMany({ where: { runId: run.id, status: "live" }, select: { id: true, slotId: true } }),
    ]);
    const slots: SlotRecord[] = slotRows.map((r) => {
      const slot = workflow.states[r.state]?.slots.find((s) => s.alias === r.alias);
      const elementType = slot?.forEach?.elementType ?? null;
      return {
        id: r.id,
        state: r.state,
        visit: r.visit,
        alias: r.alias,
        element: r.element,
        elementValue: r.elementValue === null ? null : elementType ? fromJson(r.elementValue, elementType) : (r.elementValue as Value),
        event: r.event,
        status: r.status as SlotStatus,
        openedAt: r.openedAt,
        deadline: r.deadline,
        closedAt: r.closedAt,
        args: r.args as Record<string, unknown> | null,
      };
    });
    const entities: EntityRecord[] = entityRows.map((r) => {
      const decl = workflow.entities[r.entity];
      const raw = sealer.unsealJson(r.data) as Record<string, unknown>;
      const data: Record<string, Value> = {};
      for (const [field, spec] of Object.entries(decl?.fields ?? {})) data[field] = fromJson(raw[field] ?? null, spec.type);
      return { name: r.name, entity: r.entity, data };
    });
    return new Step(services, workflow, run, slots, entities, false, new Map(liveLinks.map((l) => [l.slotId, l.id])));
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
  queueMail(to: string, subject: string, body: string): string {
    const id = randomUUID();
    const { sealer } = this.services;
    this.mail.push({ id, to: sealer.sealText(to), subject: sealer.sealText(subject), body: sealer.sealText(body) });
    return id;
  }

  addHistory(kind: string, data: Record<string, unknown> = {}): void {
    this.history.push({ kind, data });
  }

  // --- writing ---------------------------------------------------------------------------------

  /** Writes every change of the step through the transaction. */
  async flush(): Promise<void> {
    const { tx, sealer } = this.services;
    const run = this.run;
    if (this.isNewRun) {
      await tx.run.create({
        data: {
          id: run.id,
          workflowName: run.workflowName,
          version: run.version,
          state: run.state,
          status: run.status,
          visit: run.visit,
          input: sealer.sealJson(run.input) as object,
          milestones: run.milestones,
          finishedAt: run.finishedAt,
        },
      });
    } else {
      await tx.run.update({
        where: { id: run.id },
        data: { state: run.state, status: run.status, visit: run.visit, milestones: run.milestones, finishedAt: run.finishedAt, version: run.version },
      });
    }
    const created = this.slots.filter((s) => this.newSlots.has(s.id));
    if (created.length > 0) await tx.slot.createMany({ data: created.map((s) => this.slotRow(s)) });
    for (const s of this.slots) {
      if (this.dirtySlots.has(s.id)) await tx.slot.update({ where: { id: s.id }, data: this.slotRow(s) });
    }
    // Links: the deposit's own link burns; mints retire the previous live link of their slot, in
    // order; then every live link of a slot that closed during this step dies.
    if (this.burned) {
      const { linkId, idempotency } = this.burned;
      await tx.link.update({
        where: { id: linkId },
        data: {
          status: "burned",
          endedAt: this.now,
          idempotencyKeySha256: idempotency?.keySha256 ?? null,
          idempotencyBodySha256: idempotency?.bodySha256 ?? null,
        },
      });
    }
    for (const m of this.mints) {
      await tx.link.updateMany({ where: { slotId: m.slotId, status: "live" }, data: { status: "retired", endedAt: this.now } });
      await tx.link.create({
        data: { id: m.linkId, tokenSha256: m.tokenSha256, runId: run.id, slotId: m.slotId, mintedVersion: run.version, status: "live" },
      });
    }
    for (const [slotId, reason] of this.linkEnds) {
      await tx.link.updateMany({ where: { slotId, status: "live" }, data: { status: "dead", endReason: reason, endedAt: this.now } });
    }
    for (const name of this.dirtyEntities) {
      const e = this.entities.get(name)!;
      const data = sealer.sealJson(entityJson(e)) as object;
      if (this.isNewRun) await tx.entityRow.create({ data: { runId: run.id, name, entity: e.entity, data } });
      else await tx.entityRow.update({ where: { runId_name: { runId: run.id, name } }, data: { data } });
    }
    if (this.mail.length > 0) {
      await tx.outboxMessage.createMany({
        data: this.mail.map((m, i) => ({
          id: m.id,
          // 1 ms apart, so that reading the outbox in creation order keeps the order of `send email`.
          createdAt: new Date(this.now.getTime() + i),
          runId: run.id,
          to: m.to,
          subject: m.subject,
          body: m.body,
          status: "pending",
        })),
      });
      this.queuedMail.push(...this.mail.map((m) => m.id));
    }
    if (this.history.length > 0) {
      await tx.historyEntry.createMany({
        data: this.history.map((h) => ({ runId: run.id, kind: h.kind, data: sealer.sealJson(h.data) as object, at: this.now })),
      });
    }
  }

  private slotRow(s: SlotRecord) {
    return {
      id: s.id,
      runId: this.run.id,
      state: s.state,
      visit: s.visit,
      alias: s.alias,
      element: s.element,
      elementValue: s.element === null ? undefined : (this.services.sealer.sealJson(toJson(s.elementValue)) as object),
      event: s.event,
      status: s.status,
      openedAt: s.openedAt,
      deadline: s.deadline,
      closedAt: s.closedAt,
      args: s.args === null ? undefined : (this.services.sealer.sealJson(s.args) as object),
    };
  }
}

/** The JSON form of a tracked row's fields. */
export function entityJson(e: EntityRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(e.data)) out[k] = toJson(v);
  return out;
}
