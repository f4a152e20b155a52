/**
 * Agents ask insiders (interfaces.md v0.5 "Agents ask insiders"), the parts without a server:
 * how the agent is named (tools.ts agentNaming: its client's name and, for a principal's token,
 * on whose behalf — one line, bounded), the client's name carried over stateless HTTP in the
 * Mcp-Session-Id (http.ts), and the built-ins' "no role / no user" candidate, which names nobody
 * (specials.ts principalName), and what a principal's token may call (tools.ts McpScope). End to
 * end: test/e2e/mcp-insiders.test.ts and test/e2e/mcp-behalf.test.ts.
 */
import test from "ava";
import { candidateNames, principalName } from "../../src/lang/runtime/interpreter.js";
import { AGENT_CHARS } from "../../src/mcp/builtins.js";
import { clientNameOf, clientSessionId } from "../../src/mcp/http.js";
import { agentNaming, callTool, PRINCIPAL_TOOLS, TOOLS, toolsFor } from "../../src/mcp/tools.js";
import type { Runtime } from "../../src/runtime.js";

test("agentNaming: the client's name, and on whose behalf when the token is a principal's; null when nothing is known", (t) => {
  t.is(agentNaming(undefined), null);
  t.is(agentNaming({ clientName: null, onBehalfOf: null }), null);
  t.is(agentNaming({ clientName: "Claude Code", onBehalfOf: null }), "The AI agent “Claude Code”");
  t.is(agentNaming({ clientName: "Claude Code", onBehalfOf: { id: "lee", email: "lee@example.com" } }), "The AI agent “Claude Code”, on behalf of lee (lee@example.com),");
  t.is(agentNaming({ clientName: null, onBehalfOf: { id: "lee@example.com", email: "lee@example.com" } }), "An AI agent, on behalf of lee@example.com,");
});

test("agentNaming: client-controlled text is put on one line and bounded", (t) => {
  const named = agentNaming({ clientName: "Evil\r\nBcc: x@example.com\u2028\u0000 <b>", onBehalfOf: null })!;
  t.is(named, "The AI agent “Evil Bcc: x@example.com <b>”", "no line breaks or control characters (escaping is the page's job)");
  const long = agentNaming({ clientName: "n".repeat(5000), onBehalfOf: { id: "i".repeat(5000), email: "e".repeat(5000) } })!;
  t.true(long.length <= AGENT_CHARS, String(long.length));
  t.regex(long, /^The AI agent “n{79}…”, on behalf of i{79}… \(e{79}…\),$/);
});

test("the Mcp-Session-Id carries the client's name: visible ASCII, bounded, read back; anything else carries none", (t) => {
  const id = clientSessionId("Ledger <Bot> 🤖");
  t.regex(id, /^[\x21-\x7e]+$/);
  t.is(clientNameOf(id), "Ledger <Bot> 🤖");
  t.not(clientSessionId("x"), clientSessionId("x"), "unique");
  const cut = clientNameOf(clientSessionId("é".repeat(300)))!;
  t.is(cut, "é".repeat(128), "cut to 256 bytes, on a character boundary");
  for (const other of [undefined, "", "abc", "sf1.", `sf1.${"0".repeat(36)}.`, `sf1.${"0".repeat(36)}.a b`, `sf1.${"0".repeat(36)}.${"A".repeat(600)}`]) t.is(clientNameOf(other), null, String(other));
});

test("a candidate name no principal can hold names nobody: the built-ins' 'no role' and 'no user'", (t) => {
  t.false(principalName("\u0001nobody"));
  t.true(principalName("finance"));
  const m = (matcher: "role" | "user", value: string) => ({ kind: "matcher", matcher, value }) as never;
  t.deepEqual(candidateNames([m("role", "finance"), m("user", "\u0001nobody")]), { users: [], roles: ["finance"] });
});

test("a principal's token lists only request_approval, ask_human and get_answer; every other tool is refused naming why, before anything is read", async (t) => {
  t.deepEqual(
    toolsFor({ askedBy: "lee" }).map((x) => x.name),
    ["request_approval", "ask_human", "get_answer"],
  );
  t.deepEqual([...PRINCIPAL_TOOLS].sort(), toolsFor({ askedBy: "lee" }).map((x) => x.name).sort());
  t.is(toolsFor("all"), TOOLS);
  t.is(toolsFor("mcp-runs"), TOOLS);
  t.is(toolsFor(undefined), TOOLS);
  // a runtime that throws when touched: the refusal comes before any database or queue
  const untouchable = new Proxy({}, { get: () => { throw new Error("touched the runtime"); } }) as Runtime;
  for (const name of ["start_run", "cancel_run", "list_runs", "get_run", "list_workflows", "no_such_tool"]) {
    const err = await t.throwsAsync(callTool(untouchable, name, {}, { signal: new AbortController().signal, scope: { askedBy: "lee" } }));
    t.is((err as { code?: string }).code, "unauthorized", name);
    t.regex(err!.message, /is not offered to a principal's token: an agent holding a person's token may only ask on their behalf \(request_approval, ask_human, get_answer\)/, name);
  }
});
