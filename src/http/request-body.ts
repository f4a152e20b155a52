/**
 * Reading a request body: one rule for every endpoint that takes one (issue 8 item 1 and item 4;
 * HTTP API "Request bodies").
 *
 *   - A request *carries a body* when it has `Transfer-Encoding` or a `Content-Length` above 0.
 *     Such a request is judged on that body, always: whitespace is a body (not JSON), `null` is a
 *     body (not an object). Only zero bytes — no `Content-Length`, `Content-Length: 0`, or an empty
 *     chunked or compressed body — is "no body" (`undefined`).
 *   - Media type, checked first: `json` endpoints take `application/json` and every
 *     `application/<anything>+json` (`application/problem+json`, `application/merge-patch+json`…),
 *     all parsed as JSON; `text` endpoints take `text/*` and `application/octet-stream`. Any other
 *     type, or none, is 415 `unsupported-media-type`. A charset other than UTF-8 is 415 too.
 *   - `Content-Encoding`: `identity`, `gzip`, `deflate` and `br` are decoded; any other coding is
 *     415, and so are bytes that do not decode as the header says (a false `gzip`). The size limit
 *     counts decoded bytes, so a small compressed body cannot expand past it: 413
 *     `payload-too-large`.
 *   - JSON: parsed with `JSON.parse` (any JSON value, `null` included); not JSON → 400
 *     `malformed-json`. Keys such as `__proto__` become ordinary own properties, at any depth; the
 *     body check then refuses them as undeclared (422).
 *   - Nesting (issue 16 item 1): before `JSON.parse`, the raw text's nesting is measured with an
 *     iterative, string-aware scan (json/depth.ts); deeper than `maxDepth` (SLOTFLOW_MAX_INPUT_DEPTH,
 *     32 by default) is 422 `invalid-body` naming the limit, with `limit` and `errors`. This is the
 *     one bound for every JSON the server parses: callback and page POSTs, raise bodies, run input,
 *     revoke and every admin body, identity, chunked or compressed alike.
 *
 * Every refusal is thrown as a `RefusalError` before anything is looked up or changed.
 *
 * In src/http/ (issue 39 item 1): shared by the web doors and MCP over HTTP, which imports no web/ module.
 */
import { createBrotliDecompress, createUnzip } from "node:zlib";
import { pipeline, type Readable } from "node:stream";
import type { Context } from "koa";
import getRawBody from "raw-body";
import { jsonTextDepth } from "../json/depth.js";
import { RefusalCode, RefusalError, refuse } from "../engine/refusals.js";

export type BodyKind = "json" | "text";

/** True when the request carries a body (`Transfer-Encoding`, or `Content-Length` above 0). */
export function carriesBody(ctx: Context): boolean {
  const len = ctx.get("content-length");
  return ctx.get("transfer-encoding") !== "" || (len !== "" && len !== "0" && !/^0+$/.test(len.trim()));
}

function unsupported(detail: string): RefusalError {
  return new RefusalError(refuse(RefusalCode.UnsupportedMediaType, detail));
}

/** True when `ctx`'s media type is one `kind` accepts. */
export function acceptsMediaType(ctx: Context, kind: BodyKind): boolean {
  const type = ctx.request.type.toLowerCase();
  if (kind === "json") return type === "application/json" || /^application\/[a-z0-9!#$&^_.-]+\+json$/.test(type);
  return type.startsWith("text/") || type === "application/octet-stream";
}

/** The request's bytes decoded per `Content-Encoding`; a failing request stream fails the decoder too. */
function decoded(ctx: Context): Readable {
  const coding = (ctx.get("content-encoding") || "identity").trim().toLowerCase();
  switch (coding) {
    case "identity":
      return ctx.req;
    case "gzip":
    case "deflate":
      return pipeline(ctx.req, createUnzip(), () => undefined);
    case "br":
      return pipeline(ctx.req, createBrotliDecompress(), () => undefined);
    default:
      throw unsupported("This Content-Encoding is not supported; send the body as identity, gzip, deflate or br.");
  }
}

/**
 * Reads the body of `ctx` as `kind`, at most `limitBytes` decoded bytes. Returns `undefined` when
 * the request carries no body; the parsed JSON value (json) or the text (text) otherwise.
 * JSON nested deeper than `maxDepth` levels is refused (422) before it is parsed.
 * Throws `RefusalError` 415 / 413 / 400 / 422 as the module header says.
 */
export async function readBody(ctx: Context, kind: BodyKind, limitBytes: number, maxDepth: number): Promise<unknown> {
  if (!carriesBody(ctx)) return undefined;
  const expected = kind === "json" ? "application/json (or a +json type)" : "text/plain";
  if (!acceptsMediaType(ctx, kind)) throw unsupported(`Send the body as ${expected}.`);
  const charset = (ctx.request.charset || "utf-8").toLowerCase();
  if (charset !== "utf-8" && charset !== "utf8") throw unsupported(`Send the body as ${expected} in UTF-8.`);
  const stream = decoded(ctx);
  const identity = stream === ctx.req;
  let text: string;
  try {
    text = await getRawBody(stream, {
      limit: limitBytes,
      // the declared length is of the encoded bytes: only checked when nothing is decoded
      length: identity ? ctx.get("content-length") || undefined : undefined,
      encoding: "utf-8",
    });
  } catch (err) {
    // The rest of the body stays unread (a chunked body past the limit, a stream that failed to
    // decode): close the connection after the answer, so that a keep-alive client does not send
    // its next request on a socket the server is about to reset (issue 16: found by the fuzz suite).
    ctx.set("Connection", "close");
    const e = err as { type?: string };
    if (e.type === "entity.too.large") {
      throw new RefusalError(refuse(RefusalCode.PayloadTooLarge, `The body is larger than this endpoint accepts (${limitBytes} bytes).`));
    }
    // zlib's own errors (a false `gzip`, a truncated stream) carry no HTTP status
    if (!identity) throw unsupported("The body could not be decoded as its Content-Encoding says.");
    // a Content-Length that does not match the bytes sent, or a client that went away mid-body
    throw new RefusalError(refuse(RefusalCode.MalformedJson, "The body could not be read as sent (its length does not match Content-Length, or it was cut off)."));
  }
  // zero bytes (a chunked or compressed empty body) is no body, however it was framed
  if (text.length === 0) return undefined;
  if (kind === "text") return text;
  if (jsonTextDepth(text, maxDepth) > maxDepth) throw new RefusalError(tooDeep(maxDepth));
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new RefusalError(refuse(RefusalCode.MalformedJson, "The body is not valid JSON."));
  }
}

/** The 422 for JSON nested deeper than `limit` (SLOTFLOW_MAX_INPUT_DEPTH). */
export function tooDeep(limit: number) {
  const problem = `nests deeper than ${limit} levels (SLOTFLOW_MAX_INPUT_DEPTH)`;
  return refuse(RefusalCode.InvalidBody, `The JSON body ${problem}; send it with at most ${limit} levels of nested objects and arrays.`, {
    limit,
    errors: [{ name: "", problem }],
  });
}
