/**
 * The symbol index (src/authoring/symbols.ts) over node kinds it does not know (issue 21: the
 * language server must degrade gracefully while issues 18 and 19 add syntax): a tree with an
 * unknown member holding statements, and an unknown statement holding expressions and a nested
 * block, still has the names inside them resolved to their declarations.
 */
import test from "ava";
import type { Statement } from "../../src/lang/ast.js";
import { buildIndex } from "../../src/authoring/symbols.js";
import { compile } from "../../src/lang/compile.js";

const SOURCE = [
  "workflow W(order: Order)",
  "entity Order {",
  "  title: string",
  "}",
  "initial state A {",
  "  enter {",
  "    let x = order.title",
  "    order.title = x",
  "  }",
  "}",
  "terminal state B",
  "",
].join("\n");

test("names inside unknown members and statements resolve (generic walk)", (t) => {
  const ast = compile(SOURCE).ast!;
  const state = ast.states[0];
  const enter = state.members[0] as { kind: "enter"; body: Statement[] };
  const [letX, assign] = enter.body;
  // Rebuild the state as a future tree might be: a timer member holding a webhook statement.
  const webhook = { kind: "sendWebhook", to: { kind: "literal", type: "string", value: "crm", raw: '"crm"', range: letX.range }, fields: [{ name: "payload", value: (assign as { value: unknown }).value }], body: [assign], range: assign.range };
  (state as { members: unknown[] }).members = [{ kind: "timer", after: null, body: [letX, webhook], range: state.range }];
  const index = buildIndex(ast);
  const x = index.occurrences.filter((o) => o.symbol.kind === "let" && o.symbol.name === "x");
  t.is(x.length, 3, "the let, and its uses inside the unknown statement's fields and nested body");
  const title = index.find("field", "title", "Order")!;
  t.is(index.occurrencesOf(title).length, 3, "the declaration, order.title in the let, the assignment's target in the nested body");
  t.is(index.occurrencesOf(index.find("param", "order")!).length, 3);
});

test("the names in a Requires' `else` wording resolve like the condition's: the event's parameters and run data (issue 30 item 8)", (t) => {
  const source = [
    "workflow W(limit: int)",
    "event E(qty: int)",
    "initial state A {",
    '  subscribe E(qty) as x { Requires: qty <= limit else "at most " + limit + ", not " + qty }',
    "  on x(qty) -> B",
    "}",
    "terminal state B",
    "",
  ].join("\n");
  const index = buildIndex(compile(source).ast!);
  t.is(index.occurrencesOf(index.find("param", "limit")!).length, 3, "the declaration, the condition, the wording");
  const qtyInSlot = index.occurrences.filter((o) => o.symbol.kind === "eventParam" && o.symbol.name === "qty" && o.range.start.line === 4);
  t.is(qtyInSlot.length, 3, "subscribe E(qty), the condition, the wording");
});
