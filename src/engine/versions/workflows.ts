/**
 * Deployed workflow versions: loading compiled forms (cached; a version never changes once
 * stored) and resolving the current version of a workflow by name.
 */
import type { Db, Tx } from "../../db.js";
import { COMPILED_FORMAT, type CompiledWorkflow } from "../../lang/compiled.js";

const cache = new Map<string, CompiledWorkflow>();

/** The compiled form of `name`@`version`; throws when it does not exist or has an unknown format. */
export async function loadVersion(db: Db | Tx, name: string, version: number): Promise<CompiledWorkflow> {
  const key = `${name}@${version}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const row = await db.workflowVersion.findUnique({ where: { workflowName_version: { workflowName: name, version } } });
  if (!row) throw new Error(`workflow ${key} is not deployed`);
  const compiled = withNullPrototypes(row.compiled as unknown as CompiledWorkflow);
  if (compiled.format !== COMPILED_FORMAT) throw new Error(`workflow ${key} was compiled to format ${compiled.format}; this engine runs ${COMPILED_FORMAT}`);
  cache.set(key, compiled);
  return compiled;
}

/** The current version number of a workflow, or null when no workflow has that name. */
export async function currentVersion(db: Db | Tx, name: string): Promise<number | null> {
  const wf = await db.workflow.findUnique({ where: { name }, select: { currentVersion: true } });
  return wf?.currentVersion ?? null;
}

function record<T>(obj: Record<string, T>, each: (v: T) => T = (v) => v): Record<string, T> {
  const out: Record<string, T> = Object.create(null);
  for (const [k, v] of Object.entries(obj)) out[k] = each(v);
  return out;
}

/**
 * The records of a compiled form keyed by user-chosen names (entities, fields, events, states,
 * handlers) rebuilt without a prototype, as the compiler made them: after a round trip through
 * JSON, `states["constructor"]` would otherwise find Object.prototype's member.
 */
export function withNullPrototypes(wf: CompiledWorkflow): CompiledWorkflow {
  return {
    ...wf,
    entities: record(wf.entities, (e) => ({ ...e, fields: record(e.fields) })),
    events: record(wf.events),
    states: record(wf.states, (s) => ({ ...s, on: record(s.on), expired: record(s.expired) })),
  };
}
