/**
 * forward: the holder of a callback link passes it on to someone else (v0.4 "Many responders,
 * forwarding, and receipts"; docs/responder-page.md "Send this to someone else").
 *
 * Locks: the run row (held by the caller); the link was read under that lock (`step.depositLink`),
 * so of two concurrent forwards (or a forward and a deposit) of one link exactly one finds it live.
 * On success, in one step: the link is retired with reason "forwarded" (410 `link-retired`,
 * `reason: "forwarded"` from then on), a new link is minted for the same slot and mailed to
 * `email` with the slot's title and the forwarding holder's address when slotflow sent them the
 * link (v0.5; through the outbox: sent only if the step commits), the slot's
 * `forwards` count goes up by one, and the history records `link-forwarded` (the address, the
 * link ids — never a token).
 * Refuses, changing nothing:
 *   404 link-not-found — no such link on this run;
 *   410 link-burned / link-retired / link-dead — the link is no longer live (as for a deposit; a
 *       deadline that has passed counts even if the sweeper has not run yet);
 *   409 not-forwardable — the slot has no `Forwardable`, or it does not evaluate to true now;
 *   409 forward-limit — the slot's link was already forwarded FORWARD_LIMIT times.
 * Throws RuntimeFault when `Forwardable` fails at run time; the caller refuses with handler-failed.
 */
import { display, evaluate, RuntimeFault } from "../../lang/runtime/interpreter.js";
import { deadDetail, forwardLink, refusalForEndedLink } from "../lifecycles/link.js";
import { declOf, slotScope } from "../lifecycles/slot.js";
import { RefusalCode, refuse } from "../refusals.js";
import type { SlotRecord, Step } from "../step.js";
import { redactTokens } from "../sealing/seal.js";
import { linkRecipient } from "../sql/link-recipient.js";
import { applied, refused, type CommandResult } from "./result.js";
import { chooseLanguage, t } from "../../i18n/index.js";
import type { Command } from "./types.js";

/** How many times one slot's link may be forwarded (interfaces.md: at most 5). */
export const FORWARD_LIMIT = 5;

export async function forward(step: Step, cmd: Extract<Command, { kind: "forward" }>): Promise<CommandResult> {
  const link = step.depositLink;
  if (!link || link.runId !== step.run.id) return refused(refuse(RefusalCode.LinkNotFound, "No link matches this URL."));
  const ended = refusalForEndedLink(link);
  if (ended) return refused(ended);
  if (step.run.status !== "running") return refused(refuse(RefusalCode.LinkDead, deadDetail("run-finished"), { reason: "run-finished" }));
  const slot = step.slots.find((s) => s.id === link.slotId);
  if (!slot) return refused(refuse(RefusalCode.LinkDead, deadDetail("cancelled"), { reason: "cancelled" }));
  if (slot.deadline && slot.deadline.getTime() <= step.now.getTime()) {
    return refused(refuse(RefusalCode.LinkDead, deadDetail("expired"), { reason: "expired" }));
  }
  const decl = declOf(step, slot);
  const allowed = decl.forwardable ? evaluate(step, slotScope(step, slot), decl.forwardable) : false;
  if (allowed !== true) {
    return refused(refuse(RefusalCode.NotForwardable, "This request cannot be passed on to someone else: answer it yourself, or ask whoever sent it."));
  }
  if (slot.forwards >= FORWARD_LIMIT) {
    return refused(refuse(RefusalCode.ForwardLimit, `This request was already passed on ${FORWARD_LIMIT} times, the most allowed; answer it yourself.`, { limit: FORWARD_LIMIT }));
  }
  // v0.5 (issue 43 item 2): the mail names who passed the request on — the address slotflow sent
  // the forwarded link to, when it did (read before this step's history is written)
  const holder = await linkRecipient(step.services.tx, step.run.id, link.id);
  const url = forwardLink(step, slot, link.id, cmd.email);
  slot.forwards += 1;
  step.markSlotDirty(slot);
  const { subject, body } = forwardMail(step, slot, url, holder?.to ?? null, cmd.lang ?? null);
  step.queueMail(cmd.email, subject, body);
  return applied(step, "forwarded");
}

/**
 * The slot's Title (evaluated now; a failure or null gives the default), and the mail around the
 * new link, in the mail's language (v0.5): the slot's `Language` when set and available, else
 * `pageLang` (the forwarder's page's), else English; the author's variant for that language where
 * there is one, slotflow's catalog words around it. `from` is the address of the holder who
 * forwarded it (null: "Someone").
 */
function forwardMail(step: Step, slot: SlotRecord, url: string, from: string | null, pageLang: string | null): { subject: string; body: string } {
  const decl = declOf(step, slot);
  const text = (expr: typeof decl.title): string | null => {
    if (!expr) return null;
    try {
      const v = evaluate(step, slotScope(step, slot), expr);
      return v === null ? null : redactTokens(display(v)).slice(0, 200);
    } catch (err) {
      if (err instanceof RuntimeFault) return null;
      throw err;
    }
  };
  const lang = chooseLanguage({ slot: text(decl.language), query: pageLang, fallback: "en" });
  const title = text(decl.titles?.[lang]) ?? text(decl.title) ?? t(lang, "mail.forward.defaultTitle", { workflow: step.run.workflowName });
  const intro = text(decl.intros?.[lang]) ?? text(decl.intro);
  const body = [
    from ? t(lang, "mail.forward.introFrom", { from }) : t(lang, "mail.forward.intro"),
    "",
    title,
    ...(intro ? ["", intro] : []),
    "",
    t(lang, "mail.forward.answer", { url }),
    "",
    t(lang, "mail.forward.footer"),
  ].join("\n");
  return { subject: title, body };
}
