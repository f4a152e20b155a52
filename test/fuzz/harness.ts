/**
 * The fuzz suite's harness (issue 8 "Suites that keep it so: Fuzz"): sending generated requests,
 * checking every answer's invariants, snapshotting the database, and finding tokens where they
 * must never be.
 *
 * Invariants of every answer (`checkAnswer`):
 *   - no 5xx but 503;
 *   - every 4xx/5xx is `application/problem+json` whose `status` member is the status line's;
 *   - no body holds a stack trace or a file path.
 */
import { execFileSync } from "node:child_process";
import http from "node:http";
import { connect } from "node:net";
import pg from "pg";
import { ROOT } from "../helpers/server.js";

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** Send the body with `Transfer-Encoding: chunked` (no Content-Length), in 16 KiB writes. */
  chunked?: boolean;
  /** What the generator meant, for failure messages. */
  label: string;
}

export interface FuzzAnswer {
  status: number;
  contentType: string;
  text: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

/** Sends one request (keep-alive). A request Node refuses to send is reported as status 0. */
export function send(port: number, req: FuzzRequest): Promise<FuzzAnswer> {
  return new Promise((resolve) => {
    let r: http.ClientRequest;
    try {
      const headers: Record<string, string> = { ...req.headers };
      if (req.body !== undefined && !req.chunked) headers["content-length"] = String(req.body.length);
      r = http.request({ host: "127.0.0.1", port, method: req.method, path: req.path, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers["content-type"] ?? ""), text: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", () => resolve({ status: -1, contentType: "", text: "" }));
      });
    } catch {
      resolve({ status: 0, contentType: "", text: "" });
      return;
    }
    r.on("error", (err) => resolve({ status: -1, contentType: "", text: String(err) }));
    r.setTimeout(30_000, () => r.destroy(new Error("timed out")));
    if (req.body !== undefined) for (let i = 0; i < req.body.length || i === 0; i += 16_384) r.write(req.body.subarray(i, i + 16_384));
    r.end();
  });
}

/** Writes `bytes` on a fresh connection, half-closes it, and returns what came back (at most 3 s). */
export function sendRaw(port: number, bytes: Buffer): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    const done = () => resolve(Buffer.concat(chunks).toString("utf8"));
    socket.on("data", (c) => chunks.push(c));
    socket.on("close", done);
    socket.on("error", done);
    socket.setTimeout(3000, () => socket.destroy());
    socket.end(bytes);
  });
}

/** The first response in raw bytes: status, content type and body (by Content-Length). */
export function parseRawAnswer(raw: string): FuzzAnswer | null {
  const end = raw.indexOf("\r\n\r\n");
  if (end < 0) return null;
  const lines = raw.slice(0, end).split("\r\n");
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0]);
  if (!m) return { status: -2, contentType: "", text: raw.slice(0, 200) };
  const headers = new Map(lines.slice(1).map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]));
  const len = Number(headers.get("content-length") ?? "NaN");
  const rest = raw.slice(end + 4);
  return { status: Number(m[1]), contentType: headers.get("content-type") ?? "", text: Number.isFinite(len) ? rest.slice(0, len) : rest };
}

const STACK = /\n\s+at |\bat [\w.<>]+ \(|node:internal|node_modules|\.(?:ts|js|mjs):\d+/;

/** The invariants every answer keeps; returns the broken ones (empty when all hold). */
export function checkAnswer(req: Pick<FuzzRequest, "method">, res: FuzzAnswer): string[] {
  const broken: string[] = [];
  if (res.status >= 500 && res.status !== 503) broken.push(`status ${res.status}`);
  if (STACK.test(res.text) || res.text.includes(ROOT)) broken.push("a stack trace or path in the body");
  if (res.status >= 400 && req.method !== "HEAD") {
    if (!/^application\/problem\+json/.test(res.contentType)) broken.push(`content type "${res.contentType}"`);
    let status: unknown;
    try {
      status = (JSON.parse(res.text) as { status?: unknown }).status;
    } catch {
      status = "not JSON";
    }
    if (status !== res.status) broken.push(`body status ${String(status)} ≠ ${res.status}`);
  }
  return broken;
}

/** Runs `fn` over `items` with at most `width` in flight, in order of start. */
export async function pool<T, R>(items: T[], width: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i], i);
      }
    }),
  );
  return out;
}

/**
 * A fingerprint of every row of every table (migrations' own table aside), in one query: equal
 * fingerprints mean no row was added, removed or changed.
 */
export async function snapshot(databaseUrl: string): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const tables = (await client.query<{ tablename: string }>("SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> '_prisma_migrations' ORDER BY tablename")).rows;
    const query = tables
      .map(({ tablename }) => `SELECT '${tablename}' AS t, count(*) AS n, md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) AS h FROM "${tablename}" x`)
      .join(" UNION ALL ");
    const rows = (await client.query<{ t: string; n: string; h: string }>(query)).rows;
    return rows.map((r) => `${r.t}:${r.n}:${r.h}`).join(" ");
  } finally {
    await client.end();
  }
}


/** The whole database as pg_dump writes it (data only). */
export function pgDump(databaseUrl: string): string {
  return execFileSync("pg_dump", ["--data-only", databaseUrl], { encoding: "utf8", maxBuffer: 512 * 1024 * 1024 });
}
