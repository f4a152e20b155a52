/**
 * A small HTTP client for the CLI commands that talk to a running server (deploy, start, show,
 * raise). The server is `--url` or BASE_URL; the admin token is SLOTFLOW_ADMIN_TOKEN.
 *
 * A server that cannot be reached is a StartupError: `cannot reach the slotflow server at URL
 * (--url or BASE_URL)` (issue 9 §3), never `TypeError: fetch failed`.
 */
import { redactUrl, StartupError } from "./failure.js";

export interface ApiAnswer {
  status: number;
  body: unknown;
}

export async function api(
  url: string,
  method: string,
  path: string,
  opts: { token?: string; json?: unknown; text?: string; headers?: Record<string, string> } = {},
): Promise<ApiAnswer> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined;
  if (opts.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(opts.json);
  } else if (opts.text !== undefined) {
    headers["content-type"] = "text/plain";
    body = opts.text;
  }
  let target: URL;
  try {
    target = new URL(path, url);
  } catch {
    throw new StartupError(`the slotflow server's URL is not an absolute URL: "${url}" (--url or BASE_URL)`);
  }
  let res: Response;
  try {
    res = await fetch(target, { method, headers, body });
  } catch {
    // fetch rejects only when no HTTP answer came back (refused, no such host, reset).
    throw new StartupError(`cannot reach the slotflow server at ${redactUrl(url)} (--url or BASE_URL)`);
  }
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body: parsed };
}
