/**
 * The construct families (issue 39 item 3; src/lang/README.md): every operator and built-in holds
 * its check beside its evaluation, and the slot-setting table (src/lang/families/slot-settings.ts)
 * names places that exist — each "file#symbol" is a file under src/ that declares the symbol —
 * and the members each setting belongs to, as the checker decides them (FLOW371).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import test from "ava";
import type { CallDecl, Setting, Subscribe } from "../../src/lang/ast.js";
import { callSettingProblem } from "../../src/lang/check-calls.js";
import { BUILTINS } from "../../src/lang/families/builtins.js";
import { BINARY, UNARY } from "../../src/lang/families/operators.js";
import { SLOT_SETTINGS } from "../../src/lang/families/slot-settings.js";
import { RuntimeFault } from "../../src/lang/runtime/fault.js";
import { ROOT } from "../helpers/root.js";

const range = { start: { line: 7, column: 1, offset: 0 }, end: { line: 7, column: 2, offset: 1 } };

test("every operator and every built-in has a check and an evaluate", (t) => {
  for (const [op, entry] of [...Object.entries(BINARY), ...Object.entries(UNARY)]) {
    t.is(typeof entry.check, "function", op);
    t.is(typeof entry.evaluate, "function", op);
  }
  for (const b of BUILTINS.values()) {
    t.is(typeof b.type, "function", b.name);
    t.is(typeof b.evaluate, "function", b.name);
  }
});

test("an operator's evaluate keeps the language's rules: short-circuit, int overflow, null operands", (t) => {
  const site = { op: "+" as const, range, numeric: "int" as const, joinText: String };
  t.is(BINARY["&&"].evaluate(false, () => t.fail("right side of && evaluated") as never, { ...site, op: "&&" }), false);
  t.is(BINARY["??"].evaluate(3, () => t.fail("right side of ?? evaluated") as never, { ...site, op: "??" }), 3);
  t.is(BINARY["+"].evaluate(2, () => 3, site), 5);
  t.throws(() => BINARY["+"].evaluate(2 ** 53 - 1, () => 1, site), { instanceOf: RuntimeFault, message: /^line 7: integer overflow/ });
  t.throws(() => BINARY["/"].evaluate(1, () => 0, { ...site, op: "/" }), { instanceOf: RuntimeFault, message: /division by zero/ });
  t.throws(() => UNARY["-"].evaluate(null, range), { instanceOf: RuntimeFault, message: /negation of null/ });
  t.is(BUILTINS.get("len")!.evaluate(["abc"], { now: new Date(0), range }), 3);
  t.throws(() => BUILTINS.get("upper")!.evaluate([null], { now: new Date(0), range }), { instanceOf: RuntimeFault, message: /upper\(\) of null/ });
});

/** True when `src/<file>` declares `symbol` (a function, method, const or class). */
function declares(file: string, symbol: string): boolean {
  const text = readFileSync(join(ROOT, "src", file), "utf8");
  return new RegExp(`(function|const|class|private|async function)\\s+${symbol}\\b|^\\s+(private\\s+)?${symbol}\\(`, "m").test(text);
}

test("every slot setting's check and runtime reader name a file and a symbol that exist", (t) => {
  t.false(declares("lang/check-states.ts", "noSuchSymbol"), "the probe itself can fail");
  for (const [kind, row] of Object.entries(SLOT_SETTINGS)) {
    const [checkFile, checkSymbol] = row.check.split("#");
    const [readerFile, readerSymbol] = row.reader.split("#");
    t.true(declares(`lang/${checkFile}`, checkSymbol), `${kind}: check ${row.check}`);
    t.true(declares(readerFile, readerSymbol), `${kind}: reader ${row.reader}`);
  }
});

test("every slot setting's members are the ones the checker accepts it on (FLOW371)", (t) => {
  const subscribe = { kind: "subscribe" } as Subscribe;
  const httpCall = { kind: "call", alias: { name: "x" }, callee: { type: "http" } } as CallDecl;
  for (const [kind, row] of Object.entries(SLOT_SETTINGS)) {
    const setting = { kind } as Setting;
    t.is(callSettingProblem(subscribe, setting, row.word) === null, row.on.includes("subscribe"), `${kind} on subscribe`);
    t.is(callSettingProblem(httpCall, setting, row.word) === null, row.on.includes("call"), `${kind} on call http`);
  }
});
