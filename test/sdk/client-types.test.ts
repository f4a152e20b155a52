/**
 * The typed client at compile time (issue 41 item 2, "Done when": `tsc` accepts a correct client
 * call and rejects a wrong one): the real `tsc` of the project (node_modules/.bin/tsc, as `npm run
 * typecheck` runs it) on fixtures/typed/good-calls.ts, which must compile, and on
 * fixtures/must-not-compile/wrong-calls.ts, which must fail on exactly the lines marked `// error:`
 * — a wrong workflow name, a missing input field, a wrong type, an unknown field, a wrong slot
 * alias, a value `@oneOf` refuses, a result field that does not exist. Both use the declarations
 * `slotflow types` wrote for fixtures/order.flow (fixtures/workflows.ts), checked current here.
 */
import test from "ava";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { checkTypesCommand } from "../../src/cli/types.js";
import { ROOT } from "../helpers/server.js";
import { tsc } from "./tsc.js";

const FIXTURES = join(ROOT, "test", "sdk", "fixtures");

test("fixtures/workflows.ts is what slotflow types writes for order.flow now", (t) => {
  const said: string[] = [];
  t.is(checkTypesCommand(join(FIXTURES, "workflows.ts"), [join(FIXTURES, "order.flow")], (l) => void said.push(l)), 0, said.join("\n"));
});

test("tsc accepts the correct calls", async (t) => {
  const { code, output } = await tsc([join(FIXTURES, "typed", "good-calls.ts")]);
  t.is(code, 0, output);
});

test("tsc rejects each wrong call, on its line and no other", async (t) => {
  const file = join(FIXTURES, "must-not-compile", "wrong-calls.ts");
  const marked = readFileSync(file, "utf8")
    .split("\n")
    .flatMap((line, i) => (line.includes("// error:") ? [i + 1] : []));
  t.true(marked.length >= 8);
  const { code, output } = await tsc([file]);
  t.not(code, 0);
  const failing = [...new Set([...output.matchAll(/wrong-calls\.ts\((\d+),\d+\): error TS\d+/g)].map((m) => Number(m[1])))];
  t.deepEqual(failing.sort((a, b) => a - b), marked, output);
});

test("slotflow/client loads nothing but itself: no engine, database or queue module at run time", (t) => {
  // what .dependency-cruiser.cjs "sdk-client-fetch-only" says, checked here too (dependency-cruiser needs Node 22+)
  for (const file of ["client.ts", "problem.ts"]) {
    const text = readFileSync(join(ROOT, "src", "sdk", file), "utf8");
    for (const m of text.matchAll(/^(import|export)\s+(type\s+)?[^;]*?from\s+"([^"]+)"/gm)) {
      const [, , typeOnly, from] = m;
      if (typeOnly) t.is(from, "../engine/refusals.js", `${file}: a type-only import of ${from}`);
      else t.regex(from, /^\.\/(problem|client)\.js$/, `${file} imports ${from}`);
    }
  }
});
