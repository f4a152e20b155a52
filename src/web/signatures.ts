/**
 * What callers see of every deployed workflow's current version (issue 41 items 1 and 4): the
 * signatures of src/sdk/types.ts, for `GET /api/workflows` (`slotflow types --url`) and the
 * per-workflow part of `GET /api/openapi.json`.
 *
 * One query for the list of workflows and their current versions; each version's compiled form is
 * read once per process (engine/versions/workflows.ts `loadVersion` caches it) and its signature
 * is kept here by `name@version` (a deployed version never changes).
 */
import { loadVersion } from "../engine/versions/workflows.js";
import type { Runtime } from "../runtime.js";
import { signatureOf, type WorkflowSignature } from "../sdk/types.js";
import { dependency } from "../engine-client/dependency.js";

/** At most this many signatures are kept; past it the cache starts afresh (they are cheap to make again). */
const MAX_CACHED = 2000;
const cache = new Map<string, WorkflowSignature>();

/** Every deployed workflow's current version, by name (built-ins `slotflow.…` included), sorted by name. */
export async function deployedSignatures(rt: Pick<Runtime, "db" | "log">): Promise<WorkflowSignature[]> {
  const rows = await dependency(rt.log, "database", () => rt.db.workflow.findMany({ select: { name: true, currentVersion: true }, orderBy: { name: "asc" } }));
  const out: WorkflowSignature[] = [];
  for (const row of rows) {
    const key = `${row.name}@${row.currentVersion}`;
    let sig = cache.get(key);
    if (!sig) {
      const compiled = await dependency(rt.log, "database", () => loadVersion(rt.db, row.name, row.currentVersion));
      sig = signatureOf(compiled, row.currentVersion);
      if (cache.size >= MAX_CACHED) cache.clear();
      cache.set(key, sig);
    }
    out.push(sig);
  }
  return out;
}
