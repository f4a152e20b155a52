/**
 * The run-input check on its own (src/engine/values/input.ts; issue 8 items 14–16): no database, the
 * compiled form of test/fixtures/nested-input.flow and inputs a JSON body could carry.
 */
import test from "ava";
import { readFileSync } from "node:fs";
import { DEFAULT_LIMITS } from "../../src/config.js";
import { checkInput } from "../../src/engine/values/input.js";
import { compile } from "../../src/lang/compile.js";

const workflow = compile(readFileSync("test/fixtures/nested-input.flow", "utf8")).workflow!;

const valid = () => ({
  holder: { title: "t", inner: { s: "x", n: 1 }, extra: null },
  rows: [{ name: "a" }],
  names: ["ann"],
  note: "n",
  chain: [],
});

/** The `errors` of the 422 invalid-body refusal of `input` ([] when it is accepted). */
function problems(input: unknown, limits = DEFAULT_LIMITS): { name: string; problem: string }[] {
  const r = checkInput(workflow, input, limits);
  if (r.ok) return [];
  if (r.refusal.code !== "invalid-body") throw new Error(`refused with ${r.refusal.code}`);
  return r.refusal.extra!.errors as { name: string; problem: string }[];
}

test("__proto__, constructor and prototype are undeclared properties at any depth", (t) => {
  const raw = JSON.stringify(valid())
    .replace('"inner":{', '"inner":{"__proto__":{"s":1},"constructor":1,')
    .replace('"holder":{', '"holder":{"prototype":{},');
  const names = problems(JSON.parse(raw)).map((p) => p.name);
  t.deepEqual(names.sort(), ["holder.inner.__proto__", "holder.inner.constructor", "holder.prototype"]);
});

test("a 20,000-deep value is refused without exhausting the stack", (t) => {
  let chain: unknown = null;
  for (let i = 0; i < 20_000; i++) chain = { label: "", next: chain };
  const input = { ...valid(), chain: [chain] };
  const found = problems(input, { ...DEFAULT_LIMITS, maxInputBytes: 10_000_000 });
  t.is(found.length, 1);
  // The input object is level 1, the list 2, its element 3: the 30th `.next` is level 33.
  t.is(found[0].name, "chain[0]" + ".next".repeat(DEFAULT_LIMITS.maxInputDepth - 2));
  t.regex(found[0].problem, /deeper than 32 levels/);
  // An undeclared deep value is refused by name without being walked.
  const deep = JSON.parse('{"a":'.repeat(20_000) + "1" + "}".repeat(20_000));
  t.deepEqual(problems({ ...valid(), zzz: deep }).map((p) => p.name), ["zzz"]);
});

test("the stored form holds only declared names and normalised values", (t) => {
  const r = checkInput(workflow, { ...valid(), rows: [{ name: "a", due: "2026-11-21T10:00:00+01:00" }] });
  t.true(r.ok);
  if (!r.ok) return;
  t.deepEqual(r.input.rows, [{ name: "a", due: "2026-11-21T09:00:00.000Z" }]);
  t.deepEqual(r.entities[0].data, { title: "t", inner: { s: "x", n: 1 }, extra: null });
});

test("a parameter that is missing is required even when optional-typed; null fits only T?", (t) => {
  const { note: _note, ...rest } = valid();
  t.deepEqual(problems(rest).map((p) => [p.name, p.problem]), [["note", "is required"]]);
  t.deepEqual(problems({ ...valid(), note: null }).map((p) => p.name), ["note"]);
});

test("more than 100 problems are listed as 99 and a count of the rest", (t) => {
  const rows = Array.from({ length: 300 }, () => ({ name: 1 }));
  const found = problems({ ...valid(), rows }, { ...DEFAULT_LIMITS, maxFanOut: 1000 });
  t.is(found.length, 100);
  t.deepEqual(found.at(-1), { name: "", problem: "and 201 more problems" });
});

test("a misspelled field or parameter name is told the near name: did you mean … (issue 30 item 10)", (t) => {
  const { holder, names, ...rest } = valid();
  const { title, ...holderRest } = holder;
  const got = problems({ ...rest, nmes: names, holder: { ...holderRest, titel: title, inner: { s: "x", n: 1, zzzzzzzz: 1 } } });
  const at = (name: string) => got.find((p) => p.name === name)?.problem ?? "";
  t.is(at("holder.titel"), "is not a field of Holder: did you mean `title`?");
  t.is(at("nmes"), "is not a parameter of Nested: did you mean `names`?");
  t.is(at("holder.inner.zzzzzzzz"), "is not a field of Inner", "no near name: no guess");
  const r = checkInput(workflow, { ...valid(), holder: { ...holder, inner: { s: "x", nn: 1 } } });
  t.false(r.ok);
  if (!r.ok) t.true(r.refusal.detail.includes('"holder.inner.nn" is not a field of Inner: did you mean `n`?'), r.refusal.detail);
});
