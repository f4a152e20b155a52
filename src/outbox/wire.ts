/**
 * What goes on the wire for each endpoint kind (issue 18 item 3; interfaces.md "Delivering links
 * through other channels"):
 *
 * | endpoint | `send webhook` | `send message` |
 * |---|---|---|
 * | webhook | Standard Webhooks 1.0: `{"type", "timestamp", "data"}` | the same, type `slotflow.message`, data `{text, link?, label?}` |
 * | slack | refused (a chat channel takes messages) | Block Kit: a section with the text, the link as a button, `unfurl_links`/`unfurl_media` false; the text escaped for mrkdwn (`slackEscape`) there and in the top-level `text` |
 * | teams | refused | a message with an Adaptive Card (1.4): a TextBlock with the text's Markdown escaped (`teamsEscape`), the link as `Action.OpenUrl` |
 *
 * Webhook headers: `webhook-id` (fixed at enqueue: the same on every retry and redelivery),
 * `webhook-timestamp` (this attempt, Unix seconds), `webhook-signature` (`v1,<base64 HMAC-SHA256
 * of id.timestamp.body>` per secret, space-separated: two during a rotation), signed by the
 * `standardwebhooks` library.
 */
import { Webhook } from "standardwebhooks";
import type { OpenEndpoint } from "../endpoints/endpoints.js";

export type Payload =
  | { statement: "webhook"; type: string; data: Record<string, unknown> }
  | { statement: "message"; text: string; link?: string; label?: string };

export interface WireRequest {
  headers: Record<string, string>;
  body: string;
}

/** The event type of a `send message` delivered to a webhook endpoint. */
export const MESSAGE_EVENT_TYPE = "slotflow.message";
const DEFAULT_LABEL = "Open";

/**
 * Slack mrkdwn: `&`, `<`, `>` are control characters and must be escaped in text — both in the
 * section and in the top-level `text` (the notification fallback, also mrkdwn), so run data cannot
 * form a `<https://…|disguised link>` or a `<!channel>` mention (issue 28, "also check").
 */
export function slackEscape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/**
 * Text for a Teams Adaptive Card TextBlock, whose Markdown (a CommonMark subset: bold, italic,
 * lists, `[title](url)` links) would otherwise apply to run data (issue 28, "also check"): the
 * characters that open inline Markdown (backslash, asterisk, underscore, brackets, parentheses, angle
 * brackets, backtick, tilde, braces) are backslash-escaped
 * everywhere, and `-`, `+`, `#` and a number's `.` or `)` at the start of a line (lists, headings).
 * What the reader sees is the text as the workflow produced it.
 */
export function teamsEscape(text: string): string {
  return text
    .replace(/[\\*_[\]()<>`~{}]/g, (c) => `\\${c}`)
    .replace(/^([ \t]*)([-+#])/gm, "$1\\$2")
    .replace(/^([ \t]*\d+)([.)])/gm, "$1\\$2");
}

/** Slack allows at most this many characters in a section's text and a button's label. */
const SLACK_TEXT_MAX = 3000;
const SLACK_LABEL_MAX = 75;

/**
 * The request for one attempt; throws an Error saying why when the statement does not fit the
 * endpoint (a `send webhook` to a chat endpoint) — recorded as the delivery's failure.
 */
export function wireRequest(endpoint: OpenEndpoint, payload: Payload, webhookId: string, now: Date): WireRequest {
  const json = { "content-type": "application/json" };
  if (endpoint.kind === "webhook") {
    const [type, data] = payload.statement === "webhook" ? [payload.type, payload.data] : [MESSAGE_EVENT_TYPE, messageData(payload)];
    const body = JSON.stringify({ type, timestamp: now.toISOString(), data });
    const signature = endpoint.secrets.map((s) => new Webhook(s).sign(webhookId, now, body)).join(" ");
    return {
      headers: { ...json, "webhook-id": webhookId, "webhook-timestamp": String(Math.floor(now.getTime() / 1000)), "webhook-signature": signature },
      body,
    };
  }
  if (endpoint.kind === "http" || endpoint.kind === "slack-app") throw new Error(`a send ${payload.statement} cannot go to a ${endpoint.kind} endpoint${endpoint.kind === "http" ? ": http endpoints are called with call http" : ""}`);
  if (payload.statement !== "message") throw new Error(`a send webhook cannot go to a ${endpoint.kind} endpoint: use send message`);
  const label = (payload.label ?? DEFAULT_LABEL) || DEFAULT_LABEL;
  if (endpoint.kind === "slack") {
    const blocks: unknown[] = [{ type: "section", text: { type: "mrkdwn", text: slackEscape(payload.text).slice(0, SLACK_TEXT_MAX) } }];
    if (payload.link) {
      blocks.push({ type: "actions", elements: [{ type: "button", text: { type: "plain_text", text: label.slice(0, SLACK_LABEL_MAX), emoji: false }, url: payload.link, style: "primary" }] });
    }
    return { headers: json, body: JSON.stringify({ text: slackEscape(payload.text), blocks, unfurl_links: false, unfurl_media: false }) };
  }
  const card = {
    type: "AdaptiveCard",
    $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
    version: "1.4",
    body: [{ type: "TextBlock", text: teamsEscape(payload.text), wrap: true }],
    actions: payload.link ? [{ type: "Action.OpenUrl", title: label, url: payload.link }] : [],
  };
  return {
    headers: json,
    body: JSON.stringify({ type: "message", attachments: [{ contentType: "application/vnd.microsoft.card.adaptive", contentUrl: null, content: card }] }),
  };
}

function messageData(p: Extract<Payload, { statement: "message" }>): Record<string, unknown> {
  return { text: p.text, ...(p.link ? { link: p.link } : {}), ...(p.label !== undefined ? { label: p.label } : {}) };
}
