/**
 * The security headers of a server-rendered page with no script (the inbox, the task pages, the
 * sign-in pages): a Content-Security-Policy that allows only the page's one inline style (by its
 * per-response `nonce`) and form posts to this origin, no framing, no sniffing, no caching, no
 * indexing, and no Referer beyond this origin. The responder page, which runs a script, has its
 * own (page/index.ts `setPageHeaders`). `logo`: a brand logo is configured (SLOTFLOW_BRAND_LOGO,
 * served from this origin), so `img-src 'self'`; else `img-src 'none'` (issue 42).
 */
import type { Context } from "koa";

export function setScriptlessPageHeaders(ctx: Context, nonce: string, logo = false): void {
  ctx.set(
    "Content-Security-Policy",
    ["default-src 'none'", `style-src 'nonce-${nonce}'`, logo ? "img-src 'self'" : "img-src 'none'", "form-action 'self'", "base-uri 'none'", "frame-ancestors 'none'"].join("; "),
  );
  ctx.set("Referrer-Policy", "same-origin");
  ctx.set("Cache-Control", "no-store");
  ctx.set("X-Content-Type-Options", "nosniff");
  ctx.set("X-Frame-Options", "DENY");
  ctx.set("X-Robots-Tag", "noindex, nofollow");
}
