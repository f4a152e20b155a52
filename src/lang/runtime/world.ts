/**
 * The interpreter's environment (style.md 12: an evaluator receives its environment rather than
 * importing it): what a step (engine/step.ts `Step`) or a read view hands the runtime — the time,
 * the compiled workflow, the run's state and rows — and the effects statements ask of it.
 */
import type { CompiledWorkflow } from "../compiled.js";
import type { Value } from "./values.js";

/**
 * The world the interpreter runs in, handed to it by the step (style.md 12: an evaluator receives
 * its environment rather than importing it). `Step` implements it, delegating slot and link
 * effects to their lifecycle modules, so the interpreter imports neither slot.ts nor link.ts.
 */
export interface World {
  readonly now: Date;
  readonly workflow: CompiledWorkflow;
  readonly run: { readonly state: string };
  readonly entities: Map<string, { entity: string; data: Record<string, Value> }>;
  /** A scalar workflow parameter's runtime value (read-only input). */
  inputValue(name: string): Value;
  /** `x.done`: every slot of the alias is completed. */
  isAliasDone(alias: string): boolean;
  /**
   * `x.CallbackUrl()`: mints a link for the alias's open or waiting slot — or, inside `each`, for
   * element `element`'s slot (v0.4); null when it has none.
   */
  mintCallbackUrl(alias: string, element?: number | null): string | null;
  /** `x.TaskUrl()` (v0.4): the task page's absolute URL of the alias (or of its element `element`) on this run. */
  taskUrl(alias: string, element?: number | null): string;
  /** `x.count` (v0.4): how many slots (elements) of the alias are completed. */
  aliasCount(alias: string): number;
  /** `drop slot x`. */
  dropSlot(alias: string): void;
  /**
   * `x.error` / `x.status` / `x.attempts` of call x (v0.5; lang/compiled.ts CompiledCall) — of
   * element `element`'s call when the alias stands for one element (fanned-out calls), else of
   * the alias's one call. `error` is null until the call failed, `status` the last HTTP status
   * (null when none), `attempts` the attempts made so far. Optional until the call runtime
   * implements it: without it a read is a runtime fault.
   */
  callInfo?(alias: string, element: number | null): { error: string | null; status: number | null; attempts: number };
  /**
   * `result { … }` (v0.5 Results; lang/compiled.ts CompiledWorkflow.returns): the fields' JSON
   * values replace the run's pending result; it is kept only if the step commits.
   */
  setResult?(fields: Record<string, unknown>): void;
  /** Queues a message; `extra` holds `replyTo`/`cc` when the statement gives them (issue 19). */
  queueMail(to: string, subject: string, body: string, extra?: { replyTo?: string; cc?: string }): string;
  /** `send webhook` / `send message` (issue 18): queues a delivery in the step's outbox; returns its id. */
  queueDelivery(delivery: QueuedDelivery): string;
  addHistory(kind: string, data?: Record<string, unknown>): void;
  /** v0.5: the ids of the links minted in this step that queued mail `outboxId` carries (steps only). */
  mailedLinks?(outboxId: string): string[];
  markEntityDirty(name: string): void;
  /**
   * How an int or decimal reads where it joins a string; absent, as JavaScript prints it (`25000`,
   * `2.5`). The responder page's view sets it to mark numbers it formats for the reader's locale
   * (views/responder.ts `markNumbers`); steps never set it, so stored and sent text is unchanged.
   */
  readonly numberText?: (n: number) => string;
  /**
   * How a bool or datetime reads where it joins a string (issue 42); absent, `true` and ISO 8601.
   * The responder page's view sets it to mark them for the reader's language and time zone.
   */
  readonly valueText?: (v: boolean | Date) => string;
}

/**
 * A delivery as the interpreter hands it to the step: the endpoint's name and what is sent —
 * `{type, data}` for a webhook, `{text, link?, label?}` for a message (JSON values).
 */
export type QueuedDelivery =
  | { statement: "webhook"; endpoint: string; payload: { type: string; data: Record<string, unknown> } }
  | { statement: "message"; endpoint: string; payload: { text: string; link?: string; label?: string }; answer?: string };
