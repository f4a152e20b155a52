/**
 * Issue 42 item 3: every catalog has every key of the English one, and each of its messages the
 * same placeholders (read from the parsed ICU MessageFormat AST, nested plurals and selects
 * included); plural messages cover the categories the language's own rules need (Intl.PluralRules);
 * a broken constraint's phrase (web/page/wording.ts `rulePhrase`) in each language.
 */
import test from "ava";
import { parse, TYPE, type MessageFormatElement } from "@formatjs/icu-messageformat-parser";
import { CATALOGS, LANGUAGES, t, tParts, chooseLanguage, formatDay, formatNumber, formatDateIn, formatDateUtc, readerZone, yesNo, zoneOffset } from "../../src/i18n/index.js";
import { DAY_MARK, fieldError, rulePhrase, rulePhrases } from "../../src/web/page/wording.js";

/** The argument names of a message, with the plural/select arguments' options' arguments. */
function placeholders(els: MessageFormatElement[], out = new Set<string>(), depth = 0): Set<string> {
  if (depth > 16) throw new Error("message nested too deep");
  for (const el of els) {
    if (el.type === TYPE.literal || el.type === TYPE.pound) continue;
    if (el.type === TYPE.tag) {
      placeholders(el.children, out, depth + 1);
      continue;
    }
    out.add(el.value);
    if (el.type === TYPE.plural || el.type === TYPE.select) for (const o of Object.values(el.options)) placeholders(o.value, out, depth + 1);
  }
  return out;
}

function plurals(els: MessageFormatElement[]): Array<{ value: string; categories: string[] }> {
  return els.flatMap((el) => (el.type === TYPE.plural && el.pluralType !== "ordinal" ? [{ value: el.value, categories: Object.keys(el.options) }] : []));
}

test("every catalog has every English key, no other key, and the same placeholders in each message", (t0) => {
  const en = CATALOGS.en;
  for (const lang of LANGUAGES) {
    const cat = CATALOGS[lang] as Record<string, string>;
    t0.deepEqual(Object.keys(cat).filter((k) => !(k in en)), [], `${lang} has keys English lacks`);
    for (const [key, english] of Object.entries(en)) {
      t0.true(typeof cat[key] === "string" && cat[key] !== "", `${lang} lacks ${key}`);
      if (typeof cat[key] !== "string") continue;
      const want = [...placeholders(parse(english))].sort();
      const got = [...placeholders(parse(cat[key]!))].sort();
      t0.deepEqual(got, want, `${lang} ${key}: placeholders`);
    }
  }
});

test("plural messages cover each language's plural categories (ja: other only; ar: six)", (t0) => {
  for (const lang of LANGUAGES) {
    const needed = new Intl.PluralRules(lang).resolvedOptions().pluralCategories;
    for (const [key, message] of Object.entries(CATALOGS[lang])) {
      for (const p of plurals(parse(message))) {
        for (const c of needed) t0.true(p.categories.includes(c), `${lang} ${key}: {${p.value}, plural} lacks "${c}"`);
      }
    }
  }
  t0.deepEqual(new Intl.PluralRules("ar").resolvedOptions().pluralCategories.length, 6);
});

test("t formats through the library: plurals by the language's rules, selects, numbers", (t0) => {
  t0.is(t("en", "inbox.counts", { total: 1, open: 1, waiting: 0 }), "1 task: 1 open, 0 waiting on earlier steps.");
  t0.is(t("en", "inbox.counts", { total: 1200, open: 1000, waiting: 200 }), "1,200 tasks: 1,000 open, 200 waiting on earlier steps.");
  t0.is(t("de", "inbox.counts", { total: 1200, open: 1000, waiting: 200 }), "1.200 Aufgaben: 1.000 offen, 200 warten auf frühere Schritte.");
  t0.regex(t("ar", "inbox.counts", { total: 2, open: 2, waiting: 0 }), /^مهمتان/);
  t0.regex(t("ar", "inbox.counts", { total: 3, open: 3, waiting: 0 }), /مهام/);
  t0.regex(t("ja", "inbox.counts", { total: 1, open: 1, waiting: 0 }), /^1 件のタスク/);
  t0.is(t("en", "link.closed.sentence", { reason: "revoked" }), "The question this link was for is closed: the link was revoked.");
  t0.is(t("en", "link.closed.sentence", { reason: "whatever" }), "The question this link was for is closed: there is nothing to answer any more.");
  t0.is(t("xx", "field.yes"), "Yes");
  const marker = { marker: true };
  t0.deepEqual(tParts("en", "link.expired.sentenceAt", { date: marker }), ["The time to answer ran out: this link expired on ", marker, "."]);
});

test("chooseLanguage: slot, then ?lang=, then Accept-Language by a locale matcher, then the default", (t0) => {
  t0.is(chooseLanguage({ slot: "de-CH", query: "fr", accepted: ["ja"], fallback: "en" }), "de");
  t0.is(chooseLanguage({ slot: "zz-Unknown-Tag-!!", query: "fr", accepted: ["ja"], fallback: "en" }), "fr");
  t0.is(chooseLanguage({ slot: "sw", query: null, accepted: ["ja-JP", "en"], fallback: "en" }), "ja");
  t0.is(chooseLanguage({ query: "not a tag", accepted: ["pt-BR", "es-MX"], fallback: "en" }), "es");
  t0.is(chooseLanguage({ accepted: ["pt-BR"], fallback: "de" }), "de");
  t0.is(chooseLanguage({ accepted: ["*"], fallback: "ar" }), "ar");
});

test("values in the reader's language: numbers, Yes/No, dates in UTC with the offset written", (t0) => {
  t0.is(formatNumber("de", 1250000.5), "1.250.000,5");
  t0.is(formatNumber("ja", 1250000.5), "1,250,000.5");
  t0.is(yesNo("de", true), "Ja");
  t0.is(yesNo("ja", false), "いいえ");
  const d = new Date("2026-11-25T14:00:00Z");
  t0.is(formatDateUtc("en", d), "25 November 2026 at 14:00 UTC");
  t0.regex(formatDateUtc("de", d), /25\. November 2026.*14:00.*UTC/);
  t0.regex(formatDateUtc("ja", d), /2026年11月25日.*14:00.*UTC/);
});

test("readerZone keeps an IANA zone Intl knows (its letters as Intl spells them) and refuses anything else; UTC itself is no zone", (t0) => {
  t0.is(readerZone("Europe/Berlin"), "Europe/Berlin");
  t0.is(readerZone("asia/tokyo"), "Asia/Tokyo");
  t0.is(readerZone("America/Argentina/Buenos_Aires"), "America/Argentina/Buenos_Aires");
  for (const utc of ["UTC", "Etc/UTC", "GMT", "Etc/GMT"]) t0.is(readerZone(utc), null, utc);
  for (const bad of ["Mars/Olympus_Mons", "", "+01:00", "Europe/Berlin\n", "../../etc/passwd", "Europe/Berlin<script>", "A".repeat(65), 3600, null, undefined, ["Europe/Berlin"]]) {
    t0.is(readerZone(bad), null, JSON.stringify(bad));
  }
});

test("formatDateIn writes the time in the reader's zone with the offset and the zone's name, in the page's language; without a zone, UTC", (t0) => {
  const winter = new Date("2026-11-25T14:05:00Z");
  const summer = new Date("2026-07-01T14:05:00Z");
  t0.is(formatDateIn("en", winter, "Europe/Berlin"), "25 November 2026 at 15:05 GMT+1 (Europe/Berlin)");
  t0.is(formatDateIn("en", summer, "Europe/Berlin"), "1 July 2026 at 16:05 GMT+2 (Europe/Berlin)", "summer time");
  t0.is(formatDateIn("en", new Date("2026-11-25T20:30:00Z"), "Asia/Tokyo"), "26 November 2026 at 05:30 GMT+9 (Asia/Tokyo)", "the next day there");
  t0.is(formatDateIn("en", winter, "Asia/Kolkata"), "25 November 2026 at 19:35 GMT+5:30 (Asia/Kolkata)");
  t0.regex(formatDateIn("de", winter, "Europe/Berlin"), /^25\. November 2026 um 15:05 GMT\+1 \(Europe\/Berlin\)$/);
  t0.regex(formatDateIn("ja", winter, "Asia/Tokyo"), /^2026年11月25日 23:05 GMT\+9 \(Asia\/Tokyo\)$/);
  t0.is(formatDateIn("en", winter, null), formatDateUtc("en", winter));
  t0.is(formatDateIn("en", winter, "Mars/Olympus_Mons"), "25 November 2026 at 14:05 UTC", "an unknown zone: UTC");
});

test("a broken rule's phrase in each language, made from the rule as written (the API's English problem is read only for the day of `today`)", (t0) => {
  // English: the API's own phrases (pages and tests quote them)
  t0.is(rulePhrase("en", "@min(0)", "must be at least 0"), "must be at least 0");
  t0.is(rulePhrase("en", "@max(today)", "must not be in the future (after 2026-11-28)"), "must not be in the future (after 2026-11-28)");
  t0.is(rulePhrase("en", "@min(today)", "must not be in the past (before 2026-11-28)"), "must not be in the past (before 2026-11-28)");
  t0.is(rulePhrase("en", '@min("1900-01-01")', "x"), "must be on or after 1900-01-01");
  t0.is(rulePhrase("en", "@minLength(1)", "x"), "must not be empty");
  t0.is(rulePhrase("en", "@minLength(3)", "x"), "must be at least 3 characters long");
  t0.is(rulePhrase("en", "@maxLength(200)", "x"), "must be at most 200 characters long");
  t0.is(rulePhrase("en", '@pattern("[A-Z]{2}[0-9]{6}")', "x"), 'must match the pattern "[A-Z]{2}[0-9]{6}"');
  t0.is(rulePhrase("en", "@email", "x"), "must be one email address, such as name@example.com");
  t0.is(rulePhrase("en", '@oneOf("small", "large")', "x"), 'must be one of "small", "large"');
  // other languages: their own words, numbers and days
  t0.is(rulePhrase("de", "@min(1000000)", "x"), "muss mindestens 1.000.000 sein");
  t0.is(rulePhrase("de", "@max(today)", "must not be in the future (after 2026-11-28)"), "darf nicht in der Zukunft liegen (nach dem 28. November 2026)");
  t0.is(rulePhrase("fr", "@maxLength(1)", "x"), "doit compter au plus 1 caractère");
  t0.is(rulePhrase("fr", "@maxLength(20)", "x"), "doit compter au plus 20 caractères");
  t0.is(rulePhrase("es", '@max("2030-01-31")', "x"), "debe ser el 31 de enero de 2030 o anterior");
  t0.is(rulePhrase("ja", "@minLength(1)", "x"), "空欄にはできません");
  t0.is(rulePhrase("ar", "@minLength(2)", "x"), "يجب ألا يقل طوله عن حرفين");
  t0.is(fieldError("Betrag", "must be at least 0", "de", "@min(0)"), "„Betrag“: muss mindestens 0 sein.");
  t0.is(fieldError("Montant", "is required", "fr"), CATALOGS.fr["field.required"].replace("{label}", "Montant"));
  // a rule this version of the page cannot read: the API's problem, as it was
  t0.is(rulePhrase("de", "@future(3)", "must be something"), "must be something");
  t0.is(rulePhrase("de", "@min(", "must be something"), "must be something");
  // for the page script: a `today` bound's day is left to it (DAY_MARK)
  t0.deepEqual(rulePhrases("de", ["@max(today)", "@min(0)"]), { "@max(today)": `darf nicht in der Zukunft liegen (nach dem ${DAY_MARK})`, "@min(0)": "muss mindestens 0 sein" });
  // every language has a phrase for every rule that differs from English but for English itself
  for (const lang of LANGUAGES.filter((l) => l !== "en")) {
    for (const rule of ["@min(0)", "@max(5)", '@min("2000-01-01")', '@max("2000-01-01")', "@min(today)", "@max(today)", "@minLength(1)", "@minLength(4)", "@maxLength(9)", '@pattern("a+")', "@email", '@oneOf("a")']) {
      const phrase = rulePhrase(lang, rule, "problem on 2026-11-28");
      t0.true(phrase !== "" && phrase !== rulePhrase("en", rule, "problem on 2026-11-28"), `${lang} ${rule}: ${phrase}`);
    }
  }
  t0.is(formatDay("de", "2026-11-28"), "28. November 2026");
  t0.is(formatDay("en", "2026-11-28"), "2026-11-28");
  t0.is(formatDay("de", "not a day"), "not a day");
});

test("zoneOffset: the zone's UTC offset at an instant as RFC 3339 writes it (the task page's datetime offset); without a zone, Z", (t0) => {
  const winter = new Date("2026-11-25T14:05:00Z");
  const summer = new Date("2026-07-01T14:05:00Z");
  t0.is(zoneOffset("Europe/Berlin", winter), "+01:00");
  t0.is(zoneOffset("Europe/Berlin", summer), "+02:00", "summer time");
  t0.is(zoneOffset("Asia/Kolkata", winter), "+05:30");
  t0.is(zoneOffset("Asia/Kathmandu", winter), "+05:45");
  t0.is(zoneOffset("America/St_Johns", winter), "-03:30");
  t0.is(zoneOffset("America/New_York", summer), "-04:00");
  t0.is(zoneOffset("Europe/London", winter), "Z", "GMT in winter");
  t0.is(zoneOffset(null, winter), "Z");
  t0.is(zoneOffset("Mars/Olympus_Mons", winter), "Z", "an unknown zone: UTC");
});
