/**
 * The testing kit for workflow authors: `import { Workflow } from "slotflow/testing"`.
 *
 * It runs workflows in process against a real PostgreSQL database (SLOTFLOW_TEST_DATABASE_URL,
 * else DATABASE_URL, migrated with `slotflow migrate`), through the same engine code as the
 * server — the same checks, the same one-transaction steps under the run lock — without Redis or
 * HTTP. Use it from ava or any runner. With neither variable set, the first call rejects with a
 * ConfigError naming them (it never falls back to the development database); an unreachable,
 * missing or unmigrated database rejects with one line saying which (issue 9 §2).
 *
 *   const wf = await Workflow.deploy("examples/vendor-approval.flow");
 *   const run = await wf.start({ vendor: { name: "Acme", contactEmail: "a@acme.example" }, amount: 10 });
 *   const url = run.entities.vendor.approvalUrl as string;
 *   await Workflow.Redeem(url, { ok: true, note: "fine" });   // exactly as POSTing to the link
 *   await run.refresh();                                        // run.state === "Approved"
 *   await run.advanceTime("3d");                                // deadlines within 3 days expire
 *
 * Refusals reject with a `RefusalError` whose `code` is the problem type suffix of the HTTP API
 * (`link-burned`, `authorize-denied`, `invalid-body`, …).
 *
 * Unlike the HTTP API, the kit shows tracked rows and queued mail as the engine sees them, links
 * included, so a test can redeem a link it minted. Never point it at a production database.
 */
import { existsSync, readFileSync } from "node:fs";
import { DEFAULT_LIMITS, kitDatabaseUrl, loadConfig } from "../config.js";
import { checkPostgres } from "../cli/startup.js";
import { createDb, type Db } from "../db.js";
import type { EngineDeps } from "../engine/commands/apply.js";
import { receiptKeySource } from "../engine/receipts/keys.js";
import type { PrincipalClaims, RunSummary } from "../engine/commands/types.js";
import { deploy } from "../engine/versions/deploy.js";
import { compile, formatDiagnostic } from "../lang/compile.js";
import { dueExpiries } from "../engine/sweeps/expiry.js";
import { EngineClient } from "../engine-client/client.js";
import type { Submitted } from "../engine-client/result.js";
import { RefusalError } from "../engine/refusals.js";
import { Sealer } from "../engine/sealing/seal.js";
import { showRun, type RunView } from "../engine/views/views.js";
import { applyWithCalls, dueAttempts, listCalls, makeAttempts, setMock, type MockHttpHandler, type TestCall } from "./calls.js";

export type { MockHttpHandler, MockHttpReply, TestCall } from "./calls.js";

export { RefusalError };

let shared: Promise<EngineDeps> | null = null;

/** The kit's engine, made on first use after checking its database (see the header). */
function engine(): Promise<EngineDeps> {
  shared ??= (async () => {
    const databaseUrl = kitDatabaseUrl();
    const config = loadConfig(process.env, { secrets: ["SLOTFLOW_SEAL_KEY"] });
    await checkPostgres(databaseUrl);
    const db = createDb(databaseUrl, 5);
    const sealer = new Sealer(config.sealKeys);
    // receipts as a development server signs them: SLOTFLOW_RECEIPT_KEYS, else a key kept in the database
    const receiptKeys = receiptKeySource({ configured: config.receiptKeys, production: false, db, sealer });
    return { db, sealer, baseUrl: config.baseUrl, limits: config.limits, receiptKeys };
  })().catch((err: unknown) => {
    shared = null;
    throw err;
  });
  return shared;
}

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

/** `"3d"`, `"1d12h"`, `"90m"`, `"500ms"` (units ms, s, m, h, d, w) or a number of milliseconds. */
export function durationMs(duration: string | number): number {
  if (typeof duration === "number") {
    if (!Number.isFinite(duration) || duration < 0) throw new RangeError(`a duration must be a non-negative number of milliseconds, got ${duration}`);
    return duration;
  }
  const parts = [...duration.matchAll(/(\d+)(ms|s|m|h|d|w)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join("") !== duration.replace(/\s+/g, "")) {
    throw new RangeError(`a duration looks like "3d", "1d12h" or "90m" (units ms, s, m, h, d, w), got "${duration}"`);
  }
  return parts.reduce((sum, p) => sum + Number(p[1]) * UNIT_MS[p[2] as keyof typeof UNIT_MS], 0);
}

/**
 * The kit's engine client (src/engine-client/, issue 39 item 1): the same preparation as a
 * server's doors, each command applied in process at once (with its calls' stand-ins and the
 * commands it causes for other runs, calls.ts `applyWithCalls`) instead of through the queues.
 */
async function client(): Promise<EngineClient> {
  const deps = await engine();
  return new EngineClient({
    engine: deps,
    limits: deps.limits ?? DEFAULT_LIMITS,
    send: async (cmd) => (await applyWithCalls(deps, cmd)).outcome,
    guard: (_what, fn) => fn(),
  });
}

/** An applied command's run (and receipt); a refusal is thrown as a RefusalError. */
function appliedOrThrow(result: Submitted): RunSummary & { receipt?: string } {
  if (result.kind === "refused") throw new RefusalError(result.refusal);
  if (result.kind === "accepted") throw new Error("the testing kit applies every command at once; none is left accepted");
  return result.receipt ? { ...result.run, receipt: result.receipt } : result.run;
}

/** A principal for `run.raise`. */
export interface TestPrincipal {
  id: string;
  email?: string | null;
  roles?: string[];
}

/**
 * One entry of `run.outbox()` (issue 38: every delivery, so an author's test sees a webhook that
 * was not sent): a `send email` (`channel: "email"`), or a `send webhook` / `send message`
 * delivery (`channel: "webhook"` / `"message"`). One shape for all three, so a test reading mail
 * needs no narrowing; the fields that do not apply to a channel say so below.
 */
export interface OutboxMessage {
  /** Which statement queued it: `send email`, `send webhook` or `send message`. */
  channel: "email" | "webhook" | "message";
  /** Email: the recipient. Webhook and message: the endpoint's name. */
  to: string;
  /** Email: the subject. Webhook: its `type`. Message: its text. */
  subject: string;
  /**
   * Email: the body as queued (links included) while undelivered; null once delivered.
   * Webhook and message: the stored payload as JSON text (links included); null once dropped
   * (a withdrawn message, a cancelled run).
   */
  body: string | null;
  /** Email: `pending`, `sent`, `failed`, `withdrawn`. Webhook and message: `pending`, `sent`, `failed`. */
  status: string;
  /** `replyTo` / `cc` of the `send email` (issue 19); null when not given, and for deliveries. */
  replyTo: string | null;
  cc: string | null;
  /**
   * Why it failed or was withdrawn (`withdrawn: link dead (expired)`: an email or message that
   * carried a link no longer live); for a delivery its `endReason`, else its last attempt's
   * error; null otherwise.
   */
  lastError: string | null;
  /** Webhook and message: the endpoint's name; null for an email. */
  endpoint: string | null;
  /** Webhook: its data fields; message: `{text, link?, label?}`; null for an email or once dropped. */
  data: Record<string, unknown> | null;
  /** Attempts made so far (email: sending attempts; delivery: HTTP attempts). */
  attempts: number;
}

/**
 * Applies the expiry of every due open slot and the firing of every due timer (of `runId` only,
 * when given); resolves how many slots expired plus how many timers fired.
 */
async function expireDue(runId?: string, now = new Date()): Promise<number> {
  const deps = await engine();
  let expired = 0;
  for (const cmd of await dueExpiries(deps.db, now, 500, runId)) {
    const { outcome } = await applyWithCalls(deps, cmd);
    if (outcome.ok && (outcome.status === "expired" || outcome.status === "fired")) expired++;
  }
  return expired;
}

export class Workflow {
  private constructor(
    readonly name: string,
    readonly version: number,
  ) {}

  /**
   * Deploys a workflow from its source text or a path to a `.flow` file (one line ending in
   * `.flow`, read relative to the current directory). Rejects with an Error whose `code` is
   * `ENOENT` when that file does not exist (issue 21 item 5: never compiled as source); with a
   * RefusalError `invalid-workflow` whose message is the summary then every diagnostic as
   * `slotflow check` prints it (the data stays in `extra.diagnostics`); or `version-conflict`.
   */
  static async deploy(sourceOrPath: string): Promise<Workflow> {
    const looksLikePath = !/[\r\n]/.test(sourceOrPath) && sourceOrPath.trim().endsWith(".flow");
    if (looksLikePath && !existsSync(sourceOrPath.trim())) {
      const err: NodeJS.ErrnoException = new Error(`Workflow.deploy: no such file: ${sourceOrPath.trim()} (looked in ${process.cwd()})`);
      err.code = "ENOENT";
      throw err;
    }
    const file = looksLikePath ? sourceOrPath.trim() : "<source>";
    const source = looksLikePath ? readFileSync(file, "utf8") : sourceOrPath;
    const deps = await engine();
    try {
      const result = await deploy(deps.db, source, file, {
        maxSourceBytes: deps.limits?.maxSourceBytes,
        upgrade: { sealer: deps.sealer, baseUrl: deps.baseUrl, limits: deps.limits },
      });
      return new Workflow(result.name, result.version);
    } catch (err) {
      if (!(err instanceof RefusalError) || err.code !== "invalid-workflow") throw err;
      const printed = compile(source, file).diagnostics.map((d) => formatDiagnostic(d, source, file));
      throw new RefusalError({ code: err.code, detail: [err.message, ...printed].join("\n"), extra: err.extra });
    }
  }

  /**
   * Redeems a callback link exactly as `POST {url}` would: the same body checks at the minting
   * version and the same gates (slot open, `Requires`, run not finished; `Candidates` and
   * `[Authorize]` bypassed). Resolves `{ status: "completed", receipt }` — `receipt` the compact JWS
   * a server would answer (v0.4 "Receipts"; absent on a same-key retry, which applies nothing
   * here); rejects with a RefusalError.
   * `opts.idempotencyKey` is the request's `Idempotency-Key` header: a retry with the same key
   * and args resolves "completed" again instead of rejecting with `link-burned`.
   */
  static async Redeem(url: string, args?: Record<string, unknown>, opts: { idempotencyKey?: string } = {}): Promise<{ status: "completed"; receipt?: string }> {
    const token = new URL(url).pathname.split("/").pop() ?? "";
    const result = await (await client()).deposit(decodeURIComponent(token), args, opts.idempotencyKey);
    if (result.kind === "replayed") return { status: "completed" };
    const applied = appliedOrThrow(result);
    return applied.receipt ? { status: "completed", receipt: applied.receipt } : { status: "completed" };
  }

  /**
   * Does what the sweeper does, in process: expires every open slot whose deadline has passed,
   * running `on x.expired`, and fires every due timer. Returns how many slots it expired plus
   * how many timers it fired. To reach a deadline without waiting, use `run.advanceTime(duration)`.
   */
  static async sweep(): Promise<number> {
    return expireDue();
  }

  /** Closes the kit's database connections (call once, after all tests). */
  /**
   * Stands in for the `http` endpoint `endpoint` (v0.5 calls): every attempt of a `call http
   * "endpoint"` is answered by `handler` — handed `{endpoint, method, path, body, callId, attempt}`,
   * it returns `{status?, body?, headers?}` (status 200 by default; judged as an HTTP reply:
   * 408/425/429/5xx retried after `run.advanceTime`, other non-2xx fail the call) or `{error:
   * "timeout" | "connection"}` (retried). `null` removes it. No endpoint needs to be configured.
   */
  static mockHttp(endpoint: string, handler: MockHttpHandler | null): void {
    setMock(endpoint, handler);
  }

  static async disconnect(): Promise<void> {
    const deps = shared && (await shared.catch(() => null));
    shared = null;
    if (deps) await deps.db.$disconnect();
  }

  /** Starts a run of this workflow's current version with `input` (the workflow's parameters by name). */
  async start(input: Record<string, unknown>): Promise<TestRun> {
    const summary = appliedOrThrow(await (await client()).start(this.name, input));
    const run = new TestRun(summary.id);
    await run.refresh();
    return run;
  }
}

export class TestRun {
  state = "";
  status = "";
  version = 0;
  /** Tracked rows by parameter name, as the engine sees them (links included). */
  entities: Record<string, Record<string, unknown>> = {};
  slots: RunView["slots"] = [];
  /** Scheduled timers of the current state: `{ index, schedule, next }` (issue 19). */
  timers: RunView["timers"] = [];
  /** Scheduled timers on the current state's slots, per element: `{ alias, element, index, schedule, next }` (issue 43 item 3). */
  slotTimers: RunView["slotTimers"] = [];
  incidents: RunView["incidents"] = [];
  history: RunView["history"] = [];
  /** v0.5 child runs: the run and call slot that started this run (`{runId, alias, element}`), else null. */
  parent: RunView["parent"] = null;
  /** v0.5 Results: the run's result once finished (`{state, …fields}`), else null. */
  result: RunView["result"] = null;

  constructor(readonly id: string) {}

  /** Raises `alias`'s event as a signed-in principal (the ordinary path, every gate enforced). */
  async raise(alias: string, args: Record<string, unknown> | undefined, opts: { as: TestPrincipal; element?: number }): Promise<TestRun> {
    const principal: PrincipalClaims = { id: opts.as.id, email: opts.as.email ?? null, roles: opts.as.roles ?? [] };
    appliedOrThrow(await (await client()).raise({ runId: this.id, alias, element: opts.element ?? null }, args, principal));
    return this.refresh();
  }

  /**
   * Moves this run's clock forward by `duration` (`"3d"`, `"1d12h"`, `"90m"` or milliseconds),
   * without waiting: every deadline of its open or waiting slots, and every timer, comes that much
   * closer (the stored deadlines move earlier — `slots[].deadline` and `timers[].next` show them
   * moved), and what falls due on the way happens in time order, as the sweeper would do it: slots
   * expire (their links die with reason `expired`, `on x.expired` runs) and timers fire — an
   * `every 1d` timer fires three times in `advanceTime("3d")` (issue 19). Slots and timers created
   * on the way see only the rest of the move. Resolves the refreshed run. Other runs are untouched.
   */
  async advanceTime(duration: string | number): Promise<TestRun> {
    let remaining = durationMs(duration);
    const { db } = await engine();
    // Each round first applies what is due now (call attempts, expiries, timer firings); only when
    // nothing could be applied does it move the clock, to the next due time or by what is left.
    // Moving first would, when something was already due (a retry's short backoff elapsed while
    // the machine was busy), spend the whole duration in one move and leave what that attempt
    // scheduled for a moment later never applied. Bounded, so that a workflow that keeps
    // scheduling cannot hold a test forever.
    for (let round = 0; round < 10_000; round++) {
      // One instant per round for all three questions — what is due (attempts, expiries) and when
      // the next thing falls due: with each asking its own now(), a due time falling between the
      // questions was neither applied nor waited for, and the whole rest of the duration went in
      // one move (a retry then scheduled from the real clock was stranded).
      const now = new Date();
      const made = await makeAttempts(await engine(), await dueAttempts(db, this.id, now));
      const applied = (await expireDue(this.id, now)) + made;
      if (applied > 0) continue;
      if (remaining <= 0) break;
      const [next] = await db.$queryRaw<{ wait_ms: number | null }[]>`
        SELECT (extract(epoch FROM (min(t) - ${now}::timestamptz)) * 1000)::float8 AS wait_ms FROM (
          SELECT deadline AS t FROM slots
           WHERE run_id = ${this.id}::uuid AND deadline IS NOT NULL AND status = 'open' AND deadline > ${now}::timestamptz
          UNION ALL
          SELECT next_attempt_at FROM calls
           WHERE run_id = ${this.id}::uuid AND status = 'pending' AND next_attempt_at > ${now}::timestamptz) due`;
      const step = next.wait_ms === null ? remaining : Math.min(remaining, Math.max(1, Math.ceil(next.wait_ms)));
      await db.$executeRaw`UPDATE slots SET deadline = deadline - make_interval(secs => ${step / 1000}::float8)
        WHERE run_id = ${this.id}::uuid AND deadline IS NOT NULL AND status IN ('open', 'waiting')`;
      // calls' next attempts and Deadlines move with the clock too (v0.5: retries' backoff)
      await db.$executeRaw`UPDATE calls SET next_attempt_at = next_attempt_at - make_interval(secs => ${step / 1000}::float8),
                                            deadline = deadline - make_interval(secs => ${step / 1000}::float8)
        WHERE run_id = ${this.id}::uuid AND status = 'pending'`;
      remaining -= step;
    }
    return this.refresh();
  }

  /**
   * Cancels the run as an operator would (`POST /api/runs/{id}/cancel`, issue 23): slots and
   * timers cancelled, live links dead (`run-cancelled`), unsent messages withdrawn. `reason` is
   * 1–500 characters. Throws a RefusalError (409 `run-finished`) when the run already ended.
   */
  async cancel(reason: string, opts: { actor?: string } = {}): Promise<TestRun> {
    appliedOrThrow(await (await client()).cancel(this.id, reason, opts.actor ?? "test"));
    return this.refresh();
  }

  /** The run's calls (v0.5), in the order they started, each with its attempts `{attempt, status, ms, error}`. */
  async calls(): Promise<TestCall[]> {
    return listCalls((await engine()).db, this.id);
  }

  /**
   * The runs this run started through `call workflow` (v0.5 child runs; `GET /api/runs?parent=`),
   * oldest first, refreshed. Child runs of a kit run are kit runs: redeem their links, advance
   * their time, cancel them, and the parent's call is answered or failed as on a server.
   */
  async children(): Promise<TestRun[]> {
    const { db } = await engine();
    const rows = await db.run.findMany({ where: { parentRunId: this.id }, orderBy: [{ createdAt: "asc" }, { id: "asc" }], select: { id: true } });
    return Promise.all(rows.map((r) => new TestRun(r.id).refresh()));
  }

  /** Reloads state, status, entities, slots, incidents, history, parent and result. */
  async refresh(): Promise<TestRun> {
    const { db, sealer } = await engine();
    const view = await showRun(db, sealer, this.id);
    if (!view) throw new Error(`run ${this.id} does not exist`);
    this.state = view.state;
    this.status = view.status;
    this.version = view.version;
    this.slots = view.slots;
    this.timers = view.timers;
    this.slotTimers = view.slotTimers;
    this.incidents = view.incidents;
    this.history = view.history;
    this.parent = view.parent;
    this.result = view.result;
    const rows = await db.entityRow.findMany({ where: { runId: this.id } });
    this.entities = Object.fromEntries(rows.map((r) => [r.name, sealer.unsealJson(r.data) as Record<string, unknown>]));
    return this;
  }

  /**
   * Everything the run queued (issue 38): its emails in creation order, then its `send webhook` /
   * `send message` deliveries in creation order — as `GET /api/runs/{id}/outbox` lists them — each
   * with its status. Unlike the API, it shows bodies and payloads (links included) while stored.
   */
  async outbox(): Promise<OutboxMessage[]> {
    const { db, sealer } = await engine();
    const rows = await db.outboxMessage.findMany({ where: { runId: this.id }, orderBy: { createdAt: "asc" } });
    const mails = rows.map((m): OutboxMessage => {
      return {
        channel: "email",
        to: sealer.openText(m.to),
        subject: sealer.openText(m.subject),
        status: m.status,
        body: m.body === null ? null : sealer.openText(m.body),
        replyTo: m.replyTo === null ? null : sealer.openText(m.replyTo),
        cc: m.cc === null ? null : sealer.openText(m.cc),
        lastError: m.lastError,
        endpoint: null,
        data: null,
        attempts: m.attempts,
      };
    });
    const deliveries = await db.delivery.findMany({ where: { runId: this.id }, orderBy: { createdAt: "asc" } });
    return [
      ...mails,
      ...deliveries.map((d): OutboxMessage => {
        const body = d.payload === null ? null : sealer.openText(d.payload);
        const payload = body === null ? null : (JSON.parse(body) as { type?: string; data?: Record<string, unknown>; text?: string; link?: string; label?: string; answer?: unknown });
        const webhook = d.statement === "webhook";
        let data: Record<string, unknown> | null = null;
        if (payload !== null) {
          data = webhook ? (payload.data ?? {}) : { text: payload.text, ...(payload.link !== undefined ? { link: payload.link } : {}), ...(payload.label !== undefined ? { label: payload.label } : {}) };
        }
        return {
          channel: webhook ? "webhook" : "message",
          to: d.endpoint,
          subject: payload === null ? "" : webhook ? String(payload.type ?? "") : String(payload.text ?? ""),
          body,
          status: d.status,
          replyTo: null,
          cc: null,
          lastError: d.endReason ?? d.lastError,
          endpoint: d.endpoint,
          data,
          attempts: d.attempts,
        };
      }),
    ];
  }
}

export type { Db };
