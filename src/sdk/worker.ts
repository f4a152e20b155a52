/**
 * `slotflow/worker` — serve `call task "type"` in your own process (v0.5 SDK, issue 41 item 3;
 * docs/sdk.md "Task workers"; interfaces.md "The TypeScript SDK").
 *
 *   import { TaskWorker, TaskError } from "slotflow/worker";
 *   const worker = new TaskWorker({
 *     url: "https://slotflow.example", token: process.env.SLOTFLOW_WORKER_TOKEN!, concurrency: 10,
 *     tasks: {
 *       "credit-check": async (input, ctx) => {
 *         if (!input.company) throw new TaskError("no company", { retry: false }); // fails the call now
 *         await ctx.heartbeat();                                                  // the lease runs on
 *         return { score: 720, band: "A" };                                       // the `returns` event
 *       },
 *     },
 *   });
 *   await worker.run();   // until stop(); stop() lets the tasks it holds finish
 *
 * It speaks the task protocol (`POST /api/tasks/poll|{id}/heartbeat|{id}/complete|{id}/fail`,
 * bearer SLOTFLOW_WORKER_TOKEN) with `fetch` alone: no Redis, no database, no other dependency.
 * It long-polls for up to `concurrency` tasks at a time; each handler gets the task's input and a
 * context: `attempt` (1-based), `signal` (aborted when the lease is lost — it ran out, or a
 * heartbeat was refused because the task was withdrawn or moved on — or when the worker is
 * killed), `heartbeat()` (extends the lease by the call's Timeout; rejects with `TaskLockLost`
 * when it was lost). What the handler returns is the answer; a thrown `TaskError(message,
 * {retry: false})` fails the call at once (`on x.failed`); any other throw is a failed attempt
 * (retried while the call's Attempts last). An answer the server refuses as not of the `returns`
 * event's shape (422) fails the call at once with the server's words: the handler would return the
 * same again.
 *
 * Failures of the network or of the server (a 5xx, a refused connection) are retried with a
 * backoff (polls) or until the lease runs out (completions); a 401 stops `run()` with an error.
 */

/** Thrown by a handler: the attempt failed; with `{retry: false}` the call fails at once. */
export class TaskError extends Error {
  override name = "TaskError";
  readonly retry: boolean;
  constructor(message: string, options: { retry?: boolean } = {}) {
    super(message);
    this.retry = options.retry !== false;
  }
}

/** The lease of a task was lost (it ran out, or the task was withdrawn): `ctx.heartbeat()` rejects with it. */
export class TaskLockLost extends Error {
  override name = "TaskLockLost";
}

/** What a handler is given besides the task's input. */
export interface TaskContext {
  /** The task's id (the call's id: stable across attempts — an idempotency key for your side effects). */
  readonly taskId: string;
  readonly type: string;
  readonly runId: string;
  /** This attempt, 1-based. */
  readonly attempt: number;
  /** Aborted when the lease is lost or the task withdrawn (its `reason` is a TaskLockLost), or the worker is aborted. */
  readonly signal: AbortSignal;
  /** When the lease runs out unless renewed. */
  readonly lockExpiresAt: Date;
  /** Extends the lease by the call's Timeout. Rejects with TaskLockLost when the lease was lost. */
  heartbeat(): Promise<void>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyTask = { input: any; answer: any };

/** A handler: resolves the answer (an object with the `returns` event's parameters, or nothing without `returns`). */
export type TaskHandler<I = Record<string, unknown>, A = Record<string, unknown> | void> = (input: I, ctx: TaskContext) => Promise<A> | A;

/** Task types to their input and answer (e.g. from generated declarations); untyped by default. */
export type TaskMap = Record<string, AnyTask>;

export interface TaskWorkerOptions<T extends TaskMap = TaskMap> {
  /** The slotflow server's base URL (its BASE_URL), e.g. `https://slotflow.example`. */
  url: string;
  /** A SLOTFLOW_WORKER_TOKEN. */
  token: string;
  /** Tasks held at once (default 1). */
  concurrency?: number;
  /** A handler per task type. */
  tasks: { [K in keyof T & string]: TaskHandler<T[K]["input"], T[K]["answer"]> };
  /** Seconds a poll waits for a task (1–60, default 30). */
  waitSeconds?: number;
  /** Told of what goes wrong outside a handler (a poll that failed, a completion refused); default: nothing. */
  onError?: (err: Error) => void;
  /** The `fetch` to use (default: the global one). */
  fetch?: typeof fetch;
}

interface WireTask {
  id: string;
  type: string;
  runId: string;
  input: Record<string, unknown>;
  attempt: number;
  lockToken: string;
  lockExpiresAt: string;
}

/** An answer of the server that is not 2xx, with its problem document's `code` when it has one. */
export class TaskApiError extends Error {
  override name = "TaskApiError";
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | null,
  ) {
    super(message);
  }
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
  });

/** Serves task types from a slotflow server; see the module header. */
export class TaskWorker<T extends TaskMap = TaskMap> {
  private readonly base: string;
  private readonly concurrency: number;
  private readonly waitSeconds: number;
  private readonly fetch: typeof fetch;
  private readonly held = new Set<Promise<void>>();
  private stopping = false;
  private running: Promise<void> | null = null;
  private readonly pollAbort = new AbortController();
  private slotFreed: (() => void) | null = null;

  constructor(private readonly options: TaskWorkerOptions<T>) {
    if (!options.url) throw new TypeError("TaskWorker: `url` is required (the slotflow server's base URL)");
    if (!options.token) throw new TypeError("TaskWorker: `token` is required (a SLOTFLOW_WORKER_TOKEN)");
    if (Object.keys(options.tasks ?? {}).length === 0) throw new TypeError("TaskWorker: `tasks` must name at least one task type");
    this.base = options.url.replace(/\/+$/, "");
    this.concurrency = Math.max(1, Math.floor(options.concurrency ?? 1));
    this.waitSeconds = Math.min(60, Math.max(1, Math.floor(options.waitSeconds ?? 30)));
    this.fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** How many tasks this worker holds now. */
  get holding(): number {
    return this.held.size;
  }

  /**
   * Polls and serves tasks until `stop()`; resolves once stopped and every task it held is
   * finished. Rejects when the server refuses the token (401) or the worker is misconfigured.
   */
  run(): Promise<void> {
    this.running ??= this.loop();
    return this.running;
  }

  /** Stops polling and resolves once every task this worker holds is finished (answered or failed). */
  async stop(): Promise<void> {
    this.stopping = true;
    this.pollAbort.abort();
    this.slotFreed?.();
    if (this.running) await this.running.catch(() => undefined);
    await Promise.allSettled([...this.held]);
  }

  private async loop(): Promise<void> {
    let backoff = 0;
    const types = Object.keys(this.options.tasks);
    while (!this.stopping) {
      const free = this.concurrency - this.held.size;
      if (free <= 0) {
        await new Promise<void>((resolve) => (this.slotFreed = resolve));
        this.slotFreed = null;
        continue;
      }
      let tasks: WireTask[];
      try {
        const body = await this.call<{ tasks: WireTask[] }>("/api/tasks/poll", { types, max: free, waitSeconds: this.waitSeconds }, this.pollAbort.signal);
        tasks = body.tasks;
        backoff = 0;
      } catch (err) {
        if (this.stopping) break;
        if (err instanceof TaskApiError && (err.status === 401 || err.status === 403 || err.status === 400 || err.status === 422)) throw err;
        this.report(err);
        backoff = Math.min(30_000, backoff === 0 ? 500 : backoff * 2);
        await sleep(Math.random() * backoff, this.pollAbort.signal);
        continue;
      }
      for (const task of tasks) {
        const p: Promise<void> = this.serve(task).finally(() => {
          this.held.delete(p);
          this.slotFreed?.();
        });
        this.held.add(p);
      }
    }
    await Promise.allSettled([...this.held]);
  }

  private report(err: unknown): void {
    try {
      this.options.onError?.(err instanceof Error ? err : new Error(String(err)));
    } catch {
      // a failing onError must not stop the worker
    }
  }

  /** One request of the protocol: JSON in, JSON out; a non-2xx throws TaskApiError with the problem's code. */
  private async call<R>(path: string, body: unknown, signal?: AbortSignal): Promise<R> {
    const res = await this.fetch(`${this.base}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${this.options.token}`, "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(body),
      signal,
    });
    const text = await res.text();
    let json: unknown = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = null;
    }
    if (!res.ok) {
      const problem = (json ?? {}) as { code?: unknown; detail?: unknown; title?: unknown };
      const code = typeof problem.code === "string" ? problem.code : null;
      const detail = typeof problem.detail === "string" ? problem.detail : typeof problem.title === "string" ? problem.title : `HTTP ${res.status}`;
      throw new TaskApiError(`${path.replace(/\/api\/tasks\/[^/]+\//, "/api/tasks/{id}/")}: ${res.status} ${code ?? ""} ${detail}`.replace(/\s+/g, " ").trim(), res.status, code);
    }
    return json as R;
  }

  /** Runs one task's handler and reports its outcome. */
  private async serve(task: WireTask): Promise<void> {
    const lost = new AbortController();
    let expiresAt = new Date(task.lockExpiresAt);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => lost.abort(new TaskLockLost(`the lease of task ${task.id} ran out`)), Math.max(0, expiresAt.getTime() - Date.now()));
      timer.unref?.();
    };
    arm();
    const path = (what: string) => `/api/tasks/${encodeURIComponent(task.id)}/${what}`;
    const ctx: TaskContext = {
      taskId: task.id,
      type: task.type,
      runId: task.runId,
      attempt: task.attempt,
      signal: lost.signal,
      get lockExpiresAt() {
        return expiresAt;
      },
      heartbeat: async () => {
        if (lost.signal.aborted) throw lost.signal.reason instanceof Error ? lost.signal.reason : new TaskLockLost(`the lease of task ${task.id} was lost`);
        try {
          const r = await this.call<{ lockExpiresAt: string }>(path("heartbeat"), { lockToken: task.lockToken });
          expiresAt = new Date(r.lockExpiresAt);
          arm();
        } catch (err) {
          if (err instanceof TaskApiError && err.code === "task-lock-lost") {
            const reason = new TaskLockLost(`the lease of task ${task.id} was lost (it ran out, or the task was withdrawn)`);
            lost.abort(reason);
            throw reason;
          }
          throw err;
        }
      },
    };
    const handler = this.options.tasks[task.type as keyof T & string] as TaskHandler<unknown, unknown> | undefined;
    let outcome: { answer: unknown } | { error: string; retry: boolean };
    try {
      if (!handler) throw new TaskError(`this worker has no handler for task type "${task.type}"`);
      const answer = await handler(task.input, ctx);
      outcome = { answer: answer ?? {} };
    } catch (err) {
      outcome = { error: err instanceof Error ? err.message || err.name : String(err), retry: !(err instanceof TaskError && !err.retry) };
    }
    try {
      if ("answer" in outcome) {
        try {
          await this.deliver(path("complete"), { lockToken: task.lockToken, answer: outcome.answer }, () => expiresAt);
        } catch (err) {
          // an answer not of the `returns` event's shape: the handler would answer it again — the call fails now
          if (err instanceof TaskApiError && err.status === 422) await this.deliver(path("fail"), { lockToken: task.lockToken, error: `invalid answer: ${err.message}`.slice(0, 500), retry: false }, () => expiresAt);
          else throw err;
        }
      } else {
        await this.deliver(path("fail"), { lockToken: task.lockToken, error: outcome.error.slice(0, 500) || "failed", retry: outcome.retry }, () => expiresAt);
      }
    } catch (err) {
      this.report(err);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Reports an outcome, retrying a failure of the network or a 5xx/429 until the lease runs out
   * (after that the server offers the task again, and the outcome could not count). A 409
   * task-lock-lost is given up at once (the lease moved on, or this outcome was already given).
   */
  private async deliver(path: string, body: unknown, expiresAt: () => Date): Promise<void> {
    let backoff = 200;
    for (;;) {
      try {
        await this.call(path, body);
        return;
      } catch (err) {
        const transient = !(err instanceof TaskApiError) || err.status >= 500 || err.status === 429;
        if (!transient || Date.now() + backoff >= expiresAt().getTime()) throw err;
        await sleep(backoff);
        backoff = Math.min(5000, backoff * 2);
      }
    }
  }
}
