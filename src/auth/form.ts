/**
 * The one reader of a browser form (`application/x-www-form-urlencoded`) of every door (issue 39
 * item 1: four copies became this one): the sign-in forms, the console, the task page and the
 * responder page's forward form. Slack's interactions read their raw body themselves (its
 * signature covers the exact bytes).
 *
 * `readFormBody(ctx, limitBytes)`: the fields, or `"wrong-type"` for another content type, or
 * `"too-large"` above `limitBytes` (bytes, UTF-8) — for a door that answers with a page of its own.
 * `readForm(ctx, limitBytes, words)`: the same, throwing 415 `unsupported-media-type` / 413
 * `payload-too-large` problem documents worded by the door.
 */
import getRawBody from "raw-body";
import type { Context } from "koa";
import { RefusalCode, RefusalError } from "../engine/refusals.js";

/** The fields of a posted form, or why it was not read. */
export async function readFormBody(ctx: Context, limitBytes: number, opts: { anyType?: boolean } = {}): Promise<URLSearchParams | "wrong-type" | "too-large"> {
  if (!opts.anyType && !ctx.is("application/x-www-form-urlencoded")) return "wrong-type";
  try {
    return new URLSearchParams(await getRawBody(ctx.req, { limit: limitBytes, encoding: "utf-8" }));
  } catch {
    return "too-large";
  }
}

/** The fields of a posted form; throws 415 (`words.wrongType`) or 413 (`words.tooLarge`). `anyType`: the caller checked the type. */
export async function readForm(ctx: Context, limitBytes: number, words: { wrongType?: string; tooLarge: string; anyType?: boolean }): Promise<URLSearchParams> {
  const form = await readFormBody(ctx, limitBytes, { anyType: words.anyType });
  if (form === "wrong-type") throw new RefusalError({ code: RefusalCode.UnsupportedMediaType, detail: words.wrongType ?? "Send this form as application/x-www-form-urlencoded." });
  if (form === "too-large") throw new RefusalError({ code: RefusalCode.PayloadTooLarge, detail: words.tooLarge });
  return form;
}
