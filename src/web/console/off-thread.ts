/**
 * The console's heavy computations off the web process's event loop (issue 28 items 2 and 3): the
 * ELK layout of a state graph (graph.ts), the diff between two versions and the colouring of a
 * source (source.ts; a 240 KB source held the loop up to a second) run on one
 * `node:worker_threads` thread (console-thread.ts), bounded, so `/healthz`, callback deposits and
 * — in `serve` — the worker and sweeper sharing the process keep answering while a page renders:
 *
 * - one job at a time; jobs wait in a queue of at most QUEUE_MAX (a job beyond that is refused at
 *   once with reason `busy`);
 * - each job has a time limit (`timeLimitMs`, default JOB_TIME_LIMIT_MS) from when it starts — when
 *   the thread says its library (ELK, the highlighter) is loaded; a thread that does not say so
 *   within LOAD_LIMIT_MS more is treated the same — past it the thread is terminated (a
 *   synchronous computation cannot be interrupted any other way) and the job rejects with reason
 *   `timeout`;
 * - the thread's V8 heap is capped (`resourceLimits`: THREAD_HEAP_MB old generation,
 *   THREAD_YOUNG_MB young): a job that needs more kills the thread, not the process, and rejects
 *   with reason `memory`;
 * - a killed thread is replaced for the next job; the thread is unref'd and ends IDLE_MS after its
 *   last job (like the compiler thread, src/lang/compile-async.ts; issue 22), so ELK's bundle is
 *   held only while the console draws, and never by a process that never shows a console page
 *   (the worker role does not import the console at all).
 *
 * The thread is started the way the compiler thread is: from dist/ (production, bin/slotflow.js)
 * its compiled `.js` entry; from TypeScript sources (tests, `npm run dev`) its `.ts` entry
 * through tsx's `tsImport`, since a worker on Node 20 does not inherit `--import=tsx`.
 *
 * Results are not cached here: graph.ts and source.ts cache per workflow version (LruCache).
 */
import { Worker } from "node:worker_threads";
import type { ElkNode } from "elkjs/lib/elk-api.js";

/** A job for the console thread. */
export type ConsoleJob =
  /** ELK's layout of `graph` (an ELK input graph); answers the laid-out graph (ElkNode). */
  | { kind: "layout"; graph: ElkNode }
  /**
   * jsdiff's `createTwoFilesPatch(oldName, newName, oldText, newText, "", "", { context,
   * maxEditLength, timeout })`; answers the unified patch, or null when jsdiff gave up (more
   * than `maxEditLength` changed lines, or `timeoutMs` spent).
   */
  | { kind: "diff"; oldName: string; newName: string; oldText: string; newText: string; context: number; maxEditLength: number; timeoutMs: number }
  /** A `.flow` source coloured by src/authoring/highlight.ts (its own bounds apply); answers the HTML markup. */
  | { kind: "highlight"; source: string };

/** Why a job gave no result. */
export type ConsoleJobFailure = "busy" | "timeout" | "memory" | "failed";

/** A job that gave no result: `reason` says why (see the module's comment). */
export class ConsoleJobError extends Error {
  constructor(
    readonly reason: ConsoleJobFailure,
    message: string,
  ) {
    super(message);
    this.name = "ConsoleJobError";
  }
}

/** Jobs waiting (besides the one running) before more are refused with `busy`. */
export const QUEUE_MAX = 16;
/** A job's time limit once started, ms (issue 28 item 2: "a time … limit"). */
export const JOB_TIME_LIMIT_MS = 10_000;
/** How long a thread may take to start and load a job's library before the job's own limit starts, ms. */
export const LOAD_LIMIT_MS = 60_000;
/** The thread's old-generation heap limit, MiB (issue 28 item 2: "a … memory limit"). */
export const THREAD_HEAP_MB = 256;
/** The thread's young-generation heap limit, MiB. */
export const THREAD_YOUNG_MB = 32;
/** How long the thread outlives its last job, ms. */
export const IDLE_MS = 10_000;

interface Queued {
  job: ConsoleJob;
  timeLimitMs: number;
  resolve(value: unknown): void;
  reject(err: ConsoleJobError): void;
}

interface Running extends Queued {
  id: number;
  timer: NodeJS.Timeout;
}

let worker: Worker | null = null;
let running: Running | null = null;
let idleTimer: NodeJS.Timeout | null = null;
let nextId = 1;
let heapMb = THREAD_HEAP_MB;
const queue: Queued[] = [];
const stats = { threadsStarted: 0, jobsStarted: 0 };

/**
 * Sets the thread's old-generation heap limit (tests: to reach the limit with a small job); an
 * idle thread is ended so that the next job starts one with the new limit, a busy one keeps its
 * limit until it ends. `mb` is a whole number ≥ 16; anything else is refused (TypeError).
 */
export function setConsoleThreadHeapMb(mb: number): void {
  if (!Number.isInteger(mb) || mb < 16) throw new TypeError(`the console thread's heap limit is a whole number of MiB, at least 16 (got ${mb})`);
  heapMb = mb;
  const w = worker;
  if (w && !running) {
    worker = null;
    void w.terminate();
  }
}

/** How many console threads were started and how many jobs they were given, since the process started. */
export function consoleThreadStats(): { threadsStarted: number; jobsStarted: number } {
  return { ...stats };
}

/** Whether the console thread is running (it ends IDLE_MS after its last job). */
export function consoleThreadRunning(): boolean {
  return worker !== null;
}

function start(): Worker {
  const ext = import.meta.url.endsWith(".ts") ? ".ts" : ".js";
  const entry = new URL(`./console-thread${ext}`, import.meta.url);
  const resourceLimits = { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: THREAD_YOUNG_MB };
  stats.threadsStarted++;
  // As compile-async.ts: tsx's `tsImport` loads a TypeScript entry with tsx's hooks scoped to it.
  const w =
    ext === ".ts"
      ? new Worker(`import(${JSON.stringify(import.meta.resolve("tsx/esm/api"))}).then((m) => m.tsImport(${JSON.stringify(entry.href)}, ${JSON.stringify(entry.href)}))`, {
          eval: true,
          resourceLimits,
        })
      : new Worker(entry, { resourceLimits });
  w.on("message", (msg: { id: number; started: true } | { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string }) => {
    const r = running;
    if (worker !== w || !r || r.id !== msg.id) return;
    if ("started" in msg) {
      // the library is loaded: the job's own time limit starts now
      clearTimeout(r.timer);
      r.timer = limitTimer(w, r.id, r.timeLimitMs);
      return;
    }
    finish();
    if (msg.ok) r.resolve(msg.value);
    else r.reject(new ConsoleJobError("failed", `the console's ${r.job.kind} failed: ${msg.error}`));
  });
  const died = (err: Error & { code?: string }) => {
    if (worker !== w) return;
    worker = null;
    const r = running;
    if (r) {
      finish();
      const memory = err.code === "ERR_WORKER_OUT_OF_MEMORY";
      r.reject(new ConsoleJobError(memory ? "memory" : "failed", memory ? `the console's ${r.job.kind} needed more than ${heapMb} MiB` : `the console thread failed: ${err.message}`));
    }
  };
  w.on("error", died);
  w.on("exit", (code) => died(new Error(`the console thread exited (code ${code})`)));
  return w;
}

/** Ends the running job's bookkeeping and starts the next queued job (or the idle countdown). */
function finish(): void {
  if (running) clearTimeout(running.timer);
  running = null;
  // the next job starts on a later turn, after the finished job's promise has settled
  setImmediate(pump);
}

/** Terminates thread `w` and rejects job `id` with `timeout` after `ms`, unless the job ended first. */
function limitTimer(w: Worker, id: number, ms: number): NodeJS.Timeout {
  const timer = setTimeout(() => {
    if (running?.id !== id) return;
    const r = running;
    worker = null; // its "exit" is ignored: the job is answered here
    void w.terminate();
    finish();
    r.reject(new ConsoleJobError("timeout", `the console's ${r.job.kind} took more than ${r.timeLimitMs} ms`));
  }, ms);
  timer.unref();
  return timer;
}

function pump(): void {
  if (running) return;
  const next = queue.shift();
  if (!next) {
    const w = worker;
    if (w && !idleTimer) {
      w.unref();
      idleTimer = setTimeout(() => {
        idleTimer = null;
        if (worker !== w || running || queue.length > 0) return;
        worker = null;
        void w.terminate();
      }, IDLE_MS);
      idleTimer.unref();
    }
    return;
  }
  if (idleTimer) clearTimeout(idleTimer);
  idleTimer = null;
  worker ??= start();
  const w = worker;
  w.ref();
  const id = nextId++;
  running = { ...next, id, timer: limitTimer(w, id, LOAD_LIMIT_MS + next.timeLimitMs) };
  stats.jobsStarted++;
  w.postMessage({ id, job: next.job });
}

/**
 * Runs `job` on the console thread: resolves with its answer, or rejects with a ConsoleJobError
 * (`busy`: QUEUE_MAX jobs already wait; `timeout`: it ran longer than `timeLimitMs`; `memory`:
 * it needed more than the thread's heap; `failed`: it threw). Never blocks the calling thread.
 */
export function runOffThread<T>(job: ConsoleJob, opts: { timeLimitMs?: number } = {}): Promise<T> {
  if (queue.length >= QUEUE_MAX) return Promise.reject(new ConsoleJobError("busy", `the console already has ${QUEUE_MAX} drawings or diffs waiting`));
  return new Promise<T>((resolve, reject) => {
    queue.push({ job, timeLimitMs: opts.timeLimitMs ?? JOB_TIME_LIMIT_MS, resolve: resolve as (v: unknown) => void, reject });
    pump();
  });
}

/**
 * A map of at most `maxEntries` entries that forgets the least recently used one first (a `get`
 * that hits counts as a use). The console caches per workflow version with it (issue 28: "cache
 * per version"; a version never changes).
 */
export class LruCache<V> {
  private readonly map = new Map<string, V>();
  constructor(readonly maxEntries: number) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new TypeError(`an LRU cache holds at least one entry (got ${maxEntries})`);
  }
  get(key: string): V | undefined {
    const v = this.map.get(key);
    if (v === undefined) return undefined;
    this.map.delete(key);
    this.map.set(key, v);
    return v;
  }
  set(key: string, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    while (this.map.size > this.maxEntries) this.map.delete(this.map.keys().next().value!);
  }
  delete(key: string): void {
    this.map.delete(key);
  }
  get size(): number {
    return this.map.size;
  }
}
