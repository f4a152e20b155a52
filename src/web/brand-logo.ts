/**
 * `GET /brand/logo.png` or `GET /brand/logo.svg` (issue 42, SLOTFLOW_BRAND_LOGO): the organisation's
 * logo, served from slotflow's own origin so the pages' CSP keeps loading nothing from elsewhere
 * (`img-src 'self'` only when a logo is configured). The file is read once at start (config.ts
 * checked its type and size); an SVG is served with a CSP of its own (`default-src 'none'`;
 * `style-src 'unsafe-inline'` for its own style attributes) so a script inside it never runs, and
 * `X-Content-Type-Options: nosniff`. 404 for the other extension; no logo configured: no route.
 */
import { readFileSync } from "node:fs";
import { extname } from "node:path";
import type Router from "@koa/router";

/** The path a page's `<img>` loads the logo from. */
export function brandLogoPath(file: string): string {
  return extname(file).toLowerCase() === ".svg" ? "/brand/logo.svg" : "/brand/logo.png";
}

/** Adds the logo's route to `router` when a logo is configured. */
export function addBrandLogoRoute(router: Router, logoFile: string | null): void {
  if (!logoFile) return;
  const bytes = readFileSync(logoFile);
  const path = brandLogoPath(logoFile);
  const type = path.endsWith(".svg") ? "image/svg+xml" : "image/png";
  router.get(path, (ctx) => {
    ctx.set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox");
    ctx.set("X-Content-Type-Options", "nosniff");
    ctx.set("Cache-Control", "public, max-age=3600");
    ctx.set("Cross-Origin-Resource-Policy", "same-origin");
    ctx.type = type;
    ctx.body = bytes;
  });
}
