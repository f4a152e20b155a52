/**
 * The responder page's wording agrees with the types (issue 30 item 9): no event parameter that the
 * form requires (a type without `?`) is called optional by its `@label` or `@help` — in the
 * examples (examples/*.flow) and in the `flow` code of the user docs (README.md, docs/*.md). The
 * vendor-approval example said `@help("Optional context…")` on `note: string`, a required field.
 */
import test from "ava";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../helpers/server.js";

/** `name: type @label("…") @help("…") …` — a parameter with its annotations (one line). */
const PARAM = /\b([A-Za-z_]\w*)\s*:\s*([A-Za-z_][\w<>]*\??)((?:\s*@[A-Za-z]+(?:\("(?:[^"\\]|\\.)*"\))?)+)/g;

function misworded(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(PARAM)) {
    const [, name, type, annotations] = m;
    if (!type!.endsWith("?") && /optional|if you like|may be left empty|leave (it )?empty/i.test(annotations!)) out.push(`${name}: ${type}${annotations}`);
  }
  return out;
}

const flowBlocks = (md: string) => [...md.matchAll(/```flow\n([\s\S]*?)```/g)].map((m) => m[1]!);

test("the check finds the mistake it is for", (t) => {
  t.deepEqual(misworded('event A(note: string @label("Note") @help("Optional context.") @multiline)'), ['note: string @label("Note") @help("Optional context.") @multiline']);
  t.deepEqual(misworded('event A(note: string? @help("Optional context."))'), []);
});

test("no required parameter of an example is called optional by its @label or @help", (t) => {
  const files = readdirSync(join(ROOT, "examples")).filter((f) => f.endsWith(".flow"));
  t.true(files.length >= 5);
  for (const f of files) t.deepEqual(misworded(readFileSync(join(ROOT, "examples", f), "utf8")), [], f);
});

test("nor in the flow code of the user docs", (t) => {
  const docs = ["README.md", ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
  let blocks = 0;
  for (const f of docs) {
    for (const block of flowBlocks(readFileSync(join(ROOT, f), "utf8"))) {
      blocks++;
      t.deepEqual(misworded(block), [], f);
    }
  }
  t.true(blocks > 10, `flow blocks read: ${blocks}`);
});
