/**
 * src/authoring/highlight.ts (issue 21 item 3: "the same grammar highlights `.flow` sources in docs
 * and in the console"): a source coloured by the VS Code extension's TextMate grammar through
 * vscode-textmate + vscode-oniguruma, as escaped HTML spans with a handful of classes. What the old
 * regex highlighter of the console missed (`/* … *\/` comments, the v0.3 keywords `after`, `every`,
 * `webhook`, `message`) is coloured; every character of the source is escaped, so `<script>` in a
 * string or a comment stays text; the work is bounded (512 KiB, long lines, a time limit per line).
 */
import test from "ava";
import fc from "fast-check";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { FLOW_CLASSES, highlightFlow, MAX_HIGHLIGHT_BYTES, MAX_LINE_LENGTH, tokenizeFlow, TOTAL_TIME_LIMIT_MS } from "../../src/authoring/highlight.js";
import { repoRoot } from "./flow-files.js";

/** The text a browser shows for `markup`: our spans dropped, the five escapes of escape-html undone. */
function shown(markup: string): string {
  return markup
    .replace(/<span class="[a-z ]+"(?: title="[^"]*")?>|<\/span>/g, "")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&");
}

/** The markup left once our own spans are removed: it must hold no tag and no raw `<`, `>`, `"`. */
const stripped = (markup: string) => markup.replace(/<span class="[a-z ]+"(?: title="[^"]*")?>|<\/span>/g, "");

const SAMPLE = `/* a block comment
   over two lines */
workflow W(n: int)
initial state Open {
  every 1h after 2h { send webhook to "crm" { } }
  after 3d -> Closed // late
}
terminal state Closed
`;

test("block comments, every/after, webhook, durations, state names and strings get the grammar's classes", async (t) => {
  const out = (await highlightFlow(SAMPLE)).text;
  t.true(out.startsWith('<span class="com">/* a block comment</span>\n<span class="com">   over two lines */</span>\n'), "a block comment over two lines: a span on each line");
  t.regex(out, /<span class="kw">every<\/span> <span class="num">1h<\/span> <span class="kw">after<\/span> <span class="num">2h<\/span>/);
  t.regex(out, /<span class="kw">webhook<\/span>/);
  t.regex(out, /<span class="str">&quot;crm&quot;<\/span>/);
  t.regex(out, /<span class="kw">after<\/span> <span class="num">3d<\/span> -&gt; <span class="name">Closed<\/span> <span class="com">\/\/ late<\/span>/);
  t.regex(out, /<span class="kw">terminal<\/span> <span class="kw">state<\/span> <span class="name">Closed<\/span>/);
  t.regex(out, /<span class="kw">workflow<\/span> <span class="name">W<\/span>\(n: <span class="type">int<\/span>\)/);
  t.is(shown(out), SAMPLE);
});

test("the classes are a handful, each one a lower-case word the console styles", (t) => {
  t.true(FLOW_CLASSES.length <= 10);
  for (const c of FLOW_CLASSES) t.regex(c, /^[a-z]+$/);
  const css = readFileSync(join(repoRoot, "src/web/console/layout.ts"), "utf8");
  for (const c of FLOW_CLASSES) t.regex(css, new RegExp(`\\.src \\.${c}\\b[^{]*\\{`), `the console styles .${c}`);
});

test("<script> in a string literal, a line comment and a block comment stays inert text", async (t) => {
  const source = `workflow X(n: int) // <script>alert(1)</script>
/* </pre><script>alert(2)</script> */
initial state A { enter { send email to "a@b.c" { subject: "<script>alert('3')</script>", body: "\\"<img src=x onerror=alert(4)>&amp;" } } }
`;
  const out = (await highlightFlow(source)).text;
  t.false(/<(?!\/?span\b)/.test(out), "no tag but our spans");
  t.false(/[<>"]/.test(stripped(out)), "no raw <, > or \" outside our spans");
  t.true(out.includes("&lt;script&gt;alert(1)&lt;/script&gt;"));
  t.true(out.includes("&lt;/pre&gt;&lt;script&gt;alert(2)"));
  t.true(out.includes("&lt;script&gt;alert(&#39;3&#39;)&lt;/script&gt;"));
  t.true(out.includes("&amp;amp;"));
  t.is(shown(out), source);
});

test("every character is escaped and kept: any text round-trips (fast-check)", async (t) => {
  const piece = fc.constantFrom("<", ">", "&", '"', "'", "/*", "*/", "//", "\n", "\r\n", "\\", "every", "after", "state ", "1d", " ", "\t", "é", "😀", "</span>", "<script>");
  await fc.assert(
    fc.asyncProperty(fc.array(fc.oneof(piece, fc.string()), { maxLength: 40 }), async (parts) => {
      const source = parts.join("");
      const out = (await highlightFlow(source)).text;
      return shown(out) === source && !/[<>"]/.test(stripped(out));
    }),
    { numRuns: 200 },
  );
  t.pass();
});

test("each example: the highlighted text is the source, and its block comments or keywords are classed", async (t) => {
  for (const name of ["contract-signing", "expense-report", "purchase-approval", "support-ticket", "vendor-approval"]) {
    const source = readFileSync(join(repoRoot, `examples/${name}.flow`), "utf8");
    const out = (await highlightFlow(source)).text;
    t.is(shown(out), source, name);
    t.regex(out, /<span class="kw">state<\/span> <span class="name">[A-Z]/, name);
  }
  const purchase = (await highlightFlow(readFileSync(join(repoRoot, "examples/purchase-approval.flow"), "utf8"))).text;
  t.regex(purchase, /<span class="kw">every<\/span> <span class="num">2d<\/span> <span class="kw">after<\/span> <span class="num">1d<\/span>/);
});

test("marks wrap ranges (a diagnostic) inside the coloured tokens, with an escaped title", async (t) => {
  const out = (await highlightFlow("when (ok) -> Aproved\n", { marks: [{ line: 0, start: 13, end: 20, className: "error", title: 'unknown state "Aproved" <b>' }] })).text;
  t.regex(out, /<span class="error" title="unknown state &quot;Aproved&quot; &lt;b&gt;"><span class="name">Aproved<\/span><\/span>/);
});

test("bounded: a 400 KiB line is escaped, not coloured, and fast; over 512 KiB the source is plain text", async (t) => {
  const long = `workflow L(n: int) // ${"<x> every ".repeat(40_000)}\nstate S\n`;
  t.true(long.split("\n")[0].length > MAX_LINE_LENGTH);
  const out = (await highlightFlow(long)).text;
  // Fast because not tokenized: the long line comes out escaped, with no span (no stopwatch: issue 39 item 4).
  t.false(out.split("\n")[0]!.includes("<span"), "the long line is not tokenized");
  t.is(shown(out), long);
  t.regex(out, /<span class="kw">state<\/span> <span class="name">S<\/span>/, "lines after a long one are still coloured");
  const huge = `state S\n${"// filler filler filler filler\n".repeat(Math.ceil(MAX_HIGHLIGHT_BYTES / 31) + 1)}`;
  t.true(Buffer.byteLength(huge) > MAX_HIGHLIGHT_BYTES);
  const plain = (await highlightFlow(huge)).text;
  t.false(plain.includes("<span"), "too big to colour: escaped text only");
  t.is(shown(plain), huge);
});

test("past the time budget the remaining lines are plain escaped text", async (t) => {
  const out = (await highlightFlow(SAMPLE, { limits: { totalTimeLimitMs: -1 } })).text;
  t.false(out.includes("<span"));
  t.is(shown(out), SAMPLE);
});

test("a 64 KiB source is coloured whole; a 512 KiB one within the time budget, every character kept", async (t) => {
  const block = readFileSync(join(repoRoot, "examples/purchase-approval.flow"), "utf8");
  const everies = (out: string) => (out.match(/<span class="kw">every<\/span> <span class="num">2d<\/span>/g) ?? []).length;
  const small = block.repeat(Math.floor((64 * 1024) / Buffer.byteLength(block)));
  // whole: the budget raised, as this machine may be busy (the default budget is checked below)
  t.is(everies((await highlightFlow(small, { limits: { totalTimeLimitMs: 60_000 } })).text), (small.match(/\bevery 2d\b/g) ?? []).length, "the last lines are coloured too");
  const big = block.repeat(Math.floor(MAX_HIGHLIGHT_BYTES / Buffer.byteLength(block)));
  const out = (await highlightFlow(big)).text;
  t.log(`${Buffer.byteLength(big)} bytes, ${big.split("\n").length} lines: ${everies(out)} of ${(big.match(/\bevery 2d\b/g) ?? []).length} "every" coloured`);
  t.true(everies(out) > 0);
  t.is(shown(out), big);
  // The tokenizing stops at its budget, counted on a clock that advances 1 ms per reading (no
  // stopwatch: issue 39 item 4): some lines are coloured, the rest — the last included — plain.
  let ticks = 0;
  const counted = (await highlightFlow(big, { limits: { totalTimeLimitMs: TOTAL_TIME_LIMIT_MS, lineTimeLimitMs: 0, now: () => ticks++ } })).text;
  const lines = counted.split("\n");
  const coloured = lines.filter((l) => l.includes("<span")).length;
  t.true(coloured > 0 && coloured <= TOTAL_TIME_LIMIT_MS, `${coloured} of ${lines.length} lines coloured within a budget of ${TOTAL_TIME_LIMIT_MS} ticks`);
  t.true(everies(counted) > 0 && everies(counted) < (big.match(/\bevery 2d\b/g) ?? []).length, "the lines past the budget are plain");
  t.is(shown(counted), big);
});

test("subject, body, replyTo and cc are keywords only as a send email's field names; elsewhere they are names (language.md §2)", async (t) => {
  const source = `workflow Notice(subject: string, vendor: Vendor)
entity Vendor { body: string; replyTo: string; cc: string? }
initial state S {
  enter {
    vendor.body = subject + vendor.replyTo
    send webhook to "portal" { type: "notice", subject: vendor.cc, body: subject }
    send email to vendor.replyTo {
      subject: "Re: " + subject, body: vendor.body
      replyTo: vendor.replyTo
      cc: vendor.cc ?? "ops@example.test"
    }
  }
}
`;
  const toks = await tokenizeFlow(source, { lineTimeLimitMs: 0, totalTimeLimitMs: Infinity });
  const words = toks.filter((x) => /^(subject|body|replyTo|cc)$/.test(x.text.trim()));
  const keywords = words.filter((x) => x.scopes.includes("keyword.other.flow")).map((x) => `${x.line}:${x.start} ${x.text.trim()}`);
  // only lines 7–9 (from 0): the four field names of the send email
  t.deepEqual(keywords, ["7:6 subject", "7:33 body", "8:6 replyTo", "9:6 cc"]);
  // after '.' a property, everywhere (inside the send email's braces too)
  const properties = words.filter((x) => x.scopes.includes("variable.other.property.flow")).map((x) => `${x.line} ${x.text}`);
  t.deepEqual(properties, ["4 body", "4 replyTo", "5 cc", "6 replyTo", "7 body", "8 replyTo", "9 cc"]);
  const out = (await highlightFlow(source)).text;
  t.regex(out, /<span class="kw">subject<\/span>: <span class="str">&quot;Re: &quot;<\/span>/);
  t.false(/<span class="kw">(subject|body|replyTo|cc)<\/span>/.test(out.split("\n").slice(0, 7).join("\n")), "no keyword class before the send email");
  t.is(shown(out), source);
});

test("tokenizeFlow: the grammar's scopes per line, columns from 0", async (t) => {
  const toks = await tokenizeFlow("/* a */ every 1d {\n}");
  const every = toks.find((x) => x.text === "every");
  t.like(every, { line: 0, start: 8, end: 13 });
  t.true(every!.scopes.includes("keyword.control.flow"));
  const comment = toks.filter((x) => x.line === 0 && x.end <= 7);
  t.deepEqual(comment.map((x) => x.text), ["/*", " a ", "*/"]);
  t.true(comment.every((x) => x.scopes.includes("comment.block.flow")));
});

test("the installed package can highlight: both libraries are dependencies, the grammar is in its files", (t) => {
  const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { dependencies: Record<string, string>; devDependencies: Record<string, string>; files: string[] };
  for (const dep of ["vscode-textmate", "vscode-oniguruma"]) {
    t.truthy(pkg.dependencies[dep], `${dep} in dependencies`);
    t.falsy(pkg.devDependencies[dep], `${dep} not in devDependencies`);
  }
  t.true(pkg.files.includes("editors/vscode/syntaxes/flow.tmLanguage.json"));
});
