/**
 * Property tests: whatever the source, compile() returns (never throws, never an internal error),
 * every diagnostic's range lies within the source with line/column matching its offset, and the
 * workflow is present exactly when no diagnostic is an error. Sources are generated from the
 * grammar, mutated from the examples, or arbitrary text.
 */
import { readFileSync } from "node:fs";
import test from "ava";
import fc from "fast-check";
import { Codes } from "../../src/lang/codes.js";
import { compile } from "../../src/lang/compile.js";

const CODES = new Set<string>(Object.values(Codes));

/** Line and column of `offset`, lines ending at \n, \r\n or \r (the compiler's rule). */
function position(s: string, offset: number): [number, number] {
  let line = 1;
  let start = 0;
  for (let i = 0; i < offset; i++) {
    const c = s[i];
    if (c === "\n" || (c === "\r" && s[i + 1] !== "\n")) {
      line++;
      start = i + 1;
    }
  }
  return [line, offset - start + 1];
}

function holds(source: string): boolean {
  const r = compile(source, "fuzz.flow");
  for (const d of r.diagnostics) {
    if (d.code === Codes.InternalError) throw new Error(`internal error: ${d.message}`);
    if (!CODES.has(d.code)) throw new Error(`unknown code ${d.code}`);
    const { start, end } = d.range;
    if (!(start.offset >= 0 && start.offset <= end.offset && end.offset <= source.length)) {
      throw new Error(`range ${start.offset}-${end.offset} outside 0-${source.length}: ${d.code}`);
    }
    for (const p of [start, end]) {
      const [line, column] = position(source, p.offset);
      if (p.line !== line || p.column !== column) {
        throw new Error(`${d.code} at offset ${p.offset}: ${p.line}:${p.column}, expected ${line}:${column}`);
      }
    }
  }
  const hasError = r.diagnostics.some((d) => d.severity === "error");
  if (hasError === (r.workflow !== null)) throw new Error("workflow must be null exactly when there is an error");
  return true;
}

// --- generated from the grammar -----------------------------------------------------------------

const name = fc.constantFrom("a", "b", "n", "v", "x", "g", "s", "ok", "note", "email", "slot", "each", "done", "T", "S", "E", "Vendor");
const literal = fc.constantFrom("1", "0", "42", "3.5", '"s"', '"\\u{1F600}\\n"', "true", "false", "null", "7d", "15m", "30s");
const binop = fc.constantFrom("+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||", "??");

const { expr } = fc.letrec<{ expr: string }>((tie) => ({
  expr: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    literal,
    name,
    fc.tuple(tie("expr"), binop, fc.constantFrom(" ", " ", "\n"), tie("expr")).map(([l, op, gap, r]) => `${l} ${op}${gap}${r}`),
    fc.tuple(fc.constantFrom("!", "-"), tie("expr")).map(([op, e]) => `${op}${e}`),
    fc.tuple(tie("expr"), name).map(([e, m]) => `${e}.${m}`),
    fc.tuple(name, fc.array(tie("expr"), { maxLength: 2 })).map(([f, args]) => `${f}(${args.join(", ")})`),
    fc.tuple(name).map(([a]) => `${a}.CallbackUrl()`),
    fc.array(tie("expr"), { maxLength: 3 }).map((es) => `[${es.join(", ")}]`),
    tie("expr").map((e) => `(${e})`),
  ),
}));

const type = fc.constantFrom("int", "string", "bool", "decimal", "datetime", "duration", "string?", "list<string>", "Vendor", "principal", "Nope");
const params = fc.array(fc.tuple(name, type), { maxLength: 3 }).map((ps) => ps.map(([n, t]) => `${n}: ${t}`).join(", "));

const statement = fc.oneof(
  fc.tuple(name, expr).map(([n, e]) => `let ${n} = ${e}`),
  fc.tuple(name, name, expr).map(([a, b, e]) => `${a}.${b} = ${e}`),
  fc.tuple(expr, expr, expr).map(([a, s, b]) => `send email to ${a} { subject: ${s}, body: ${b} }`),
  name.map((n) => `drop slot ${n}`),
  fc.tuple(expr, name, expr).map(([c, n, e]) => `if (${c}) { let ${n} = ${e} } else { ${n}(${e}) }`),
  expr,
);
const block = fc
  .tuple(fc.array(statement, { maxLength: 4 }), fc.constantFrom("\n", "; ", " "))
  .map(([ss, sep]) => `{\n${ss.join(sep)}\n}`);
const arm = fc.oneof(
  fc.tuple(expr, name).map(([c, s]) => `when (${c}) -> ${s}`),
  fc.tuple(block, name).map(([b, s]) => `default ${b} -> ${s}`),
);
const setting = fc.oneof(
  fc.array(expr, { minLength: 1, maxLength: 2 }).map((es) => `Candidates: ${es.join(", ")}`),
  expr.map((e) => `Requires: ${e}`),
  fc.array(name, { minLength: 1, maxLength: 2 }).map((ns) => `After: ${ns.join(", ")}`),
  expr.map((e) => `Deadline: ${e}`),
);
const member = fc.oneof(
  fc.tuple(name, fc.array(name, { maxLength: 2 }), name, fc.option(fc.tuple(name, expr)), fc.array(setting, { maxLength: 3 })).map(
    ([e, ps, alias, each, settings]) =>
      `subscribe ${e}(${ps.join(", ")}) as ${alias}${each ? ` for each ${each[0]} in ${each[1]}` : ""} {\n${settings.join("\n")}\n}`,
  ),
  block.map((b) => `enter ${b}`),
  fc.tuple(name, fc.array(name, { maxLength: 2 }), fc.array(statement, { maxLength: 2 }), fc.array(arm, { maxLength: 2 })).map(
    ([x, ps, ss, as]) => `on ${x}(${ps.join(", ")}) {\n${[...ss, ...as].join("\n")}\n}`,
  ),
  fc.tuple(name, name).map(([x, s]) => `on ${x}.expired -> ${s}`),
  fc.tuple(name, expr, block).map(([m, c, b]) => `milestone ${m} when (${c}) ${b}`),
);
const decl = fc.oneof(
  fc.tuple(name, params).map(([n, ps]) => `entity ${n} { ${ps.replaceAll(", ", "\n")} }`),
  fc.tuple(fc.option(expr), name, params).map(([auth, n, ps]) => `${auth ? `[Authorize(p => ${auth})]\n` : ""}event ${n}(${ps})`),
  fc.tuple(fc.constantFrom("initial ", "terminal ", ""), name, fc.array(member, { maxLength: 4 })).map(
    ([mod, n, ms]) => `${mod}state ${n} {\n${ms.join("\n")}\n}`,
  ),
  fc.tuple(name, params, name, fc.array(fc.tuple(name, expr), { maxLength: 2 })).map(
    ([a, ps, b, args]) => `map event ${a}(${ps}) to ${b}(${args.map(([n, e]) => `${n}: ${e}`).join(", ")})`,
  ),
);
const generated = fc.tuple(params, fc.array(decl, { maxLength: 6 })).map(([ps, ds]) => `workflow W(${ps})\n${ds.join("\n")}\n`);

test("generated workflows: compile never throws and every range lies within the source", (t) => {
  fc.assert(fc.property(generated, holds), { numRuns: 250, seed: 20261121 });
  t.pass();
});

// --- mutated examples ---------------------------------------------------------------------------------

const seeds = ["examples/vendor-approval.flow", "examples/contract-signing.flow"].map((f) => readFileSync(f, "utf8"));
const fragments = ["{", "}", "(", ")", "[", "]", "\n", ";", ",", ".", "->", "=>", "=", "??", "?", "@", '"', "\\", "/*", "//", "7d", "1.5h",
  "on", "when", "default", "state", "subscribe", "for each", "let", "send email to", "drop slot", "else", "map event", "é", "\r", "\t", "list<"];

const edit = fc.oneof(
  fc.tuple(fc.nat(), fc.constantFrom(...fragments)).map(([at, f]) => (s: string) => s.slice(0, at % (s.length + 1)) + f + s.slice(at % (s.length + 1))),
  fc.tuple(fc.nat(), fc.integer({ min: 1, max: 30 })).map(([at, n]) => (s: string) => s.slice(0, at % (s.length + 1)) + s.slice((at % (s.length + 1)) + n)),
  fc.tuple(fc.nat(), fc.nat(), fc.integer({ min: 1, max: 60 })).map(([at, from, n]) => (s: string) => {
    const i = at % (s.length + 1);
    const j = from % (s.length + 1);
    return s.slice(0, i) + s.slice(j, j + n) + s.slice(i);
  }),
);
const mutated = fc.tuple(fc.constantFrom(...seeds), fc.array(edit, { minLength: 1, maxLength: 6 })).map(([s, edits]) => edits.reduce((acc, f) => f(acc), s));

test("mutated examples: compile never throws and every range lies within the source", (t) => {
  fc.assert(fc.property(mutated, holds), { numRuns: 300, seed: 4242 });
  t.pass();
});

// --- arbitrary text ------------------------------------------------------------------------------------

test("arbitrary text and token soup: compile never throws", (t) => {
  const soup = fc
    .array(fc.oneof(fc.constantFrom(...fragments, "workflow W", "initial", "terminal", "x", "1", " ", "\n"), fc.string({ maxLength: 3 })), { maxLength: 60 })
    .map((parts) => parts.join(" "));
  fc.assert(fc.property(fc.oneof(soup, fc.string({ unit: "binary", maxLength: 200 })), holds), { numRuns: 300, seed: 7 });
  t.pass();
});
