/**
 * Small steps shared by the callback-link end-to-end tests (test/e2e/callback-*.test.ts): deploy a
 * fixture workflow, start a run, read it back, sign a principal, POST to a link, and send a request
 * with a byte-exact path (or from another loopback address), which `fetch` cannot do.
 */
import type { ExecutionContext } from "ava";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import http from "node:http";
import { join } from "node:path";
import { signPrincipal } from "../../src/auth/jwt.js";
import { ADMIN_TOKEN, JWT_SECRET, ROOT, request } from "./server.js";

export type Answer = Awaited<ReturnType<typeof request>>;

/**
 * Asserts the single-use outcome of simultaneous posts of one link: exactly one 200
 * `{"status":"completed"}`, every other answer 410 `link-burned`. Returns the winner's index.
 */
export function assertOneWinner(t: ExecutionContext, answers: Answer[]): number {
  const winners = answers.flatMap((a, i) => (a.status === 200 ? [i] : []));
  t.is(winners.length, 1, `statuses: ${answers.map((a) => a.status).join(",")}`);
  t.like(answers[winners[0]]?.body, { status: "completed" }); // v0.4: with its receipt
  t.regex(String((answers[winners[0]]?.body as { receipt?: unknown } | undefined)?.receipt), /^[\w-]+\.[\w-]+\.[\w-]+$/);
  const others = answers.filter((_, i) => i !== winners[0]);
  t.deepEqual(
    others.map((a) => [a.status, a.body?.code]),
    others.map(() => [410, "link-burned"]),
  );
  return winners[0];
}

/** Deploys `test/fixtures/<file>` through `POST /api/workflows`; throws with the diagnostics if refused. */
export async function deployFixture(baseUrl: string, file: string): Promise<{ name: string; version: number }> {
  const source = readFileSync(join(ROOT, "test", "fixtures", file), "utf8");
  const res = await request(baseUrl, "POST", "/api/workflows", { token: ADMIN_TOKEN, text: source, headers: { "x-slotflow-filename": file } });
  if (res.status !== 201 && res.status !== 200) throw new Error(`deploy of ${file} answered ${res.status}: ${res.text}`);
  return res.body as { name: string; version: number };
}

/** A title unique to this process and call, to make email subjects unique per run. */
export function uniqueTitle(prefix: string): string {
  return `${prefix}-${randomBytes(5).toString("hex")}`;
}

/** Starts a run; throws unless it answers 201. Returns the run id. */
export async function startRun(baseUrl: string, workflow: string, input: unknown): Promise<string> {
  const res = await request(baseUrl, "POST", `/api/workflows/${workflow}/runs`, { token: ADMIN_TOKEN, json: input });
  if (res.status !== 201) throw new Error(`start of ${workflow} answered ${res.status}: ${res.text}`);
  return res.body.id as string;
}

export interface RunView {
  id: string;
  workflow: string;
  version: number;
  state: string;
  status: string;
  entities: Record<string, Record<string, any>>;
  slots: { alias: string; element: number | null; status: string; openedAt: string | null; deadline: string | null }[];
  incidents: { code: string; message: string }[];
  history: { kind: string; data: Record<string, any> }[];
}

/** `GET /api/runs/{id}` with the admin token. */
export async function showRun(baseUrl: string, runId: string): Promise<RunView> {
  const res = await request(baseUrl, "GET", `/api/runs/${runId}`, { token: ADMIN_TOKEN });
  if (res.status !== 200) throw new Error(`GET /api/runs/${runId} answered ${res.status}: ${res.text}`);
  return res.body as RunView;
}

/** History entries recording an event accepted on slot `alias`. */
export function eventsOn(run: RunView, alias: string): RunView["history"] {
  return run.history.filter((h) => h.kind === "event" && h.data?.alias === alias);
}

/** The status of slot `alias` (not fanned out) in the run's current visit. */
export function slotStatus(run: RunView, alias: string): string | undefined {
  return run.slots.filter((s) => s.alias === alias).pop()?.status;
}

/** A principal's bearer JWT, signed with the test clusters' SLOTFLOW_JWT_SECRET. */
export function principalJwt(sub: string, roles: string[]): Promise<string> {
  return signPrincipal(JWT_SECRET, { sub, roles, email: `${sub}@example.test` });
}

/** POSTs `json` to a callback link (or sends `opts` instead). `origin` replaces the link's origin (another web process). */
export function postLink(
  url: string,
  json?: unknown,
  opts: { origin?: string; method?: string; body?: string; text?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const u = new URL(url);
  return request(opts.origin ?? u.origin, opts.method ?? "POST", u.pathname, { json, body: opts.body, text: opts.text, headers: opts.headers });
}

export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  body: any;
}

/**
 * One HTTP/1.1 request with `path` sent exactly as given (no normalisation of `..` or
 * percent-encoding), optionally from another loopback source address (`localAddress`).
 */
export function rawRequest(opts: {
  port: number;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  localAddress?: string;
}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.body !== undefined) headers["content-length"] = String(Buffer.byteLength(opts.body));
    const req = http.request(
      { host: "127.0.0.1", port: opts.port, method: opts.method, path: opts.path, headers, localAddress: opts.localAddress, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let body: unknown;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.setTimeout(20_000, () => req.destroy(new Error(`${opts.method} ${opts.path.slice(0, 80)} timed out`)));
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

/** The port of a base URL such as http://127.0.0.1:4321. */
export function portOf(baseUrl: string): number {
  return Number(new URL(baseUrl).port);
}
