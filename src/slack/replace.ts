/**
 * Replacing a question once its slot closed (v0.4 "Answers inside Slack", "After the answer"):
 * the message becomes the question and one line saying how it closed ("Approved by @name at …",
 * blocks.ts `outcomeLine`), without controls — through the last interaction's `response_url`
 * when there is one, else `chat.update` on the recorded channel and ts. Then the row is closed.
 *
 * Called by the web process right after a Slack answer completed the slot, and by every sweep
 * (`syncSlackMessages`) for messages whose slot closed any other way (link, inbox, deadline,
 * cancel) or whose replacement failed before. Doing it twice shows the same message.
 */
import type { Db } from "../db.js";
import type { Logger } from "../log.js";
import { openEndpoint } from "../endpoints/endpoints.js";
import type { Sealer } from "../engine/sealing/seal.js";
import { postResponseUrl, slackClient, slackFailure } from "./api.js";
import { closedMessage, outcomeLine } from "./blocks.js";
import { closedSlotOf, findMessage, markClosed, staleOpenMessages } from "./messages.js";

export interface SlackDeps {
  db: Db;
  sealer: Sealer;
  /** SLOTFLOW_SLACK_API_URL. */
  apiBase: string;
  log?: Logger;
}

/** Replaces the message of `ref` if its slot is closed; resolves "replaced", "open" (slot still open), "gone" (no such open message) or "failed". */
export async function replaceIfClosed(deps: SlackDeps, ref: string): Promise<"replaced" | "open" | "gone" | "failed"> {
  const msg = await findMessage(deps.db, deps.sealer, ref);
  if (!msg || msg.status !== "open") return "gone";
  const slot = await closedSlotOf(deps.db, deps.sealer, msg.runId, msg.slotId);
  if (!slot) return "open";
  const line = outcomeLine(msg.controls, slot);
  const body = closedMessage(msg.question, line);
  let ok = false;
  if (msg.responseUrl) ok = await postResponseUrl(msg.responseUrl, { replace_original: true, ...body });
  if (!ok && msg.channel && msg.ts) {
    const endpoint = await openEndpoint(deps.db, deps.sealer, msg.endpoint);
    if (!endpoint?.slack) {
      // the endpoint was removed: nothing can reach the message any more
      await markClosed(deps.db, ref, line);
      return "gone";
    }
    {
      try {
        await slackClient(endpoint.slack.botToken, deps.apiBase).chat.update({ channel: msg.channel, ts: msg.ts, text: body.text, blocks: body.blocks });
        ok = true;
      } catch (err) {
        deps.log?.warn({ endpoint: msg.endpoint, runId: msg.runId, error: slackFailure(err).error }, "could not replace a Slack message; the next sweep tries again");
      }
    }
  }
  if (!ok) return "failed";
  await markClosed(deps.db, ref, line);
  return "replaced";
}

/** One sweep's share (workers/sweeper.ts): replaces up to `take` open messages whose slot closed. Resolves how many it replaced. */
export async function syncSlackMessages(deps: SlackDeps, take = 50): Promise<number> {
  let replaced = 0;
  for (const ref of await staleOpenMessages(deps.db, take)) if ((await replaceIfClosed(deps, ref)) === "replaced") replaced++;
  return replaced;
}
