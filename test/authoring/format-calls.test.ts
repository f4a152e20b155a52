/**
 * The formatter on calls and results (v0.5; docs/language.md section 16): a messy `call … { … }`,
 * `Input { … }`, `on x.failed` and `result { … }` come out in the canonical layout, the output
 * formats to itself (round trip) and means what the input meant (format's own compile check).
 * test/fixtures/calls.flow joins the repository-wide properties of format.test.ts.
 */
import test from "ava";
import { format } from "../../src/authoring/format.js";
import { compile } from "../../src/lang/compile.js";

const messy = `workflow   W(s: S)   returns Done
entity S { name: string; note: string? }
event Done(state: string, n: int)
event Scored(score: int)
initial state A {
    call   http "credit"   as c returns Scored {
  Method:POST
        Path : "/v1/" + s.name
  Input {   company : s.name ,country: "x" }
    Timeout:10s ; Attempts:3
  }
  call workflow Child as child returns Done { Input{n:1}
  }
  on c( score ) { result {n:score} ; default -> B }
  on c.failed{ s.note=c.error ;  default->B }
  on child(state, n) -> B
}
terminal state B
`;

const canonical = `workflow W(s: S) returns Done
entity S { name: string; note: string? }
event Done(state: string, n: int)
event Scored(score: int)
initial state A {
  call http "credit" as c returns Scored {
    Method: POST
    Path: "/v1/" + s.name
    Input { company: s.name, country: "x" }
    Timeout: 10s; Attempts: 3
  }
  call workflow Child as child returns Done { Input { n: 1 }
  }
  on c(score) { result { n: score }; default -> B }
  on c.failed { s.note = c.error; default -> B }
  on child(state, n) -> B
}
terminal state B
`;

test("calls, Input, on x.failed and result are laid out canonically, and the layout is a fixed point", (t) => {
  const once = format(messy);
  t.true(once.ok, once.ok ? "" : once.reason);
  if (!once.ok) return;
  t.is(once.text, canonical);
  const twice = format(once.text);
  t.true(twice.ok && twice.text === once.text && !twice.changed);
  t.truthy(compile(once.text, "w.flow").workflow, "the output still compiles");
});
