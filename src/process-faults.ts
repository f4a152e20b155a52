/**
 * Process-level fault handlers for every long-running slotflow process (issue 8 item 10): no
 * process dies silently mid-request.
 *
 * - `unhandledRejection` (a promise nobody awaited rejected — e.g. a queue client whose Redis
 *   dropped while a request waited on it): logged at error level with its reason (tokens
 *   redacted) and counted; the process **keeps serving**. Such a rejection leaves no shared state
 *   half-changed: each request's own await chain already answered (503 when Redis was down).
 * - `uncaughtException` (a throw nobody caught): logged at fatal level, then the process
 *   **drains and exits** with code 1 — `drain(1)` is the process's graceful stop (stop accepting,
 *   let in-flight requests finish within the shutdown grace, close queues and database), because
 *   code that threw half-way may have left memory inconsistent. A second uncaught exception while
 *   draining exits at once. A supervisor (Procfile runner, systemd, Kubernetes) restarts it.
 *
 * `drain` is looked up when a fault happens, so the caller can install the handlers first and
 * point them at its graceful stop once that exists (`setDrain`).
 */
import type { Logger } from "./log.js";
import { redactTokens } from "./engine/sealing/seal.js";

export type Drain = (exitCode: number) => Promise<void> | void;

export interface FaultHandlers {
  /** Counts since start, for tests and diagnostics. */
  readonly counts: { unhandledRejections: number; uncaughtExceptions: number };
  setDrain(drain: Drain): void;
  uninstall(): void;
}

function describe(reason: unknown): { err: string; stack?: string } {
  if (reason instanceof Error) return { err: redactTokens(`${reason.name}: ${reason.message}`), stack: reason.stack ? redactTokens(reason.stack) : undefined };
  return { err: redactTokens(String(reason)) };
}

export function installFaultHandlers(log: Logger, drain: Drain = (code) => process.exit(code)): FaultHandlers {
  let currentDrain = drain;
  let draining = false;
  const counts = { unhandledRejections: 0, uncaughtExceptions: 0 };
  const onRejection = (reason: unknown) => {
    counts.unhandledRejections++;
    log.error(describe(reason), "unhandled promise rejection; still serving");
  };
  const onException = (err: unknown, origin: string) => {
    counts.uncaughtExceptions++;
    if (draining) {
      log.fatal({ ...describe(err), origin }, "uncaught exception while draining; exiting now");
      process.exit(1);
    }
    draining = true;
    log.fatal({ ...describe(err), origin }, "uncaught exception; draining and exiting");
    Promise.resolve()
      .then(() => currentDrain(1))
      .catch((drainErr: unknown) => log.fatal(describe(drainErr), "drain failed"))
      .finally(() => process.exit(1));
  };
  process.on("unhandledRejection", onRejection);
  process.on("uncaughtException", onException);
  return {
    counts,
    setDrain(d) {
      currentDrain = d;
    },
    uninstall() {
      process.off("unhandledRejection", onRejection);
      process.off("uncaughtException", onException);
    },
  };
}
