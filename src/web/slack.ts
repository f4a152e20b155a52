/**
 * `POST /api/slack/interactions` — Slack's interactivity Request URL (v0.4 "Answers inside Slack").
 *
 * | step | rule |
 * |---|---|
 * | read | the raw body, `application/x-www-form-urlencoded`, at most 64 KiB, with a `payload` (JSON) |
 * | which app | the payload's reference (a button's `value`, a modal's `private_metadata`) names the message, so the endpoint whose signing secret is tried; a payload without a known reference is tried against every `slack-app` endpoint's secret |
 * | verify | `X-Slack-Signature` = `v0=` HMAC-SHA256 of `v0:{X-Slack-Request-Timestamp}:{raw body}`, constant time, timestamp within 5 minutes (slack/verify.ts); else 401 `unauthorized` |
 * | replay | a signature seen in the last 10 minutes (kept in Redis, as its SHA-256) is refused 401 |
 * | answer | 200 within 3 s: a button click → a `raise` command queued through the ordinary path (the engine client's raise, src/engine-client/: prepareRaise's early checks, then applied by a worker under the run lock: Candidates, [Authorize], Requires, After); the "Answer…" button → `views.open`; a modal's submission → its inputs checked like the responder page (errors shown in the modal, `response_action: "errors"`), then the command queued |
 * | after | the command's outcome (waited for up to 15 s after the 200): completed → the message is replaced (slack/replace.ts); refused → an ephemeral message saying why, nothing changed |
 *
 * Who answers: principal id `slack:{team_id}:{user_id}`, email from `users.info` (cached 10
 * minutes; null when Slack does not say in 1.5 s), roles the endpoint's `answerAs.roles`. With
 * `allowUsers` set, anyone else gets an ephemeral "not allowed" and nothing is queued.
 *
 * Exactly once: the slot completes once (the engine refuses every later raise with slot-closed);
 * a click repeated by Slack or the user carries the same `action_ts`, whose command id is the same
 * (the queue and `applied_commands` de-duplicate it), and clicks in flight in this process with
 * the same command id share one wait. Every click that did not complete the slot gets "already
 * answered". No token ever goes to Slack: controls carry an opaque reference (engine/values/answer-controls.ts).
 */
import Router from "@koa/router";
import getRawBody from "raw-body";
import { createHash } from "node:crypto";
import type { Context } from "koa";
import { engineClient } from "../engine-client/client.js";
import type { Submitted } from "../engine-client/result.js";
import { RefusalCode, RefusalError, refuse, type Refusal } from "../engine/refusals.js";
import { openSlackApp, type SlackAppBody } from "../channels/slack/app-settings.js";
import { postResponseUrl, ephemeral, slackClient } from "../channels/slack/api.js";
import { ACTION, MODAL_CALLBACK, answerModal, readSubmission } from "../channels/slack/blocks.js";
import { closedSlotOf, findMessage, rememberResponseUrl, type SlackMessage } from "../channels/slack/messages.js";
import { replaceIfClosed } from "../channels/slack/replace.js";
import { verifySlackSignature } from "../channels/slack/verify.js";
import type { Runtime } from "../runtime.js";
import { jsonTextDepth } from "../json/depth.js";
import { slackPrincipal } from "../auth/principal.js";

export const SLACK_INTERACTIONS_ROUTE = "/api/slack/interactions";
const BODY_LIMIT_BYTES = 64 * 1024;
/** How long a seen signature is remembered (longer than the 5-minute timestamp window), s. */
const REPLAY_TTL_S = 600;
/** How long the follow-up waits for the command's outcome after the 200, ms. */
const OUTCOME_WAIT_MS = 15_000;
/** How long the answer to Slack waits for the command to be queued before answering anyway, ms. */
const QUEUE_WAIT_MS = 1_200;
const USER_CACHE_MS = 10 * 60_000;
const USER_CACHE_MAX = 5_000;
const USERS_INFO_TIMEOUT_MS = 1_500;
const PAYLOAD_MAX_DEPTH = 64;

/** Words of the ephemeral replies (docs/slack.md "What people see"). */
export const WORDS = {
  notAllowed: "You are not allowed to answer this.",
  alreadyAnswered: "This was already answered; your click changed nothing.",
  closed: "This question is closed; your click changed nothing.",
  unknown: "This question is no longer known to slotflow; your click changed nothing.",
  failed: "Your answer could not be recorded (slotflow is unavailable). Try again in a minute.",
} as const;

interface Payload {
  type?: string;
  team?: { id?: string } | null;
  user?: { id?: string; team_id?: string; username?: string };
  response_url?: string;
  trigger_id?: string;
  actions?: { action_id?: string; value?: string; action_ts?: string }[];
  view?: { callback_id?: string; private_metadata?: string; id?: string; hash?: string; state?: { values?: Record<string, Record<string, never>> } };
  container?: { channel_id?: string };
  channel?: { id?: string };
}

/** The reference a payload carries: a button's value, or a modal's private_metadata. */
function refOf(p: Payload | null): string | null {
  const ref = p?.type === "view_submission" ? p.view?.private_metadata : p?.actions?.[0]?.value;
  return typeof ref === "string" && /^[A-Za-z0-9_-]{16,64}$/.test(ref) ? ref : null;
}

export function slackRouter(rt: Runtime): Router {
  const router = new Router({ sensitive: true, strict: true });
  const emails = new Map<string, { email: string | null; until: number }>();
  const inflight = new Map<string, Promise<Submitted | "failed">>();
  const client = engineClient(rt);
  const apiBase = rt.config.slackApiUrl;
  const deps = { db: rt.db, sealer: rt.sealer, apiBase, log: rt.log };

  const unauthorized = (why: string) => {
    rt.log.warn({ route: SLACK_INTERACTIONS_ROUTE, reason: why }, "slack interaction refused");
    return new RefusalError(refuse(RefusalCode.Unauthorized, "The request is not signed by a Slack app this server knows (X-Slack-Signature)."));
  };

  /** The signing apps to try, by the payload's reference (else every slack-app endpoint). */
  async function candidates(ref: string | null): Promise<{ msg: SlackMessage | null; apps: { name: string; app: SlackAppBody }[] }> {
    const msg = ref ? await findMessage(rt.db, rt.sealer, ref) : null;
    const rows = await rt.db.endpoint.findMany({ where: msg ? { name: msg.endpoint, kind: "slack-app" } : { kind: "slack-app" }, select: { name: true, slack: true } });
    return { msg, apps: rows.filter((r) => r.slack).map((r) => ({ name: r.name, app: openSlackApp(rt.sealer, r.slack) })) };
  }

  async function userEmail(endpoint: string, app: SlackAppBody, user: string): Promise<string | null> {
    const key = `${endpoint}\u0000${user}`;
    const hit = emails.get(key);
    if (hit && hit.until > Date.now()) return hit.email;
    let email: string | null = null;
    try {
      const client = await slackClient(app.botToken, apiBase);
      const res = await Promise.race([client.users.info({ user }), new Promise<never>((_, reject) => setTimeout(() => reject(new Error("timeout")), USERS_INFO_TIMEOUT_MS).unref())]);
      email = res.user?.profile?.email ?? null;
    } catch {
      return hit?.email ?? null;
    }
    if (emails.size >= USER_CACHE_MAX) emails.delete(emails.keys().next().value as string);
    emails.set(key, { email, until: Date.now() + USER_CACHE_MS });
    return email;
  }

  /** Tells the clicking user why nothing changed: through response_url, else chat.postEphemeral. */
  function tell(app: SlackAppBody, msg: SlackMessage | null, user: string, responseUrl: string | null, text: string): void {
    void (async () => {
      if (responseUrl && (await postResponseUrl(responseUrl, ephemeral(text)))) return;
      const channel = msg?.channel ?? app.channel;
      try {
        await (await slackClient(app.botToken, apiBase)).chat.postEphemeral({ channel, user, text });
      } catch {
        rt.log.warn({ channel }, "could not tell a Slack user why their answer changed nothing");
      }
    })();
  }

  /** Why a closed slot changed nothing: answered, or closed some other way (expired, cancelled, the run ended). */
  async function closedWords(msg: SlackMessage): Promise<string> {
    const slot = await closedSlotOf(rt.db, rt.sealer, msg.runId, msg.slotId).catch(() => null);
    return slot?.status === "completed" ? WORDS.alreadyAnswered : WORDS.closed;
  }

  async function refusalWords(r: Refusal, msg: SlackMessage): Promise<string> {
    switch (r.code) {
      case RefusalCode.SlotClosed:
      case RefusalCode.NotFound:
        return closedWords(msg);
      case RefusalCode.NotACandidate:
        return "You are not among the people who may answer this; your click changed nothing.";
      case RefusalCode.AuthorizeDenied:
        return "You are not authorized to answer this; your click changed nothing.";
      case RefusalCode.SlotNotOpen:
        return `This question is not open yet: ${r.detail}`;
      default:
        return `Your answer was refused: ${r.detail}`;
    }
  }

  /**
   * Queues the raise and answers once it is queued (or after QUEUE_WAIT_MS); the outcome is
   * followed up in the background: completed → the message is replaced; refused → told why.
   */
  async function answer(a: { endpoint: string; app: SlackAppBody; msg: SlackMessage; team: string; user: string; args: Record<string, unknown>; actionKey: string; responseUrl: string | null }): Promise<void> {
    const email = await userEmail(a.endpoint, a.app, a.user);
    const commandId = uuidFrom(`slack\u0000${a.msg.ref}\u0000${a.user}\u0000${a.actionKey}`);
    let owner = false;
    let outcome = inflight.get(commandId);
    let queued: Promise<void> = Promise.resolve();
    if (!outcome) {
      owner = true;
      let markQueued!: () => void;
      queued = new Promise<void>((resolve) => (markQueued = resolve));
      // the ordinary raise path, as every door that raises as a principal (the engine client's raise:
      // prepareRaise's early checks, then the command), with the click's own command id and wait
      outcome = client
        .raise(
          { runId: a.msg.runId, alias: a.msg.alias, element: null },
          a.args,
          slackPrincipal(a.team, a.user, email, a.app.answerAs.roles).claims,
          { via: "slack", commandId, waitMs: OUTCOME_WAIT_MS, onQueued: markQueued },
        )
        .then((r): Submitted | "failed" => {
          markQueued(); // refused before it was queued
          if (r.kind === "refused" && r.refusal.code === RefusalCode.Unavailable) {
            rt.log.error({ runId: a.msg.runId, err: r.refusal.detail }, "could not queue a Slack answer");
            return "failed";
          }
          return r;
        })
        .catch((err: unknown) => {
          rt.log.error({ runId: a.msg.runId, err: err instanceof Error ? err.message : String(err) }, "could not queue a Slack answer");
          markQueued();
          return "failed" as const;
        });
      inflight.set(commandId, outcome);
      void outcome.finally(() => inflight.delete(commandId));
    }
    void outcome.then(async (o) => {
      if (o === "failed") return tell(a.app, a.msg, a.user, a.responseUrl, WORDS.failed);
      if (o.kind === "accepted") return; // applied later; the sweeper's sync replaces the message
      if (o.kind === "refused") return tell(a.app, a.msg, a.user, a.responseUrl, await refusalWords(o.refusal, a.msg));
      if (!owner) return tell(a.app, a.msg, a.user, a.responseUrl, WORDS.alreadyAnswered);
      await replaceIfClosed(deps, a.msg.ref, a.responseUrl).catch(() => undefined);
    });
    await Promise.race([queued, new Promise((r) => setTimeout(r, QUEUE_WAIT_MS).unref())]);
  }

  router.post(SLACK_INTERACTIONS_ROUTE, async (ctx: Context) => {
    let raw: string;
    try {
      raw = await getRawBody(ctx.req, { limit: BODY_LIMIT_BYTES, length: ctx.get("content-length") || undefined, encoding: "utf-8" });
    } catch (err) {
      ctx.set("Connection", "close");
      if ((err as { type?: string }).type === "entity.too.large") throw new RefusalError(refuse(RefusalCode.PayloadTooLarge, `The body is larger than ${BODY_LIMIT_BYTES} bytes.`));
      throw unauthorized("unreadable body");
    }
    let payload: Payload | null = null;
    const text = new URLSearchParams(raw).get("payload");
    if (text && jsonTextDepth(text, PAYLOAD_MAX_DEPTH) <= PAYLOAD_MAX_DEPTH) {
      try {
        const parsed = JSON.parse(text) as unknown;
        if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) payload = parsed as Payload;
      } catch {
        payload = null;
      }
    }
    const ref = refOf(payload);
    const { msg, apps } = await candidates(ref);
    const signed = { timestamp: ctx.get("x-slack-request-timestamp") || undefined, signature: ctx.get("x-slack-signature") || undefined, rawBody: raw };
    const match = apps.find((a) => verifySlackSignature(a.app.signingSecret, signed).ok);
    if (!match) throw unauthorized(apps.length === 0 ? "no slack-app endpoint" : (verifySlackSignature(apps[0].app.signingSecret, signed) as { reason: string }).reason);
    const seenKey = `${rt.config.queuePrefix}:slack-seen:${createHash("sha256").update(signed.signature!).digest("hex")}`;
    if ((await rt.queues.connection.set(seenKey, "1", "EX", REPLAY_TTL_S, "NX")) !== "OK") throw unauthorized("replayed signature");

    ctx.status = 200;
    ctx.body = "";
    if (!payload) return;
    const user = payload.user?.id ?? "";
    const team = payload.team?.id ?? payload.user?.team_id ?? "";
    const responseUrl = typeof payload.response_url === "string" && /^https?:\/\//.test(payload.response_url) ? payload.response_url : null;
    const { name: endpoint, app } = match;
    if (!/^[UW][A-Z0-9]{2,30}$/.test(user) || !/^[TE][A-Z0-9]{2,30}$/.test(team)) return;
    const isModal = payload.type === "view_submission" && payload.view?.callback_id === MODAL_CALLBACK;
    const refuseInModal = (words: string) => {
      ctx.body = { response_action: "errors", errors: { p0: words } };
    };
    if (!msg || (payload.type !== "block_actions" && !isModal)) {
      if (payload.type === "block_actions" && ref) tell(app, null, user, responseUrl, WORDS.unknown);
      return;
    }
    if (responseUrl) await rememberResponseUrl(rt.db, rt.sealer, msg.ref, responseUrl);
    if (app.allowUsers && !app.allowUsers.includes(user)) {
      rt.log.info({ endpoint, runId: msg.runId, slot: msg.alias }, "slack answer refused: user not allowed");
      if (isModal) return refuseInModal(WORDS.notAllowed);
      return tell(app, msg, user, responseUrl, WORDS.notAllowed);
    }
    if (msg.status !== "open") {
      const words = await closedWords(msg);
      if (isModal) return refuseInModal(words);
      return tell(app, msg, user, responseUrl, words);
    }
    if (isModal) {
      if (msg.controls.kind !== "modal") return;
      const read = readSubmission(msg.controls, payload.view?.state?.values, msg.controls.params);
      if (!read.ok) {
        ctx.body = { response_action: "errors", errors: read.errors };
        return;
      }
      // a modal's submission has no action_ts: the view id and hash name this submission
      await answer({ endpoint, app, msg, team, user, args: read.args, actionKey: `${payload.view?.id ?? ""}:${payload.view?.hash ?? ""}`, responseUrl: null });
      return;
    }
    const action = payload.actions?.[0];
    const actionKey = action?.action_ts ?? signed.timestamp!;
    if (action?.action_id === ACTION.open && msg.controls.kind === "modal") {
      try {
        await (await slackClient(app.botToken, apiBase)).views.open({ trigger_id: String(payload.trigger_id ?? ""), view: answerModal(msg.question, msg.ref, msg.controls) });
      } catch {
        tell(app, msg, user, responseUrl, WORDS.failed);
      }
      return;
    }
    if ((action?.action_id === ACTION.yes || action?.action_id === ACTION.no) && msg.controls.kind === "buttons") {
      const args: Record<string, unknown> = { [msg.controls.param]: action.action_id === ACTION.yes };
      for (const n of msg.controls.nulls) args[n] = null;
      await answer({ endpoint, app, msg, team, user, args, actionKey, responseUrl });
    }
  });

  return router;
}

/** A UUID (v4 layout) derived from `text`: the same click, the same command id. */
function uuidFrom(text: string): string {
  const h = createHash("sha256").update(text).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${((parseInt(h[16], 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
