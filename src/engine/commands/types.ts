/**
 * The commands applied to runs, and their outcomes. Every change to a run travels as one of these
 * through the worker path (src/engine/commands/apply.ts), serially per run.
 *
 * Job payloads are JSON and never hold a token: a deposit names its link by id.
 */
import * as yup from "yup";
import type { IdempotencyFingerprint } from "../values/idempotency.js";
import type { Refusal } from "../refusals.js";

export interface PrincipalClaims {
  id: string;
  email: string | null;
  roles: string[];
}

export type { AnsweredBy } from "../step.js";

export type Command =
  | { kind: "start"; commandId: string; runId: string; workflow: string; version: number; input: Record<string, unknown> }
  | {
      kind: "deposit";
      commandId: string;
      runId: string;
      linkId: string;
      args: Record<string, unknown>;
      /** Hashes of the request's Idempotency-Key and body, when it had a key (idempotency.ts). */
      idempotency?: IdempotencyFingerprint | null;
    }
  | {
      kind: "raise";
      commandId: string;
      runId: string;
      alias: string;
      element: number | null;
      args: Record<string, unknown>;
      principal: PrincipalClaims;
      /**
       * How the principal came (v0.4 "Who answered"), recorded as the slot's `answeredBy.via`:
       * "principal" (absent means this too) for the web — the task page and
       * `POST /api/runs/{id}/slots/{alias}/events`; "slack" for an answer given inside Slack
       * (the principal is then `slack:{team_id}:{user_id}`).
       */
      via?: "principal" | "slack";
    }
  | { kind: "expire"; commandId: string; runId: string; slotId: string }
  /**
   * The holder of a link forwards it to `email` (forward.ts; v0.4 "Many responders, forwarding, and
   * receipts"): names the link by id, never by token; `email` was checked by the web process.
   */
  | { kind: "forward"; commandId: string; runId: string; linkId: string; email: string; lang?: string }
  /** An operator ends the live link of slot `alias` (of its element `element` when fanned out; revoke.ts). */
  | { kind: "revoke"; commandId: string; runId: string; alias: string; element?: number; reason?: string; actor?: string }
  /** An operator ends the run (cancel.ts, issue 23): `reason` 1–500 characters, `actor` who asked. */
  | { kind: "cancel"; commandId: string; runId: string; reason: string; actor: string }
  /**
   * The outcome of attempt `attempt` (1-based) of call `callId` on slot `slotId` (v0.5 calls;
   * commands/call.ts), enqueued by the calls worker; `commandId` = callCommandId(callId, attempt).
   */
  | { kind: "call"; commandId: string; runId: string; callId: string; slotId: string; attempt: number; result: CallAttemptResult };

/** What one attempt of a call came to (calls/http/attempt.ts `HttpAttemptOutcome`, without its attempt number). */
export type CallAttemptResult =
  /** `status` is null for a task's answer (v0.5 SDK, issue 41 item 3) and a child run's answer (v0.5 `call workflow`): no HTTP status. */
  | { kind: "answer"; status: number | null; ms: number; body: Record<string, unknown> | null }
  | { kind: "retry"; status: number | null; ms: number; error: string; retryAfterMs: number | null }
  | { kind: "fail"; status: number | null; ms: number; error: string };

export interface RunSummary {
  id: string;
  workflow: string;
  version: number;
  state: string;
  status: string;
}

export type Outcome =
  | {
      ok: true;
      status: "started" | "completed" | "expired" | "fired" | "skipped" | "revoked" | "cancelled" | "forwarded" | "retried" | "failed";
      run: RunSummary;
      /** A deposit that completed its slot: the slot's receipt (compact JWS; v0.4 "Receipts"), when receipts are signed. */
      receipt?: string;
    }
  | { ok: false; refusal: Refusal };

/** The longest reason an operator may give for a cancel or a revoke (interfaces.md "Runs for operators"). */
export const CANCEL_REASON_MAX = 500;

const uuid = () => yup.string().required().uuid();
const json = () => yup.object().required();

/** Schemas of the command catalog, checked when a job is enqueued and again when it is processed. */
export const commandSchemas = {
  start: yup.object({ kind: yup.string().oneOf(["start"]).required(), commandId: uuid(), runId: uuid(), workflow: yup.string().required(), version: yup.number().integer().min(1).required(), input: json() }),
  deposit: yup.object({
    kind: yup.string().oneOf(["deposit"]).required(),
    commandId: uuid(),
    runId: uuid(),
    linkId: uuid(),
    args: json(),
    idempotency: yup
      .object({ keySha256: yup.string().required().matches(/^[0-9a-f]{64}$/), bodySha256: yup.string().required().matches(/^[0-9a-f]{64}$/) })
      .nullable()
      .optional()
      .default(undefined),
  }),
  raise: yup.object({
    kind: yup.string().oneOf(["raise"]).required(),
    commandId: uuid(),
    runId: uuid(),
    alias: yup.string().required(),
    element: yup.number().integer().min(0).nullable().defined(),
    args: json(),
    principal: yup.object({ id: yup.string().required(), email: yup.string().nullable().defined(), roles: yup.array(yup.string().required()).required() }).required(),
    via: yup.string().oneOf(["principal", "slack"]).optional(),
  }),
  forward: yup.object({
    kind: yup.string().oneOf(["forward"]).required(),
    commandId: uuid(),
    runId: uuid(),
    linkId: uuid(),
    email: yup.string().required().max(320),
    // issue 42: the language the forward mail is written in (the forwarder's page's); absent: the slot's Language, else English
    lang: yup.string().optional().max(64),
  }),
  expire: yup.object({ kind: yup.string().oneOf(["expire"]).required(), commandId: yup.string().required(), runId: uuid(), slotId: uuid() }),
  revoke: yup.object({
    kind: yup.string().oneOf(["revoke"]).required(),
    commandId: uuid(),
    runId: uuid(),
    alias: yup.string().required(),
    element: yup.number().integer().min(0).optional(),
    reason: yup.string().max(CANCEL_REASON_MAX).optional(),
    actor: yup.string().max(200).optional(),
  }),
  call: yup.object({
    kind: yup.string().oneOf(["call"]).required(),
    commandId: uuid(),
    runId: uuid(),
    callId: uuid(),
    slotId: uuid(),
    attempt: yup.number().integer().min(1).required(),
    result: yup
      .object({
        kind: yup.string().oneOf(["answer", "retry", "fail"]).required(),
        status: yup.number().integer().nullable().defined(),
        ms: yup.number().min(0).required(),
        error: yup.string().max(1000).optional(),
        retryAfterMs: yup.number().min(0).nullable().optional(),
        body: yup.mixed().nullable().optional(),
      })
      .required(),
  }),
  cancel: yup.object({
    kind: yup.string().oneOf(["cancel"]).required(),
    commandId: uuid(),
    runId: uuid(),
    reason: yup.string().required().min(1).max(CANCEL_REASON_MAX),
    actor: yup.string().required().max(200),
  }),
} as const;

/** Throws a yup ValidationError when `value` is not a well-formed command. */
export function validateCommand(value: unknown): Command {
  const kind = (value as { kind?: string } | null)?.kind;
  const schema = kind && kind in commandSchemas ? commandSchemas[kind as keyof typeof commandSchemas] : null;
  if (!schema) throw new yup.ValidationError(`unknown command kind "${String(kind)}"`);
  schema.validateSync(value, { strict: true });
  return value as Command;
}
