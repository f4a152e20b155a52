/**
 * The URL of a `call http` (v0.5, issue 40; docs/language.md "Calls"): the call's `Path` appended
 * to its endpoint's URL. A `Path` is a path and a query only: it starts with `/` or `?`, holds no
 * `..` segment (also percent-encoded: `%2e%2e`, `.%2e`), no backslash, no `#`, no whitespace or
 * control character, at most 2048 characters. Anything else is a failure of that call
 * (`CallPathError`), never a request. The URL built is checked once more: the same scheme, host and
 * port as the endpoint, and a path under the endpoint's path.
 */

/** Longest `Path`, characters. */
export const MAX_PATH_LENGTH = 2048;

/** A `Path` that could not be appended: the call fails with this message, no request is made. */
export class CallPathError extends Error {
  override name = "CallPathError";
}

const DOT_DOT = /(^|\/)(\.|%2e){2}(\/|\?|$)/i;

/** `base` (an endpoint URL, no query or fragment) with `path` appended; throws CallPathError. */
export function callUrl(base: string, path: string | null | undefined): URL {
  const root = new URL(base);
  if (path === null || path === undefined || path === "") return root;
  if (path.length > MAX_PATH_LENGTH) throw new CallPathError(`invalid Path: longer than ${MAX_PATH_LENGTH} characters`);
  if (!path.startsWith("/") && !path.startsWith("?")) throw new CallPathError('invalid Path: it must start with "/" or "?" (a path and query only)');
  if (path.startsWith("//")) throw new CallPathError("invalid Path: it must not start with // (that would name another host)");
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0020\u007f\\#]/.test(path)) throw new CallPathError("invalid Path: it holds whitespace, a control character, a backslash or #");
  const q = path.indexOf("?");
  const pathPart = q === -1 ? path : path.slice(0, q);
  if (DOT_DOT.test(pathPart)) throw new CallPathError('invalid Path: it holds a ".." segment');
  const basePath = root.pathname.replace(/\/+$/, "");
  const url = new URL(`${root.protocol}//${root.host}${basePath}${pathPart.startsWith("/") ? pathPart : pathPart === "" ? "" : `/${pathPart}`}${q === -1 ? "" : path.slice(q)}`);
  if (url.protocol !== root.protocol || url.host !== root.host) throw new CallPathError("invalid Path: it would change the scheme, host or port");
  if (basePath !== "" && url.pathname !== basePath && !url.pathname.startsWith(`${basePath}/`)) throw new CallPathError("invalid Path: it would leave the endpoint's path");
  return url;
}
