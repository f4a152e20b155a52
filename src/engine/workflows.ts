/**
 * Deployed workflow versions: loading compiled forms (cached; a version never changes once
 * stored) and resolving the current version of a workflow by name.
 */
import type { Db, Tx } from "../db.js";
import { COMPILED_FORMAT, type CompiledWorkflow } from "../lang/compiled.js";

const cache = new Map<string, CompiledWorkflow>();

/** The compiled form of `name`@`version`; throws when it does not exist or has an unknown format. */
export async function loadVersion(db: Db | Tx, name: string, version: number): Promise<CompiledWorkflow> {
  const key = `${name}@${version}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const row = await db.workflowVersion.findUnique({ where: { workflowName_version: { workflowName: name, version } } });
  if (!row) throw new Error(`workflow ${key} is not deployed`);
  const compiled = row.compiled as unknown as CompiledWorkflow;
  if (compiled.format !== COMPILED_FORMAT) throw new Error(`workflow ${key} was compiled to format ${compiled.format}; this engine runs ${COMPILED_FORMAT}`);
  cache.set(key, compiled);
  return compiled;
}

/** The current version number of a workflow, or null when no workflow has that name. */
export async function currentVersion(db: Db | Tx, name: string): Promise<number | null> {
  const wf = await db.workflow.findUnique({ where: { name }, select: { currentVersion: true } });
  return wf?.currentVersion ?? null;
}
