/**
 * The `webhook` channel (issue 18 item 3): Standard Webhooks 1.0, signed.
 *
 * | statement | body |
 * |---|---|
 * | `send webhook` | `{"type", "timestamp", "data"}` |
 * | `send message` | the same, type `slotflow.message`, data `{text, link?, label?}` |
 *
 * Headers: `webhook-id` (fixed at enqueue: the same on every retry and redelivery),
 * `webhook-timestamp` (this attempt, Unix seconds), `webhook-signature` (`v1,<base64 HMAC-SHA256
 * of id.timestamp.body>` per secret, space-separated: two during a rotation), signed by the
 * `standardwebhooks` library. Settings: `url` (sealed) and the signing secret (`whsec_…`, sealed,
 * generated on create, rotatable).
 */
import { Webhook } from "standardwebhooks";
import type { OpenEndpoint } from "../../endpoints/endpoints.js";
import type { Channel, MessagePayload, Payload } from "../channel.js";
import { postGuarded, type WireRequest } from "../http-post.js";

/** The event type of a `send message` delivered to a webhook endpoint. */
export const MESSAGE_EVENT_TYPE = "slotflow.message";

function messageData(p: MessagePayload): Record<string, unknown> {
  return { text: p.text, ...(p.link ? { link: p.link } : {}), ...(p.label !== undefined ? { label: p.label } : {}) };
}

/** The signed request of one attempt. */
export function webhookWire(endpoint: Pick<OpenEndpoint, "secrets">, payload: Payload, webhookId: string, now: Date): WireRequest {
  const [type, data] = payload.statement === "webhook" ? [payload.type, payload.data] : [MESSAGE_EVENT_TYPE, messageData(payload)];
  const body = JSON.stringify({ type, timestamp: now.toISOString(), data });
  const signature = endpoint.secrets.map((s) => new Webhook(s).sign(webhookId, now, body)).join(" ");
  return {
    headers: { "content-type": "application/json", "webhook-id": webhookId, "webhook-timestamp": String(Math.floor(now.getTime() / 1000)), "webhook-signature": signature },
    body,
  };
}

export const webhookChannel: Channel = {
  kind: "webhook",
  statements: ["webhook", "message"],
  settings: [
    { name: "url", sealed: true },
    { name: "secret", sealed: true },
  ],
  send: (deps, a) => postGuarded(deps, a.endpoint.url, webhookWire(a.endpoint, a.payload, a.webhookId, a.now)),
};
