/**
 * Every way the engine refuses a request, as one enum of codes. A code is the suffix of the RFC 9457
 * problem `type` the HTTP API answers with; the status for each code is mapped once, in
 * src/web/problems.ts. Nothing matches on message text: callers branch on `code`.
 */

export const RefusalCode = {
  // callback links (callback-links spec §7; HTTP API "The callback endpoint")
  LinkNotFound: "link-not-found",
  LinkBurned: "link-burned",
  LinkRetired: "link-retired",
  LinkDead: "link-dead",
  // slot gates (both paths)
  SlotNotOpen: "slot-not-open",
  RequiresFailed: "requires-failed",
  SlotClosed: "slot-closed",
  // ordinary raise path
  NotACandidate: "not-a-candidate",
  AuthorizeDenied: "authorize-denied",
  /** v0.4 Many responders: this principal already completed another element of the fanned-out slot. */
  AlreadyAnsweredByYou: "already-answered-by-you",
  Unauthorized: "unauthorized",
  // sign-in of people inside the company (v0.4; src/web/identity/)
  /** `GET /auth/callback` with a wrong or stale state, nonce or code (400). */
  SignInFailed: "sign-in-failed",
  /** A browser's state-changing request without this session's CSRF token or from another site (403). */
  CsrfRefused: "csrf-refused",
  // bodies
  InvalidBody: "invalid-body",
  MalformedJson: "malformed-json",
  UnsupportedMediaType: "unsupported-media-type",
  PayloadTooLarge: "payload-too-large",
  MethodNotAllowed: "method-not-allowed",
  // Idempotency-Key (HTTP API "Idempotent retries"; src/engine/values/idempotency.ts)
  InvalidIdempotencyKey: "invalid-idempotency-key",
  IdempotencyKeyReused: "idempotency-key-reused",
  // run time
  HandlerFailed: "handler-failed",
  /** The service cannot apply a command until an operator fixes its configuration (issue 16 item 4). */
  ConfigurationFault: "configuration-fault",
  // lookups and deploys
  NotFound: "not-found",
  InvalidWorkflow: "invalid-workflow",
  VersionConflict: "version-conflict",
  // operators (issue 23): cancelling a run that already ended
  RunFinished: "run-finished",
  // a list's query parameters (GET /api/runs, issue 23)
  InvalidQuery: "invalid-query",
  // endpoints and deliveries (issue 18)
  NotAWebhook: "not-a-webhook",
  LinkNotLive: "link-not-live",
  // forwarding a link (v0.4 "Many responders, forwarding, and receipts"; commands/forward.ts)
  NotForwardable: "not-forwardable",
  ForwardLimit: "forward-limit",
  // task workers (v0.5 SDK, issue 41 item 3; src/web/tasks-api.ts): the lease ran out, the task
  // was withdrawn, or this attempt's outcome was already given
  TaskLockLost: "task-lock-lost",
  // service
  RateLimited: "rate-limited",
  Unavailable: "unavailable",
} as const;

export type RefusalCode = (typeof RefusalCode)[keyof typeof RefusalCode];

/**
 * Why a link is dead (the `reason` of a 410 `link-dead`) — or, for "forwarded" (v0.4), why a link
 * was retired: its holder forwarded it (410 `link-retired`, `reason: "forwarded"`).
 */
export type LinkEndReason = "completed" | "cancelled" | "expired" | "dropped" | "run-finished" | "run-cancelled" | "revoked" | "quorum-reached" | "forwarded";

/** A refusal: a code, a human sentence, and optional machine-readable members for the problem body. */
export interface Refusal {
  code: RefusalCode;
  detail: string;
  /** Extra problem members (`reason`, `expects`, `errors`, `diagnostics`…). Never a token. */
  extra?: Record<string, unknown>;
}

/** A refusal thrown through layers that cannot return it (HTTP handlers, the testing kit). */
export class RefusalError extends Error {
  override name = "RefusalError";
  readonly code: RefusalCode;
  readonly extra: Record<string, unknown>;
  constructor(refusal: Refusal) {
    super(refusal.detail);
    this.code = refusal.code;
    this.extra = refusal.extra ?? {};
  }
}

export function refuse(code: RefusalCode, detail: string, extra?: Record<string, unknown>): Refusal {
  return { code, detail, extra };
}

/**
 * The one 404 detail of the ordinary raise path for an unknown run or an alias its current state
 * lacks (issue 28 item 7): the same words for both, naming no state, so a caller learns neither
 * whether the run exists nor where it stands.
 */
export const NO_SUCH_RUN_OR_SLOT = "No run with this id has a slot of this name.";

/**
 * The generic `requires-failed` details, used when the author gave no `else` wording (or it gave no
 * text): through a link (deposit) and on the ordinary raise path. Pages recognise them and say the
 * same in their own language (web/page/wording.ts, web/task).
 */
export const REQUIRES_GENERIC_LINK = "This response cannot be accepted now: a condition of the workflow does not hold. The link stays valid.";
export function requiresGenericRaise(alias: string): string {
  return `The Requires condition of slot "${alias}" does not hold.`;
}
