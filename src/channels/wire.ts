/**
 * What goes on the wire for an endpoint reached by an HTTP POST (issue 18 item 3; interfaces.md
 * "Delivering links through other channels"): the webhook, slack and teams channels' requests,
 * by kind. Throws an Error saying why when the statement does not fit the endpoint (registry.ts
 * `unfitReason`). The channels themselves send; this is the one view of all three formats
 * (test/engine/security-small.test.ts).
 */
import type { OpenEndpoint } from "../endpoints/endpoints.js";
import type { MessagePayload, Payload } from "./channel.js";
import type { WireRequest } from "./http-post.js";
import { unfitReason } from "./registry.js";
import { slackWire } from "./slack/wire.js";
import { teamsWire } from "./teams/teams.js";
import { webhookWire } from "./webhook/webhook.js";

export { slackEscape } from "./slack/wire.js";
export { teamsEscape } from "./teams/teams.js";
export { MESSAGE_EVENT_TYPE } from "./webhook/webhook.js";
export type { Payload, WireRequest };

/** The request for one attempt to a webhook, slack or teams endpoint. */
export function wireRequest(endpoint: OpenEndpoint, payload: Payload, webhookId: string, now: Date): WireRequest {
  const unfit = endpoint.kind === "slack-app" ? `a send ${payload.statement} cannot go to a slack-app endpoint` : unfitReason(endpoint.kind, payload.statement);
  if (unfit) throw new Error(unfit);
  if (endpoint.kind === "webhook") return webhookWire(endpoint, payload, webhookId, now);
  return endpoint.kind === "slack" ? slackWire(payload as MessagePayload) : teamsWire(payload as MessagePayload);
}
