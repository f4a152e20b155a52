/**
 * Small pieces the sign-in routes share: reading their forms (src/auth/form.ts at FORM_LIMIT_BYTES;
 * the same-origin check and CSRF tokens are src/auth/'s), and the `returnTo` rule
 * (v0.4 "People inside the company": "a same-origin path only, else `/inbox`").
 */
import type { Context } from "koa";
import { readForm as readFormOf } from "../../auth/form.js";

/** A sign-in form is at most this many bytes. */
export const FORM_LIMIT_BYTES = 8 * 1024;
/** A `returnTo` is at most this many characters. */
export const MAX_RETURN_TO_CHARS = 2048;
/** Where a sign-in lands when `returnTo` is missing or refused. */
export const DEFAULT_RETURN_TO = "/inbox";

/** The request's `application/x-www-form-urlencoded` body (src/auth/form.ts); 415 for another type, 413 above FORM_LIMIT_BYTES. */
export function readForm(ctx: Context): Promise<URLSearchParams> {
  return readFormOf(ctx, FORM_LIMIT_BYTES, { tooLarge: `This form is at most ${FORM_LIMIT_BYTES} bytes.` });
}

/**
 * `raw` when it is a path on this site — starts with one `/` (not `//`, not `/\`), no control
 * characters, at most MAX_RETURN_TO_CHARS, and resolving against BASE_URL to BASE_URL's origin —
 * else DEFAULT_RETURN_TO. So `//evil.com`, `https://evil`, `/\evil.com` never leave the site.
 */
export function safeReturnTo(raw: unknown, baseUrl: string): string {
  if (typeof raw !== "string" || raw.length === 0 || raw.length > MAX_RETURN_TO_CHARS) return DEFAULT_RETURN_TO;
  if (!raw.startsWith("/") || raw.startsWith("//") || raw.startsWith("/\\") || /[\u0000-\u001f\u007f\\]/.test(raw)) return DEFAULT_RETURN_TO;
  try {
    const base = new URL(baseUrl);
    const url = new URL(raw, base);
    if (url.origin !== base.origin) return DEFAULT_RETURN_TO;
    return `${url.pathname}${url.search}${url.hash}`;
  } catch {
    return DEFAULT_RETURN_TO;
  }
}
