/**
 * A channel: one way a `send webhook` / `send message` leaves the engine (issue 39 item 2,
 * "Channels behind one interface"). Each kind of endpoint (endpoints/endpoints.ts ENDPOINT_KINDS)
 * that takes deliveries is one `Channel` in one folder under src/channels/, named in the registry
 * (registry.ts); the delivery lifecycle (claim, attempt, retry, withdraw: outbox/deliveries.ts)
 * knows channels only through this interface.
 *
 * What a channel owns:
 *
 * - `kind`: the endpoint kind it serves (`webhook`, `slack`, `teams`, `slack-app`).
 * - `statements`: which statements it takes; any other is ended at the attempt as unfit
 *   ("a send webhook cannot go to a slack endpoint: use send message"), never retried.
 * - `settings`: what an operator gives it (`PUT /api/endpoints/{name}`) and which of those are
 *   sealed at rest (documented here; validation of the URL kinds is shared in endpoints.ts, a
 *   slack-app's in slack/app-settings.ts).
 * - `send(attempt)`: one attempt of one delivery, with the payload already opened; it returns what
 *   the attempt decided (`ChannelOutcome`). It never writes `deliveries` — the lifecycle records
 *   the attempt, the endpoint's state and the delivery's status in one statement.
 * - optional `answers`: the channel can carry answer controls (the engine's fact
 *   engine/values/answer-controls.ts `AnswerSpec`) and take the answer back.
 * - optional `inbound`: the door through which it takes answers (an HTTP path of src/web).
 *
 * A channel folder imports no other channel folder (.dependency-cruiser.cjs `channel-folders-apart`);
 * what two share (the guarded HTTP POST) lives beside this file.
 */
import type { Db } from "../db.js";
import type { OpenEndpoint } from "../endpoints/endpoints.js";
import type { Sealer } from "../engine/sealing/seal.js";
import type { AnswerSpec } from "../engine/values/answer-controls.js";
import type { Resolver } from "../outbox/address-guard.js";

/** A `send webhook`'s payload as stored (sealed) in the delivery row. */
export interface WebhookPayload {
  statement: "webhook";
  type: string;
  data: Record<string, unknown>;
}

/** A `send message`'s payload as stored (sealed): `answer` only toward a channel that carries answers. */
export interface MessagePayload {
  statement: "message";
  text: string;
  link?: string;
  label?: string;
  answer?: AnswerSpec;
}

/** What one delivery carries, opened. */
export type Payload = WebhookPayload | MessagePayload;
/** The statements a delivery comes from. */
export type Statement = Payload["statement"];

/** What a channel may use to send (the delivery worker's settings; environment variables named). */
export interface ChannelDeps {
  db: Db;
  sealer: Sealer;
  /** SLOTFLOW_ENDPOINTS_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  /** Resolves endpoint host names (default: the system resolver; tests pass a stand-in for DNS). */
  resolve?: Resolver;
  /** SLOTFLOW_SLACK_API_URL, for `slack-app` endpoints (default https://slack.com/api/). */
  slackApiUrl?: string;
}

/** One attempt of one delivery, as the lifecycle hands it to `send`. */
export interface ChannelAttempt {
  runId: string;
  deliveryId: string;
  /** The endpoint, opened (URL, secrets, settings). */
  endpoint: OpenEndpoint;
  /** The payload, opened; its statement is one of the channel's `statements`. */
  payload: Payload;
  /** Fixed at enqueue: the same on every retry and redelivery (receivers de-duplicate on it). */
  webhookId: string;
  /** This attempt's time (signatures, timestamps). */
  now: Date;
}

/**
 * What an attempt decided:
 *
 * - `answered`: the receiver answered (or the connection failed). `error` null means delivered
 *   (a 2xx, or Slack's `ok`); otherwise the lifecycle retries on its schedule — a 410 disables the
 *   endpoint — waiting at least `retryAfterMs` when given. `statusCode` null: no HTTP answer.
 * - `unfit`: the attempt cannot succeed however often it is retried (a statement the endpoint
 *   cannot show); the delivery fails, its payload kept.
 * - `withdrawn`: not sent, and never to be (the slot it asks about closed); the payload is dropped.
 */
export type ChannelOutcome =
  | { kind: "answered"; statusCode: number | null; error: string | null; retryAfterMs: number | null }
  | { kind: "unfit"; reason: string }
  | { kind: "withdrawn"; reason: string };

/** A setting of an endpoint of this kind: its JSON name in `PUT /api/endpoints/{name}` and whether it is sealed at rest. */
export interface ChannelSetting {
  name: string;
  sealed: boolean;
}

/** A channel's door for answers (its HTTP path under src/web), when it takes answers back. */
export interface InboundDoor {
  /** e.g. `POST /api/slack/interactions`. */
  path: string;
}

/** One channel; see the module header. */
export interface Channel {
  readonly kind: string;
  readonly statements: readonly Statement[];
  readonly settings: readonly ChannelSetting[];
  send(deps: ChannelDeps, attempt: ChannelAttempt): Promise<ChannelOutcome>;
  /** Present when a `send message … { answer: alias }` to this channel carries answer controls. */
  readonly answers?: { controls: "buttons-or-modal" };
  readonly inbound?: InboundDoor;
}
