/**
 * Deploying a workflow (`POST /api/workflows`, `slotflow deploy`; language reference
 * "Versioning").
 *
 * - A source over the size limit is refused: `payload-too-large` (413), before compiling.
 * - Source with errors is refused: `invalid-workflow` (422) with its diagnostics (at most 100 and
 *   a FLOW008 that counts the rest).
 * - The same source as the current version changes nothing (`created: false`) — unless the
 *   current version was compiled under an older rule of the language that changes what the same
 *   source means (`withoutCandidates`, v0.5, issue 38 M2: a version deployed before v0.5 let any
 *   signed-in principal answer a slot without Candidates): then the same source becomes version
 *   N+1 with the new meaning, and the live runs move to it as on any deploy.
 * - Otherwise version N+1 is stored and becomes current, and every live run is upgraded to it in
 *   the same transaction, with its row locked. Refused with `version-conflict` (409), storing
 *   nothing, when:
 *     - an event's parameters (names or types) differ from the previous version and the new source
 *       authors no `map event E(<previous params>) to …` whose left side equals the previous
 *       signature (callback-links spec §7, last row; §9 rule 4);
 *     - a live run is in a state the new version lacks, or has a live slot whose alias the new
 *       version's state lacks or subscribes to another, unmapped event.
 * Links minted under older versions keep working (versioning.ts translates their bodies).
 */
import { createHash } from "node:crypto";
import type { Db } from "../../db.js";
import { DEFAULT_LIMITS } from "../../config.js";
import type { CompileResult } from "../../lang/compile.js";
import type { CompiledParam, CompiledWorkflow } from "../../lang/compiled.js";
import type { Diagnostic } from "../../lang/diagnostics.js";
import { Codes } from "../../lang/codes.js";
import { endpointRefs } from "../../lang/send-delivery.js";
import { RefusalCode, refuse, RefusalError } from "../refusals.js";
import { RuntimeFault } from "../../lang/runtime/interpreter.js";
import { isTimerAlias } from "../lifecycles/timer.js";
import { addWhatTheUpgradeAdds, stateGains, type UpgradeServices } from "../commands/upgrade.js";
import { loadVersion } from "./workflows.js";

export interface DeployResult {
  name: string;
  version: number;
  created: boolean;
  warnings: Diagnostic[];
  upgradedRuns: number;
}

function signature(params: CompiledParam[]): string {
  return params.map((p) => `${p.name}: ${typeText(p.type)}`).join(", ");
}

function typeText(t: CompiledParam["type"]): string {
  const base = t.kind === "list" ? `list<${typeText(t.element)}>` : t.kind === "entity" ? t.name : t.kind;
  return t.optional ? `${base}?` : base;
}

/**
 * True when two compiled forms of the same source mean the same: compiled under the same rules of
 * the language (today: who may answer a slot without Candidates, lang/slot-access.ts).
 */
export function sameMeaning(stored: Pick<CompiledWorkflow, "withoutCandidates">, fresh: Pick<CompiledWorkflow, "withoutCandidates">): boolean {
  return (stored.withoutCandidates ?? null) === (fresh.withoutCandidates ?? null);
}

/** Problems that forbid moving from `prev` to `next` (empty when the deploy may proceed). */
export function versionProblems(prev: CompiledWorkflow, next: CompiledWorkflow): string[] {
  const problems: string[] = [];
  for (const [name, event] of Object.entries(prev.events)) {
    const now = next.events[name];
    const map = next.maps.find((m) => m.from === name);
    if (map) {
      if (signature(map.fromParams) !== signature(event.params)) {
        problems.push(`map event ${name}(${signature(map.fromParams)}) does not match the previous signature ${name}(${signature(event.params)})`);
      }
      continue;
    }
    if (now && signature(now.params) !== signature(event.params)) {
      problems.push(
        `event ${name} changed from (${signature(event.params)}) to (${signature(now.params)}) with no mapping: add "map event ${name}(${signature(event.params)}) to ${name}(…)"`,
      );
    }
  }
  return problems;
}

/**
 * A diagnostic as the HTTP API shows it: where it starts (`line`, `column`) and ends (`endLine`,
 * `endColumn`, exclusive), all 1-based, so a client can print the caret line as `check` does.
 */
export function diagnosticJson(d: Diagnostic): { code: string; severity: string; message: string; line: number; column: number; endLine: number; endColumn: number } {
  const { start, end } = d.range;
  return { code: d.code, severity: d.severity, message: d.message, line: start.line, column: start.column, endLine: end.line, endColumn: end.column };
}

export interface DeployOptions {
  /** Refuse a source of more UTF-8 bytes with 413 payload-too-large (SLOTFLOW_MAX_SOURCE_BYTES). */
  maxSourceBytes?: number;
  /**
   * How to compile: in this thread by default; the web process passes `compileOffThread`
   * (lang/compile-async.ts) so that a large source never stalls its event loop.
   */
  compile?: (source: string, file: string) => Promise<Pick<CompileResult, "diagnostics" | "workflow">> | Pick<CompileResult, "diagnostics" | "workflow">;
  /**
   * Lets the upgrade add to live runs the slots and timers their current state gained (issue 19
   * item 3, upgrade.ts). Without it, runs are upgraded without additions.
   */
  upgrade?: UpgradeServices;
  /**
   * Deploys under this name instead of the source's own (issue 33 item 2): the built-in workflows
   * (src/mcp/builtins.ts) are named `slotflow.` + their source name, a name no source can declare
   * (a workflow name in a source is an identifier, which has no dot), so the prefix is reserved.
   */
  name?: string;
  /**
   * Refuse a workflow with a `call task` (500 configuration-fault, nothing deployed): task workers
   * have no token to poll with. The web process and `serve --deploy` pass it in production
   * without SLOTFLOW_WORKER_TOKEN (issue 41 item 3; interfaces.md "The TypeScript SDK": the token
   * is required in production when any workflow has a `call task`) — the start-time check
   * (cli/startup.ts checkWorkerToken) covers what was deployed before; this, what is deployed after.
   */
  refuseTaskCalls?: boolean;
}

/** The task types a workflow's `call task` slots name, sorted, each once (issue 41 item 3). */
export function taskTypesOf(workflow: CompiledWorkflow): string[] {
  const types = new Set<string>();
  for (const state of Object.values(workflow.states)) {
    for (const slot of state.slots) if (slot.call?.callee.type === "task") types.add(slot.call.callee.task);
  }
  return [...types].sort();
}

/**
 * FLOW330 warnings for `send webhook` / `send message` naming an endpoint that does not exist (yet)
 * (issue 18 item 2): the deploy goes ahead; at run time such a delivery is recorded as failed
 * with that reason unless the endpoint has been set meanwhile.
 */
async function unknownEndpointWarnings(db: Db, workflow: CompiledWorkflow): Promise<Diagnostic[]> {
  const refs = endpointRefs(workflow);
  if (refs.length === 0) return [];
  const names = [...new Set(refs.map((r) => r.name))];
  const found = new Set((await db.endpoint.findMany({ where: { name: { in: names } }, select: { name: true } })).map((e) => e.name));
  return refs
    .filter((r) => !found.has(r.name))
    .map((r) => ({
      code: Codes.UnknownEndpoint,
      severity: "warning" as const,
      message: `no endpoint is named "${r.name}": set it with 'slotflow endpoint set ${r.name} --kind … --url …' (until then its deliveries fail)`,
      range: r.range,
    }));
}

/**
 * Compiles and deploys `source`. Throws RefusalError (payload-too-large, invalid-workflow,
 * version-conflict; configuration-fault with `refuseTaskCalls`).
 */
export async function deploy(db: Db, source: string, file = "<source>", options: DeployOptions = {}): Promise<DeployResult> {
  const maxBytes = options.maxSourceBytes ?? DEFAULT_LIMITS.maxSourceBytes;
  const bytes = Buffer.byteLength(source, "utf8");
  if (bytes > maxBytes) {
    throw new RefusalError(
      refuse(RefusalCode.PayloadTooLarge, `The source is ${bytes} bytes; this server accepts .flow sources of at most ${maxBytes} bytes (SLOTFLOW_MAX_SOURCE_BYTES).`, {
        limit: maxBytes,
      }),
    );
  }
  // The compiler (its parser library) is loaded only where a deploy compiles in this thread: the
  // web compiles off-thread (options.compile) and keeps it out of its memory (issue 22 item 3).
  const compileHere = options.compile ?? (await import("../../lang/compile.js")).compile;
  const compiled = await compileHere(source, file);
  const { diagnostics } = compiled;
  const workflow = compiled.workflow && options.name ? { ...compiled.workflow, name: options.name } : compiled.workflow;
  const errors = diagnostics.filter((d) => d.severity === "error");
  const warnings = diagnostics.filter((d) => d.severity === "warning");
  if (!workflow || errors.length > 0) {
    throw new RefusalError(
      refuse(RefusalCode.InvalidWorkflow, `The workflow has ${errors.length} error(s).`, {
        diagnostics: diagnostics.map(diagnosticJson),
      }),
    );
  }
  if (options.refuseTaskCalls && taskTypesOf(workflow).length > 0) {
    throw new RefusalError(
      refuse(
        RefusalCode.ConfigurationFault,
        `Workflow ${workflow.name} has a \`call task\` (${taskTypesOf(workflow).map((t) => `"${t}"`).join(", ")}), and task workers need a token of their own in production: set SLOTFLOW_WORKER_TOKEN on the web processes (comma-separated tokens for rotation), then deploy again.`,
      ),
    );
  }
  warnings.push(...(await unknownEndpointWarnings(db, workflow)));
  const sha = createHash("sha256").update(source).digest("hex");
  return db.$transaction(
    async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${"slotflow.deploy:" + workflow.name}))`;
      const existing = await tx.workflow.findUnique({ where: { name: workflow.name } });
      if (!existing) {
        await tx.workflow.create({ data: { name: workflow.name, currentVersion: 1 } });
        await tx.workflowVersion.create({ data: { workflowName: workflow.name, version: 1, source, sourceSha256: sha, compiled: workflow as object } });
        return { name: workflow.name, version: 1, created: true, warnings, upgradedRuns: 0 };
      }
      const current = await tx.workflowVersion.findUnique({
        where: { workflowName_version: { workflowName: workflow.name, version: existing.currentVersion } },
      });
      if (current?.sourceSha256 === sha && sameMeaning(current.compiled as unknown as CompiledWorkflow, workflow)) {
        return { name: workflow.name, version: existing.currentVersion, created: false, warnings, upgradedRuns: 0 };
      }
      const prev = await loadVersion(tx, workflow.name, existing.currentVersion);
      const problems = versionProblems(prev, workflow);
      const runs = await tx.$queryRaw<{ id: string; state: string; visit: number }[]>`
        SELECT id, state, visit FROM runs WHERE workflow_name = ${workflow.name} AND status = 'running' FOR UPDATE`;
      for (const run of runs) {
        const state = workflow.states[run.state];
        if (!state) {
          problems.push(`run ${run.id} is in state "${run.state}", which the new version lacks`);
          continue;
        }
        const live = await tx.slot.findMany({ where: { runId: run.id, visit: run.visit, status: { in: ["open", "waiting"] } } });
        for (const slot of live) {
          // A timer the new version lacks does not hold a deploy back: it is cancelled when due (timer.ts).
          if (isTimerAlias(slot.alias)) continue;
          const decl = state.slots.find((s) => s.alias === slot.alias);
          const mapped = workflow.maps.some((m) => m.from === slot.event && m.to === decl?.event);
          if (!decl || (decl.event !== slot.event && !mapped)) {
            problems.push(`run ${run.id} has a live slot "${slot.alias}" (${slot.event}) that the new version's state "${run.state}" does not keep`);
          }
        }
      }
      if (problems.length > 0) {
        throw new RefusalError(refuse(RefusalCode.VersionConflict, `The deploy of ${workflow.name} was refused: ${problems.join("; ")}.`, { problems }));
      }
      const version = existing.currentVersion + 1;
      await tx.workflowVersion.create({ data: { workflowName: workflow.name, version, source, sourceSha256: sha, compiled: workflow as object } });
      await tx.workflow.update({ where: { name: workflow.name }, data: { currentVersion: version } });
      if (runs.length > 0) {
        const ids = runs.map((r) => r.id);
        await tx.run.updateMany({ where: { id: { in: ids } }, data: { version } });
        // Runs whose state gained a slot or a timer get them, as one step each, with an `upgraded`
        // entry saying what was added (upgrade.ts); the others a plain `upgraded`.
        const enriched = new Set<string>();
        if (options.upgrade) {
          for (const run of runs) {
            if (!stateGains(prev, workflow, run.state)) continue;
            let added;
            try {
              added = await addWhatTheUpgradeAdds(tx, options.upgrade, workflow, run.id, version - 1, version);
            } catch (err) {
              if (!(err instanceof RuntimeFault)) throw err;
              throw new RefusalError(
                refuse(RefusalCode.VersionConflict, `The deploy of ${workflow.name} was refused: adding to run ${run.id} failed: ${err.message}.`, {
                  problems: [`run ${run.id}: ${err.message}`],
                }),
              );
            }
            if (added) enriched.add(run.id);
          }
        }
        const plain = ids.filter((id) => !enriched.has(id));
        await tx.historyEntry.createMany({ data: plain.map((runId) => ({ runId, kind: "upgraded", data: { from: version - 1, to: version } })) });
        // Slots keep the event name they were created with until they close; a mapped event is
        // renamed so the slot completes with the new version's event.
        for (const map of workflow.maps) {
          if (map.from !== map.to) {
            await tx.slot.updateMany({ where: { runId: { in: ids }, event: map.from, status: { in: ["open", "waiting"] } }, data: { event: map.to } });
          }
        }
      }
      return { name: workflow.name, version, created: true, warnings, upgradedRuns: runs.length };
    },
    { maxWait: 10_000, timeout: 60_000 },
  );
}
