/**
 * The `slack` channel's wire format (issue 18 item 3): a `send message` to an incoming-webhook URL
 * as Block Kit — a section with the text, the link as a button, `unfurl_links`/`unfurl_media`
 * false; the text escaped for mrkdwn (`slackEscape`) there and in the top-level `text`. A
 * `slack-app` message without answer controls is the same message (post.ts).
 */
import type { MessagePayload } from "../channel.js";
import type { WireRequest } from "../http-post.js";

const DEFAULT_LABEL = "Open";
/** Slack allows at most this many characters in a section's text and a button's label. */
const SLACK_TEXT_MAX = 3000;
const SLACK_LABEL_MAX = 75;

/**
 * Slack mrkdwn: `&`, `<`, `>` are control characters and must be escaped in text — both in the
 * section and in the top-level `text` (the notification fallback, also mrkdwn), so run data cannot
 * form a `<https://…|disguised link>` or a `<!channel>` mention (issue 28, "also check").
 */
export function slackEscape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** The message of one `send message` (no answer controls): `{text, blocks, unfurl_links, unfurl_media}`. */
export function slackMessage(payload: Pick<MessagePayload, "text" | "link" | "label">): { text: string; blocks: unknown[]; unfurl_links: false; unfurl_media: false } {
  const label = (payload.label ?? DEFAULT_LABEL) || DEFAULT_LABEL;
  const blocks: unknown[] = [{ type: "section", text: { type: "mrkdwn", text: slackEscape(payload.text).slice(0, SLACK_TEXT_MAX) } }];
  if (payload.link) {
    blocks.push({ type: "actions", elements: [{ type: "button", text: { type: "plain_text", text: label.slice(0, SLACK_LABEL_MAX), emoji: false }, url: payload.link, style: "primary" }] });
  }
  return { text: slackEscape(payload.text), blocks, unfurl_links: false, unfurl_media: false };
}

/** The request of one attempt to an incoming-webhook URL. */
export function slackWire(payload: MessagePayload): WireRequest {
  return { headers: { "content-type": "application/json" }, body: JSON.stringify(slackMessage(payload)) };
}
