/**
 * The extra request headers of an `http` endpoint (v0.5, issue 40; interfaces.md "Calls"):
 * `PUT /api/endpoints/{name}` `{"kind": "http", "url", "headers": {"Authorization": "Bearer …"}}`.
 * Header values are credentials: sealed at rest (endpoints.ts), never shown again; only the names
 * are listed.
 *
 * Refused (422 invalid-body, naming the header): not an object of strings; more than MAX_HEADERS;
 * a name that is not an HTTP token (RFC 9110 `tchar`s) or longer than 128; a value longer than
 * MAX_HEADER_VALUE or holding CR, LF or NUL (header injection); a name the call sets itself
 * (`Content-Type`, `Accept`, `Idempotency-Key`, the Standard Webhooks `webhook-*` headers) or that
 * belongs to the connection (`Host`, `Content-Length`, `Transfer-Encoding`, `Connection`,
 * `Keep-Alive`, `Upgrade`, `TE`, `Trailer`, `Expect`); two names equal but for case.
 */
import { RefusalCode, RefusalError, refuse } from "../engine/refusals.js";

/** At most this many headers per endpoint. */
export const MAX_HEADERS = 32;
/** Longest header value, characters. */
export const MAX_HEADER_VALUE = 8192;

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;
const RESERVED = new Set([
  "content-type",
  "accept",
  "idempotency-key",
  "webhook-id",
  "webhook-timestamp",
  "webhook-signature",
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
  "expect",
]);

const invalid = (detail: string) => new RefusalError(refuse(RefusalCode.InvalidBody, detail));

/** `headers` of a PUT body checked; `{}` when absent. Throws RefusalError invalid-body naming what is wrong. */
export function validateHttpHeaders(headers: unknown): Record<string, string> {
  if (headers === undefined) return {};
  if (typeof headers !== "object" || headers === null || Array.isArray(headers)) throw invalid('"headers" must be an object of header names to string values.');
  const entries = Object.entries(headers as Record<string, unknown>);
  if (entries.length > MAX_HEADERS) throw invalid(`"headers" may hold at most ${MAX_HEADERS} headers.`);
  const seen = new Set<string>();
  const out: Record<string, string> = {};
  for (const [name, value] of entries) {
    const shown = JSON.stringify(name.slice(0, 40));
    if (!TOKEN.test(name)) throw invalid(`Header name ${shown} is not an HTTP header name (letters, digits and !#$%&'*+.^_\`|~-, at most 128).`);
    const lower = name.toLowerCase();
    if (RESERVED.has(lower)) throw invalid(`Header ${shown} is set by slotflow on every call (or belongs to the connection); it cannot be configured.`);
    if (seen.has(lower)) throw invalid(`Header ${shown} is given twice (header names ignore case).`);
    seen.add(lower);
    // the value is a credential: never echoed in the refusal
    if (typeof value !== "string") throw invalid(`Header ${shown} must have a string value.`);
    if (value.length > MAX_HEADER_VALUE) throw invalid(`Header ${shown}'s value is longer than ${MAX_HEADER_VALUE} characters.`);
    if (/[\r\n\0]/.test(value)) throw invalid(`Header ${shown}'s value holds a line break or NUL.`);
    out[name] = value;
  }
  return out;
}
