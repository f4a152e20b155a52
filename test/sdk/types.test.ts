/**
 * `slotflow types` and `slotflow check --types` (issue 41 item 1), in process: the declarations
 * of a flow (input with optional entity fields optional, result, events with constraints as
 * JSDoc, slots), staleness, and the depth bound on nested entities. The compile-time behaviour of
 * the declarations with the client is client-types.test.ts; from a server, client.test.ts.
 */
import test from "ava";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { checkTypesCommand, typesCommand } from "../../src/cli/types.js";
import type { CompiledWorkflow } from "../../src/lang/compiled.js";
import { compile } from "../../src/lang/compile.js";
import { declarations, MAX_TYPE_DEPTH, signatureOf } from "../../src/sdk/types.js";
import { cliEntry } from "../helpers/cli-entry.js";
import { ROOT } from "../helpers/server.js";

const FLOW = join(ROOT, "test", "sdk", "fixtures", "order.flow");
const dir = mkdtempSync(join(tmpdir(), "slotflow-types-"));

function lines() {
  const out: string[] = [];
  return { out, write: (line: string) => void out.push(line) };
}

test("the declarations of a flow: input, result, events with constraints, slots", (t) => {
  const { workflow } = compile(readFileSync(FLOW, "utf8"), FLOW);
  const text = declarations([signatureOf(workflow!)], "order.flow");
  t.regex(text, /export interface Workflows \{\n  \/\*\* workflow Order \*\/\n  Order: \{/);
  // workflow parameters are present (T? may be null); entity fields T? may be absent
  t.regex(text, /input: \{\n\s+customer: \{\n\s+confirmUrl\?: string \| null;\n\s+email: string;\n\s+\/\*\* @maxLength\(100\) \*\/\n\s+name: string;\n\s+vip\?: boolean \| null;/);
  t.regex(text, /\n\s+note: string \| null;/);
  t.regex(text, /result: \{\n[^}]*state: "Approved" \| "Rejected";\n\s+approved: boolean;\n\s+\/\*\* @min\(0\) @max\(100\) \*\/\n\s+score: number;/);
  t.regex(text, /\/\*\* @oneOf\("ok", "risk"\) \*\/\n\s+reason: "ok" \| "risk";/);
  t.regex(text, /\/\*\* @minLength\(4\) @pattern\("\[A-Z0-9\]\+"\) \*\/\n\s+code: string;/);
  t.regex(text, /decision: \{\n\s+event: "Decided";\n\s+states: "Deciding";\n\s+kind: "subscribe";/);
  t.regex(text, /args: Workflows\["Order"\]\["events"\]\["Confirm"\];/);
  t.notRegex(text, /\d{4}-\d{2}-\d{2}T/, "no clock in the text");
});

test("slotflow types writes the module; check --types passes, then says stale after a change", async (t) => {
  const out = join(dir, "workflows.ts");
  const flow = join(dir, "order.flow");
  writeFileSync(flow, readFileSync(FLOW, "utf8"));
  const printed = lines();
  t.is(await typesCommand([flow], { out }, printed.write, printed.write), 0);
  t.regex(printed.out.join("\n"), /declarations of 1 workflow \(Order\)/);
  const fresh = lines();
  t.is(checkTypesCommand(out, [flow], fresh.write), 0);
  t.deepEqual(fresh.out, []);

  writeFileSync(flow, readFileSync(FLOW, "utf8").replace("note: string?", "note: string?, rush: bool"));
  const stale = lines();
  t.is(checkTypesCommand(out, [flow], stale.write), 1);
  t.regex(stale.out.join("\n"), /workflows\.ts: error: stale: .* generate them again: slotflow types .*order\.flow --out .*workflows\.ts/);

  writeFileSync(out, "export interface Workflows {}\n");
  const foreign = lines();
  t.is(checkTypesCommand(out, [flow], foreign.write), 1);
  t.regex(foreign.out.join("\n"), /not a file `slotflow types` wrote/);
});

test("a file that does not compile: its diagnostics, nothing written", async (t) => {
  const bad = join(dir, "bad.flow");
  writeFileSync(bad, "workflow Bad(x: nosuchtype)\ninitial state A\n");
  const out = join(dir, "never.ts");
  const printed = lines();
  t.is(await typesCommand([bad], { out }, printed.write, printed.write), 1);
  t.regex(printed.out.join("\n"), /bad\.flow:1:\d+: error FLOW/);
  t.throws(() => readFileSync(out));
});

test("nested entities stop at the depth bound; two workflows of one name are refused", (t) => {
  const entity = (n: number) => ({ fields: { next: { type: { kind: "entity" as const, name: `E${n + 1}`, optional: true }, maxLength: null, minLength: null } } });
  const entities = Object.fromEntries(Array.from({ length: 50 }, (_, n) => [`E${n}`, entity(n)]));
  // a cycle, too: E50 → E0
  entities.E50 = { fields: { next: { type: { kind: "entity", name: "E0", optional: true }, maxLength: null, minLength: null } } };
  const wf = {
    name: "Deep", params: [{ name: "e", type: { kind: "entity", name: "E0", optional: false } }], entities, events: {}, states: {}, returns: undefined,
  } as unknown as CompiledWorkflow;
  const text = declarations([signatureOf(wf)], "test");
  t.is(text.match(/next\?:/g)?.length, MAX_TYPE_DEPTH);
  t.regex(text, /next\?: unknown \| null;/);
  t.throws(() => declarations([signatureOf(wf), signatureOf(wf)], "test"), { message: /workflow Deep is declared twice/ });
});

test("the commands: slotflow types, then slotflow check --types (exit 0), and exit 1 with the stale line", async (t) => {
  const cli = (...args: string[]) =>
    promisify(execFile)(process.execPath, [...cliEntry(), ...args], { cwd: ROOT }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
  const out = join(dir, "cli.ts");
  const flow = join(dir, "cli.flow");
  writeFileSync(flow, readFileSync(FLOW, "utf8"));
  const written = await cli("types", flow, "--out", out);
  t.is(written.code, 0, written.stderr);
  t.regex(readFileSync(out, "utf8"), /export interface Workflows/);
  t.is((await cli("check", "--types", out, flow)).code, 0);
  writeFileSync(flow, readFileSync(FLOW, "utf8").replace("@max(100)", "@max(10)"));
  const stale = await cli("check", "--types", out, flow);
  t.is(stale.code, 1);
  t.regex(stale.stderr, /cli\.ts: error: stale: /);
});

test("a result event's own `state` parameter is typed once, as the union of terminal states", async (t) => {
  const { workflow } = compile(readFileSync(join(ROOT, "examples", "supplier-onboarding.flow"), "utf8"), "supplier-onboarding.flow");
  const text = declarations([signatureOf(workflow!)], "supplier-onboarding.flow");
  const result = /result: \{\n([^}]*)\}/.exec(text)![1];
  t.is(result.match(/\bstate:/g)?.length, 1, result);
  t.regex(result, /state: "Declined" \| "Onboarded";\n\s+approved: boolean;\n\s+note: string \| null;/);
  const { resultSchema } = await import("../../src/sdk/schemas.js");
  const schema = resultSchema(signatureOf(workflow!)) as { required: string[]; properties: { state: { enum: string[] } } };
  t.deepEqual(schema.required, ["state", "approved", "note"]);
  t.deepEqual(schema.properties.state.enum, ["Declined", "Onboarded"]);
});
