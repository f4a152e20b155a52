/**
 * slotflow's own words in the reader's language (issue 42; docs/languages.md): the one module that
 * owns the message catalogs (catalogs/*.ts, ICU MessageFormat) and formats them through
 * `intl-messageformat` — no hand-rolled interpolation; plural and select rules are the library's
 * (Japanese has only `other`, Arabic six categories).
 *
 * - `t(lang, key, values)` — a message as text. `lang` must be one of LANGUAGES (else English).
 * - `tParts(lang, key, values)` — the same, but values that are objects (an HTML fragment, a
 *   `<time>` element) come back as parts of an array, in order, so a page can escape the text and
 *   insert its own markup (intl-messageformat's rich values).
 * - `chooseLanguage(…)` — which language a page speaks: the slot's `Language` when set and
 *   available; else `?lang=`; else `Accept-Language` matched by `@formatjs/intl-localematcher`
 *   (RFC 4647 lookup: `de-CH` → `de`, the browser's order kept); else the configured default (SLOTFLOW_DEFAULT_LANGUAGE, `en`).
 * - `formatNumber`, `formatDateUtc`, `formatDateIn`, `yesNo`, `isRightToLeft`, `languageName` — values in the
 *   reader's language through `Intl`; `readerZone` checks a reader's IANA time zone, `zoneOffset`
 *   gives its UTC offset at an instant.
 */
import { IntlMessageFormat, type PrimitiveType } from "intl-messageformat";
import { match } from "@formatjs/intl-localematcher";
import { en, type MessageKey } from "./catalogs/en.js";
import { de } from "./catalogs/de.js";
import { fr } from "./catalogs/fr.js";
import { es } from "./catalogs/es.js";
import { ja } from "./catalogs/ja.js";
import { ar } from "./catalogs/ar.js";
import type { Catalog } from "./catalogs/types.js";

export type { MessageKey } from "./catalogs/en.js";

/** The languages slotflow's own words exist in (BCP 47 tags), English first. */
export const LANGUAGES = ["en", "de", "fr", "es", "ja", "ar"] as const;
export type Language = (typeof LANGUAGES)[number];

/** Every catalog by language (the test compares each with `en`). */
export const CATALOGS: Record<Language, Catalog> = { en, de, fr, es, ja, ar };

/** Languages written right to left (the page gets `dir="rtl"` and mirrors). */
const RIGHT_TO_LEFT = new Set<string>(["ar"]);

/** True for a language written right to left. */
export function isRightToLeft(lang: string): boolean {
  return RIGHT_TO_LEFT.has(lang);
}

/** True when `tag` is one of LANGUAGES. */
export function isLanguage(tag: string): tag is Language {
  return (LANGUAGES as readonly string[]).includes(tag);
}

const compiled = new Map<string, IntlMessageFormat>();

function formatter(lang: Language, key: MessageKey): IntlMessageFormat {
  const id = `${lang}\u0000${key}`;
  let f = compiled.get(id);
  if (!f) {
    f = new IntlMessageFormat(CATALOGS[lang][key], lang);
    compiled.set(id, f);
  }
  return f;
}

/** The values a message takes: text and numbers, or (for `tParts`) any object to pass through. */
export type Values = Record<string, PrimitiveType | object>;

/** The message `key` in `lang` (English when `lang` is not one of LANGUAGES), with `values` formatted in. */
export function t(lang: string, key: MessageKey, values?: Record<string, PrimitiveType>): string {
  const out = formatter(isLanguage(lang) ? lang : "en", key).format(values);
  return Array.isArray(out) ? out.join("") : String(out);
}

/** Like `t`, but object values come back as parts (strings between them), for markup around them. */
export function tParts<T extends object>(lang: string, key: MessageKey, values: Record<string, PrimitiveType | T>): Array<string | T> {
  const out = formatter(isLanguage(lang) ? lang : "en", key).format<T>(values);
  return Array.isArray(out) ? (out as Array<string | T>) : [out as string | T];
}

/** What the matcher answers when no available language fits (BCP 47 "undetermined"). */
const NONE = "und";

/** How a page's language was asked for. */
export interface LanguageRequest {
  /** The slot's `Language` setting, evaluated (null: none). */
  slot?: string | null;
  /** `?lang=` of the page's URL. */
  query?: string | null;
  /** The browser's languages, most preferred first (Koa's `ctx.acceptsLanguages()`). */
  accepted?: readonly string[];
  /** SLOTFLOW_DEFAULT_LANGUAGE (one of LANGUAGES). */
  fallback: Language;
}

/** One requested tag matched to LANGUAGES (`de-CH` → `de`), or null when none fits or the tag is malformed. */
export function availableLanguage(tag: string | null | undefined): Language | null {
  if (!tag || tag.length > 64) return null;
  try {
    const [canonical] = Intl.getCanonicalLocales(tag);
    if (!canonical) return null;
    const found = match([canonical], LANGUAGES as unknown as string[], NONE, { algorithm: "lookup" });
    return isLanguage(found) ? found : null;
  } catch {
    return null;
  }
}

/** The language a page speaks (see the module header). */
export function chooseLanguage(req: LanguageRequest): Language {
  const bySlot = availableLanguage(req.slot);
  if (bySlot) return bySlot;
  const byQuery = availableLanguage(req.query);
  if (byQuery) return byQuery;
  const accepted = (req.accepted ?? []).filter((l) => l !== "*" && l.length <= 64).flatMap((l) => {
    try {
      return Intl.getCanonicalLocales(l);
    } catch {
      return [];
    }
  });
  if (accepted.length > 0) {
    const found = match(accepted, LANGUAGES as unknown as string[], NONE, { algorithm: "lookup" });
    if (isLanguage(found)) return found;
  }
  return req.fallback;
}

/** A language's own name ("Deutsch", "العربية"), for the language switcher. */
export function languageName(lang: Language): string {
  const name = new Intl.DisplayNames([lang], { type: "language" }).of(lang) ?? lang;
  return name.charAt(0).toLocaleUpperCase(lang) + name.slice(1);
}

/** A number as `lang` writes it (`1.250.000,5` in German, `1,250,000.5` in Japanese). */
export function formatNumber(lang: string, n: number): string {
  return new Intl.NumberFormat(lang, { maximumFractionDigits: 20 }).format(n);
}

/** `bool` as the language's Yes/No. */
export function yesNo(lang: string, b: boolean): string {
  return t(lang, b ? "field.yes" : "field.no");
}

/**
 * A date and time in UTC with the offset written, as `lang` writes it — the page without script
 * (the page's script rewrites it in the browser's time zone). English keeps slotflow's wording of
 * v0.4: `25 November 2026 at 14:00 UTC`.
 */
export function formatDateUtc(lang: string, d: Date): string {
  if (lang === "en") {
    const f = new Intl.DateTimeFormat("en-GB", { day: "numeric", month: "long", year: "numeric", hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZone: "UTC" });
    const parts = Object.fromEntries(f.formatToParts(d).map((p) => [p.type, p.value]));
    return `${parts.day} ${parts.month} ${parts.year} at ${parts.hour}:${parts.minute} UTC`;
  }
  return new Intl.DateTimeFormat(lang, { day: "numeric", month: "long", year: "numeric", hour: "2-digit", minute: "2-digit", timeZone: "UTC", timeZoneName: "short" }).format(d);
}

/** The longest IANA time zone name `readerZone` accepts, characters (the longest real one has 32). */
export const MAX_ZONE_CHARS = 64;
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+){0,3}$/;

/**
 * The reader's time zone (interfaces.md "Pages in the responder's language": times in the reader's
 * zone) from an IANA name such as an OpenID Connect `zoneinfo` claim (`Europe/Berlin`): the name
 * as given, with its letters as `Intl` spells them (`asia/tokyo` → `Asia/Tokyo`), or null — for anything
 * but a string of at most MAX_ZONE_CHARS characters shaped like an IANA name, a zone `Intl` does
 * not know (`new Intl.DateTimeFormat` throws RangeError), and UTC itself (`Etc/UTC`, `GMT`):
 * null means "UTC with the offset written", the pages' behaviour without a zone.
 */
export function readerZone(value: unknown): string | null {
  const zone = resolvedZone(value);
  if (zone === null || zone === "UTC") return null;
  // the name as given, in Intl's spelling of its letters; not Intl's older alias
  // (some ICU versions resolve Asia/Kolkata to Asia/Calcutta)
  return zone.toLowerCase() === (value as string).toLowerCase() ? zone : (value as string);
}

/** True when `value` is an IANA time zone name `Intl` knows, UTC included (the development sign-in's check). */
export function isTimeZone(value: unknown): boolean {
  return resolvedZone(value) !== null;
}

/** `Intl`'s name of the zone `value` names, or null (not a string shaped like an IANA name, or unknown). */
function resolvedZone(value: unknown): string | null {
  if (typeof value !== "string" || value.length > MAX_ZONE_CHARS || !ZONE_NAME.test(value)) return null;
  try {
    return new Intl.DateTimeFormat("en", { timeZone: value }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

/**
 * A date and time in the reader's time zone `zone` (a `readerZone` answer), as `lang` writes it,
 * with the offset and the zone's name written: `28 November 2026 at 15:05 GMT+1 (Europe/Berlin)`,
 * `28. November 2026 um 15:05 GMT+1 (Europe/Berlin)`. `zone` null (or one `readerZone` refuses):
 * `formatDateUtc`, UTC with the offset written.
 */
export function formatDateIn(lang: string, d: Date, zone: string | null): string {
  const checked = zone === null ? null : readerZone(zone);
  if (checked === null) return formatDateUtc(lang, d);
  const text = new Intl.DateTimeFormat(lang === "en" ? "en-GB" : lang, {
    day: "numeric",
    month: "long",
    year: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
    timeZone: checked,
    timeZoneName: "shortOffset",
  }).format(d);
  return `${text} (${checked})`;
}

/**
 * The UTC offset of time zone `zone` (a `readerZone` answer) at instant `at`, as RFC 3339 writes
 * it: `+01:00` for Europe/Berlin in winter, `+02:00` in summer, `-03:30`, `Z` for none. `zone`
 * null (or one `readerZone` refuses): `Z`. From `Intl`'s `longOffset` name of the zone (`GMT+01:00`).
 */
export function zoneOffset(zone: string | null, at: Date): string {
  const checked = zone === null ? null : readerZone(zone);
  if (checked === null) return "Z";
  const name = new Intl.DateTimeFormat("en-US", { timeZone: checked, timeZoneName: "longOffset" }).formatToParts(at).find((p) => p.type === "timeZoneName")?.value ?? "GMT";
  const m = /^GMT([+-]\d{2}):?(\d{2})?/.exec(name);
  if (!m) return "Z";
  const offset = `${m[1]}:${m[2] ?? "00"}`;
  return offset === "+00:00" || offset === "-00:00" ? "Z" : offset;
}

/** The options the page script uses to write a date in the browser's time zone (same fields as formatDateUtc). */
export const BROWSER_DATE_OPTIONS: Intl.DateTimeFormatOptions = { day: "numeric", month: "long", year: "numeric", hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZoneName: "short" };

/**
 * A calendar day (`YYYY-MM-DD`) as `lang` writes it in a sentence: English keeps the ISO form the
 * API's problem phrases use (`2026-11-28`); every other language writes the day with `Intl`
 * (`28. November 2026`, `2026年11月28日`). A string that is not a day comes back unchanged.
 */
export function formatDay(lang: string, iso: string): string {
  if (lang === "en" || !/^\d{4}-\d{2}-\d{2}$/.test(iso)) return iso;
  const d = new Date(`${iso}T00:00:00Z`);
  if (Number.isNaN(d.getTime())) return iso;
  return new Intl.DateTimeFormat(lang, DAY_OPTIONS).format(d);
}

/** The options a day is written with (formatDay; the page script uses the same). */
export const DAY_OPTIONS: Intl.DateTimeFormatOptions = { dateStyle: "long", timeZone: "UTC" };
