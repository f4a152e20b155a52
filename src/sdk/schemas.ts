/**
 * JSON Schemas of a workflow's signature (issue 41 item 4; interfaces.md "The TypeScript SDK"):
 * the run's input, its result, and each event's body with its constraints — what
 * `GET /api/openapi.json` (src/web/openapi.ts) describes per deployed workflow.
 *
 * The same JSON forms as the declarations of types.ts (engine/values/input.ts and body.ts): a
 * workflow or event parameter `T?` is required and may be null; an entity field `T?` may be
 * absent; no other property is taken (`additionalProperties: false`). Constraints: `@min`/`@max`
 * on numbers as `minimum`/`maximum`, on dates as the description (JSON Schema has no date bound);
 * `@minLength`/`@maxLength` as such; `@pattern` as `pattern` anchored at both ends (slotflow runs
 * it with RE2 semantics); `@email` as `format: email`; `@oneOf` as `enum`. Every walk into nested
 * entities stops at MAX_TYPE_DEPTH levels (an unconstrained schema below).
 */
import type { ParamRules, TypeSpec } from "../lang/compiled.js";
import { MAX_TYPE_DEPTH, rulesText, type SignatureParam, type WorkflowSignature } from "./types.js";

type Schema = Record<string, unknown>;

/** The schema of a value of `type` (with `null` allowed when optional) under `rules`. */
function valueSchema(sig: WorkflowSignature, type: TypeSpec, depth: number, rules?: ParamRules): Schema {
  const s = baseSchema(sig, type, depth);
  if (rules) {
    if (typeof rules.min === "number") s.minimum = rules.min;
    if (typeof rules.max === "number") s.maximum = rules.max;
    if (rules.minLength !== undefined) s.minLength = rules.minLength;
    if (rules.maxLength !== undefined) s.maxLength = rules.maxLength;
    if (rules.pattern !== undefined) s.pattern = `^(?:${rules.pattern})$`;
    if (rules.email) s.format = "email";
    if (rules.oneOf !== undefined) s.enum = [...rules.oneOf];
    const text = rulesText(rules);
    if (text) s.description = `${s.description ? `${String(s.description)} ` : ""}${text}`;
  }
  if (!type.optional) return s;
  if (s.enum !== undefined) return { ...s, enum: [...(s.enum as unknown[]), null], type: [s.type, "null"] };
  return typeof s.type === "string" ? { ...s, type: [s.type, "null"] } : { anyOf: [s, { type: "null" }] };
}

function baseSchema(sig: WorkflowSignature, type: TypeSpec, depth: number): Schema {
  switch (type.kind) {
    case "bool":
      return { type: "boolean" };
    case "int":
      return { type: "integer", minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER };
    case "decimal":
      return { type: "number" };
    case "string":
      return { type: "string" };
    case "datetime":
      return { type: "string", format: "date-time" };
    case "date":
      return { type: "string", format: "date" };
    case "duration":
      return { type: "string", format: "duration" };
    case "principal":
      return { description: "A principal (never taken as input)" };
    case "list":
      return { type: "array", items: valueSchema(sig, type.element, depth) };
    case "entity": {
      const entity = sig.entities[type.name];
      if (!entity || depth >= MAX_TYPE_DEPTH) return { type: "object", description: `${type.name} (nested deeper than ${MAX_TYPE_DEPTH} levels)` };
      const properties: Schema = {};
      const required: string[] = [];
      for (const [name, f] of Object.entries(entity.fields)) {
        const s = valueSchema(sig, f.type, depth + 1);
        if (f.minLength !== null) s.minLength = f.minLength;
        if (f.maxLength !== null) s.maxLength = f.maxLength;
        properties[name] = s;
        if (!f.type.optional) required.push(name);
      }
      return { type: "object", title: type.name, additionalProperties: false, properties, ...(required.length ? { required } : {}) };
    }
  }
}

/** An object of parameters: each required (a `T?` one may be null), no other property. */
export function paramsSchema(sig: WorkflowSignature, params: SignatureParam[], description: string): Schema {
  const properties: Schema = {};
  for (const p of params) properties[p.name] = valueSchema(sig, p.type, 0, p.rules);
  return { type: "object", description, additionalProperties: false, properties, ...(params.length ? { required: params.map((p) => p.name) } : {}) };
}

/** A finished run's result: `{state, …fields of the result event}`. */
export function resultSchema(sig: WorkflowSignature): Schema {
  // A `state` parameter of the result event is the terminal state's name (language.md "Results"): kept as the enum.
  const fields = (sig.result !== null ? sig.events[sig.result] ?? [] : []).filter((p) => p.name !== "state");
  const properties: Schema = { state: { type: "string", enum: [...sig.terminalStates].sort(), description: "The terminal state the run finished in" } };
  for (const p of fields) properties[p.name] = valueSchema(sig, p.type, 0, p.rules);
  return {
    type: "object",
    description: `A finished run's result (workflow ${sig.name}${sig.result ? `, returns ${sig.result}: a run that finished without a result statement has only state` : ""})`,
    required: ["state", ...fields.map((p) => p.name)],
    properties,
  };
}
