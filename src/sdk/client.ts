/**
 * `slotflow/client` (issue 41 item 2; interfaces.md "The TypeScript SDK"; docs/sdk.md): a typed
 * client of the slotflow HTTP API for the user's own TypeScript code.
 *
 *     import { createClient } from "slotflow/client";
 *     import type { Workflows } from "./workflows.js"; // written by `slotflow types`
 *     const slotflow = createClient<Workflows>({ url: "https://flows.example.com", token });
 *     const run = await slotflow.start("Order", { customer: { name: "Ada", email: "a@example.com" }, amount: 12, note: null });
 *     const ended = await slotflow.runs.result(run.id, { waitSeconds: 120 });
 *     if (ended.status === "finished") ended.result.score; // typed by the workflow's `returns`
 *
 * A wrong workflow name, a missing or unknown input field or a value of the wrong type is a
 * compile error (test/sdk/client-types.test.ts runs `tsc` on such files). Without a type argument
 * every workflow name and object is accepted.
 *
 * Uses `fetch` only: no Redis, no PostgreSQL, nothing of the engine (.dependency-cruiser.cjs
 * "sdk-client-fetch-only"); runs on Node 20+ and any runtime with `fetch`.
 *
 * Refusals (status 400 and above) throw `SlotflowProblem`; no answer at all throws
 * `SlotflowUnreachable`. **Retries**: a 503 `unavailable` (or no answer) is retried — honouring
 * `Retry-After`, up to `retries` more times — only where a retry cannot apply anything twice: the
 * reads (`runs.get`, `runs.result`, `runs.list`, `inbox`) and `deposit`, which always sends an
 * `Idempotency-Key` (the caller's, or one it makes) and sends the same key and body again, as the
 * callback endpoint asks (docs/http-api.md "Idempotent retries"). `start`, `raise` and
 * `runs.cancel` take no key in the API, so their 503 is thrown: the command may have been queued.
 */
import { SlotflowProblem, SlotflowUnreachable, type ProblemCode } from "./problem.js";

export { SlotflowProblem, SlotflowUnreachable, type ProblemCode };

// --- the shape of generated declarations (src/sdk/types.ts) ---------------------------------

/** What `slotflow types` declares of one workflow. */
export interface WorkflowShape {
  input: object;
  result: object;
  events: object;
  slots: object;
}

/** Any workflows (the client without a type argument): every name, any object. */
export interface AnyWorkflow {
  input: Record<string, unknown>;
  result: { state: string } & Record<string, unknown>;
  events: Record<string, Record<string, unknown>>;
  slots: Record<string, { event: string; args: Record<string, unknown> }>;
}
export type AnyWorkflows = Record<string, AnyWorkflow>;

/** A constraint every `interface Workflows` of `slotflow types` meets (interfaces have no index signature). */
export type WorkflowsShape<W> = { [K in keyof W]: WorkflowShape };

declare const workflowOfRun: unique symbol;
/** A run id as `start` returns it: a string that remembers its workflow, so results and slots are typed. */
export type RunId<N extends string = string> = string & { readonly [workflowOfRun]: N };
/** A run id the client knows nothing about (a plain string, not a `RunId` of a typed start). */
export type UntypedRunId = string & { readonly [workflowOfRun]?: never };

type SlotsOf<W, N extends keyof W> = W[N] extends { slots: infer S } ? S : never;
/** The aliases a principal may raise: every slot but a call's (a call's slot is answered by its callee only). */
type RaisableAlias<S> = { [K in keyof S]: S[K] extends { kind: "call" } ? never : K }[keyof S] & string;
type ArgsOf<S, A extends keyof S> = S[A] extends { args: infer X } ? X : Record<string, unknown>;
type ResultOf<W, N extends keyof W> = W[N] extends { result: infer R } ? R : never;
type InputOf<W, N extends keyof W> = W[N] extends { input: infer I } ? I : never;

// --- answers ------------------------------------------------------------------------------

/** `POST /api/workflows/{name}/runs`: started (201), or queued (202: it will be applied). */
export type StartedRun<N extends string = string> =
  | { id: RunId<N>; version: number; state: string; status: "running" | "finished" | "cancelled" }
  | { id: RunId<N>; status: "accepted" };

/** `GET /api/runs/{id}/result`: the ended run and its typed result, or still running. */
export type RunResult<R> =
  | { id: string; status: "finished"; state: string; result: R }
  | { id: string; status: "cancelled"; state: string; result: null }
  | { id: string; status: "running" };

/** `GET /api/runs/{id}` (docs/http-api.md): the run, never a token. */
export interface RunView {
  id: string;
  workflow: string;
  version: number;
  state: string;
  status: "running" | "finished" | "cancelled";
  entities: Record<string, unknown>;
  slots: Array<Record<string, unknown> & { alias: string; status: string; element: number | null }>;
  result?: Record<string, unknown> | null;
  [member: string]: unknown;
}

/** A row of `GET /api/runs`. */
export interface RunListItem {
  id: string;
  workflow: string;
  version: number;
  state: string;
  status: "running" | "finished" | "cancelled";
  createdAt: string;
  updatedAt: string;
  endedAt: string | null;
  waiting: Array<{ alias: string; element: number | null; status: "open" | "waiting"; openedAt: string | null; deadline: string | null; link: "live" | "burned" | "retired" | "dead" | "none" }>;
}

export interface RunsPage {
  runs: RunListItem[];
  /** The next page's cursor (`runs.list({cursor})`); null on the last page. */
  nextCursor: string | null;
}

/** Filters of `runs.list` (`GET /api/runs`); instants as Date or RFC 3339 strings. */
export interface RunFilters<Name extends string = string> {
  workflow?: Name;
  version?: number;
  status?: "running" | "finished" | "cancelled";
  state?: string;
  /** A slot alias: runs with an open or waiting slot of that alias. */
  waiting?: string;
  createdAfter?: Date | string;
  createdBefore?: Date | string;
  /** 1–200, default 50. */
  limit?: number;
  cursor?: string;
}

/** A task of `GET /api/inbox`. */
export interface InboxTask {
  runId: string;
  workflow: string;
  version: number;
  state: string;
  alias: string;
  element: number | null;
  event: string;
  params: Array<{ name: string; type: string; optional?: boolean }>;
  title: string;
  status: "open" | "waiting";
  openedAt: string | null;
  deadline: string | null;
  waitingOn: string[];
  taskUrl: string;
}

export interface InboxPage {
  tasks: InboxTask[];
  nextCursor: string | null;
  counts: { open: number | null; waiting: number | null; total: number; capped: boolean };
}

/** A task the principal answered, of `GET /api/inbox?view=done` (issue 43 item 4: the last 30 days). */
export interface InboxDoneTask {
  runId: string;
  workflow: string;
  version: number;
  state: string;
  alias: string;
  element: number | null;
  event: string;
  title: string;
  status: "completed";
  /** ISO 8601. */
  answeredAt: string;
  /** The answer's arguments, as recorded. */
  answer: Record<string, unknown>;
  taskUrl: string;
}

/** `GET /api/inbox?view=done`: the answers the principal gave lately, newest first. */
export interface InboxDonePage {
  tasks: InboxDoneTask[];
  nextCursor: string | null;
}

/** The options of `inbox`: `view` "open" (default: tasks waiting) or "done" (answers given). */
export interface InboxOptions<Workflow extends string = string> {
  /** The principal's bearer token (a JWT). */
  principalToken: string;
  view?: "open" | "done";
  workflow?: Workflow;
  order?: "newest" | "deadline";
  /** 1–200, default 50. */
  limit?: number;
  cursor?: string;
}

/** The ordinary raise path's answer: applied (with the run as it then stands), or queued. */
export type Raised = { status: "completed"; run: { id: string; state: string; status: string; [member: string]: unknown } } | { status: "accepted" };

/** A deposit's answer: completed (with its signed receipt when the server signs them), or queued. */
export type Deposited = { status: "completed"; receipt?: string } | { status: "accepted" };

export interface RaiseOptions {
  /** The principal's bearer token (a JWT); default: the client's token. */
  principalToken?: string;
  /** The element of a fanned-out slot. */
  element?: number;
}

export interface ClientOptions {
  /** The server's base URL (`BASE_URL`), e.g. `https://flows.example.com`. */
  url: string;
  /** The bearer token: SLOTFLOW_ADMIN_TOKEN for starts and runs, or a principal's JWT. Never logged or put in an error. */
  token: string;
  /** More attempts after a 503 (or no answer) where a retry is safe (above); default 2. */
  retries?: number;
  /** The longest wait for a `Retry-After` between attempts, in seconds; default 30. */
  maxRetryAfterSeconds?: number;
  /** Another `fetch` (a test's, a proxy's); default the global one. */
  fetch?: typeof fetch;
}

/** The typed client; `W` is the `Workflows` interface `slotflow types` writes. */
export interface SlotflowClient<W extends WorkflowsShape<W> = AnyWorkflows> {
  /** Starts a run of `workflow` with `input` (its parameters by name). */
  start<N extends keyof W & string>(workflow: N, input: InputOf<W, N>): Promise<StartedRun<N>>;
  runs: {
    /** The run (`GET /api/runs/{id}`). */
    get(id: string): Promise<RunView>;
    /**
     * The run's result once it has ended, waiting up to `waitSeconds` (default 0) for it — in
     * long polls of at most 60 s each, holding no worker on the server; `{status: "running"}`
     * when it has not ended by then. Typed by the workflow of a `RunId` that `start` returned.
     */
    result<N extends keyof W & string>(id: RunId<N>, opts?: { waitSeconds?: number }): Promise<RunResult<ResultOf<W, N>>>;
    result(id: UntypedRunId, opts?: { waitSeconds?: number }): Promise<RunResult<ResultOf<W, keyof W>>>;
    /** A page of runs, newest first (`GET /api/runs`). */
    list(filters?: RunFilters<keyof W & string>): Promise<RunsPage>;
    /** Ends a running run (`POST /api/runs/{id}/cancel`); `reason`: 1–500 characters, recorded. */
    cancel(id: string, reason: string): Promise<{ id: string; status: "cancelled" | "accepted" }>;
  };
  /** Raises a slot's event as a signed-in principal (the ordinary path); typed by a `RunId` of `start`. */
  raise<N extends keyof W & string, A extends RaisableAlias<SlotsOf<W, N>>>(runId: RunId<N>, alias: A, args: ArgsOf<SlotsOf<W, N>, A>, opts?: RaiseOptions): Promise<Raised>;
  raise(runId: UntypedRunId, alias: string, args?: Record<string, unknown>, opts?: RaiseOptions): Promise<Raised>;
  /** The principal's inbox (`GET /api/inbox`): open and waiting slots it may answer. */
  inbox(opts: InboxOptions<keyof W & string> & { view?: "open" }): Promise<InboxPage>;
  /** The principal's answers of the last 30 days (`GET /api/inbox?view=done`, issue 43 item 4). */
  inbox(opts: InboxOptions<keyof W & string> & { view: "done" }): Promise<InboxDonePage>;
  /**
   * Answers a callback link (`POST` to its URL, no sign-in: the token in the URL is the
   * credential) with the event's arguments. `idempotencyKey` (default: a fresh UUID) makes the
   * retries of a 503 safe; pass your own to retry across processes.
   */
  deposit(url: string, args?: Record<string, unknown>, opts?: { idempotencyKey?: string }): Promise<Deposited>;
}

// --- the implementation -------------------------------------------------------------------

interface Call {
  method: "GET" | "POST";
  /** Absolute URL. */
  url: URL;
  /** For messages: method and path, never a callback token. */
  label: string;
  token?: string;
  json?: unknown;
  headers?: Record<string, string>;
  /** A retry cannot apply anything twice. */
  retrySafe: boolean;
}

const DEFAULT_RETRIES = 2;
const DEFAULT_MAX_RETRY_AFTER_S = 30;
/** The longest single wait `GET /api/runs/{id}/result` takes (src/web/run-result.ts MAX_WAIT_SECONDS). */
const MAX_WAIT_SECONDS = 60;
const CALLBACK_PATH = /\/api\/workflow\/callback\/[^/?#]+/;

/** Seconds of a `Retry-After` (delta-seconds or an HTTP date), within [0, max]; 1 when absent or unreadable. */
function retryAfterSeconds(value: string | null, max: number): number {
  if (value === null) return 1;
  const n = /^\d+$/.test(value.trim()) ? Number(value) : (Date.parse(value) - Date.now()) / 1000;
  return Number.isFinite(n) ? Math.min(max, Math.max(0, n)) : 1;
}

/**
 * Creates a client of the server at `url` (issue 41 item 2). Throws TypeError for a `url` that is
 * not an absolute http(s) URL, an empty `token`, or a `retries` that is not a whole number ≥ 0.
 */
export function createClient<W extends WorkflowsShape<W> = AnyWorkflows>(options: ClientOptions): SlotflowClient<W> {
  let base: URL;
  try {
    base = new URL(options.url);
  } catch {
    throw new TypeError("createClient: url must be an absolute URL, such as https://flows.example.com");
  }
  if (base.protocol !== "http:" && base.protocol !== "https:") throw new TypeError("createClient: url must be an http: or https: URL");
  if (typeof options.token !== "string" || options.token === "") throw new TypeError("createClient: token must be a non-empty string (SLOTFLOW_ADMIN_TOKEN or a principal's JWT)");
  const retries = options.retries ?? DEFAULT_RETRIES;
  if (!Number.isInteger(retries) || retries < 0) throw new TypeError("createClient: retries must be a whole number ≥ 0");
  const maxRetryAfter = options.maxRetryAfterSeconds ?? DEFAULT_MAX_RETRY_AFTER_S;
  const doFetch = options.fetch ?? globalThis.fetch;
  const at = (path: string, query?: URLSearchParams) => {
    const u = new URL(path.replace(/^\//, ""), base.href.endsWith("/") ? base.href : `${base.href}/`);
    if (query && query.size > 0) u.search = query.toString();
    return u;
  };

  async function send<T>(call: Call): Promise<{ status: number; body: T }> {
    const headers: Record<string, string> = { accept: "application/json", ...call.headers };
    if (call.token !== undefined) headers.authorization = `Bearer ${call.token}`;
    let body: string | undefined;
    if (call.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(call.json);
    }
    for (let attempt = 0; ; attempt++) {
      const last = !call.retrySafe || attempt >= retries;
      let res: Response;
      try {
        res = await doFetch(call.url, { method: call.method, headers, body });
      } catch (err) {
        if (!last) {
          await sleep(1);
          continue;
        }
        throw new SlotflowUnreachable(`${call.label}: cannot reach the slotflow server at ${call.url.origin}`, { cause: err });
      }
      if (res.status === 503 && !last) {
        await res.body?.cancel().catch(() => undefined);
        await sleep(retryAfterSeconds(res.headers.get("retry-after"), maxRetryAfter));
        continue;
      }
      const text = await res.text();
      let parsed: unknown = undefined;
      try {
        parsed = text === "" ? undefined : JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      if (res.status >= 400) throw new SlotflowProblem(res.status, parsed, call.label);
      if (parsed === undefined && res.status !== 204) throw new SlotflowProblem(res.status, { title: "The answer was not JSON" }, call.label);
      return { status: res.status, body: parsed as T };
    }
  }

  const admin = options.token;
  const runPath = (id: string) => `/api/runs/${encodeURIComponent(id)}`;

  const client = {
    async start(workflow: string, input: unknown) {
      const path = `/api/workflows/${encodeURIComponent(workflow)}/runs`;
      return (await send({ method: "POST", url: at(path), label: `POST ${path}`, token: admin, json: input, retrySafe: false })).body;
    },
    runs: {
      async get(id: string) {
        return (await send<RunView>({ method: "GET", url: at(runPath(id)), label: `GET ${runPath(id)}`, token: admin, retrySafe: true })).body;
      },
      async result(id: string, opts: { waitSeconds?: number } = {}) {
        const total = opts.waitSeconds ?? 0;
        if (typeof total !== "number" || !Number.isFinite(total) || total < 0) throw new TypeError("runs.result: waitSeconds must be a number ≥ 0");
        const until = Date.now() + total * 1000;
        const path = `${runPath(id)}/result`;
        for (;;) {
          const wait = Math.min(MAX_WAIT_SECONDS, Math.max(0, Math.ceil((until - Date.now()) / 1000)));
          const answer = await send<RunResult<unknown>>({
            method: "GET", url: at(path, new URLSearchParams({ waitSeconds: String(wait) })), label: `GET ${path}`, token: admin, retrySafe: true,
          });
          if (answer.body.status !== "running" || Date.now() >= until) return answer.body;
        }
      },
      async list(filters: RunFilters = {}) {
        const query = new URLSearchParams();
        for (const [name, value] of Object.entries(filters)) {
          if (value === undefined || value === null) continue;
          query.set(name, value instanceof Date ? value.toISOString() : String(value));
        }
        return (await send<RunsPage>({ method: "GET", url: at("/api/runs", query), label: "GET /api/runs", token: admin, retrySafe: true })).body;
      },
      async cancel(id: string, reason: string) {
        const path = `${runPath(id)}/cancel`;
        return (await send<{ id: string; status: "cancelled" | "accepted" }>({ method: "POST", url: at(path), label: `POST ${path}`, token: admin, json: { reason }, retrySafe: false })).body;
      },
    },
    async raise(runId: string, alias: string, args?: Record<string, unknown>, opts: RaiseOptions = {}) {
      const path = `${runPath(runId)}/slots/${encodeURIComponent(alias)}/events`;
      const query = opts.element === undefined ? undefined : new URLSearchParams({ element: String(opts.element) });
      return (await send<Raised>({ method: "POST", url: at(path, query), label: `POST ${path}`, token: opts.principalToken ?? admin, json: args, retrySafe: false })).body;
    },
    async inbox(opts: InboxOptions) {
      const query = new URLSearchParams();
      for (const name of ["view", "workflow", "order", "limit", "cursor"] as const) if (opts[name] !== undefined) query.set(name, String(opts[name]));
      return (await send<InboxPage & InboxDonePage>({ method: "GET", url: at("/api/inbox", query), label: "GET /api/inbox", token: opts.principalToken, retrySafe: true })).body;
    },
    async deposit(url: string, args?: Record<string, unknown>, opts: { idempotencyKey?: string } = {}) {
      let target: URL;
      try {
        target = new URL(url);
      } catch {
        throw new TypeError("deposit: url must be a callback link's absolute URL");
      }
      const label = `POST ${target.pathname.replace(CALLBACK_PATH, "/api/workflow/callback/{token}")}`;
      const key = opts.idempotencyKey ?? globalThis.crypto.randomUUID();
      return (await send<Deposited>({ method: "POST", url: target, label, json: args, headers: { "idempotency-key": key }, retrySafe: true })).body;
    },
  };
  return client as unknown as SlotflowClient<W>;
}

const sleep = (seconds: number) => new Promise<void>((resolve) => setTimeout(resolve, seconds * 1000));
