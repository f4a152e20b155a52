/**
 * The testing kit for workflow authors: `import { Workflow } from "slotflow/testing"`.
 *
 * It runs workflows in process against a real PostgreSQL database (DATABASE_URL, migrated with
 * `slotflow migrate`), through the same engine code as the server — the same checks, the same
 * one-transaction steps under the run lock — without Redis or HTTP. Use it from ava or any runner.
 *
 *   const wf = await Workflow.deploy("examples/vendor-approval.flow");
 *   const run = await wf.start({ vendor: { name: "Acme", contactEmail: "a@acme.example" }, amount: 10 });
 *   const url = run.entities.vendor.approvalUrl as string;
 *   await Workflow.Redeem(url, { ok: true, note: "fine" });   // exactly as POSTing to the link
 *   await run.refresh();                                        // run.state === "Approved"
 *
 * Refusals reject with a `RefusalError` whose `code` is the problem type suffix of the HTTP API
 * (`link-burned`, `authorize-denied`, `invalid-body`, …).
 *
 * Unlike the HTTP API, the kit shows tracked rows and queued mail as the engine sees them, links
 * included, so a test can redeem a link it minted. Never point it at a production database.
 */
import { existsSync, readFileSync } from "node:fs";
import { loadConfig } from "../config.js";
import { createDb, type Db } from "../db.js";
import { applyCommand, type EngineDeps } from "../engine/apply.js";
import type { PrincipalClaims, RunSummary } from "../engine/commands/types.js";
import { deploy } from "../engine/deploy.js";
import { dueExpiries } from "../engine/expiry.js";
import { prepareRaise, prepareStart } from "../engine/prepare.js";
import { fingerprint } from "../engine/idempotency.js";
import { prepareDeposit } from "../engine/redeem.js";
import { RefusalError } from "../engine/refusals.js";
import { Sealer } from "../engine/seal.js";
import { showRun, type RunView } from "../engine/views.js";

export { RefusalError };

let shared: EngineDeps | null = null;

function engine(): EngineDeps {
  if (!shared) {
    const config = loadConfig();
    shared = { db: createDb(config.databaseUrl, 5), sealer: new Sealer(config.sealKeys), baseUrl: config.baseUrl, limits: config.limits };
  }
  return shared;
}

async function apply(cmd: Parameters<typeof applyCommand>[1]): Promise<RunSummary> {
  const { outcome } = await applyCommand(engine(), cmd);
  if (!outcome.ok) throw new RefusalError(outcome.refusal);
  return outcome.run;
}

/** A principal for `run.raise`. */
export interface TestPrincipal {
  id: string;
  email?: string | null;
  roles?: string[];
}

export interface OutboxMessage {
  to: string;
  subject: string;
  /** The body as queued (links included) while undelivered; null once delivered. */
  body: string | null;
  status: string;
}

export class Workflow {
  private constructor(
    readonly name: string,
    readonly version: number,
  ) {}

  /**
   * Deploys a workflow from its source text or a path to a `.flow` file. Rejects with
   * `invalid-workflow` (diagnostics in `extra.diagnostics`) or `version-conflict`.
   */
  static async deploy(sourceOrPath: string): Promise<Workflow> {
    const isPath = !sourceOrPath.includes("\n") && sourceOrPath.endsWith(".flow") && existsSync(sourceOrPath);
    const source = isPath ? readFileSync(sourceOrPath, "utf8") : sourceOrPath;
    const result = await deploy(engine().db, source, isPath ? sourceOrPath : "<source>", { maxSourceBytes: engine().limits?.maxSourceBytes });
    return new Workflow(result.name, result.version);
  }

  /**
   * Redeems a callback link exactly as `POST {url}` would: the same body checks at the minting
   * version and the same gates (slot open, `Requires`, run not finished; `Candidates` and
   * `[Authorize]` bypassed). Resolves `{ status: "completed" }`; rejects with a RefusalError.
   * `opts.idempotencyKey` is the request's `Idempotency-Key` header: a retry with the same key
   * and args resolves "completed" again instead of rejecting with `link-burned`.
   */
  static async Redeem(url: string, args?: Record<string, unknown>, opts: { idempotencyKey?: string } = {}): Promise<{ status: "completed" }> {
    const token = new URL(url).pathname.split("/").pop() ?? "";
    const idempotency = fingerprint(opts.idempotencyKey, args);
    if (idempotency !== null && "code" in idempotency) throw new RefusalError(idempotency);
    const prepared = await prepareDeposit(engine().db, decodeURIComponent(token), args, idempotency);
    if (!prepared.ok) throw new RefusalError(prepared.refusal);
    if (prepared.cmd) await apply(prepared.cmd);
    return { status: "completed" };
  }

  /**
   * Does what the sweeper does, in process: expires every open slot whose deadline has passed,
   * running `on x.expired`. Returns how many slots it expired. To make a deadline pass without
   * waiting, move it in SQL (see docs/testing.md).
   */
  static async sweep(): Promise<number> {
    let expired = 0;
    for (const cmd of await dueExpiries(engine().db, new Date())) {
      const { outcome } = await applyCommand(engine(), cmd);
      if (outcome.ok && outcome.status === "expired") expired++;
    }
    return expired;
  }

  /** Closes the kit's database connections (call once, after all tests). */
  static async disconnect(): Promise<void> {
    if (shared) await shared.db.$disconnect();
    shared = null;
  }

  /** Starts a run of this workflow's current version with `input` (the workflow's parameters by name). */
  async start(input: Record<string, unknown>): Promise<TestRun> {
    const prepared = await prepareStart(engine().db, this.name, input, engine().limits);
    if (!prepared.ok) throw new RefusalError(prepared.refusal);
    const summary = await apply(prepared.cmd);
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
  incidents: RunView["incidents"] = [];
  history: RunView["history"] = [];

  constructor(readonly id: string) {}

  /** Raises `alias`'s event as a signed-in principal (the ordinary path, every gate enforced). */
  async raise(alias: string, args: Record<string, unknown> | undefined, opts: { as: TestPrincipal; element?: number }): Promise<TestRun> {
    const principal: PrincipalClaims = { id: opts.as.id, email: opts.as.email ?? null, roles: opts.as.roles ?? [] };
    const prepared = await prepareRaise(engine().db, this.id, alias, opts.element ?? null, args, principal);
    if (!prepared.ok) throw new RefusalError(prepared.refusal);
    await apply(prepared.cmd);
    return this.refresh();
  }

  /** Reloads state, status, entities, slots, incidents and history. */
  async refresh(): Promise<TestRun> {
    const { db, sealer } = engine();
    const view = await showRun(db, sealer, this.id);
    if (!view) throw new Error(`run ${this.id} does not exist`);
    this.state = view.state;
    this.status = view.status;
    this.version = view.version;
    this.slots = view.slots;
    this.incidents = view.incidents;
    this.history = view.history;
    const rows = await db.entityRow.findMany({ where: { runId: this.id } });
    this.entities = Object.fromEntries(rows.map((r) => [r.name, sealer.unsealJson(r.data) as Record<string, unknown>]));
    return this;
  }

  /** Messages the run queued, in order (bodies as queued while undelivered). */
  async outbox(): Promise<OutboxMessage[]> {
    const { db, sealer } = engine();
    const rows = await db.outboxMessage.findMany({ where: { runId: this.id }, orderBy: { createdAt: "asc" } });
    return rows.map((m) => {
      return { to: sealer.openText(m.to), subject: sealer.openText(m.subject), status: m.status, body: m.body === null ? null : sealer.openText(m.body) };
    });
  }
}

export type { Db };
