/**
 * The built-in workflows' compiled forms (src/mcp/builtins.ts completeBuiltin): their sources
 * compile without a diagnostic; `send message to "{ask.recipient}"` gets the run's `ask.recipient`
 * as its endpoint, `send message to "{ask.via}"` (a question to insiders, posted to a slack-app
 * endpoint) the run's `ask.via` (and deploy's unknown-endpoint warning skips both); AskHuman's `answer` gets the
 * run's `ask.choices` as its allowed values. Behaviour end to end: test/e2e/mcp-browser.test.ts.
 */
import test from "ava";
import { compile } from "../../src/lang/compile.js";
import { endpointRefs } from "../../src/lang/send-delivery.js";
import { ASK_HUMAN, BUILTINS, completeBuiltin } from "../../src/mcp/builtins.js";

for (const b of BUILTINS) {
  test(`${b.name}: compiles cleanly; its send message goes to the run's ask.recipient or ask.via`, (t) => {
    const r = compile(b.source, b.file);
    t.deepEqual(r.diagnostics, []);
    t.deepEqual(endpointRefs(r.workflow).map((e) => e.name), ["{ask.recipient}", "{ask.via}"], "placeholders no endpoint can be named");
    const wf = completeBuiltin(r.workflow!, b);
    t.deepEqual(endpointRefs(wf), [], "deploy warns about no endpoint");
    const json = JSON.stringify(wf.states);
    t.true(json.includes('"expr":{"kind":"member","object":{"kind":"name","name":"ask"'), "the endpoint is an expression now");
    const sends: { endpoint: { expr?: { property?: { name: string } } } }[] = [];
    JSON.parse(json, (_k, v) => (v?.kind === "sendMessage" && sends.push(v), v));
    t.deepEqual(sends.map((m) => m.endpoint.expr?.property?.name), ["recipient", "via"], "each send message's endpoint is its field of the run");
    t.false(JSON.stringify(r.workflow!.states).includes('"expr":'), "the compiler's own form is left as it was");
    const choices = Object.values(wf.events).flatMap((e) => e.params).filter((p) => p.page?.choices);
    if (b.name === ASK_HUMAN) {
      t.deepEqual(choices.map((p) => p.name), ["answer"]);
      t.like(choices[0]!.page!.choices, { kind: "member", object: { kind: "name", name: "ask" }, property: { name: "choices" } });
    } else t.deepEqual(choices, []);
  });
}
