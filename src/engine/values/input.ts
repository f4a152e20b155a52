/**
 * Run input — the body of a start — checked against a workflow's parameters, recursively
 * (issue 8 items 14–16; language reference "Types and values", "Workflow header and parameters").
 *
 * Rules, at every depth:
 * - the input is a JSON object holding exactly the workflow's parameters, each present (a `T?`
 *   parameter may be `null` but must be there), as for event bodies;
 * - `bool` a boolean; `int` an integer within ±(2^53−1); `decimal` a finite number; `string` a
 *   string; `datetime` an RFC 3339 string with an offset; `date` a `YYYY-MM-DD` string naming a
 *   real day (no time, no offset); `duration` an ISO 8601 duration;
 * - `list<T>` an array of at most `maxFanOut` elements, each a T (a list is what `for each` fans
 *   out over, so this bounds every fan-out; issue 8 item 16);
 * - an entity E — a parameter, a field of another entity, a list element — an object of E's
 *   fields: a missing optional field is `null`, a missing or `null` required field is refused, a
 *   property E does not declare is refused (`__proto__`, `constructor` and `$sealed` included —
 *   field names are identifiers, so no stored sealed value can be forged through input), and
 *   `@minLength`/`@maxLength` hold;
 * - objects and arrays nest at most `maxInputDepth` levels (the input object is level 1);
 * - no string or property name holds a character PostgreSQL cannot store (storable.ts);
 * - the stored form (normalised JSON) is at most `maxInputBytes` UTF-8 bytes.
 *
 * Every problem names its path (`holder.inner.s`, `rows[2].name`). A refusal is 422
 * `invalid-body` with `errors: [{name, problem}]` and `expects`, or 413 `payload-too-large` for
 * the size. The walk never descends past the depth limit, so no input can exhaust the stack.
 *
 * The result holds only declared names, rebuilt from scratch: no caller's object reaches storage.
 */
import { DEFAULT_LIMITS, type Limits } from "../../config.js";
import type { CompiledEntity, CompiledWorkflow, TypeSpec } from "../../lang/compiled.js";
import { expectsOf } from "./body.js";
import { RefusalCode, refuse, type Refusal } from "../refusals.js";
import type { EntityRecord } from "../step.js";
import { unstorable } from "../../json/storable.js";
import { formatIsoDuration, fromJson, jsonTypeName, parseCalendarDate, parseIsoDuration, parseRfc3339, type Value } from "../../lang/runtime/values.js";
import { didYouMean } from "../../lang/near-names.js";

export interface InputProblem {
  /** Path of the value: a parameter name, then `.field` and `[index]` steps. */
  name: string;
  problem: string;
}

export type InputCheck =
  | { ok: true; input: Record<string, unknown>; entities: EntityRecord[] }
  | { ok: false; refusal: Refusal };

/** At most this many problems are listed in one refusal; the last entry counts the rest. */
const MAX_PROBLEMS = 100;

const own = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const article = (noun: string) => (/^[aeiou]/.test(noun) ? `an ${noun}` : `a ${noun}`);
/** A property name as shown in a path: long or odd names are shortened, never echoed whole. */
const showKey = (k: string) => (k.length > 64 ? `${k.slice(0, 61)}…` : k);

class Walker {
  readonly problems: InputProblem[] = [];
  constructor(
    private readonly entities: Record<string, CompiledEntity>,
    private readonly limits: Limits,
  ) {}

  problem(name: string, problem: string): void {
    this.problems.push({ name, problem });
  }

  /** Checks `json` against `type` at `path` (nesting level `depth`); returns its normalised JSON form. */
  value(json: unknown, type: TypeSpec, path: string, depth: number): unknown {
    if (json === null) {
      if (!type.optional) this.problem(path, `must be ${article(jsonTypeName({ ...type, optional: false } as TypeSpec))}, not null`);
      return null;
    }
    const expected = `must be ${article(jsonTypeName({ ...type, optional: false } as TypeSpec))}`;
    switch (type.kind) {
      case "bool":
        if (typeof json !== "boolean") this.problem(path, expected);
        return json;
      case "int":
        if (typeof json !== "number" || !Number.isSafeInteger(json)) this.problem(path, expected);
        return json;
      case "decimal":
        if (typeof json !== "number" || !Number.isFinite(json)) this.problem(path, expected);
        return json;
      case "string":
        if (typeof json !== "string") this.problem(path, expected);
        else this.storable(json, path);
        return json;
      case "datetime": {
        const d = typeof json === "string" ? parseRfc3339(json) : null;
        if (d === null) this.problem(path, `${expected}, such as 2026-11-21T09:30:00Z`);
        return d?.toISOString() ?? null;
      }
      case "date": {
        const d = typeof json === "string" ? parseCalendarDate(json) : null;
        if (d === null) this.problem(path, `${expected}, such as 2026-11-21`);
        return d?.toString() ?? null;
      }
      case "duration": {
        const d = typeof json === "string" ? parseIsoDuration(json) : null;
        if (d === null) this.problem(path, `${expected}, such as PT15M or P7D`);
        return d === null ? null : formatIsoDuration(d.ms);
      }
      case "list": {
        if (!Array.isArray(json)) return this.problem(path, expected), null;
        if (!this.deeper(path, depth)) return null;
        if (json.length > this.limits.maxFanOut) {
          return this.problem(path, `has ${json.length} elements; a list in run input takes at most ${this.limits.maxFanOut} (SLOTFLOW_MAX_FANOUT)`), null;
        }
        return json.map((e, i) => this.value(e, type.element, `${path}[${i}]`, depth + 1));
      }
      case "entity":
        return this.entity(json, this.entities[type.name], path, depth);
      case "principal":
        return this.problem(path, "cannot be given as input"), null;
    }
  }

  /** An object of `entity`'s fields; missing optional fields become null. */
  entity(json: unknown, entity: CompiledEntity, path: string, depth: number): Record<string, unknown> | null {
    if (!isObject(json)) return this.problem(path, `must be an object of ${entity.name}'s fields`), null;
    if (!this.deeper(path, depth)) return null;
    for (const key of Object.keys(json)) {
      if (!own(entity.fields, key)) this.problem(`${path}.${showKey(key)}`, `is not a field of ${entity.name}${didYouMean(key, Object.keys(entity.fields))}`);
    }
    const out: Record<string, unknown> = {};
    for (const [name, field] of Object.entries(entity.fields)) {
      const at = `${path}.${name}`;
      if (!own(json, name) || json[name] === null) {
        if (!field.type.optional) this.problem(at, "is required");
        out[name] = null;
        continue;
      }
      const v = this.value(json[name], field.type, at, depth + 1);
      if (typeof v === "string" && field.type.kind === "string") {
        if (field.maxLength !== null && v.length > field.maxLength) this.problem(at, `takes at most ${field.maxLength} characters`);
        if (field.minLength !== null && v.length < field.minLength) this.problem(at, `takes at least ${field.minLength} characters`);
      }
      out[name] = v;
    }
    return out;
  }

  /** False (with a problem) when a container at `depth + 1` would pass the nesting limit. */
  private deeper(path: string, depth: number): boolean {
    if (depth + 1 <= this.limits.maxInputDepth) return true;
    this.problem(path, `nests deeper than ${this.limits.maxInputDepth} levels (SLOTFLOW_MAX_INPUT_DEPTH)`);
    return false;
  }

  storable(text: string, path: string): void {
    const bad = unstorable(text);
    if (bad) this.problem(path, `${bad.problem} (at character ${bad.offset})`);
  }
}

/**
 * Checks `input` against `workflow`'s parameters. On success: the JSON input of the parameters
 * that are not entities (stored on the run) and the tracked rows to create, as runtime values.
 */
export function checkInput(workflow: CompiledWorkflow, input: unknown, limits: Limits = DEFAULT_LIMITS): InputCheck {
  const invalid = (problems: InputProblem[]): InputCheck => {
    const shown = problems.length > MAX_PROBLEMS ? [...problems.slice(0, MAX_PROBLEMS - 1), { name: "", problem: `and ${problems.length - MAX_PROBLEMS + 1} more problems` }] : problems;
    return {
      ok: false,
      refusal: refuse(
        RefusalCode.InvalidBody,
        `The run input does not match ${workflow.name}'s parameters: ${shown.map((p) => (p.name ? `"${p.name}" ${p.problem}` : p.problem)).join("; ")}.`,
        { errors: shown, expects: expectsOf(workflow.params) },
      ),
    };
  };
  if (!isObject(input)) return invalid([{ name: "", problem: "the run input must be a JSON object of the workflow's parameters" }]);
  const walker = new Walker(workflow.entities, limits);
  const declared = new Set(workflow.params.map((p) => p.name));
  for (const key of Object.keys(input)) {
    if (!declared.has(key)) walker.problem(showKey(key), `is not a parameter of ${workflow.name}${didYouMean(key, [...declared])}`);
  }
  const json: Record<string, unknown> = {};
  const entities: EntityRecord[] = [];
  for (const p of workflow.params) {
    if (!own(input, p.name)) {
      walker.problem(p.name, p.type.optional ? "is required (send null for none)" : "is required");
      continue;
    }
    if (p.type.kind === "entity") {
      const entity = workflow.entities[p.type.name];
      const row = walker.entity(input[p.name], entity, p.name, 1);
      if (row === null) continue;
      const data: Record<string, Value> = {};
      for (const [name, f] of Object.entries(entity.fields)) data[name] = fromJson(row[name], f.type);
      entities.push({ name: p.name, entity: entity.name, data });
      continue;
    }
    json[p.name] = walker.value(input[p.name], p.type, p.name, 1);
  }
  if (walker.problems.length > 0) return invalid(walker.problems);
  const bytes = Buffer.byteLength(JSON.stringify({ json, entities }), "utf8");
  if (bytes > limits.maxInputBytes) {
    return {
      ok: false,
      refusal: refuse(RefusalCode.PayloadTooLarge, `The run input is ${bytes} bytes; a run's input takes at most ${limits.maxInputBytes} (SLOTFLOW_MAX_INPUT_BYTES).`, {
        limit: limits.maxInputBytes,
      }),
    };
  }
  return { ok: true, input: json, entities };
}
