/**
 * Small pieces the sign-in routes (and any page of a signed-in person) share: reading a browser
 * form, the same-origin check of state-changing browser requests, and the `returnTo` rule
 * (v0.4 "People inside the company": "a same-origin path only, else `/inbox`").
 */
import getRawBody from "raw-body";
import type { Context } from "koa";
import { RefusalCode, RefusalError } from "../../engine/refusals.js";

/** A sign-in form is at most this many bytes. */
export const FORM_LIMIT_BYTES = 8 * 1024;
/** A `returnTo` is at most this many characters. */
export const MAX_RETURN_TO_CHARS = 2048;
/** Where a sign-in lands when `returnTo` is missing or refused. */
export const DEFAULT_RETURN_TO = "/inbox";

/** The request's `application/x-www-form-urlencoded` body; 415 for another type, 413 above FORM_LIMIT_BYTES. */
export async function readForm(ctx: Context): Promise<URLSearchParams> {
  if (!ctx.is("application/x-www-form-urlencoded")) {
    throw new RefusalError({ code: RefusalCode.UnsupportedMediaType, detail: "Send this form as application/x-www-form-urlencoded." });
  }
  try {
    return new URLSearchParams(await getRawBody(ctx.req, { limit: FORM_LIMIT_BYTES, encoding: "utf-8" }));
  } catch {
    throw new RefusalError({ code: RefusalCode.PayloadTooLarge, detail: `This form is at most ${FORM_LIMIT_BYTES} bytes.` });
  }
}

/**
 * False when a browser says the request comes from another site: `Sec-Fetch-Site` other than
 * `same-origin`/`none`, or an `Origin` that is neither BASE_URL's origin nor this request's own.
 * An absent or `null` Origin proves nothing either way: the CSRF token is the check that always applies.
 */
export function sameOrigin(ctx: Context, baseUrl: string): boolean {
  const site = ctx.get("sec-fetch-site");
  if (site && site !== "same-origin" && site !== "none") return false;
  const origin = ctx.get("origin");
  return !origin || origin === "null" || origin === new URL(baseUrl).origin || origin === `${ctx.protocol}://${ctx.host}`;
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
