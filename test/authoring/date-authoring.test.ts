/**
 * The `date` type in the authoring tools (language reference, "Types"): the language server offers
 * `date` where a type is written and `today()` where an expression is; the formatter keeps both;
 * the editor grammar colours `date` as a type.
 */
import test from "ava";
import { Analysis } from "../../src/authoring/lsp/analysis.js";
import { completion } from "../../src/authoring/lsp/completion.js";
import { hover } from "../../src/authoring/lsp/features.js";
import { format } from "../../src/authoring/format.js";
import { tokenizeFlow } from "../../src/authoring/highlight.js";

const SOURCE = `workflow W(order: Order)

entity Order {
  wanted: date
  remindOn: date?
}

initial state S {
  enter {
    order.remindOn = today() + 3d
  }
}

terminal state T
`;

function at(marked: string) {
  const offset = marked.indexOf("‸");
  const text = marked.replace("‸", "");
  const before = text.slice(0, offset).split("\n");
  return { a: new Analysis("file:///w/d.flow", 1, text, null), pos: { line: before.length - 1, character: before.at(-1)!.length } };
}

const labels = (items: { label: string }[]) => items.map((c) => c.label);

test("completion offers date in a type position and today() in an expression; hover shows today's signature", (t) => {
  const typed = at(SOURCE.replace("wanted: date", "wanted: da‸"));
  t.true(labels(completion(typed.a, typed.pos)).includes("date"));
  const expr = at(SOURCE.replace("order.remindOn = today()", "order.remindOn = to‸day()"));
  t.true(labels(completion(expr.a, expr.pos)).includes("today"));
  const h = hover(expr.a, expr.pos);
  t.regex(JSON.stringify(h), /today\(\): date/);
});

test("the formatter keeps a date type and today() as written", (t) => {
  const r = format(SOURCE.replace("wanted: date", "wanted:   date").replace("today() + 3d", "today()+3d"));
  t.is(r.ok ? r.text : "", SOURCE);
});

test("the editor grammar colours date as a type", async (t) => {
  const toks = await tokenizeFlow(SOURCE, { lineTimeLimitMs: 0, totalTimeLimitMs: Infinity });
  const date = toks.find((x) => x.text === "date");
  t.truthy(date);
  t.true(date!.scopes.some((s) => s.startsWith("support.type")), JSON.stringify(date));
});
