/**
 * A small HTTP client for the CLI commands that talk to a running server (deploy, start, show,
 * raise). The server is `--url` or BASE_URL; the admin token is SLOTFLOW_ADMIN_TOKEN.
 */
export interface ApiAnswer {
  status: number;
  body: unknown;
}

export async function api(url: string, method: string, path: string, opts: { token?: string; json?: unknown; text?: string } = {}): Promise<ApiAnswer> {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined;
  if (opts.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(opts.json);
  } else if (opts.text !== undefined) {
    headers["content-type"] = "text/plain";
    body = opts.text;
  }
  const res = await fetch(new URL(path, url), { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body: parsed };
}
