/**
 * Compilation off the event loop (issue 8 item 17). A deploy compiles up to the source limit
 * (SLOTFLOW_MAX_SOURCE_BYTES) of hostile text; even linear, that is about a second on a busy
 * machine for 1 MB, which the web process must not spend on its event loop while the public
 * callback endpoint waits. `compileOffThread` hands the source to one long-lived
 * `node:worker_threads` worker (compile-thread.ts), started on first use and kept for the process;
 * requests queue there one at a time. The thread is unref'd while idle, so it never keeps a CLI
 * process or a test alive, and ends after IDLE_MS with nothing to compile (issue 22: the thread's
 * own V8 heap and the compiler's modules held ~70–90 MiB of the web process's resident memory
 * between deploys, which are rare); the next deploy starts it again.
 *
 * Never rejects, like `compile`: a thread that dies (out of memory, say) answers each waiting
 * compilation with a FLOW999 diagnostic, and the next call starts a new thread.
 */
import { Worker } from "node:worker_threads";
import { Codes } from "./codes.js";
import type { CompiledWorkflow } from "./compiled.js";
import type { Diagnostic } from "./diagnostics.js";

export interface OffThreadResult {
  diagnostics: Diagnostic[];
  workflow: CompiledWorkflow | null;
}

interface Pending {
  resolve(r: OffThreadResult): void;
  file: string;
}

let worker: Worker | null = null;
let idleTimer: NodeJS.Timeout | null = null;
/** How long the compiler thread outlives its last compilation, ms (issue 22). */
export const IDLE_MS = 10_000;
let nextId = 1;
const pending = new Map<number, Pending>();

/**
 * The thread runs the same module format as this file. Run from TypeScript sources, the thread
 * loads its entry through tsx itself: on Node 20 a worker does not reliably get the hooks of
 * `--import=tsx`, and none at all when tsx was registered from code (bin/slotflow.js).
 */
function start(): Worker {
  const ext = import.meta.url.endsWith(".ts") ? ".ts" : ".js";
  const entry = new URL(`./compile-thread${ext}`, import.meta.url);
  // tsx's `tsImport` loads the entry with tsx's hooks scoped to it (a plain `register()` applies
  // its hooks asynchronously, after an immediate import has already failed).
  const w =
    ext === ".ts"
      ? new Worker(`import(${JSON.stringify(import.meta.resolve("tsx/esm/api"))}).then((m) => m.tsImport(${JSON.stringify(entry.href)}, ${JSON.stringify(entry.href)}))`, {
          eval: true,
        })
      : new Worker(entry);
  w.on("message", (msg: { id: number } & OffThreadResult) => {
    const p = pending.get(msg.id);
    pending.delete(msg.id);
    if (pending.size === 0) {
      w.unref();
      idleTimer = setTimeout(() => {
        idleTimer = null;
        if (worker !== w || pending.size > 0) return;
        worker = null;
        void w.terminate();
      }, IDLE_MS);
      idleTimer.unref();
    }
    p?.resolve({ diagnostics: msg.diagnostics, workflow: msg.workflow });
  });
  const fail = (err: Error) => {
    // A thread ended on purpose (idle: `worker` already cleared, nothing pending on it) exits
    // later; by then compilations may wait on its successor, which its exit must not fail.
    if (worker !== w) return;
    worker = null;
    const at = { line: 1, column: 1, offset: 0 };
    for (const p of pending.values()) {
      const message = `internal compiler error in ${p.file}: the compiler thread failed (${err.message})`;
      p.resolve({ diagnostics: [{ code: Codes.InternalError, severity: "error", message, range: { start: at, end: at } }], workflow: null });
    }
    pending.clear();
  };
  w.on("error", fail);
  w.on("exit", (code) => fail(new Error(`the compiler thread exited (code ${code})`)));
  return w;
}

/** Whether the compiler thread is running (it ends IDLE_MS after its last compilation; issue 22). */
export function compilerThreadRunning(): boolean {
  return worker !== null;
}

/** Compiles `source` on the compiler thread: the diagnostics and the compiled form (no syntax tree). */
export function compileOffThread(source: string, file = "<input>"): Promise<OffThreadResult> {
  if (idleTimer) clearTimeout(idleTimer);
  idleTimer = null;
  worker ??= start();
  const w = worker;
  const id = nextId++;
  return new Promise<OffThreadResult>((resolve) => {
    pending.set(id, { resolve, file });
    w.ref();
    w.postMessage({ id, source, file });
  });
}
