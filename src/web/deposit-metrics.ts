/**
 * The web's own counter middleware: every POST to a callback link, by outcome, into
 * `slotflow_callback_deposits_total{outcome}` (src/metrics/metrics.ts).
 */
import type { Middleware } from "koa";
import { metrics } from "../metrics/metrics.js";

/**
 * Counts every POST to the callback route by outcome, whoever answered it: `completed` (200),
 * `accepted` (202), `ctx.state.depositOutcome` when the handler names it (`replayed`), else the
 * problem code `sendProblem` wrote (`ctx.state.problemCode`), else the status.
 */
export function countDeposits(callbackRoute: string): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } finally {
      const matched = (ctx as unknown as { _matchedRoute?: string })._matchedRoute;
      if (matched === callbackRoute && ctx.method === "POST") {
        const state = ctx.state as { depositOutcome?: string; problemCode?: string };
        const outcome = state.depositOutcome ?? (ctx.status === 200 ? "completed" : ctx.status === 202 ? "accepted" : String(state.problemCode ?? ctx.status));
        metrics.deposits.inc({ outcome });
      }
    }
  };
}
