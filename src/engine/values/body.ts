/**
 * Checks a JSON body against a parameter list (an event's signature, or a workflow's input), with
 * yup. Rules (callback-links spec §2 "Callback request body"; language reference "Types"):
 *
 * - the body is a JSON object; for an empty parameter list it may also be absent (or `{}`). A
 *   body that is present is judged as sent: `null`, an array or a scalar is refused for every
 *   event, even one without parameters (issue 8 item 4: a body is never treated as "no body");
 * - exactly the declared names: each one required (`T?` may be null but must be present), and a
 *   property the list does not declare is refused — `__proto__`, `constructor` and `prototype`
 *   included, as ordinary names;
 * - no string may hold U+0000 or an unpaired surrogate, which PostgreSQL cannot store (issue 8
 *   item 5; storable.ts): refused naming the parameter (`note`, `tags[1]`);
 * - `int` is an integer within ±(2^53−1); `decimal` any finite number; `datetime` an RFC 3339
 *   string with an offset; `date` a `YYYY-MM-DD` string naming a real day; `duration` an ISO 8601
 *   string; lists are checked element by element.
 *
 * - no value nests deeper than MAX_JSON_DEPTH (512; depth.ts), checked without recursion first
 *   (issue 16; over HTTP the tighter SLOTFLOW_MAX_INPUT_DEPTH already applied before parsing).
 *
 * - v0.5 (issue 43): a value of the right type must also keep its parameter's constraints
 *   (`@min`, `@max`, `@minLength`, `@maxLength`, `@pattern`, `@email`, `@oneOf`; rules.ts); each
 *   broken rule is a problem naming the parameter and the rule (`{name, problem, rule}`).
 *
 * This is the one check of an event's body on every door: the link (JSON and the responder page),
 * the task page, the raise API, the Slack modal and the built-in workflows MCP agents start.
 *
 * `checkBody` never throws on any input: it returns the converted runtime arguments, or the list of
 * problems plus the `expects` map for the 422 `invalid-body` answer: name → the JSON type, followed
 * by the parameter's constraints as written when it has any (`"number @min(0)"`,
 * `"string @minLength(1) @maxLength(200)"`) — a parameter without constraints reads as before.
 */
import * as yup from "yup";
import type { CompiledParam, TypeSpec } from "../../lang/compiled.js";
import { UNSTORABLE_PROBLEM, unstorablePaths } from "../../json/storable.js";
import { fromJson, jsonTypeName, parseCalendarDate, parseIsoDuration, parseRfc3339, type Value } from "../../lang/runtime/values.js";
import { MAX_JSON_DEPTH, valueDepthExceeds } from "../../json/depth.js";
import { ruleProblems, rulesText } from "./rules.js";

export interface BodyProblem {
  /** The parameter (or nested path, `tags[2]`) the problem is about; "" for the body itself. */
  name: string;
  problem: string;
  /** v0.5: the constraint broken, as written in the workflow (`@min(0)`); absent for a type problem. */
  rule?: string;
}

/** How `checkBody` checks. */
export interface BodyCheckOptions {
  /** The instant of the check, for `today` in date rules (default: the clock now; a step passes its `now`). */
  now?: Date;
  /**
   * False to check names and types only: a link minted under an earlier version was held to that
   * version's rules, and its translated arguments are not held to the current ones (versioning.ts).
   */
  rules?: boolean;
}

export type BodyCheck =
  | { ok: true; args: Record<string, Value> }
  | { ok: false; problems: BodyProblem[]; expects: Record<string, string>; detail: string };

const schemaCache = new WeakMap<readonly CompiledParam[], yup.ObjectSchema<yup.AnyObject>>();

function valueSchema(type: TypeSpec): yup.Schema {
  let s: yup.Schema;
  const expected = jsonTypeName({ ...type, optional: false } as TypeSpec);
  const typeError = `must be ${withArticle(expected)}`;
  switch (type.kind) {
    case "bool":
      s = yup.boolean().strict().typeError(typeError);
      break;
    case "int":
      s = yup
        .number()
        .strict()
        .typeError(typeError)
        .test("int", typeError, (v) => v == null || Number.isSafeInteger(v));
      break;
    case "decimal":
      s = yup.number().strict().typeError(typeError);
      break;
    case "string":
      s = yup.string().strict().typeError(typeError);
      break;
    case "datetime":
      s = yup
        .string()
        .strict()
        .typeError(typeError)
        .test("rfc3339", typeError + ", such as 2026-11-21T09:30:00Z", (v) => v == null || parseRfc3339(v) !== null);
      break;
    case "date":
      s = yup
        .string()
        .strict()
        .typeError(typeError)
        .test("date", typeError + ", such as 2026-11-21", (v) => v == null || parseCalendarDate(v) !== null);
      break;
    case "duration":
      s = yup
        .string()
        .strict()
        .typeError(typeError)
        .test("iso8601", typeError + ", such as PT15M or P7D", (v) => v == null || parseIsoDuration(v) !== null);
      break;
    case "list":
      s = yup.array().strict().typeError(typeError).of(valueSchema(type.element));
      break;
    default:
      // Entities and principals are refused by the checker in events; as input they are objects
      // whose fields are checked by the engine when it creates the tracked row.
      s = yup.object().strict().typeError(typeError);
  }
  return type.optional ? s.nullable().defined(`is required (send null for none)`) : s.nonNullable(typeError).defined("is required");
}

function withArticle(noun: string): string {
  return /^[aeiou]/.test(noun) ? `an ${noun}` : `a ${noun}`;
}

function objectSchema(params: readonly CompiledParam[]): yup.ObjectSchema<yup.AnyObject> {
  let schema = schemaCache.get(params);
  if (!schema) {
    const shape: Record<string, yup.Schema> = {};
    for (const p of params) shape[p.name] = valueSchema(p.type);
    schema = yup.object(shape).strict();
    schemaCache.set(params, schema);
  }
  return schema;
}

/**
 * Name → JSON type, then the parameter's constraints as written when it has any (v0.5:
 * `"number @min(0)"`), for the `expects` member of an `invalid-body` answer.
 */
export function expectsOf(params: readonly CompiledParam[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of params) out[p.name] = [jsonTypeName(p.type), ...rulesText(p.rules)].join(" ");
  return out;
}

/** A sentence saying what the response takes, for the `detail` of an `invalid-body` answer. */
export function describeExpected(params: readonly CompiledParam[]): string {
  if (params.length === 0) return "This response takes no body (send nothing, or {}).";
  const parts = params.map((p) => `"${p.name}" (${[jsonTypeName(p.type), ...rulesText(p.rules)].join(" ")})`);
  return `This response takes a JSON object with exactly these properties, all required: ${parts.join(", ")}.`;
}

/**
 * Checks `body` (the parsed JSON, or `undefined` when the request carried no body) against `params`.
 * Returns the arguments converted to runtime values, by name.
 */
export function checkBody(body: unknown, params: readonly CompiledParam[], options: BodyCheckOptions = {}): BodyCheck {
  const refuse = (problems: BodyProblem[]): BodyCheck => ({
    ok: false,
    problems,
    expects: expectsOf(params),
    detail: `${describeExpected(params)} ${problems.map((p) => (p.name ? `"${p.name}" ${p.problem}${p.rule ? ` (${p.rule})` : ""}` : p.problem)).join("; ")}.`,
  });
  if (body === undefined) body = {};
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return refuse([{ name: "", problem: "the body must be a JSON object" }]);
  }
  // Bodies over HTTP were measured before parsing (request-body.ts); values handed in directly
  // (the testing kit) are measured here, without recursion, before any walk (issue 16).
  if (valueDepthExceeds(body, MAX_JSON_DEPTH)) return refuse([{ name: "", problem: `nests deeper than ${MAX_JSON_DEPTH} levels` }]);
  const declared = new Set(params.map((p) => p.name));
  const problems: BodyProblem[] = [];
  for (const key of Object.keys(body)) {
    if (!declared.has(key)) problems.push({ name: key, problem: "is not a parameter of this event" });
  }
  // Validate a null-prototype copy holding only declared names, so that keys such as
  // "__proto__" or "constructor" never reach yup or an object's prototype chain.
  const copy: Record<string, unknown> = Object.create(null);
  for (const p of params) {
    if (Object.prototype.hasOwnProperty.call(body, p.name)) copy[p.name] = (body as Record<string, unknown>)[p.name];
  }
  try {
    objectSchema(params).validateSync({ ...copy }, { abortEarly: false, stripUnknown: false });
  } catch (err) {
    if (!(err instanceof yup.ValidationError)) throw err;
    for (const e of err.inner.length ? err.inner : [err]) {
      problems.push({ name: e.path ?? "", problem: e.errors[0] ?? "is not valid" });
    }
  }
  for (const p of params) {
    for (const at of unstorablePaths(copy[p.name], p.name)) problems.push({ name: at, problem: UNSTORABLE_PROBLEM });
  }
  if (options.rules !== false) {
    // Constraints (v0.5) on the parameters whose type is right: a type problem is reported alone.
    const typeWrong = new Set(problems.map((p) => p.name.split(/[.[]/)[0]));
    const now = options.now ?? new Date();
    for (const p of params) {
      if (!p.rules || typeWrong.has(p.name)) continue;
      for (const r of ruleProblems(copy[p.name], p.type, p.rules, now)) problems.push({ name: p.name, problem: r.problem, rule: r.rule });
    }
  }
  if (problems.length > 0) return refuse(problems);
  const args: Record<string, Value> = {};
  for (const p of params) args[p.name] = fromJson(copy[p.name], p.type);
  return { ok: true, args };
}
