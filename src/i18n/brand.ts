/**
 * The organisation's branding on slotflow's pages and mails (issue 42; docs/configuration.md
 * "Branding"): SLOTFLOW_BRAND_NAME, SLOTFLOW_BRAND_LOGO, SLOTFLOW_BRAND_COLOR, read and checked at
 * start (config.ts). A problem is pushed to `problems`, so the start-up error lists it in one line.
 *
 * - name: at most 100 characters, no control characters; shown on every page and as the display
 *   name of mail From.
 * - logoFile: a readable `.png` or `.svg` file of at most 512 KiB; the web process serves it from
 *   its own origin (`/brand/logo.png` / `.svg`, src/web/brand.ts), so the pages' CSP allows images
 *   from 'self' only.
 * - color: `#rgb` or `#rrggbb`, whose contrast with the page's white background is at least 4.5:1
 *   (WCAG 2.x AA for normal text: links and the submit button's white text use it).
 */
import { statSync } from "node:fs";
import { extname } from "node:path";

export interface Brand {
  name: string | null;
  logoFile: string | null;
  color: string | null;
}

/** The largest logo served, bytes. */
export const MAX_LOGO_BYTES = 512 * 1024;
/** The contrast WCAG AA asks of normal text. */
export const AA_CONTRAST = 4.5;
/** The pages' background in the light scheme (document.ts `--bg`). */
export const PAGE_BACKGROUND = "#ffffff";

/** `#rgb`/`#rrggbb` as [r, g, b] 0–255, or null. */
export function parseHexColor(raw: string): [number, number, number] | null {
  const m = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(raw.trim());
  if (!m) return null;
  const hex = m[1]!.length === 3 ? [...m[1]!].map((c) => c + c).join("") : m[1]!;
  return [0, 2, 4].map((i) => parseInt(hex.slice(i, i + 2), 16)) as [number, number, number];
}

/** WCAG 2.x relative luminance of an sRGB color. */
function luminance([r, g, b]: [number, number, number]): number {
  const lin = (c: number) => {
    const s = c / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

/** WCAG 2.x contrast ratio of two colors (1 to 21). */
export function contrastRatio(a: [number, number, number], b: [number, number, number]): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

/** The brand settings of `env`, checked (see the module header). */
export function brandOf(env: NodeJS.ProcessEnv, problems: string[]): Brand {
  const brand: Brand = { name: null, logoFile: null, color: null };
  const name = env.SLOTFLOW_BRAND_NAME?.trim();
  if (name) {
    if (name.length > 100 || /[\u0000-\u001f\u007f<>"]/.test(name)) problems.push("SLOTFLOW_BRAND_NAME must be at most 100 characters, without control characters, <, > or \"");
    else brand.name = name;
  }
  const logo = env.SLOTFLOW_BRAND_LOGO?.trim();
  if (logo) {
    const ext = extname(logo).toLowerCase();
    let size = -1;
    try {
      const st = statSync(logo);
      size = st.isFile() ? st.size : -1;
    } catch {
      size = -1;
    }
    if (ext !== ".png" && ext !== ".svg") problems.push(`SLOTFLOW_BRAND_LOGO must be a .png or .svg file, got "${logo}"`);
    else if (size < 0) problems.push(`SLOTFLOW_BRAND_LOGO is not a readable file: "${logo}"`);
    else if (size > MAX_LOGO_BYTES) problems.push(`SLOTFLOW_BRAND_LOGO must be at most ${MAX_LOGO_BYTES} bytes, "${logo}" has ${size}`);
    else brand.logoFile = logo;
  }
  const color = env.SLOTFLOW_BRAND_COLOR?.trim();
  if (color) {
    const rgb = parseHexColor(color);
    const bg = parseHexColor(PAGE_BACKGROUND)!;
    if (!rgb) problems.push(`SLOTFLOW_BRAND_COLOR must be a color as #rgb or #rrggbb, got "${color}"`);
    else {
      const ratio = contrastRatio(rgb, bg);
      if (ratio < AA_CONTRAST) problems.push(`SLOTFLOW_BRAND_COLOR ${color} has a contrast of ${ratio.toFixed(2)}:1 on the page's white background; WCAG AA needs ${AA_CONTRAST}:1 (choose a darker color)`);
      else brand.color = color.toLowerCase();
    }
  }
  return brand;
}
