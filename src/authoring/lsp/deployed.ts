/**
 * What the deployed workflow tells the editor (issue 21 item 2), read from PostgreSQL
 * (DATABASE_URL) with one short-lived connection per question; every failure is an answer of
 * "unknown" (null), never an error to the editor.
 *
 * - `deployedEvents`: the event signatures of the current deployed version of a workflow.
 * - `missingMapFixes`: for each event of the open file whose parameters differ from the deployed
 *   version's and that no `map event E(<deployed params>)` covers — a deploy would be refused
 *   (`version-conflict`, deploy.ts; callback-links spec §9 rule 4) — a quick fix inserting
 *   `map event E(<deployed params>) to E(…)` after the event, each new parameter taken from the
 *   deployed one of the same name and type, else a default of its type.
 */
import { Client } from "pg";
import { CodeActionKind, type CodeAction } from "vscode-languageserver";
import type { CompiledEvent, TypeSpec } from "../../lang/compiled.js";
import type { Analysis } from "./analysis.js";

/** `int`, `string?`, `list<Vendor>` — a TypeSpec as source. */
export function typeText(t: TypeSpec): string {
  const base = t.kind === "list" ? `list<${typeText(t.element)}>` : t.kind === "entity" ? t.name : t.kind;
  return `${base}${t.optional ? "?" : ""}`;
}

/** The current deployed version's events of `workflow`; null when there is none or the database cannot tell. */
export async function deployedEvents(databaseUrl: string | undefined, workflow: string, log: (line: string) => void): Promise<Record<string, CompiledEvent> | null> {
  if (!databaseUrl) return null;
  const client = new Client({ connectionString: databaseUrl, connectionTimeoutMillis: 2000, query_timeout: 3000 });
  try {
    await client.connect();
    const { rows } = await client.query<{ compiled: { events?: Record<string, CompiledEvent> } }>(
      `SELECT v.compiled FROM workflows w JOIN workflow_versions v ON v.workflow_name = w.name AND v.version = w.current_version WHERE w.name = $1`,
      [workflow],
    );
    return rows[0]?.compiled.events ?? null;
  } catch (err) {
    log(`code actions: cannot read the deployed workflow: ${err instanceof Error ? err.message.replace(/postgres(ql)?:\/\/\S*/g, "<database>") : "unknown error"}`);
    return null;
  } finally {
    await client.end().catch(() => undefined);
  }
}

const DEFAULTS: Record<string, string> = { bool: "false", int: "0", decimal: "0.0", string: '""', duration: "0s" };

/** The quick fixes adding a missing `map event` for the events of `a` whose declaration overlaps [start, end] (offsets). */
export function missingMapFixes(a: Analysis, deployed: Record<string, CompiledEvent>, start: number, end: number): CodeAction[] {
  const ast = a.result.ast;
  const compiled = a.result.workflow;
  if (!ast || !compiled) return [];
  const out: CodeAction[] = [];
  for (const decl of ast.events) {
    if (decl.range.end.offset < start || decl.range.start.offset > end) continue;
    const name = decl.name.name;
    const before = Object.hasOwn(deployed, name) ? deployed[name] : null;
    const now = Object.hasOwn(compiled.events, name) ? compiled.events[name] : null;
    if (!before || !now) continue;
    const sig = (e: CompiledEvent) => e.params.map((p) => `${p.name}: ${typeText(p.type)}`).join(", ");
    if (sig(before) === sig(now)) continue;
    const covered = ast.maps.some((m) => m.from.name === name && m.fromParams.map((p) => a.slice(p.range).replace(/\s+/g, " ")).join(", ") === sig(before));
    if (covered) continue;
    const args = now.params.map((p) => {
      const old = before.params.find((q) => q.name === p.name && typeText(q.type) === typeText(p.type));
      const value = old ? old.name : p.type.optional ? "null" : DEFAULTS[p.type.kind] ?? "null";
      return `${p.name}: ${value}`;
    });
    const line = a.position(decl.range.end.offset).line;
    const last = line + 1 >= a.lines.lineStarts.length;
    const at = last ? a.position(a.text.length) : { line: line + 1, character: 0 };
    out.push({
      title: `Add 'map event ${name}(${sig(before)})' for links minted by the deployed version`,
      kind: CodeActionKind.QuickFix,
      edit: { changes: { [a.uri]: [{ range: { start: at, end: at }, newText: `${last ? "\n" : ""}map event ${name}(${sig(before)}) to ${name}(${args.join(", ")})\n` }] } },
    });
  }
  return out;
}
