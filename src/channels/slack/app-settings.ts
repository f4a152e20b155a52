/**
 * `slack-app` endpoints (v0.4 "Answers inside Slack"): a Slack app that posts messages with
 * `chat.postMessage` and takes answers through `POST /api/slack/interactions`.
 *
 * `PUT /api/endpoints/{name}` body, validated with yup (422 invalid-body naming the member):
 *
 * | member | rule |
 * |---|---|
 * | `kind` | `"slack-app"` |
 * | `botToken` | a bot token, `xoxb-` then 1–250 of letters, digits, `-` |
 * | `signingSecret` | the app's signing secret, 8–128 of letters and digits |
 * | `channel` | a channel id, `C`/`G`/`D` then 2–30 capital letters or digits |
 * | `answerAs` | optional, `{"roles": [...]}`: the roles a Slack user answers with (≤ 50, each 1–100 characters) |
 * | `allowUsers` | optional, Slack user ids (`U…`/`W…`, ≤ 1000); when set, only they may answer |
 *
 * Stored in `endpoints.slack` (jsonb): channel, answerAs, allowUsers clear; botToken and
 * signingSecret sealed (the JSON text of a sealed envelope). Never shown again: every answer shows
 * them redacted (`xoxb-…` and `…`, with the last 4 characters of the token).
 */
import * as yup from "yup";
import { RefusalCode, RefusalError, refuse } from "../../engine/refusals.js";
import type { Sealer } from "../../engine/sealing/seal.js";

export interface SlackAppSettings {
  channel: string;
  answerAs: { roles: string[] };
  /** null: anyone in the channel may answer. */
  allowUsers: string[] | null;
}

export interface SlackAppSecrets {
  botToken: string;
  signingSecret: string;
}

export type SlackAppBody = SlackAppSettings & SlackAppSecrets;

/** What the `endpoints.slack` column holds. */
export interface StoredSlackApp extends SlackAppSettings {
  botToken: string;
  signingSecret: string;
}

const schema = yup
  .object({
    kind: yup.string().oneOf(["slack-app"]).required(),
    botToken: yup.string().strict().required().matches(/^xoxb-[A-Za-z0-9-]{1,250}$/, '"botToken" must be a bot token (xoxb-…)'),
    signingSecret: yup.string().strict().required().matches(/^[A-Za-z0-9]{8,128}$/, '"signingSecret" must be the app\'s signing secret (8–128 letters and digits)'),
    channel: yup.string().strict().required().matches(/^[CGD][A-Z0-9]{2,30}$/, '"channel" must be a Slack channel id (C…)'),
    answerAs: yup
      .object({ roles: yup.array(yup.string().strict().required().min(1).max(100)).max(50).required() })
      .noUnknown('"answerAs" takes "roles" only')
      .strict()
      .default(undefined)
      .optional(),
    allowUsers: yup
      .array(yup.string().strict().required().matches(/^[UW][A-Z0-9]{2,30}$/, '"allowUsers" holds Slack user ids (U…)'))
      .max(1000)
      .strict()
      .optional(),
  })
  .noUnknown((p) => `Unknown member(s) ${String(p.unknown)}: a slack-app endpoint takes kind, botToken, signingSecret, channel, answerAs, allowUsers.`)
  .strict();

/** Validates a slack-app PUT body; throws RefusalError invalid-body (422) naming what is wrong. */
export function validateSlackAppBody(body: unknown): SlackAppBody {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new RefusalError(refuse(RefusalCode.InvalidBody, "Send a JSON object."));
  try {
    const v = schema.validateSync(body, { abortEarly: true });
    return { botToken: v.botToken, signingSecret: v.signingSecret, channel: v.channel, answerAs: { roles: v.answerAs?.roles ?? [] }, allowUsers: v.allowUsers ?? null };
  } catch (err) {
    const message = err instanceof yup.ValidationError ? err.errors[0] : "The body is not a slack-app endpoint.";
    throw new RefusalError(refuse(RefusalCode.InvalidBody, redact(message, body as Record<string, unknown>)));
  }
}

/** Never echo a secret in an error. */
function redact(message: string, body: Record<string, unknown>): string {
  let out = message;
  for (const k of ["botToken", "signingSecret"]) if (typeof body[k] === "string" && (body[k] as string).length > 0) out = out.split(body[k] as string).join("…");
  return out;
}

/** The column value: the secrets sealed. */
export function sealSlackApp(sealer: Sealer, b: SlackAppBody): StoredSlackApp {
  return {
    channel: b.channel,
    answerAs: b.answerAs,
    allowUsers: b.allowUsers,
    botToken: JSON.stringify(sealer.seal(b.botToken)),
    signingSecret: JSON.stringify(sealer.seal(b.signingSecret)),
  };
}

/** The column value opened (web process: the signing secret; worker: the token). */
export function openSlackApp(sealer: Sealer, stored: unknown): SlackAppBody {
  const s = stored as StoredSlackApp;
  return { channel: s.channel, answerAs: s.answerAs, allowUsers: s.allowUsers, botToken: sealer.openText(s.botToken), signingSecret: sealer.openText(s.signingSecret) };
}

/** How answers show a slack-app endpoint: its settings, the secrets redacted. */
export function slackAppView(stored: unknown): SlackAppSettings & { botToken: string; signingSecret: string } {
  const s = stored as StoredSlackApp;
  return { channel: s.channel, answerAs: s.answerAs, allowUsers: s.allowUsers, botToken: "xoxb-…", signingSecret: "…" };
}
