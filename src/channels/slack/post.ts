/**
 * One delivery attempt of a `send message` to a `slack-app` endpoint (v0.4 "Answers inside
 * Slack"), called by the `slack-app` channel (channel.ts) for the outbox's attempt (outbox/deliveries.ts), so the
 * message is sent only if the step committed, retried on the delivery schedule, and recorded in
 * `delivery_attempts` like every delivery.
 *
 * - A message answering a slot whose slot is no longer open or waiting (or past its deadline) is
 *   withdrawn without being posted ("withdrawn: the slot closed"; never retried).
 * - Posted with `chat.postMessage` to the endpoint's channel; with `answer:` the blocks carry the
 *   controls (blocks.ts) and the posted message (channel, ts) is recorded in `slack_messages`
 *   under the controls' opaque reference, so it can be replaced later.
 * - A Slack error (`ok: false`) is a failed attempt (`slack: channel_not_found`), retried; a 429
 *   waits Slack's Retry-After.
 */
import type { Db } from "../../db.js";
import type { OpenEndpoint } from "../../endpoints/endpoints.js";
import type { Sealer } from "../../engine/sealing/seal.js";
import { slackClient, slackFailure, type SlackFailure } from "./api.js";
import { questionMessage } from "./blocks.js";
import type { MessagePayload } from "../channel.js";
import { closedSlotOf, recordPosted, recordPosting } from "./messages.js";
import { slackMessage } from "./wire.js";

export interface SlackPostDeps {
  db: Db;
  sealer: Sealer;
  /** SLOTFLOW_SLACK_API_URL. */
  apiBase: string;
}

/** A `send message`'s payload (channel.ts MessagePayload, its `answer` read here). */
export type SlackMessagePayload = Omit<MessagePayload, "statement">;

export type SlackPostResult = { kind: "withdrawn"; reason: string } | { kind: "sent" } | ({ kind: "failed" } & SlackFailure);

export async function postSlackApp(deps: SlackPostDeps, runId: string, endpoint: OpenEndpoint, payload: SlackMessagePayload): Promise<SlackPostResult> {
  const app = endpoint.slack;
  if (!app) return { kind: "failed", statusCode: null, error: "the slack-app endpoint has no settings", retryAfterMs: null };
  const spec = payload.answer;
  if (spec && (await closedSlotOf(deps.db, deps.sealer, runId, spec.slotId)) !== null) return { kind: "withdrawn", reason: "withdrawn: the slot closed" };
  const message = spec
    ? questionMessage(payload.text, spec.ref, spec.controls)
    : (slackMessage({ text: payload.text, link: payload.link, label: payload.label }) as unknown as { text: string; blocks: never[] });
  if (spec) await recordPosting(deps.db, deps.sealer, { spec, runId, endpoint: endpoint.name, question: payload.text });
  try {
    const res = await (await slackClient(app.botToken, deps.apiBase)).chat.postMessage({ channel: app.channel, text: message.text, blocks: message.blocks, unfurl_links: false, unfurl_media: false });
    if (spec) await recordPosted(deps.db, spec.ref, res.channel ?? app.channel, String(res.ts));
    return { kind: "sent" };
  } catch (err) {
    return { kind: "failed", ...slackFailure(err) };
  }
}
