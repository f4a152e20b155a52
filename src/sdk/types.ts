/**
 * `slotflow types` (issue 41 item 1; interfaces.md "The TypeScript SDK"): TypeScript declarations
 * of workflows, for the typed client (`slotflow/client`, client.ts).
 *
 * Two steps, both pure:
 * - `signatureOf(compiled)` keeps of a compiled workflow (lang/compiled.ts) only what a caller
 *   sees: its input parameters, its entities, its events with their constraints, its result
 *   event, its terminal states and its slots. It is plain JSON, small, and what a server serves
 *   for its deployed workflows (`GET /api/workflows`, src/web/admin.ts), so declarations made
 *   from `.flow` files and from a server are the same text for the same workflows.
 * - `declarations(signatures)` writes the module: `export interface Workflows`, keyed by workflow
 *   name, each with `input`, `result`, `events` (each parameter's constraints as JSDoc) and
 *   `slots` (alias → its event, states, kind and the arguments it takes); events, slots, entity
 *   fields and states in name order (jsonb reorders stored keys), parameters in declaration
 *   order. The text depends on nothing but the signatures (no clock, no paths), so `slotflow check --types` can compare it.
 *
 * JSON forms (what the server takes and answers; engine/values/input.ts and body.ts): `int` and
 * `decimal` are numbers, `datetime` an RFC 3339 string, `date` `YYYY-MM-DD`, `duration` ISO 8601,
 * lists arrays, entities objects of their fields. A workflow parameter or event parameter of type
 * `T?` must be present and may be `null`; an entity field of type `T?` may be absent.
 *
 * Entities may nest (an entity field of an entity type, through optional fields even in a
 * cycle): every walk into them stops at MAX_TYPE_DEPTH levels, writing `unknown` below it.
 *
 * Imports no engine, database or queue module: only the compiled form's types.
 */
import type { CompiledField, CompiledParam, CompiledWorkflow, ParamRules, TypeSpec } from "../lang/compiled.js";

/** The deepest nesting of entity types written out; deeper values are typed `unknown` (issue 41 item 1). */
export const MAX_TYPE_DEPTH = 8;

/** A parameter as callers see it: its name, its type and its constraints (absent when none). */
export interface SignatureParam {
  name: string;
  type: TypeSpec;
  rules?: ParamRules;
}

/** One slot of a state: a `subscribe` or a `call` (v0.5) member. */
export interface SignatureSlot {
  alias: string;
  state: string;
  /** The event it takes (a call's `returns` event, `""` for a call without `returns`). */
  event: string;
  kind: "subscribe" | "call";
  /** `for each`: one slot per element (raise with `element`). */
  fanOut: boolean;
}

/** What a caller of a workflow sees of it (JSON; served by `GET /api/workflows`). */
export interface WorkflowSignature {
  name: string;
  /** The deployed version it describes; null for a workflow compiled from a file. */
  version: number | null;
  input: SignatureParam[];
  entities: Record<string, { fields: Record<string, CompiledField> }>;
  events: Record<string, SignatureParam[]>;
  /** `returns E`: E; null without `returns`. */
  result: string | null;
  terminalStates: string[];
  slots: SignatureSlot[];
}

const param = (p: CompiledParam): SignatureParam => ({ name: p.name, type: p.type, ...(p.rules && Object.keys(p.rules).length > 0 ? { rules: p.rules } : {}) });

/** The caller's view of a compiled workflow (`version`: the deployed version, or null). */
export function signatureOf(wf: CompiledWorkflow, version: number | null = null): WorkflowSignature {
  const entities: WorkflowSignature["entities"] = {};
  for (const [name, e] of Object.entries(wf.entities)) entities[name] = { fields: e.fields };
  const events: WorkflowSignature["events"] = {};
  for (const [name, e] of Object.entries(wf.events)) events[name] = e.params.map(param);
  const states = Object.values(wf.states);
  return {
    name: wf.name,
    version,
    input: wf.params.map(param),
    entities,
    events,
    result: wf.returns ?? null,
    terminalStates: states.filter((s) => s.terminal).map((s) => s.name),
    slots: states.flatMap((s) =>
      s.slots.map((slot) => ({ alias: slot.alias, state: s.name, event: slot.event, kind: slot.kind === "call" ? ("call" as const) : ("subscribe" as const), fanOut: slot.forEach !== null })),
    ),
  };
}

/**
 * Throws a clear Error unless `value` has the shape of a WorkflowSignature (what a server answered
 * may come from another slotflow version); returns it typed.
 */
export function assertSignature(value: unknown, where: string): WorkflowSignature {
  const v = value as Partial<WorkflowSignature> | null;
  const ok =
    v !== null && typeof v === "object" && typeof v.name === "string" && Array.isArray(v.input) && typeof v.entities === "object" && v.entities !== null &&
    typeof v.events === "object" && v.events !== null && Array.isArray(v.terminalStates) && Array.isArray(v.slots);
  if (!ok) throw new Error(`${where}: not a workflow signature (is the server a slotflow of the same version?)`);
  return v as WorkflowSignature;
}

// --- the TypeScript text -------------------------------------------------------------------

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const key = (name: string) => (IDENT.test(name) ? name : JSON.stringify(name));
/** Name order, so a signature read back from PostgreSQL's jsonb (which reorders object keys) writes the same text. */
const byName = <T>(entries: [string, T][]): [string, T][] => entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
const literalUnion = (names: string[]) => (names.length === 0 ? "never" : names.map((n) => JSON.stringify(n)).join(" | "));

/** The constraints as the workflow writes them: `@min(0) @maxLength(200)`; "" when none. */
export function rulesText(rules: ParamRules | undefined, field?: Pick<CompiledField, "minLength" | "maxLength">): string {
  const out: string[] = [];
  const r = rules ?? {};
  if (r.min !== undefined) out.push(`@min(${typeof r.min === "string" && r.min !== "today" ? JSON.stringify(r.min) : r.min})`);
  if (r.max !== undefined) out.push(`@max(${typeof r.max === "string" && r.max !== "today" ? JSON.stringify(r.max) : r.max})`);
  const minLength = r.minLength ?? field?.minLength ?? null;
  const maxLength = r.maxLength ?? field?.maxLength ?? null;
  if (minLength !== null) out.push(`@minLength(${minLength})`);
  if (maxLength !== null) out.push(`@maxLength(${maxLength})`);
  if (r.pattern !== undefined) out.push(`@pattern(${JSON.stringify(r.pattern)})`);
  if (r.email) out.push("@email");
  if (r.oneOf !== undefined) out.push(`@oneOf(${r.oneOf.map((o) => JSON.stringify(o)).join(", ")})`);
  return out.join(" ");
}

/** A JSDoc comment line for `text` (never closing the comment early); "" for no text. */
const doc = (indent: string, text: string) => (text ? `${indent}/** ${text.replace(/\*\//g, "*\\/")} */\n` : "");

class Writer {
  constructor(private readonly sig: WorkflowSignature) {}

  /**
   * The TypeScript type of a value of `type` (with `| null` when optional), `depth` entity levels
   * down; a `string` with `@oneOf` is the union of its choices.
   */
  type(type: TypeSpec, indent: string, depth: number, rules?: ParamRules): string {
    const base = type.kind === "string" && rules?.oneOf !== undefined && rules.oneOf.length > 0 ? literalUnion(rules.oneOf) : this.base(type, indent, depth);
    return type.optional ? `${base} | null` : base;
  }

  private base(type: TypeSpec, indent: string, depth: number): string {
    switch (type.kind) {
      case "bool":
        return "boolean";
      case "int":
      case "decimal":
        return "number";
      case "string":
      case "datetime":
      case "date":
      case "duration":
        return "string";
      case "principal":
        return "unknown";
      case "list": {
        const element = this.type(type.element, indent, depth);
        return type.element.optional || /[ |]/.test(element) ? `Array<${element}>` : `${element}[]`;
      }
      case "entity": {
        const entity = this.sig.entities[type.name];
        if (!entity || depth >= MAX_TYPE_DEPTH) return "unknown";
        const inner = `${indent}  `;
        const lines = byName(Object.entries(entity.fields)).map(([name, f]) => {
          const what = [kindNote(f.type), rulesText(undefined, f)].filter(Boolean).join(" ");
          return `${doc(inner, what)}${inner}${key(name)}${f.type.optional ? "?" : ""}: ${this.type(f.type, inner, depth + 1)};\n`;
        });
        return lines.length === 0 ? "Record<string, never>" : `{\n${lines.join("")}${indent}}`;
      }
    }
  }

  /** An object type of parameters (each key present; `T?` may be null). */
  params(params: SignatureParam[], indent: string): string {
    if (params.length === 0) return "Record<string, never>";
    const inner = `${indent}  `;
    const lines = params.map((p) => {
      const what = [kindNote(p.type), rulesText(p.rules)].filter(Boolean).join(" ");
      return `${doc(inner, what)}${inner}${key(p.name)}: ${this.type(p.type, inner, 0, p.rules)};\n`;
    });
    return `{\n${lines.join("")}${indent}}`;
  }
}

/** What a string-typed value holds, for the JSDoc (`datetime`: RFC 3339…); "" for the rest. */
function kindNote(type: TypeSpec): string {
  switch (type.kind) {
    case "datetime":
      return "RFC 3339 date-time.";
    case "date":
      return "YYYY-MM-DD.";
    case "duration":
      return "ISO 8601 duration (PT15M, P7D).";
    case "decimal":
      return "A decimal number.";
    default:
      return "";
  }
}

/** One workflow's member of `interface Workflows`. */
function workflowType(sig: WorkflowSignature): string {
  const w = new Writer(sig);
  const i2 = "    ";
  const i3 = "      ";
  const events = byName(Object.entries(sig.events))
    .map(([name, params]) => `${i3}${key(name)}: ${w.params(params, i3)};\n`)
    .join("");
  // A `state` parameter of the result event is the terminal state's name (language.md "Results"): typed once, by the union.
  const resultFields = (sig.result !== null ? sig.events[sig.result] ?? [] : []).filter((p) => p.name !== "state");
  const resultType =
    `{\n${i3}/** The terminal state the run finished in. */\n${i3}state: ${literalUnion([...sig.terminalStates].sort())};\n` +
    resultFields.map((p) => `${doc(i3, rulesText(p.rules))}${i3}${key(p.name)}: ${w.type(p.type, i3, 0, p.rules)};\n`).join("") +
    `${i2}}`;
  const byAlias = new Map<string, SignatureSlot[]>();
  for (const s of sig.slots) byAlias.set(s.alias, [...(byAlias.get(s.alias) ?? []), s]);
  const slots = byName([...byAlias])
    .map(([alias, list]) => {
      const eventNames = [...new Set(list.map((s) => s.event))].sort();
      const args = eventNames.map((e) => (e === "" ? "Record<string, never>" : `Workflows[${JSON.stringify(sig.name)}]["events"][${JSON.stringify(e)}]`)).join(" | ");
      const kinds = [...new Set(list.map((s) => s.kind))].sort();
      return (
        `${i3}${key(alias)}: {\n` +
        `${i3}  event: ${literalUnion(eventNames)};\n` +
        `${i3}  states: ${literalUnion([...new Set(list.map((s) => s.state))].sort())};\n` +
        `${i3}  kind: ${literalUnion(kinds)};\n` +
        `${i3}  /** \`for each\`: one slot per element (raise it with \`element\`). */\n` +
        `${i3}  fanOut: ${list.some((s) => s.fanOut)};\n` +
        `${i3}  /** The arguments it takes: its event's parameters. */\n` +
        `${i3}  args: ${args};\n` +
        `${i3}};\n`
      );
    })
    .join("");
  const header = `workflow ${sig.name}${sig.version === null ? "" : ` (version ${sig.version})`}`;
  return (
    `${doc("  ", header)}  ${key(sig.name)}: {\n` +
    `${i2}/** The run's input: the workflow's parameters by name. */\n` +
    `${i2}input: ${w.params(sig.input, i2)};\n` +
    `${i2}/**\n${i2} * A finished run's result: {state, …the fields of the last \`result { … }\`}${sig.result ? ` (event ${sig.result})` : ""}.\n` +
    (sig.result ? `${i2} * A run that finished without any \`result\` statement having run has only \`state\`.\n` : "") +
    `${i2} */\n` +
    `${i2}result: ${resultType};\n` +
    `${i2}/** Each event's parameters (constraints as the workflow writes them). */\n` +
    `${i2}events: ${events ? `{\n${events}${i2}}` : "Record<string, never>"};\n` +
    `${i2}/** Each slot alias and what it takes. */\n` +
    `${i2}slots: ${slots ? `{\n${slots}${i2}}` : "Record<string, never>"};\n` +
    `  };\n`
  );
}

/** The line that separates the header (provenance, free to differ) from the compared body. */
export const BODY_MARKER = "// --- generated declarations (compared by `slotflow check --types`) ---";

/**
 * The declarations module for `signatures` (sorted by name; a name given twice is an Error naming
 * it). `from` says in the header where they came from (files or a server URL without credentials).
 */
export function declarations(signatures: WorkflowSignature[], from: string): string {
  const seen = new Set<string>();
  for (const s of signatures) {
    if (seen.has(s.name)) throw new Error(`workflow ${s.name} is declared twice (two files declare the same workflow)`);
    seen.add(s.name);
  }
  const sorted = [...signatures].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return (
    `// Generated by \`slotflow types\` from ${from.replace(/[\r\n]/g, " ")}. Do not edit: generate again.\n` +
    `// \`slotflow check --types <this file> <the .flow files>\` says when it is stale.\n` +
    `/* eslint-disable */\n` +
    `${BODY_MARKER}\n\n` +
    declarationsBody(sorted)
  );
}

function declarationsBody(sorted: WorkflowSignature[]): string {
  return (
    `/** The workflows, keyed by name: for \`createClient<Workflows>(…)\` of "slotflow/client". */\n` +
    `export interface Workflows {\n${sorted.map(workflowType).join("")}}\n\n` +
    `/** A workflow's name. */\n` +
    `export type WorkflowName = keyof Workflows;\n`
  );
}

/** The part of a declarations module `slotflow check --types` compares (after BODY_MARKER); null when the marker is missing. */
export function comparedPart(text: string): string | null {
  const at = text.indexOf(BODY_MARKER);
  return at < 0 ? null : text.slice(at + BODY_MARKER.length).replace(/\r\n/g, "\n");
}
