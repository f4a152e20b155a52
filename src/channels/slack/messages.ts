/**
 * The `slack_messages` table (migration 20261126060000_slack_answers; v0.4 "Answers inside Slack"):
 * one row per message posted with controls answering a slot. This module alone writes it.
 *
 *   (none) --about to be posted--> open (no ts) --posted--> open (channel, ts)
 *   open --the slot closed, message replaced--> closed   (reopened if the replacement failed)
 *
 * `ref` is the opaque reference the message's controls carry (random, 128 bits; never a link
 * token). `question` (the message's text) and `response_url` (the last interaction's, a
 * credential for 30 minutes) are sealed.
 */
import type { Db } from "../../db.js";
import type { Sealer } from "../../engine/sealing/seal.js";
import type { AnswerControls, AnswerSpec } from "../../engine/values/answer-controls.js";
import type { ClosedSlot } from "./blocks.js";

export interface SlackMessage {
  ref: string;
  runId: string;
  slotId: string;
  alias: string;
  endpoint: string;
  channel: string | null;
  ts: string | null;
  question: string;
  controls: AnswerControls;
  responseUrl: string | null;
  status: "open" | "closed";
}

const sealed = (sealer: Sealer, text: string) => JSON.stringify(sealer.seal(text));

/**
 * Records a message about to be posted (before `chat.postMessage`, so a click arriving at once
 * finds it; idempotent on `ref`: a retried post keeps the row).
 */
export async function recordPosting(db: Db, sealer: Sealer, m: { spec: AnswerSpec; runId: string; endpoint: string; question: string }): Promise<void> {
  await db.$executeRaw`
    INSERT INTO slack_messages (ref, run_id, slot_id, alias, endpoint, question, controls)
    VALUES (${m.spec.ref}, ${m.runId}::uuid, ${m.spec.slotId}::uuid, ${m.spec.alias}, ${m.endpoint},
            ${sealed(sealer, m.question)}, ${JSON.stringify(m.spec.controls)}::jsonb)
    ON CONFLICT (ref) DO NOTHING`;
}

/** Records where the message was posted (channel and ts: what `chat.update` needs). */
export async function recordPosted(db: Db, ref: string, channel: string, ts: string): Promise<void> {
  await db.slackMessage.updateMany({ where: { ref }, data: { channel, ts } });
}

/** The message whose controls carry `ref`, opened; null when none. */
export async function findMessage(db: Db, sealer: Sealer, ref: string): Promise<SlackMessage | null> {
  const r = await db.slackMessage.findUnique({ where: { ref } });
  if (!r) return null;
  return {
    ref: r.ref,
    runId: r.runId,
    slotId: r.slotId,
    alias: r.alias,
    endpoint: r.endpoint,
    channel: r.channel,
    ts: r.ts,
    question: sealer.openText(r.question),
    controls: r.controls as unknown as AnswerControls,
    responseUrl: r.responseUrl ? sealer.openText(r.responseUrl) : null,
    status: r.status as "open" | "closed",
  };
}

/** Keeps the latest interaction's `response_url` (sealed), for replacing the message later. */
export async function rememberResponseUrl(db: Db, sealer: Sealer, ref: string, url: string): Promise<void> {
  await db.slackMessage.updateMany({ where: { ref }, data: { responseUrl: sealed(sealer, url) } });
}

/** Marks the message closed with `outcome` (the line shown); true when this call closed it. */
export async function markClosed(db: Db, ref: string, outcome: string): Promise<boolean> {
  const { count } = await db.slackMessage.updateMany({ where: { ref, status: "open" }, data: { status: "closed", outcome, closedAt: new Date(), responseUrl: null } });
  return count > 0;
}

/** Reopens a message whose replacement failed, for the next sweep (its response_url is gone: chat.update then). */
export async function reopen(db: Db, ref: string): Promise<void> {
  await db.slackMessage.updateMany({ where: { ref, status: "closed" }, data: { status: "open", outcome: null, closedAt: null } });
}

/** The slot a message answers as the replacement says it; null while it is open or waiting (and its deadline not passed). */
export async function closedSlotOf(db: Db, sealer: Sealer, runId: string, slotId: string, now = new Date()): Promise<ClosedSlot | null> {
  const rows = await db.$queryRaw<{ status: string; closed_at: Date | null; deadline: Date | null; args: unknown; answered_by: unknown }[]>`
    SELECT status, closed_at, deadline, args, answered_by FROM slots WHERE run_id = ${runId}::uuid AND id = ${slotId}::uuid`;
  const s = rows[0];
  if (!s) return { status: "dropped", closedAt: now, args: null, answeredBy: null };
  if (s.status === "open" || s.status === "waiting") {
    if (s.deadline && s.deadline <= now) return { status: "expired", closedAt: s.deadline, args: null, answeredBy: null };
    return null;
  }
  return {
    status: s.status,
    closedAt: s.closed_at ?? now,
    args: s.args ? (sealer.unsealJson(s.args) as Record<string, unknown>) : null,
    answeredBy: (s.answered_by ?? null) as ClosedSlot["answeredBy"],
  };
}

/** Open messages whose slot is no longer open or waiting (or past its deadline): the sweeper's sync replaces them. */
export async function staleOpenMessages(db: Db, take: number, now = new Date()): Promise<string[]> {
  const rows = await db.$queryRaw<{ ref: string }[]>`
    SELECT m.ref FROM slack_messages m LEFT JOIN slots s ON s.run_id = m.run_id AND s.id = m.slot_id
     WHERE m.status = 'open' AND m.ts IS NOT NULL
       AND (s.id IS NULL OR s.status NOT IN ('open', 'waiting') OR s.deadline <= ${now}::timestamptz)
     ORDER BY m.created_at LIMIT ${take}`;
  return rows.map((r) => r.ref);
}
