/**
 * Replacing a question once its slot closed (v0.4 "Answers inside Slack", "After the answer"):
 * the message becomes the question and one line saying how it closed ("Approved by @name at …",
 * blocks.ts `outcomeLine`), without controls — through the last interaction's `response_url`
 * when there is one, else `chat.update` on the recorded channel and ts. Then the row is closed.
 *
 * Called by the web process right after a Slack answer completed the slot, and by every sweep
 * (`syncSlackMessages`) for messages whose slot closed any other way (link, inbox, deadline,
 * cancel) or whose replacement failed before. The row is closed before the message is replaced
 * (concurrent callers replace it once) and reopened when the replacement failed (the next sweep
 * tries again, with `chat.update`).
 */
import type { Db } from "../../db.js";
import type { Logger } from "../../log.js";
import { openEndpoint } from "../../endpoints/endpoints.js";
import type { Sealer } from "../../engine/sealing/seal.js";
import { postResponseUrl, slackClient, slackFailure } from "./api.js";
import { closedMessage, outcomeLine } from "./blocks.js";
import { closedSlotOf, findMessage, markClosed, reopen, staleOpenMessages } from "./messages.js";

export interface SlackDeps {
  db: Db;
  sealer: Sealer;
  /** SLOTFLOW_SLACK_API_URL. */
  apiBase: string;
  log?: Logger;
}

/**
 * Replaces the message of `ref` if its slot is closed, through `responseUrl` when given (the
 * answering click's), else the last one remembered, else `chat.update`; resolves "replaced",
 * "open" (slot still open), "gone" (no such open message) or "failed".
 */
export async function replaceIfClosed(deps: SlackDeps, ref: string, responseUrl: string | null = null): Promise<"replaced" | "open" | "gone" | "failed"> {
  const msg = await findMessage(deps.db, deps.sealer, ref);
  if (!msg || msg.status !== "open") return "gone";
  const slot = await closedSlotOf(deps.db, deps.sealer, msg.runId, msg.slotId);
  if (!slot) return "open";
  const line = outcomeLine(msg.controls, slot);
  const body = closedMessage(msg.question, line);
  // claim the replacement first, so that concurrent callers (the answering web process, sweepers) replace it once
  if (!(await markClosed(deps.db, ref, line))) return "gone";
  let ok = false;
  const url = responseUrl ?? msg.responseUrl;
  if (url) ok = await postResponseUrl(url, { replace_original: true, ...body });
  if (!ok && msg.channel && msg.ts) {
    const endpoint = await openEndpoint(deps.db, deps.sealer, msg.endpoint);
    // the endpoint was removed: nothing can reach the message any more; it stays closed
    if (!endpoint?.slack) return "gone";
    try {
      await (await slackClient(endpoint.slack.botToken, deps.apiBase)).chat.update({ channel: msg.channel, ts: msg.ts, text: body.text, blocks: body.blocks });
      ok = true;
    } catch (err) {
      deps.log?.warn({ endpoint: msg.endpoint, runId: msg.runId, error: slackFailure(err).error }, "could not replace a Slack message; the next sweep tries again");
    }
  }
  if (ok) return "replaced";
  await reopen(deps.db, ref);
  return "failed";
}

/** One sweep's share (workers/sweeper.ts): replaces up to `take` open messages whose slot closed. Resolves how many it replaced. */
export async function syncSlackMessages(deps: SlackDeps, take = 50): Promise<number> {
  let replaced = 0;
  for (const ref of await staleOpenMessages(deps.db, take)) if ((await replaceIfClosed(deps, ref)) === "replaced") replaced++;
  return replaced;
}
