/**
 * Who reads a page (issue 42; docs/languages.md): the language the page speaks and the
 * organisation's branding. `readerOf(ctx, config, slotLanguage)` chooses the language
 * (src/i18n `chooseLanguage`: the slot's `Language` when set and available → `?lang=` →
 * `Accept-Language` → SLOTFLOW_DEFAULT_LANGUAGE) and adds `Accept-Language` to the response's
 * `Vary`, since the same URL answers in different languages. The language switcher's links keep
 * the page's other query parameters and set `lang`.
 *
 * `zone`: the reader's IANA time zone for the times a page writes (interfaces.md "Pages in the
 * responder's language": "datetime in the reader's time zone"). `readerOf` knows no zone (null:
 * UTC with the offset written); the insiders' pages (inbox, task pages) set the signed-in
 * person's (signed-in.ts `SignedIn.zone`, from the issuer's `zoneinfo` claim).
 */
import type { Context } from "koa";
import type { Config } from "../../config.js";
import type { Brand } from "../../i18n/brand.js";
import { availableLanguage, chooseLanguage, type Language } from "../../i18n/index.js";

export interface Reader {
  lang: Language;
  brand: Brand;
  /** The same page's address in language `l` (relative: `?…&lang=l`). */
  langHref(l: Language): string;
  /** Only the slot's own `Language` chose the page's language: no switcher (the author decided). */
  fixed: boolean;
  /** The reader's IANA time zone (src/i18n `readerZone`), or null: times in UTC with the offset written. */
  zone: string | null;
}

/** A reader with no request: the default language, for mails and tests. */
export function plainReader(lang: Language = "en", brand: Brand = { name: null, logoFile: null, color: null }): Reader {
  return { lang, brand, langHref: (l) => `?lang=${l}`, fixed: false, zone: null };
}

/** Adds `value` to the response's `Vary` once. */
export function addVary(ctx: Context, value: string): void {
  const now = String(ctx.response.get("Vary") ?? "");
  const parts = now.split(",").map((s) => s.trim()).filter(Boolean);
  if (!parts.some((p) => p.toLowerCase() === value.toLowerCase())) parts.push(value);
  ctx.set("Vary", parts.join(", "));
}

/** The reader of this request (see the module header); `slotLanguage` is the slot's evaluated `Language`. */
export function readerOf(ctx: Context, config: Pick<Config, "defaultLanguage" | "brand">, slotLanguage: string | null = null): Reader {
  const query = typeof ctx.query.lang === "string" ? ctx.query.lang : null;
  const accepted = ctx.acceptsLanguages() as string[] | false;
  const lang = chooseLanguage({ slot: slotLanguage, query, accepted: accepted || [], fallback: config.defaultLanguage });
  addVary(ctx, "Accept-Language");
  const search = ctx.querystring;
  return {
    lang,
    brand: config.brand,
    fixed: availableLanguage(slotLanguage) !== null,
    zone: null,
    langHref: (l) => {
      const q = new URLSearchParams(search);
      q.set("lang", l);
      return `?${q.toString()}`;
    },
  };
}
