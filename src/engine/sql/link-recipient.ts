/**
 * Who slotflow itself gave a link to (v0.5 "Answers people can trust", issue 43 item 2), read from
 * the run's history: the `link-forwarded` entry whose new link (`by`) is the link — forwarded to
 * `to`, from the holder of the link it retired (`linkId`) — or the `email-queued` entry whose mail
 * carried the link (`links`, the links minted in that step whose token the mail holds). Neither:
 * slotflow did not send it (the author's workflow passed the URL on some other way).
 *
 * One statement, naming the run first (docs/scaling.md); at most the two rows that can match.
 */
import type { Db, Tx } from "../../db.js";

/** How a link reached its holder, as far as slotflow sent it. */
export type LinkRecipient = { kind: "mailed"; to: string } | { kind: "forwarded"; to: string; fromLinkId: string } | null;

export async function linkRecipient(db: Db | Tx, runId: string, linkId: string): Promise<LinkRecipient> {
  const rows = await db.$queryRaw<{ kind: string; data: { to?: unknown; linkId?: unknown } }[]>`SELECT kind, data FROM history
    WHERE run_id = ${runId}::uuid
      AND ((kind = 'link-forwarded' AND data->>'by' = ${linkId}) OR (kind = 'email-queued' AND data->'links' ? ${linkId}))
    ORDER BY id LIMIT 2`;
  const forwarded = rows.find((r) => r.kind === "link-forwarded");
  if (forwarded && typeof forwarded.data.to === "string" && typeof forwarded.data.linkId === "string") {
    return { kind: "forwarded", to: forwarded.data.to, fromLinkId: forwarded.data.linkId };
  }
  const mailed = rows.find((r) => r.kind === "email-queued");
  return mailed && typeof mailed.data.to === "string" ? { kind: "mailed", to: mailed.data.to } : null;
}

/**
 * The evidence of a link deposit (`answeredBy`): `recipient`, the address slotflow mailed or
 * forwarded the link to; `forwardedBy`, for a forwarded link, the address of the holder who
 * forwarded it (the recipient of the link it retired, when slotflow sent that one). At most two
 * statements.
 */
export async function linkEvidence(db: Db | Tx, runId: string, linkId: string): Promise<{ recipient?: string; forwardedBy?: string }> {
  const got = await linkRecipient(db, runId, linkId);
  if (!got) return {};
  if (got.kind === "mailed") return { recipient: got.to };
  const before = await linkRecipient(db, runId, got.fromLinkId);
  return { recipient: got.to, ...(before ? { forwardedBy: before.to } : {}) };
}
