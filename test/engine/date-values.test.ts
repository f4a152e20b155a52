/**
 * The `date` value (language reference, "Types"): a calendar day whose JSON form is `YYYY-MM-DD`,
 * checked in event bodies (body.ts) and run input (input.ts), and its calendar arithmetic.
 * No database: the checks on their own.
 */
import test from "ava";
import { checkBody } from "../../src/engine/values/body.js";
import { checkInput } from "../../src/engine/values/input.js";
import { CalendarDate, fromJson, parseCalendarDate, toJson } from "../../src/lang/runtime/values.js";
import { compile } from "../../src/lang/compile.js";

const workflow = compile(`workflow W(start: date, later: date?, o: O)
entity O { due: date; days: list<date> }
event Confirm(day: date, maybe: date?)
initial state S { }
terminal state T
`).workflow!;

test("parseCalendarDate accepts real days YYYY-MM-DD and nothing else", (t) => {
  t.is(parseCalendarDate("2026-11-21")?.toString(), "2026-11-21");
  t.is(parseCalendarDate("2028-02-29")?.toString(), "2028-02-29", "a leap day");
  t.is(parseCalendarDate("0001-01-01")?.toString(), "0001-01-01");
  for (const bad of ["2026-02-29", "2026-13-01", "2026-00-10", "2026-11-31", "2026-11-21T00:00:00Z", "2026-11-21Z", "26-11-21", "2026-1-2", " 2026-11-21", "0000-01-01", "", "21/11/2026"]) {
    t.is(parseCalendarDate(bad), null, bad);
  }
});

test("calendar arithmetic: a date plus days, the days between two dates, today() of an instant in UTC", (t) => {
  const d = parseCalendarDate("2026-12-30")!;
  t.is(d.plus(3 * 86_400_000).toString(), "2027-01-02");
  t.is(d.plus(-31 * 86_400_000).toString(), "2026-11-29");
  t.is(d.plus(36 * 3_600_000).toString(), "2026-12-31", "a part of a day is dropped");
  t.is(parseCalendarDate("2027-03-01")!.minus(parseCalendarDate("2027-02-27")!).ms, 2 * 86_400_000);
  t.is(CalendarDate.of(new Date("2026-11-21T23:59:59.999Z")).toString(), "2026-11-21");
  t.is(CalendarDate.of(new Date("2026-11-22T00:30:00+01:00")).toString(), "2026-11-21", "the UTC day, not the offset's");
});

test("JSON forms: toJson and JSON.stringify write YYYY-MM-DD; fromJson reads it back", (t) => {
  const d = fromJson("2026-11-21", { kind: "date", optional: false });
  t.true(d instanceof CalendarDate);
  t.is(toJson(d), "2026-11-21");
  t.is(JSON.stringify({ d }), '{"d":"2026-11-21"}');
  t.deepEqual(toJson([d, d]), ["2026-11-21", "2026-11-21"]);
});

test("an event body: a date is a YYYY-MM-DD string; a datetime, a bad day or a number is a 422 problem naming it", (t) => {
  const params = workflow.events.Confirm.params;
  const ok = checkBody({ day: "2026-11-21", maybe: null }, params);
  t.true(ok.ok);
  if (ok.ok) t.is(String(ok.args.day), "2026-11-21");
  for (const bad of ["2026-11-21T09:00:00Z", "2026-02-30", 20261121, "tomorrow"]) {
    const r = checkBody({ day: bad, maybe: null }, params);
    t.false(r.ok, String(bad));
    if (!r.ok) {
      t.deepEqual(r.problems.map((p) => p.name), ["day"]);
      t.regex(r.problems[0].problem, /date, YYYY-MM-DD/);
      t.is(r.expects.day, "string (date, YYYY-MM-DD)");
      t.is(r.expects.maybe, "string (date, YYYY-MM-DD) or null");
    }
  }
});

test("run input: dates in parameters, entity fields and lists are checked and stored as YYYY-MM-DD", (t) => {
  const r = checkInput(workflow, { start: "2026-11-21", later: null, o: { due: "2026-12-01", days: ["2026-12-02"] } });
  t.true(r.ok);
  if (!r.ok) return;
  t.deepEqual(r.input, { start: "2026-11-21", later: null });
  t.is(String(r.entities[0].data.due), "2026-12-01");
  const bad = checkInput(workflow, { start: "2026-11-21T00:00:00Z", later: "2026-02-30", o: { due: 5, days: ["x"] } });
  t.false(bad.ok);
  if (bad.ok) return;
  const errors = bad.refusal.extra!.errors as { name: string; problem: string }[];
  t.deepEqual(errors.map((e) => e.name), ["start", "later", "o.due", "o.days[0]"]);
  t.true(errors.every((e) => /such as 2026-11-21/.test(e.problem)));
});
