/**
 * `GET /api/runs/{id}/result?waitSeconds=N` (v0.5 Results; issue 40 item 4; docs/http-api.md),
 * admin bearer token:
 *
 * - 200 `{id, status, state, result}` once the run has ended (`finished` or `cancelled`; `result`
 *   is `{state, …fields}` for a finished run, null for a cancelled one — engine/views/views.ts
 *   `runResult`);
 * - while it runs, waits up to N seconds (an integer 0–60, default 0) for it to end, then 202
 *   `{id, status: "running"}`;
 * - 400 invalid-query naming `waitSeconds` when N is not such an integer; 404 not-found.
 *
 * Waiting costs no worker and no PostgreSQL query while it waits: the process's one Redis
 * subscription wakes its waiters when a run ends (engine/run-end.ts); the reads of the waiters of
 * one run woken together are one query (`readShared`).
 */
import Router from "@koa/router";
import type { Context } from "koa";
import { RefusalCode, RefusalError, refuse } from "../engine/refusals.js";
import type { RunEndWaiters } from "../engine/run-end.js";
import { redactForOutput } from "../engine/sealing/seal.js";
import { runResult } from "../engine/views/views.js";
import type { Runtime } from "../runtime.js";
import { requireAdmin } from "../auth/tokens.js";
import { dependency } from "../engine-client/dependency.js";
import { UUID } from "../json/uuid.js";

/** The longest wait a request may ask for, in seconds (interfaces.md "Calls"). */
export const MAX_WAIT_SECONDS = 60;


interface Ended {
  id: string;
  status: string;
  state: string;
  result: Record<string, unknown> | null;
}

/** `?waitSeconds=` as seconds: absent 0; an integer 0–60; else 400 invalid-query. */
export function parseWaitSeconds(value: unknown): number {
  if (value === undefined) return 0;
  if (typeof value !== "string" || !/^[0-9]{1,2}$/.test(value) || Number(value) > MAX_WAIT_SECONDS) {
    throw new RefusalError(
      refuse(RefusalCode.InvalidQuery, `?waitSeconds: an integer from 0 to ${MAX_WAIT_SECONDS} (seconds to wait for the run to end)`, { parameter: "waitSeconds" }),
    );
  }
  return Number(value);
}

export function runResultRouter(rt: Runtime, waiters: RunEndWaiters): Router {
  const router = new Router({ prefix: "/api" });
  const inflight = new Map<string, Promise<Ended | null>>();

  const readOnce = async (id: string): Promise<Ended | null> => {
    const row = await rt.db.run.findUnique({ where: { id }, select: { id: true, status: true, state: true, result: true } });
    if (!row) return null;
    const fields = row.result === null ? null : redactForOutput(row.result, rt.sealer);
    return { id: row.id, status: row.status, state: row.state, result: runResult(row.status, row.state, fields) };
  };
  /** One query for every waiter of a run reading at the same moment. */
  const readShared = (id: string): Promise<Ended | null> => {
    const running = inflight.get(id);
    if (running) return running;
    const p = dependency(rt.log, "database", () => readOnce(id)).finally(() => inflight.delete(id));
    inflight.set(id, p);
    return p;
  };

  router.get("/runs/:id/result", async (ctx: Context) => {
    requireAdmin(ctx, rt.config.adminToken);
    const waitSeconds = parseWaitSeconds(ctx.query.waitSeconds);
    const id = String(ctx.params.id);
    const notFound = () => new RefusalError(refuse(RefusalCode.NotFound, "No run has this id."));
    if (!UUID.test(id)) throw notFound();
    const runId = id.toLowerCase();
    const ended = (r: Ended | null) => r === null || r.status !== "running";
    const run = waitSeconds === 0 ? await readShared(runId) : await waiters.wait(runId, waitSeconds * 1000, () => readShared(runId), ended);
    if (run === null) throw notFound();
    if (run.status === "running") {
      ctx.status = 202;
      ctx.body = { id: run.id, status: "running" };
      return;
    }
    ctx.body = run;
  });
  return router;
}
