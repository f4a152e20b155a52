/**
 * Branding and language settings at start (issue 42; docs/configuration.md "Branding"):
 * SLOTFLOW_BRAND_COLOR below WCAG AA on the white page is refused in the one-line start-up error,
 * naming the ratio; a logo must be a readable .png/.svg; the brand becomes the display name of
 * mail From; SLOTFLOW_DEFAULT_LANGUAGE must be one of the languages slotflow speaks.
 */
import test from "ava";
import { join } from "node:path";
import { ConfigError, loadConfig } from "../../src/config.js";
import { contrastRatio, parseHexColor } from "../../src/i18n/brand.js";

const LOGO = join(process.cwd(), "test", "fixtures", "brand", "logo.svg");

test("WCAG contrast: black on white is 21:1, slotflow's blue passes AA, a light blue fails", (t) => {
  t.is(Math.round(contrastRatio([0, 0, 0], [255, 255, 255])), 21);
  t.true(contrastRatio(parseHexColor("#0b57d0")!, [255, 255, 255]) >= 4.5);
  t.true(contrastRatio(parseHexColor("#7fb3ff")!, [255, 255, 255]) < 4.5);
  t.deepEqual(parseHexColor("#abc"), [0xaa, 0xbb, 0xcc]);
  t.is(parseHexColor("blue"), null);
});

test("a brand color failing WCAG AA, a bad logo and an unknown default language stop the start with one line naming each", (t) => {
  const err = t.throws(() => loadConfig({ SLOTFLOW_BRAND_COLOR: "#7fb3ff", SLOTFLOW_BRAND_LOGO: "/nonexistent/logo.gif", SLOTFLOW_DEFAULT_LANGUAGE: "pt" }), { instanceOf: ConfigError });
  t.regex(err!.message, /SLOTFLOW_BRAND_COLOR #7fb3ff has a contrast of 2\.14:1 on the page's white background; WCAG AA needs 4\.5:1/);
  t.regex(err!.message, /SLOTFLOW_BRAND_LOGO must be a \.png or \.svg file/);
  t.regex(err!.message, /SLOTFLOW_DEFAULT_LANGUAGE must be one of en, de, fr, es, ja, ar, got "pt"/);
  t.false(err!.message.includes("\n"), "one line");
});

test("a good brand is kept; the brand name becomes the display name of mail From", (t) => {
  const c = loadConfig({ SLOTFLOW_BRAND_NAME: "ACME Procurement", SLOTFLOW_BRAND_LOGO: LOGO, SLOTFLOW_BRAND_COLOR: "#0B4F6C", SLOTFLOW_MAIL_FROM: "Ops <ops@acme.test>", SLOTFLOW_DEFAULT_LANGUAGE: "de" });
  t.deepEqual(c.brand, { name: "ACME Procurement", logoFile: LOGO, color: "#0b4f6c" });
  t.is(c.mail.from, `"ACME Procurement" <ops@acme.test>`);
  t.is(c.defaultLanguage, "de");
  const plain = loadConfig({});
  t.deepEqual(plain.brand, { name: null, logoFile: null, color: null });
  t.is(plain.defaultLanguage, "en");
  t.is(plain.mail.from, "slotflow <no-reply@slotflow.local>");
});
