/**
 * Messages that would carry a dead link, withdrawn when their step commits (language reference,
 * "Sending email" and "Delivering through endpoints"; README: a link is never sent "once the link
 * is no longer live"). A `send email` or `send message` whose text carries a callback link of its
 * run that is not live once the step's own link changes are applied — burned, retired by a newer
 * link, or dead (expired, cancelled, dropped, completed, run finished, revoked) — is not sent:
 *
 *   mail        outbox row status `withdrawn`, body NULL, `last_error` the reason
 *   message     deliveries row status `failed`, payload NULL, `end_reason` the reason
 *
 * and the worker logs it at `warn` once the step committed (engine/commands/apply.ts): the run,
 * the message's id and the reason, never its text. (Moved from outbox/dead-at-commit.ts, issue 39
 * item 2: the step's statements live in engine/sql/; a mail row's status is written by
 * outbox-status.ts.) A `send webhook` is **data** (v0.5 "Answers
 * people can trust", issue 38): it is never handed to this module, and goes whatever links it
 * carries.
 *
 * The reason reads `withdrawn: link dead (expired)`, `withdrawn: link retired`, … — the words
 * deliveries.ts uses for a link that died later (`link dead (revoked)`), after `withdrawn: `. A
 * message is withdrawn as soon as ONE link it carries is not live (the holder would get a link
 * that answers 410). Tokens of other runs or not minted by this engine are not links of the run
 * and are ignored.
 *
 * The step (engine/step.ts) asks `deadAtCommit` before it writes, so a withdrawn message is
 * written as withdrawn and never as pending — on a start too, whose write is one statement
 * outside a transaction — and `writeWithdrawn` inserts those rows after the step's write, in its
 * transaction (a start: just after its statement; if that insert is lost, nothing was sent).
 * Steps whose messages carry no link, or only links minted live in the step, cost nothing more;
 * otherwise one indexed read of the run's links (links_run_id_token_sha256_idx).
 */
import type { Tx } from "../../db.js";
import { insertWithdrawnMail, type WithdrawnMail } from "./outbox-status.js";

import { insertWithdrawnDeliveries, type WithdrawnDelivery } from "./delivery-status.js";

export type { WithdrawnDelivery, WithdrawnMail };

/** A message of the step: its id and the SHA-256 (hex) of each callback token its text carries (seal.ts `linkHashesIn`). */
export interface LinkedMessage {
  id: string;
  hashes: string[];
}

/** What the step's link settlement says (engine/step.ts LinkSettlement, the fields read here). */
export interface SettledLinks {
  /** Links that existed before the step and end in it. */
  ended: { id: string; status: string; end_reason: string | null }[];
  /** Links minted in the step, with their status at commit. */
  minted: { token_sha256: string; status: string; end_reason: string | null }[];
}

interface Fate {
  status: string;
  end_reason: string | null;
}

const reasonOf = (f: Fate) => `withdrawn: link ${f.status}${f.end_reason ? ` (${f.end_reason})` : ""}`;

/**
 * The messages among `messages` that must be withdrawn, by id → reason. `newRun`: the run is being
 * started (no link of it exists before the step, so nothing is read).
 */
export async function deadAtCommit(
  tx: Pick<Tx, "$queryRaw">,
  runId: string,
  newRun: boolean,
  links: SettledLinks,
  messages: LinkedMessage[],
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (!messages.some((m) => m.hashes.length > 0)) return out;
  const fate = new Map<string, Fate>(links.minted.map((m) => [m.token_sha256, m]));
  const unknown = [...new Set(messages.flatMap((m) => m.hashes))].filter((h) => !fate.has(h));
  if (unknown.length > 0 && !newRun) {
    const ended = new Map(links.ended.map((e) => [e.id, e]));
    const rows = await tx.$queryRaw<{ id: string; token_sha256: string; status: string; end_reason: string | null }[]>`
      SELECT id::text AS id, token_sha256, status, end_reason FROM links WHERE run_id = ${runId}::uuid AND token_sha256 = ANY(${unknown}::text[])`;
    for (const r of rows) fate.set(r.token_sha256, ended.get(r.id) ?? r);
  }
  for (const m of messages) {
    const dead = m.hashes.map((h) => fate.get(h)).find((f) => f !== undefined && f.status !== "live");
    if (dead) out.set(m.id, reasonOf(dead));
  }
  return out;
}

/** Inserts the step's withdrawn messages (none: no round trip); see the module header. */
export async function writeWithdrawn(
  tx: Pick<Tx, "outboxMessage" | "delivery">,
  runId: string,
  mail: WithdrawnMail[],
  deliveries: WithdrawnDelivery[],
): Promise<void> {
  await insertWithdrawnMail(tx, runId, mail);
  await insertWithdrawnDeliveries(tx, runId, deliveries);
}
