/**
 * The two Slack channels (issue 39 item 2: Slack in one folder):
 *
 * - `slack`: an incoming-webhook URL (issue 18 item 3; wire.ts). Takes `send message` only.
 *   Settings: `url` (sealed: the URL is the credential).
 * - `slack-app` (v0.4 "Answers inside Slack"): a Slack app posting with `chat.postMessage`
 *   (post.ts); a message with `answer:` carries answer controls (blocks.ts) and the answers come
 *   back through `POST /api/slack/interactions` (src/web/slack.ts; verify.ts, messages.ts,
 *   replace.ts). Settings: app-settings.ts (`botToken` and `signingSecret` sealed).
 */
import type { Channel, MessagePayload } from "../channel.js";
import { postGuarded } from "../http-post.js";
import { postSlackApp } from "./post.js";
import { slackWire } from "./wire.js";

export const slackChannel: Channel = {
  kind: "slack",
  statements: ["message"],
  settings: [{ name: "url", sealed: true }],
  send: (deps, a) => postGuarded(deps, a.endpoint.url, slackWire(a.payload as MessagePayload)),
};

export const slackAppChannel: Channel = {
  kind: "slack-app",
  statements: ["message"],
  settings: [
    { name: "botToken", sealed: true },
    { name: "signingSecret", sealed: true },
    { name: "channel", sealed: false },
    { name: "answerAs", sealed: false },
    { name: "allowUsers", sealed: false },
  ],
  answers: { controls: "buttons-or-modal" },
  inbound: { path: "POST /api/slack/interactions" },
  async send(deps, a) {
    const posted = await postSlackApp({ db: deps.db, sealer: deps.sealer, apiBase: deps.slackApiUrl ?? "https://slack.com/api/" }, a.runId, a.endpoint, a.payload as MessagePayload);
    if (posted.kind === "withdrawn") return posted;
    if (posted.kind === "sent") return { kind: "answered", statusCode: 200, error: null, retryAfterMs: null };
    return { kind: "answered", statusCode: posted.statusCode, error: posted.error, retryAfterMs: posted.retryAfterMs };
  },
};
