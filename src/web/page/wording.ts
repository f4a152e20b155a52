/**
 * The words a responder reads (issue 19 item 4): every sentence the responder page shows about the
 * state of a link, and about a field the answer got wrong, chosen here — in the reader's language
 * from slotflow's message catalogs (src/i18n, issue 42; `lang` defaults to English). The page's server
 * side (document.ts) and its script (script.ts, which receives `SCRIPT_WORDS` as JSON) both take
 * their wording from this module. The JSON API's problem details are not touched: API clients keep
 * reading `detail` (refusals.ts, link.ts); this is what a person on the page reads instead — a
 * broken constraint in the page's language (`rulePhrase`, from the rule as the 422 names it; a rule
 * the page was not written with falls back to the API's English phrase), a `Requires` refusal
 * in the author's variant for the page's language (the problem's `wordings`), the service's
 * refusals (rate-limited, unavailable, handler-failed…) in slotflow's own words.
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
import { REQUIRES_GENERIC_LINK, type Refusal } from "../../engine/refusals.js";
import { formatDateUtc, formatDay, formatNumber, t } from "../../i18n/index.js";

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

/** A date as an English page writes it: `25 November 2026 at 14:00 UTC` (src/i18n `formatDateUtc` for other languages). */
export function plainDate(d: Date): string {
  return formatDateUtc("en", d);
}

/** A closed link's end reason as the catalogs' `select` key (`run-finished` → `run_finished`). */
export function reasonKey(reason: string | null | undefined): string {
  return (reason ?? "none").replace(/-/g, "_");
}

const STATE_KEY = {
  answered: "answered",
  replaced: "replaced",
  forwarded: "forwarded",
  closed: "closed",
  expired: "expired",
  "not-open": "notOpen",
  unknown: "unknown",
} as const;

/**
 * The words for a link in `state`, in `lang`. `expiredAt` dates an expired link (null: not known);
 * `reason` (a closed link's end reason) says why its question is closed.
 */
export function linkWords(state: LinkState, opts: { expiredAt?: Date | null; reason?: string | null } = {}, lang = "en"): LinkWords {
  const k = STATE_KEY[state];
  const expiredAt = opts.expiredAt ?? null;
  const sentence =
    state === "closed"
      ? t(lang, "link.closed.sentence", { reason: reasonKey(opts.reason) })
      : state === "expired"
        ? expiredAt
          ? t(lang, "link.expired.sentenceAt", { date: formatDateUtc(lang, expiredAt) })
          : t(lang, "link.expired.sentence")
        : t(lang, `link.${k}.sentence` as "link.answered.sentence");
  return { title: t(lang, `link.${k}.title` as "link.answered.title"), sentence, todo: t(lang, `link.${k}.todo` as "link.answered.todo") };
}

/**
 * The words of the page the forward form (without JavaScript) answers when the forward is refused
 * (v0.4 "Send this to someone else"): by the refusal's code; an ended link in its own words.
 */
export function forwardWords(refusal: Pick<Refusal, "code" | "extra">, lang = "en"): Pick<LinkWords, "title" | "sentence"> {
  const notSent = (key: Parameters<typeof t>[1]) => ({ title: t(lang, "forward.notSent"), sentence: t(lang, key) });
  switch (refusal.code) {
    case "invalid-body":
      return notSent("forward.badAddress");
    case "not-forwardable":
      return notSent("forward.notForwardable");
    case "forward-limit":
      return notSent("forward.limit");
    case "authorize-denied":
      return notSent("forward.formCheck");
    case "rate-limited":
    case "unavailable":
      return notSent("forward.busy");
    default: {
      const words = linkWords(linkStateOf(refusal), { reason: (refusal.extra as { reason?: string } | undefined)?.reason ?? null }, lang);
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
export function fieldError(label: string, problem: string, lang = "en", rule?: string): string {
  // v0.5 constraints: a broken rule says which, in the page's language ("must not be empty")
  if (rule) return t(lang, "field.rule", { label, problem: rulePhrase(lang, rule, problem) });
  return t(lang, /^is required/.test(problem) ? "field.required" : "field.invalid", { label });
}

/** A rule as written (`@min(0)`, `@max(today)`, `@oneOf("a", "b")`) read back: its name and arguments; null when it cannot be read. */
function readRule(rule: string): { name: string; args: Array<string | number> } | null {
  const m = /^@([A-Za-z]+)(?:\((.*)\))?$/s.exec(rule);
  if (!m) return null;
  const inner = m[2];
  if (inner === undefined) return { name: m[1]!, args: [] };
  if (inner === "today") return { name: m[1]!, args: ["today"] };
  try {
    const args = JSON.parse(`[${inner}]`) as unknown[];
    return args.every((a) => typeof a === "string" || typeof a === "number") ? { name: m[1]!, args: args as Array<string | number> } : null;
  } catch {
    return null;
  }
}

/**
 * The phrase a broken rule is said with on a page, in `lang` (catalog keys `rule.*`), after the
 * field's label: "must be at least 0", German "muss mindestens 0 sein". `rule` is the 422 `errors`
 * entry's `rule` as written in the workflow; the phrase is made from it, not from the API's English
 * `problem` — which is read only for the day a `today` bound stood for when the answer was checked
 * (`must not be in the future (after 2026-11-28)`), and returned unchanged for a rule this function
 * cannot read. `dayText` (the page script's marker) replaces the formatted day of a `today` bound.
 * Numbers are written as `lang` writes them, days by `formatDay` (English: ISO, as the API).
 */
export function rulePhrase(lang: string, rule: string, problem: string, dayText?: string): string {
  const r = readRule(rule);
  if (!r) return problem;
  const [a] = r.args;
  const day = (bound: string) => dayText ?? formatDay(lang, bound === "today" ? (/\d{4}-\d{2}-\d{2}/.exec(problem)?.[0] ?? new Date().toISOString().slice(0, 10)) : bound);
  switch (r.name) {
    case "min":
      if (typeof a === "number") return t(lang, "rule.min", { min: formatNumber(lang, a) });
      if (typeof a === "string") return a === "today" ? t(lang, "rule.notPast", { day: day(a) }) : t(lang, "rule.dateMin", { day: formatDay(lang, a) });
      return problem;
    case "max":
      if (typeof a === "number") return t(lang, "rule.max", { max: formatNumber(lang, a) });
      if (typeof a === "string") return a === "today" ? t(lang, "rule.notFuture", { day: day(a) }) : t(lang, "rule.dateMax", { day: formatDay(lang, a) });
      return problem;
    case "minLength":
      if (typeof a !== "number") return problem;
      return a === 1 ? t(lang, "rule.notEmpty") : t(lang, "rule.minLength", { n: a });
    case "maxLength":
      return typeof a === "number" ? t(lang, "rule.maxLength", { n: a }) : problem;
    case "pattern":
      return typeof a === "string" ? t(lang, "rule.pattern", { pattern: JSON.stringify(a) }) : problem;
    case "email":
      return t(lang, "rule.email");
    case "oneOf":
      return r.args.length > 0 ? t(lang, "rule.oneOf", { choices: r.args.map((c) => JSON.stringify(String(c))).join(", ") }) : problem;
    default:
      return problem;
  }
}

/** The marker the page script replaces with the day a `today` bound stood for (see scriptWords `rules`). */
export const DAY_MARK = "\u0001";

/**
 * The phrases of the rules on a page, by rule as written, in `lang`, for the page script: a `today`
 * bound's phrase carries DAY_MARK where the script puts the day of the check (read from the
 * problem, written as formatDay does).
 */
export function rulePhrases(lang: string, rules: string[]): Record<string, string> {
  return Object.fromEntries(rules.map((r) => [r, rulePhrase(lang, r, "", DAY_MARK)]));
}

/**
 * What the page script needs, as JSON, in `lang`: the outcome sentences by refusal code (the API's
 * `detail` is shown only for refusals not listed), the field errors (formatted by the server for
 * each label on the page: `required`/`invalid` by label), and the script's own sentences.
 */
export function scriptWords(lang: string, labels: string[], rules: string[] = []) {
  const byLabel = (key: "field.required" | "field.invalid") => Object.fromEntries(labels.map((label) => [label, t(lang, key, { label })]));
  return {
    lang,
    checkFields: t(lang, "field.checkFields"),
    required: byLabel("field.required"),
    invalid: byLabel("field.invalid"),
    // for a label not on the page when it was written: the sentence split around where the label goes
    requiredAround: t(lang, "field.required", { label: "\u0000" }).split("\u0000"),
    invalidAround: t(lang, "field.invalid", { label: "\u0000" }).split("\u0000"),
    // a broken constraint (v0.5): "“{label}” {problem}." with both put in by the script
    rule: t(lang, "field.rule", { label: "{label}", problem: "{problem}" }),
    // the phrases of the page's rules in this language (rulePhrases); the API's problem for any other
    rules: rulePhrases(lang, rules),
    sending: t(lang, "answer.sending"),
    dropped: t(lang, "answer.dropped"),
    done: t(lang, "answer.done"),
    accepted: t(lang, "answer.accepted"),
    doneTitle: t(lang, "answer.doneTitle"),
    doneAgain: t(lang, "answer.doneAgain"),
    // "{detail} Press Send to try again." with the detail put in by the script: split around a marker
    tryAgain: t(lang, "answer.tryAgain", { detail: "\u0000" }).split("\u0000"),
    refused: t(lang, "answer.refused", { status: "\u0000" }).split("\u0000"),
    byCode: {
      "link-burned": linkWords("answered", {}, lang).sentence,
      "link-retired": `${linkWords("replaced", {}, lang).sentence} ${linkWords("replaced", {}, lang).todo}`,
      "link-retired-forwarded": linkWords("forwarded", {}, lang).sentence,
      "link-dead": linkWords("closed", {}, lang).sentence,
      "link-dead-expired": linkWords("expired", {}, lang).sentence,
      "slot-not-open": `${linkWords("not-open", {}, lang).sentence} ${linkWords("not-open", {}, lang).todo}`,
      "link-not-found": linkWords("unknown", {}, lang).sentence,
      "rate-limited": t(lang, "answer.rateLimited"),
      unavailable: t(lang, "answer.unavailable"),
      "handler-failed": t(lang, "answer.failed"),
      "configuration-fault": t(lang, "answer.failed"),
      "authorize-denied": t(lang, "answer.notAllowed"),
      "payload-too-large": t(lang, "answer.tooLarge"),
    },
    // a Requires refusal: the author's variant for this language (the problem's `wordings`), else
    // their default wording (`detail`) — or, when the detail is the generic one, this sentence
    requiresGenericDetail: REQUIRES_GENERIC_LINK,
    requiresGeneric: t(lang, "answer.requiresGeneric"),
  };
}

/** English script words (the v0.4 shape; tests and docs quote it). */
export const SCRIPT_WORDS = scriptWords("en", []);
