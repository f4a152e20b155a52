/**
 * The language server's re-parse of one declaration after an edit (src/lang/reparse.ts; issue 21
 * item 2) gives exactly what parsing the whole text gives: over random edits (and chains of them)
 * of every repository .flow, wherever `reparse` answers, its tree and diagnostics equal
 * `parseSource`'s, and compiling from it equals `compile` (diagnostics, tree with ranges and the
 * checker's marks, compiled workflow); its tokens (the formatter's input) equal the whole text's.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import test from "ava";
import fc from "fast-check";
import { compile, parseSource } from "../../src/lang/compile.js";
import { LineIndex } from "../../src/lang/positions.js";
import { reparse } from "../../src/lang/reparse.js";
import { flowFiles, repoRoot } from "../authoring/flow-files.js";

const sources = flowFiles()
  .map((f) => readFileSync(join(repoRoot, f), "utf8"))
  .filter((s) => parseSource(s).diagnostics.length === 0);

/** What a keystroke or a paste might insert: blanks, names, numbers, brackets, quotes, comments, line breaks, operators. */
const PIECES = [" ", "x", "1", "\n", "\r\n", "}", "{", "(", ")", "[", "]", '"', "// c\n", "/*", "*/", "+", "-", ";", ",", ".", "\t", "é", "\u0000", "state", "->", "list<", ">", "2h", "  let y = 1\n", "\n\n", "#"];

const edit = fc.record({
  at: fc.nat(),
  remove: fc.oneof(fc.constant(0), fc.nat(6)),
  insert: fc.oneof(fc.constant(""), fc.constantFrom(...PIECES)),
});

function apply(text: string, e: { at: number; remove: number; insert: string }): string {
  const at = e.at % (text.length + 1);
  return text.slice(0, at) + e.insert + text.slice(at + e.remove);
}

const tokens = (l: { raw: { image: string; startOffset: number }[]; tokens: { image: string; startOffset: number }[]; comments: { image: string }[] }) =>
  JSON.stringify([l.raw.map((t) => [t.image, t.startOffset]), l.tokens.map((t) => [t.image, t.startOffset]), l.comments.map((t) => t.image)]);

test("property: after random edits of every repository .flow, the re-parse equals the whole parse and compile", (t) => {
  t.true(sources.length >= 15);
  let incremental = 0;
  let edits = 0;
  fc.assert(
    fc.property(fc.integer({ min: 0, max: sources.length - 1 }), fc.array(edit, { minLength: 1, maxLength: 4 }), (i, steps) => {
      let text = sources[i];
      let parsed = parseSource(text);
      compile(text, "f.flow", parsed); // the server compiles each version: the kept part of the tree carries the checker's marks
      for (const step of steps) {
        const next = apply(text, step);
        const lines = new LineIndex(next);
        const re = reparse(parsed, text, next, lines);
        const whole = parseSource(next);
        edits++;
        if (re !== null) {
          incremental++;
          if (JSON.stringify(re.diagnostics) !== JSON.stringify(whole.diagnostics)) return false;
          const a = compile(next, "f.flow", re);
          const b = compile(next, "f.flow");
          t.deepEqual(a, b);
          if (JSON.stringify(a) !== JSON.stringify(b)) return false;
          if (tokens(re.lexed) !== tokens(whole.lexed)) return false;
          parsed = re;
        } else {
          compile(next, "f.flow", whole);
          parsed = whole;
        }
        text = next;
      }
      return true;
    }),
    { numRuns: 400, seed: 2102 },
  );
  t.log(`${incremental} of ${edits} edits re-parsed one declaration or only moved the later ones`);
  // Many random edits break the file (the next one then parses it whole); enough must take the short path to mean something.
  t.true(incremental > edits / 20, `${incremental} of ${edits} edits re-parsed one declaration`);
});

test("property: blanks, line breaks and name characters typed anywhere, the re-parse equals the whole parse and compile", (t) => {
  let incremental = 0;
  let edits = 0;
  const blankEdit = fc.record({ at: fc.nat(), remove: fc.constant(0), insert: fc.constantFrom(" ", "\n", "\t", "\r\n", "\n\n", "  \n", "x", "_1") });
  fc.assert(
    fc.property(fc.integer({ min: 0, max: sources.length - 1 }), fc.array(blankEdit, { minLength: 1, maxLength: 6 }), (i, steps) => {
      let text = sources[i];
      let parsed = parseSource(text);
      compile(text, "f.flow", parsed);
      for (const step of steps) {
        const next = apply(text, step);
        const re = reparse(parsed, text, next, new LineIndex(next));
        const whole = parseSource(next);
        // Counted: edits from a clean parse to a clean parse (the others are parsed whole by design).
        if (parsed.diagnostics.length === 0 && whole.diagnostics.length === 0) edits++;
        if (re !== null) {
          incremental++;
          const a = compile(next, "f.flow", re);
          if (JSON.stringify(a) !== JSON.stringify(compile(next, "f.flow"))) return false;
          if (JSON.stringify(re.diagnostics) !== JSON.stringify(whole.diagnostics)) return false;
          parsed = re;
        } else {
          parsed = whole;
          compile(next, "f.flow", parsed);
        }
        text = next;
      }
      return true;
    }),
    { numRuns: 400, seed: 2103 }, // 400: the share below is a statistic of the sample, steadier over more edits as the corpus of .flow files grows
  );
  t.log(`${incremental} of ${edits} edits between clean parses re-parsed one declaration or only moved the later ones`);
  // The rest are in comments, in the header, at a declaration's first or last character.
  t.true(incremental > edits / 2);
});

test("what is re-parsed alone and what is not", (t) => {
  const src = "workflow W(n: int)\n\nentity E {\n  a: int\n}\n\ninitial state A {\n  enter {\n    let x = n + 1\n    when (x > 0) -> B\n    default -> C\n  }\n}\n\nstate B {\n  enter {}\n}\n\nterminal state C\n";
  t.deepEqual(parseSource(src).diagnostics, []);
  const before = parseSource(src);
  const at = (text: string) => reparse(before, src, text, new LineIndex(text));
  // Inside a state's body, and inside an entity: one declaration.
  const inState = src.replace("n + 1", "n + 12");
  t.deepEqual(at(inState)?.ast, parseSource(inState).ast);
  t.not(at(src.replace("a: int", "a: int?")), null);
  // Lines added inside a declaration move the ones after it.
  const longer = src.replace("let x = n + 1\n", "let x = n + 1\n    let y = x\n\n");
  t.deepEqual(at(longer)?.ast, parseSource(longer).ast);
  // Blanks and line breaks between two declarations: nothing parsed again, the later ones moved.
  for (const gap of [src.replace("\n\nstate B", "\n\n\nstate B"), src.replace("\n\nstate B", "\n  state B"), src.replace("}\n\nstate B", "}  \r\n \n\t\nstate B")]) {
    t.deepEqual(at(gap)?.ast, parseSource(gap).ast);
  }
  // A gap left without a line break, or with a comment; the header; a declaration's first or last character: the whole text.
  t.is(at(src.replace("}\n\nstate B", "} state B")), null);
  t.is(at(src.replace("\n\nstate B", "\n// b\nstate B")), null);
  t.is(at(src.replace("W(n: int)", "W(n: int, m: int)")), null);
  t.is(at(src.replace("initial state A", "state A")), null);
  // A declaration that no longer parses, or one that became another kind: the whole text (which reports it).
  t.is(at(src.replace("n + 1", "n +")), null);
  t.is(at(src.replace("enter {}", "enter {")), null);
  // A comment opened inside and never closed; a string left open.
  t.is(at(src.replace("n + 1", "n /* + 1")), null);
  t.is(at(src.replace("n + 1", 'n + "1')), null);
  // Nothing changed; a file that did not parse cleanly before.
  t.is(at(src), null);
  const broken = src.replace("n + 1", "n + 99999999999999999999");
  t.is(reparse(parseSource(broken), broken, src, new LineIndex(src)), null);
});

test("typing a blank anywhere in a declaration of an example re-parses that declaration alone", (t) => {
  const example = readFileSync(join(repoRoot, "examples/expense-report.flow"), "utf8");
  const before = parseSource(example);
  let clean = 0;
  let alone = 0;
  for (let at = 0; at < example.length; at += 7) {
    const next = `${example.slice(0, at)} ${example.slice(at)}`;
    if (parseSource(next).diagnostics.length > 0) continue;
    clean++;
    if (reparse(before, example, next, new LineIndex(next)) !== null) alone++;
  }
  // The rest are in comments, in the header, between declarations or at a declaration's first or last character.
  t.true(alone > clean * 0.6, `${alone} of ${clean}`);
});
