/**
 * The `teams` channel (issue 18 item 3): an incoming-webhook / workflow URL of Microsoft Teams.
 * Takes `send message` only: a message with an Adaptive Card (1.4) — a TextBlock with the text's
 * Markdown escaped (`teamsEscape`), the link as `Action.OpenUrl`. Settings: `url` (sealed: the
 * URL is the credential).
 */
import type { Channel, MessagePayload } from "../channel.js";
import { postGuarded, type WireRequest } from "../http-post.js";

const DEFAULT_LABEL = "Open";

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

/** The request of one attempt: the Adaptive Card message. */
export function teamsWire(payload: MessagePayload): WireRequest {
  const label = (payload.label ?? DEFAULT_LABEL) || DEFAULT_LABEL;
  const card = {
    type: "AdaptiveCard",
    $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
    version: "1.4",
    body: [{ type: "TextBlock", text: teamsEscape(payload.text), wrap: true }],
    actions: payload.link ? [{ type: "Action.OpenUrl", title: label, url: payload.link }] : [],
  };
  return {
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ type: "message", attachments: [{ contentType: "application/vnd.microsoft.card.adaptive", contentUrl: null, content: card }] }),
  };
}

export const teamsChannel: Channel = {
  kind: "teams",
  statements: ["message"],
  settings: [{ name: "url", sealed: true }],
  send: (deps, a) => postGuarded(deps, a.endpoint.url, teamsWire(a.payload as MessagePayload)),
};
