/**
 * Runtime values of the flow language and their JSON forms (language reference, "Types").
 *
 * | type | runtime value | JSON form |
 * |---|---|---|
 * | bool | boolean | boolean |
 * | int, decimal | number | number |
 * | string | string | string |
 * | datetime | Date | string, RFC 3339 with offset (written in UTC, `Z`) |
 * | date | CalendarDate (days since 1970-01-01) | string, `YYYY-MM-DD` |
 * | duration | Duration (milliseconds) | string, ISO 8601 (`PT15M`, `P7D`) |
 * | list<T> | array | array |
 * | T? | T or null | T or null |
 */
import type { TypeSpec } from "../compiled.js";
import { nextDepth } from "../../json/depth.js";

/** A length of time in milliseconds. */
export class Duration {
  constructor(readonly ms: number) {}
  toJSON(): string {
    return formatIsoDuration(this.ms);
  }
}

/** One day in milliseconds: the unit of calendar arithmetic (a day is 24 h, as in duration literals). */
const DAY_MS = 86_400_000;

/**
 * A calendar day without a time or a zone (language reference, "Types": `date`): the number of
 * days since 1970-01-01, years 0001 to 9999. Its JSON form is `YYYY-MM-DD`.
 */
export class CalendarDate {
  constructor(readonly day: number) {}
  /** The day `ms` milliseconds later; a part of a day is dropped (toward zero), so `d + 36h` is `d + 1d`. */
  plus(ms: number): CalendarDate {
    return new CalendarDate(this.day + Math.trunc(ms / DAY_MS));
  }
  /** The length from `other` to this day, in whole days. */
  minus(other: CalendarDate): Duration {
    return new Duration((this.day - other.day) * DAY_MS);
  }
  /** The UTC calendar day of an instant (what `today()` gives for the step's time). */
  static of(instant: Date): CalendarDate {
    return new CalendarDate(Math.floor(instant.getTime() / DAY_MS));
  }
  toString(): string {
    return new Date(this.day * DAY_MS).toISOString().slice(0, 10);
  }
  toJSON(): string {
    return this.toString();
  }
}

const CALENDAR_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Parses `YYYY-MM-DD` (a real day of years 0001–9999); null for anything else, times and offsets included. */
export function parseCalendarDate(text: string): CalendarDate | null {
  const m = CALENDAR_DATE.exec(text);
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > 31) return null;
  const probe = new Date(0);
  probe.setUTCFullYear(y, mo - 1, d);
  if (probe.getUTCFullYear() !== y || probe.getUTCMonth() !== mo - 1 || probe.getUTCDate() !== d) return null;
  return new CalendarDate(Math.round(probe.getTime() / DAY_MS));
}

export type Value = null | boolean | number | string | Date | CalendarDate | Duration | Value[] | object;

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const ISO_DURATION = /^P(?!$)(?:(\d+)D)?(?:T(?=\d)(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

/** Parses an RFC 3339 date-time with an offset; null when `text` is not one or names no real instant. */
export function parseRfc3339(text: string): Date | null {
  const m = RFC3339.exec(text);
  if (!m) return null;
  const [, y, mo, d, h, mi, s] = m.map(Number);
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return null;
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) return null;
  // Reject calendar overflow such as 2026-02-30 (Date would roll it into March).
  const probe = new Date(Date.UTC(y, mo - 1, d));
  if (probe.getUTCMonth() !== mo - 1) return null;
  return date;
}

/** Parses an ISO 8601 duration of days, hours, minutes and seconds (`P7D`, `PT15M`, `P1DT2H`). */
export function parseIsoDuration(text: string): Duration | null {
  const m = ISO_DURATION.exec(text);
  if (!m) return null;
  const [d, h, mi, s] = [m[1], m[2], m[3], m[4]].map((x) => (x === undefined ? 0 : Number(x)));
  return new Duration(Math.round(((d * 24 + h) * 60 + mi) * 60_000 + s * 1000));
}

/** Formats milliseconds as an ISO 8601 duration (`P7D`, `PT1H30M`, `PT0.5S`). */
export function formatIsoDuration(ms: number): string {
  const sign = ms < 0 ? "-" : "";
  let rest = Math.abs(ms);
  const days = Math.floor(rest / 86_400_000);
  rest -= days * 86_400_000;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = rest / 1000;
  let out = `${sign}P${days ? `${days}D` : ""}`;
  if (hours || minutes || seconds) {
    out += `T${hours ? `${hours}H` : ""}${minutes ? `${minutes}M` : ""}${seconds ? `${seconds}S` : ""}`;
  }
  return out === `${sign}P` ? "PT0S" : out;
}

/** The JSON type name a client must send for `type`, as shown in a refusal's `expects` map. */
export function jsonTypeName(type: TypeSpec): string {
  let base: string;
  switch (type.kind) {
    case "bool":
      base = "boolean";
      break;
    case "int":
      base = "integer";
      break;
    case "decimal":
      base = "number";
      break;
    case "string":
      base = "string";
      break;
    case "datetime":
      base = "string (RFC 3339 date-time with offset)";
      break;
    case "date":
      base = "string (date, YYYY-MM-DD)";
      break;
    case "duration":
      base = "string (ISO 8601 duration)";
      break;
    case "list":
      base = `array of ${jsonTypeName(type.element)}`;
      break;
    case "entity":
      base = `object (${type.name})`;
      break;
    case "principal":
      base = "principal";
      break;
  }
  return type.optional ? `${base} or null` : base;
}

/**
 * Converts a runtime value to its JSON form. Entities and principals are not values that reach
 * JSON through this path; they are rendered by their owners.
 */
export function toJson(value: Value, depth = 0): unknown {
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Duration) return formatIsoDuration(value.ms);
  if (value instanceof CalendarDate) return value.toString();
  if (Array.isArray(value)) return value.map((v) => toJson(v, nextDepth(depth)));
  return value;
}

/**
 * Converts a JSON value already validated against `type` (see `body.ts`) to its runtime form.
 * Stored JSON (entity rows, slot arguments) is read back through this function as well.
 */
export function fromJson(json: unknown, type: TypeSpec, depth = 0): Value {
  if (json === null || json === undefined) return null;
  switch (type.kind) {
    case "datetime":
      return json instanceof Date ? json : (parseRfc3339(String(json)) ?? new Date(String(json)));
    case "date":
      return json instanceof CalendarDate ? json : (parseCalendarDate(String(json)) ?? CalendarDate.of(new Date(String(json))));
    case "duration":
      return json instanceof Duration ? json : (parseIsoDuration(String(json)) ?? new Duration(0));
    case "list":
      return (json as unknown[]).map((e) => fromJson(e, type.element, nextDepth(depth)));
    default:
      return json as Value;
  }
}

/** Text of a value inside string concatenation and in sent text: null is empty, dates ISO 8601, durations ISO 8601, lists `[a, b]`. */
export function display(v: Value, depth = 0): string {
  if (v === null) return "";
  if (v instanceof Date) return v.toISOString();
  if (v instanceof Duration) return formatIsoDuration(v.ms);
  if (v instanceof CalendarDate) return v.toString();
  if (Array.isArray(v)) return `[${v.map((e) => display(e, nextDepth(depth))).join(", ")}]`;
  return String(v);
}

/** Structural equality of two values (dates by instant, durations by length, lists by element). */
export function equals(a: Value, b: Value, depth = 0): boolean {
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  if (a instanceof Duration && b instanceof Duration) return a.ms === b.ms;
  if (a instanceof CalendarDate && b instanceof CalendarDate) return a.day === b.day;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => equals(x, b[i], nextDepth(depth)));
  return a === b;
}
