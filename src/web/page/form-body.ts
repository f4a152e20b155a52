/**
 * A form of form.ts posted without script (`application/x-www-form-urlencoded`), read back into
 * the JSON body of an event — the same mapping the responder page's script makes in the browser
 * (script.ts `read`), done on the server so that the task page works without JavaScript (v0.4
 * "People inside the company": `POST /inbox/tasks/{runId}/{alias}`).
 *
 * Control names (form.ts): `<param>`; `<param>.offset` (datetime), `<param>.unit` (duration);
 * `<param>.<row>` for a list item (its own `.offset` / `.unit`); `<param>.none` = "true" for a
 * list's "None". Parameter names are identifiers, so a dot never belongs to one.
 *
 * Per type, a value left empty is absent (`undefined`: the body check then says "is required"), or
 * null for an optional parameter; otherwise —
 *   bool      "true" / "false" → true / false; "null" (the "No answer" choice) → null
 *   string    as typed ("" is "" for `string`, null for `string?`)
 *   int, decimal  a decimal numeral → its number; anything else is passed on as the string typed,
 *             so the ordinary body check refuses it at its field
 *   datetime  `YYYY-MM-DDTHH:MM[:SS]` + the chosen offset (RFC 3339)
 *   duration  a whole number + unit → `PT15M`, `PT3H`, `P3D`
 *   list<T>   its rows in order, each read as T; a blank row (nothing typed or chosen) is left out
 *   others    (a list of lists…) JSON typed by hand: parsed, or passed on as the string typed
 * Nothing here refuses: every judgement is the ordinary body check's (src/engine/values/body.ts).
 */
import type { CompiledParam, TypeSpec } from "../../lang/compiled.js";
import { nextDepth } from "../../json/depth.js";

const ROW_ID = /^[A-Za-z0-9_-]{1,40}$/;
const NUMERAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** The ids of list `param`'s rows present in `form`, in order of appearance (at most `max`). */
export function listRows(param: string, form: URLSearchParams, max = 1000): string[] {
  const ids: string[] = [];
  const prefix = `${param}.`;
  for (const key of form.keys()) {
    if (!key.startsWith(prefix)) continue;
    const id = key.slice(prefix.length).split(".")[0]!;
    if (id === "none" || !ROW_ID.test(id) || ids.includes(id)) continue;
    ids.push(id);
    if (ids.length >= max) break;
  }
  return ids;
}

/** One value of `type` from the control named `name`; undefined when nothing was given. */
function readValue(type: TypeSpec, name: string, form: URLSearchParams, depth = 0): unknown {
  const raw = form.get(name);
  const empty = (): unknown => (type.optional ? null : undefined);
  switch (type.kind) {
    case "bool":
      if (raw === null || raw === "") return undefined;
      if (raw === "null") return null;
      return raw === "true" ? true : raw === "false" ? false : raw;
    case "list": {
      if (form.get(`${name}.none`) === "true") return null;
      const items: unknown[] = [];
      for (const id of listRows(name, form)) {
        const rowName = `${name}.${id}`;
        const v = form.get(rowName);
        if (type.element.kind !== "bool" && (v === null || v.trim() === "")) continue; // a blank row
        const item = readValue({ ...type.element, optional: type.element.optional }, rowName, form, nextDepth(depth));
        if (item !== undefined) items.push(item);
      }
      return items;
    }
    case "string":
      if (raw === null) return undefined;
      return raw === "" && type.optional ? null : raw;
    case "int":
    case "decimal":
      if (raw === null || raw.trim() === "") return empty();
      return NUMERAL.test(raw.trim()) ? Number(raw.trim()) : raw;
    case "datetime": {
      if (raw === null || raw.trim() === "") return empty();
      const off = form.get(`${name}.offset`) ?? "Z";
      const v = raw.trim();
      return (v.length === 16 ? `${v}:00` : v) + off;
    }
    case "date":
      // a date picker's value is already the JSON form, "YYYY-MM-DD"; the event's check judges it
      if (raw === null || raw.trim() === "") return empty();
      return raw.trim();
    case "duration": {
      if (raw === null || raw.trim() === "") return empty();
      const unit = form.get(`${name}.unit`);
      const u = unit === "M" || unit === "D" ? unit : "H";
      return /^\d{1,9}$/.test(raw.trim()) ? `${u === "D" ? "P" : "PT"}${Number(raw.trim())}${u}` : raw;
    }
    default: {
      if (raw === null || raw.trim() === "") return empty();
      try {
        return JSON.parse(raw) as unknown;
      } catch {
        return raw;
      }
    }
  }
}

/** The JSON body of an event with `params` from a posted form (see the module header). */
export function formBody(params: CompiledParam[], form: URLSearchParams): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const p of params) {
    const v = readValue(p.type, p.name, form);
    if (v !== undefined) body[p.name] = v;
  }
  return body;
}
