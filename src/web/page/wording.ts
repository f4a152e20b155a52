/**
 * The words a responder reads (issue 19 item 4): every sentence the responder page shows about the
 * state of a link, and about a field the answer got wrong, written once, here. The page's server
 * side (document.ts) and its script (script.ts, which receives `SCRIPT_WORDS` as JSON) both take
 * their wording from this module. The JSON API's problem details are not touched: API clients keep
 * reading `detail` (refusals.ts, link.ts); this is what a person on the page reads instead.
 *
 * The states of a link, as a person sees them:
 *   answered  — an answer was already sent through it (link-burned)
 *   replaced  — a newer link was sent for the same question (link-retired)
 *   forwarded — its holder passed the question on to someone else (link-retired, reason forwarded; v0.4)
 *   closed    — the question is no longer asked: answered another way, withdrawn, cancelled, the
 *               request finished or the link was revoked (link-dead, any reason but expiry)
 *   expired   — the time to answer ran out, on <date> (link-dead, reason expired)
 *   not-open  — the question opens once earlier steps are done (slot-not-open)
 *   unknown   — no link matches the address (link-not-found)
 */
import type { Refusal } from "../../engine/refusals.js";

export type LinkState = "answered" | "replaced" | "forwarded" | "closed" | "expired" | "not-open" | "unknown";

export interface LinkWords {
  /** The page's heading. */
  title: string;
  /** What happened, in one sentence. */
  sentence: string;
  /** What the reader can do. */
  todo: string;
}

/** The state a refusal of the callback endpoint means for a person (see the module header). */
export function linkStateOf(refusal: Pick<Refusal, "code" | "extra">): LinkState {
  switch (refusal.code) {
    case "link-burned":
      return "answered";
    case "link-retired":
      return (refusal.extra as { reason?: string } | undefined)?.reason === "forwarded" ? "forwarded" : "replaced";
    case "link-dead":
      return (refusal.extra as { reason?: string } | undefined)?.reason === "expired" ? "expired" : "closed";
    case "slot-not-open":
      return "not-open";
    default:
      return "unknown";
  }
}

/** A date as the page writes it: `25 November 2026 at 14:00 UTC` (always UTC, no locale guessing). */
export function plainDate(d: Date): string {
  const f = new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "long", year: "numeric", hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZone: "UTC" });
  const parts = Object.fromEntries(f.formatToParts(d).map((p) => [p.type, p.value]));
  return `${parts.day} ${parts.month} ${parts.year} at ${parts.hour}:${parts.minute} UTC`;
}

/** Why a closed link's question is closed, by the link's end reason (refusals.ts LinkEndReason). */
const CLOSED_BECAUSE: Record<string, string> = {
  completed: "it was already answered another way",
  cancelled: "the request moved on without it",
  dropped: "it was withdrawn",
  "run-finished": "the workflow run has finished",
  revoked: "the link was revoked",
  "quorum-reached": "enough others have already answered",
};

/**
 * The words for a link in `state`. `expiredAt` dates an expired link (null: not known); `reason`
 * (a closed link's end reason) says why its question is closed.
 */
export function linkWords(state: LinkState, opts: { expiredAt?: Date | null; reason?: string | null } = {}): LinkWords {
  const expiredAt = opts.expiredAt ?? null;
  switch (state) {
    case "answered":
      return {
        title: "This link has already been used",
        sentence: "An answer was already sent through this link, and each link works once.",
        todo: "If that was not you, contact whoever sent you the link.",
      };
    case "replaced":
      return {
        title: "This link was replaced",
        sentence: "A newer link was sent to you for the same question, so this one no longer works.",
        todo: "Use the link in the most recent message you received.",
      };
    case "forwarded":
      return {
        title: "This link was passed on",
        sentence: "This question was sent on to someone else with a new link of their own, so this link no longer works.",
        todo: "If you did not pass it on, contact whoever sent you the link.",
      };
    case "closed":
      return {
        title: "This link no longer works",
        sentence: `The question this link was for is closed: ${CLOSED_BECAUSE[opts.reason ?? ""] ?? "there is nothing to answer any more"}.`,
        todo: "If you think that is wrong, contact whoever sent you the link.",
      };
    case "expired":
      return {
        title: "This link no longer works",
        sentence: expiredAt ? `The time to answer ran out: this link expired on ${plainDate(expiredAt)}.` : "The time to answer ran out: this link has expired.",
        todo: "If you still want to answer, contact whoever sent you the link.",
      };
    case "not-open":
      return {
        title: "Not open yet",
        sentence: "This question opens once earlier steps are done.",
        todo: "Keep the link and try again later; it stays valid.",
      };
    case "unknown":
      return {
        title: "This link does not work",
        sentence: "No question matches this link.",
        todo: "Check that the whole link was copied from the message (links are long). If it still does not work, ask the sender for a new one.",
      };
  }
}

/**
 * The words of the page the forward form (without JavaScript) answers when the forward is refused
 * (v0.4 "Send this to someone else"): by the refusal's code; an ended link in its own words.
 */
export function forwardWords(refusal: Pick<Refusal, "code" | "extra">): Pick<LinkWords, "title" | "sentence"> {
  switch (refusal.code) {
    case "invalid-body":
      return { title: "Not sent", sentence: "That is not an email address we can send to. Go back, check it and try again." };
    case "not-forwardable":
      return { title: "Not sent", sentence: "This question cannot be passed on: please answer it yourself." };
    case "forward-limit":
      return { title: "Not sent", sentence: "This question was already passed on as often as allowed: please answer it yourself." };
    case "authorize-denied":
      return { title: "Not sent", sentence: "The form could not be checked (sent from elsewhere, or too old). Go back, reload the page and try again." };
    case "rate-limited":
    case "unavailable":
      return { title: "Not sent", sentence: "The service is busy or unavailable right now. Go back and try again in a moment." };
    default: {
      const words = linkWords(linkStateOf(refusal), { reason: (refusal.extra as { reason?: string } | undefined)?.reason ?? null });
      return { title: words.title, sentence: words.sentence };
    }
  }
}

/**
 * The sentence under a field the server refused (a 422 `errors` entry), in the author's words:
 * `label` is the field's `@label` (else its name made readable). `problem` is the API's problem
 * text for that field; only whether it says the field is missing is used — unless `rule` is given
 * (a broken constraint, v0.5): then the sentence is the label and the problem ("“Revenue” must be at
 * least 0.").
 */
export function fieldError(label: string, problem: string, rule?: string): string {
  // v0.5 constraints (issue 43): a broken rule says which, in the API's phrase ("must not be empty")
  if (rule) return `“${label}” ${problem}.`;
  return /^is required/.test(problem) ? `“${label}” is required: please answer it.` : `“${label}” is not a valid answer: please check it.`;
}

/**
 * What the page script needs, as JSON: the outcome sentences by refusal code (the API's `detail`
 * is shown only for refusals not listed), and the field-error templates (`{label}`).
 */
export const SCRIPT_WORDS = {
  checkFields: "Please check the fields marked below.",
  required: fieldError("{label}", "is required"),
  invalid: fieldError("{label}", "is not valid"),
  rule: fieldError("{label}", "{problem}", "rule"),
  byCode: {
    "link-burned": linkWords("answered").sentence,
    "link-retired": `${linkWords("replaced").sentence} ${linkWords("replaced").todo}`,
    "link-retired-forwarded": linkWords("forwarded").sentence,
    "link-dead": linkWords("closed").sentence,
    "link-dead-expired": linkWords("expired").sentence,
    "slot-not-open": `${linkWords("not-open").sentence} ${linkWords("not-open").todo}`,
    "link-not-found": linkWords("unknown").sentence,
  },
} as const;
