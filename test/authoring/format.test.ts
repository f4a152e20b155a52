/**
 * `slotflow fmt` (issue 21 item 1): idempotent, keeps every comment in place and in order, never
 * changes meaning (the syntax tree and compiled form, ranges aside, are equal), refuses a file
 * that does not parse. Property-tested over every .flow of the repository and over sources
 * generated from them: random blanks, indentation and comments in every position a comment can
 * take without changing the tokens (block comments between any two tokens, line comments at the
 * end of a line and on lines of their own).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import test from "ava";
import fc from "fast-check";
import { format, formatParsed, layoutOnly, sameParserInput, stripRanges } from "../../src/authoring/format.js";
import { compile, parseSource } from "../../src/lang/compile.js";
import { flowFiles, repoRoot } from "./flow-files.js";

const files = flowFiles();
const sources = files.map((f) => readFileSync(join(repoRoot, f), "utf8"));

/** The comments of a text, in order (a rough scan; string literals never hold `//` in the fixtures' generated parts). */
function comments(text: string): string[] {
  const out: string[] = [];
  const re = /"(?:[^"\\\r\n]|\\.)*"|\/\/[^\r\n]*|\/\*[\s\S]*?\*\//g;
  for (const m of text.matchAll(re)) if (!m[0].startsWith('"')) out.push(m[0].replace(/\s+$/, ""));
  return out;
}

function meaning(text: string): string {
  const r = compile(text);
  return JSON.stringify([stripRanges(r.ast), stripRanges(r.workflow), r.diagnostics.map((d) => [d.code, d.message])]);
}

test("every .flow in the repository is already formatted (what `slotflow fmt --check` checks in CI)", (t) => {
  t.true(files.length >= 20);
  const unformatted = files.filter((_f, i) => {
    const r = format(sources[i]);
    return !r.ok || r.changed;
  });
  t.deepEqual(unformatted, []);
});

test("the canonical layout: indentation, spacing per token kind, blank lines capped at one, comments kept", (t) => {
  const messy = [
    "// head",
    "",
    "",
    "workflow  W( a :list< string >, n:int? ) // trailing",
    "entity E {   x : string   /* inline */  @maxLength( 10 )",
    "}",
    "event Go( v : int )",
    "initial state A {",
    "subscribe Go( v ) as go {",
    "",
    "Deadline : 3d",
    "    Candidates: role(\"x\") ,",
    "  user( \"y\" )",
    "}",
    "on go( v ) {",
    "let z = - v +",
    "3 *( 2 )",
    "     // inner comment",
    "if ( !(z>1) ){ n = 2 }else{ }",
    "   when(z == 1)",
    "   -> B",
    "  default->B",
    "",
    "}",
    "}",
    "terminal state B",
  ].join("\r\n");
  const r = format(messy);
  if (!r.ok) return t.fail(r.reason);
  t.is(
    r.text,
    [
      "// head",
      "",
      "workflow W(a: list<string>, n: int?) // trailing",
      "entity E { x: string /* inline */ @maxLength(10)",
      "}",
      "event Go(v: int)",
      "initial state A {",
      "  subscribe Go(v) as go {",
      "    Deadline: 3d",
      "    Candidates: role(\"x\"),",
      "      user(\"y\")",
      "  }",
      "  on go(v) {",
      "    let z = -v +",
      "      3 * (2)",
      "    // inner comment",
      "    if (!(z > 1)) { n = 2 } else {}",
      "    when (z == 1)",
      "      -> B",
      "    default -> B",
      "  }",
      "}",
      "terminal state B",
      "",
    ].join("\n"),
  );
  t.is(meaning(r.text), meaning(messy));
});

test("a file that does not parse is refused with its diagnostics", (t) => {
  const r = format("workflow W\ninitial state A {\n  on x ->\n}\n");
  t.false(r.ok);
  if (r.ok) return;
  t.is(r.reason, "the file does not parse");
  t.true(r.diagnostics.length > 0);
  t.true(r.diagnostics.every((d) => d.code.startsWith("FLOW0")));
});

test("a file with only type errors parses, so it is formatted (its diagnostics stay the same)", (t) => {
  const src = "workflow W\ninitial state A {\n  enter {   let x = 1 +  \"a\" * true }\n}\nterminal state B\n";
  const r = format(src);
  if (!r.ok) return t.fail(r.reason);
  t.is(r.text, "workflow W\ninitial state A {\n  enter { let x = 1 + \"a\" * true }\n}\nterminal state B\n");
  t.is(meaning(r.text), meaning(src));
});

/**
 * A mutation of `source` that keeps its tokens and line structure: blanks around tokens, extra
 * blank lines, and comments in the gaps. `choices` drives every decision (fast-check shrinks it).
 */
function perturb(source: string, choices: number[]): string {
  let k = 0;
  const pick = (n: number) => (choices.length === 0 ? 0 : choices[k++ % choices.length] % n);
  // Token boundaries outside strings and comments: split the text into code chunks and literals.
  const re = /"(?:[^"\\\r\n]|\\.)*"|\/\/[^\r\n]*|\/\*[\s\S]*?\*\/|\r?\n|[ \t]+|[A-Za-z_0-9.]+|->|=>|==|!=|<=|>=|&&|\|\||\?\?|./g;
  let out = "";
  for (const m of source.matchAll(re)) {
    const piece = m[0];
    if (/^\r?\n$/.test(piece)) {
      const c = pick(8);
      if (c === 0) out += " // eol comment";
      out += "\n";
      if (c === 1) out += "// own-line comment\n";
      if (c === 2) out += "\n\n";
      if (c === 3) out += "    ";
      continue;
    }
    if (/^[ \t]+$/.test(piece)) {
      const c = pick(6);
      out += c === 0 ? " /* gap */ " : c === 1 ? "   " : c === 2 ? " /* multi\n   line */ " : " ";
      continue;
    }
    out += piece;
    if (!piece.startsWith("//") && pick(10) === 0) out += " /* after */ ";
  }
  return out;
}

test("property: over every repository .flow perturbed with blanks and comments, fmt is ok, idempotent, keeps comments and meaning", (t) => {
  let parsed = 0;
  fc.assert(
    fc.property(fc.integer({ min: 0, max: sources.length - 1 }), fc.array(fc.nat(1000), { minLength: 1, maxLength: 60 }), (i, choices) => {
      const input = perturb(sources[i], choices);
      const before = compile(input);
      if (before.ast === null && compile(sources[i]).ast !== null) return false; // perturbing must keep a parsing file parsing
      if (before.ast === null) return true;
      parsed++;
      const once = format(input);
      if (!once.ok) return false;
      // The language server's meaning check (no second compile, issue 21 item 2) accepts the same output.
      const lsp = format(input, before, { verify: "parser-input" });
      if (!lsp.ok || lsp.text !== once.text) return false;
      // …and so does its form from the parse alone (the input lexed once, not checked).
      if (JSON.stringify(formatParsed(input, parseSource(input))) !== JSON.stringify(lsp)) return false;
      const twice = format(once.text);
      if (!twice.ok || twice.changed) return false;
      if (JSON.stringify(comments(once.text)) !== JSON.stringify(comments(input))) return false;
      return meaning(once.text) === meaning(input);
    }),
    { numRuns: 150, seed: 21 },
  );
  t.true(parsed > 100, `${parsed} of 150 generated sources parsed`);
});

test("the parser-input meaning check (the language server's, issue 21 item 2) refuses a text the parser reads differently", (t) => {
  const src = "workflow W\ninitial state A {\n  enter {\n    let x = 1\n    let y = x + 2 // two\n  }\n}\nterminal state B\n";
  // Blanks and indentation only: the same parser input.
  t.true(sameParserInput(src, src.replace("    let y", "let y").replace("x + 2", "x  +  2")));
  // A line break carries meaning in this language: joining two statements is another input.
  t.false(sameParserInput(src, src.replace("1\n    let y", "1 let y")));
  // Moving a token across a line break, a changed token, a changed or lost comment: refused.
  t.false(sameParserInput(src, src.replace("x + 2", "x +\n2").replace("= x +", "= x")));
  t.false(sameParserInput(src, src.replace("x + 2", "x + 3")));
  t.false(sameParserInput(src, src.replace("// two", "// three")));
  t.false(sameParserInput(src, src.replace(" // two", "")));
  // A line comment's trailing blanks (the layout drops them) are not a change.
  t.true(sameParserInput(src.replace("// two", "// two   "), src));
  // Both checks give the formatter's output for every repository .flow.
  for (const text of sources) {
    const compiled = compile(text);
    if (compiled.ast === null) continue;
    const a = format(text, compiled);
    const b = format(text, compiled, { verify: "parser-input" });
    t.deepEqual(b, a);
    t.deepEqual(formatParsed(text, parseSource(text)), a);
  }
  // From the parse alone too, on a text that needs formatting and on ones refused for lexical or syntax errors.
  for (const text of [src.replace("    let y", "let y"), src.replace("x + 2", "x + 2 #"), src.replace("x + 2", "x +"), src.replace("x + 2", "x + 99999999999999999999")]) {
    t.deepEqual(formatParsed(text, parseSource(text)), format(text, compile(text), { verify: "parser-input" }), text);
  }
});

test("property: comments stay on the line of the code they followed or preceded", (t) => {
  const src = sources[files.indexOf("examples/expense-report.flow")];
  const lines = src.split("\n");
  fc.assert(
    fc.property(fc.integer({ min: 0, max: lines.length - 1 }), (n) => {
      if (lines[n].trim() === "" || lines[n].includes("//")) return true;
      const marked = lines.map((l, i) => (i === n ? `${l} // MARK` : l)).join("\n");
      const r = format(marked);
      if (!r.ok) return false;
      const outLine = r.text.split("\n").find((l) => l.includes("// MARK"));
      return outLine !== undefined && outLine.replace(" // MARK", "").trim() === lines[n].trim().replace(/\s+/g, " ").replace(/\s+\/\/.*$/, "");
    }),
    { numRuns: 100, seed: 21 },
  );
  t.pass();
});

test("syntax the parser does not know yet is laid out by the same token rules (issues 18 and 19 add it)", (t) => {
  const coming = [
    "initial state Waiting {",
    "after 3d{",
    "send webhook to \"crm\"{  payload: order.title  // why",
    "}",
    "}",
    "every 1h after  2h {",
    "  send message to \"ops\" { text: \"still waiting\" }",
    "}",
    "enter {",
    "when(order.count>1)->Done",
    "send email to order.contact { subject: \"s\", body: \"b\",replyTo: \"r@x.example\" }",
    "}",
    "}",
  ].join("\n");
  t.is(
    layoutOnly(coming),
    [
      "initial state Waiting {",
      "  after 3d {",
      "    send webhook to \"crm\" { payload: order.title // why",
      "    }",
      "  }",
      "  every 1h after 2h {",
      "    send message to \"ops\" { text: \"still waiting\" }",
      "  }",
      "  enter {",
      "    when (order.count > 1) -> Done",
      "    send email to order.contact { subject: \"s\", body: \"b\", replyTo: \"r@x.example\" }",
      "  }",
      "}",
      "",
    ].join("\n"),
  );
  t.is(layoutOnly(layoutOnly(coming)), layoutOnly(coming));
});
