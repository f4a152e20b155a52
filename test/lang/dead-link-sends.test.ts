/**
 * FLOW350 (warning): a message sends a field holding x's link where that link cannot be live — in
 * the handler of `x.expired`, or in a state x does not belong to (language reference, "Sending a
 * link that is no longer live"). At run time such a message is withdrawn (test/examples/dead-links.test.ts).
 */
import test from "ava";
import { Codes } from "../../src/lang/codes.js";
import { compile } from "../../src/lang/compile.js";
import { expectDiagnostics } from "./helpers.js";

const head = `workflow W(po: Po)
entity Po { email: string; link: string? @maxLength(400); other: string? }
event Confirm(ok: bool)
`;

test("the issue's slip: a link stored on a row and mailed from on x.expired warns at the use", (t) => {
  expectDiagnostics(
    t,
    `${head}initial state Waiting {
  subscribe Confirm(ok) as confirm { Deadline: 3d }
  enter {
    po.link = confirm.CallbackUrl()
    send email to po.email { subject: "Confirm", body: "Answer: " + po.link }
  }
  on confirm(ok) -> Done
  on confirm.expired {
    send email to po.email { subject: "Reminder", body: "Please answer: " + ⟦po.link⟧ }
    send message to "chat" { text: "late", link: ⟦po.link⟧ }
    default -> Done
  }
}
terminal state Done
`,
    [Codes.DeadLinkSent, Codes.DeadLinkSent],
  );
});

test("a state x does not belong to: its enter, handlers and timers warn; a let carrying the field too", (t) => {
  expectDiagnostics(
    t,
    `${head}event Escalate(go: bool)
initial state Waiting {
  subscribe Confirm(ok) as confirm { Deadline: 3d }
  enter { po.link = "Answer: " + confirm.CallbackUrl() }
  on confirm(ok) -> Done
  on confirm.expired -> Escalated
}
state Escalated {
  subscribe Escalate(go) as boss { }
  enter {
    let old = po.link ?? ""
    send message to "chat" { text: "escalated", link: ⟦old⟧ }
  }
  after 1d { send email to po.email { subject: "Still open", body: ⟦po.link⟧ ?? "" } }
  on boss(go) -> Done
}
terminal state Done
`,
    [Codes.DeadLinkSent, Codes.DeadLinkSent],
  );
});

test("no warning: the link sent in its own state, a fresh link minted before the send, a field a live slot of the state fills", (t) => {
  const r = compile(
    `${head}event Escalate(go: bool)
initial state Waiting {
  subscribe Confirm(ok) as confirm { Deadline: 3d }
  enter {
    po.link = confirm.CallbackUrl()
    send email to po.email { subject: "Confirm", body: po.link ?? "" }
  }
  every 1d { send email to po.email { subject: "Reminder", body: po.link ?? "" } }
  on confirm(ok) -> Done
  on confirm.expired -> Escalated
}
state Escalated {
  subscribe Escalate(go) as boss { }
  enter {
    po.link = boss.CallbackUrl()
    send email to po.email { subject: "Escalated", body: po.link ?? "" }
  }
  after 1d { send email to po.email { subject: "Still open", body: po.link ?? "" } }
  on boss(go) -> Done
}
terminal state Done
`,
    "test.flow",
  );
  t.deepEqual(r.diagnostics.filter((d) => d.code === Codes.DeadLinkSent).map((d) => d.message), []);
  t.truthy(r.workflow);
});

test("a slot's timers and each block are walked: a link held from another state warns there; one filled in a slot timer is a holder", (t) => {
  expectDiagnostics(
    t,
    `${head}event Escalate(go: bool)
initial state Waiting {
  subscribe Confirm(ok) as confirm {
    Deadline: 3d
    after 1h { po.link = confirm.CallbackUrl() }
    every 1d { send email to po.email { subject: "Reminder", body: po.link ?? "" } }
  }
  on confirm(ok) -> Done
  on confirm.expired -> Escalated
}
state Escalated {
  subscribe Escalate(go) as boss for each e in [po.email] {
    each { send email to e { subject: "Escalated", body: ⟦po.link⟧ ?? "" } }
    every 1d { send message to "chat" { text: "still open", link: ⟦po.link⟧ } }
  }
  call http "crm" as c { after 2h { send email to po.email { subject: "Late", body: ⟦po.link⟧ ?? "" } } }
  on boss(go) -> Done
  on c() -> Done
}
terminal state Done
`,
    [Codes.DeadLinkSent, Codes.DeadLinkSent, Codes.DeadLinkSent],
  );
});

test("a send webhook is data (issue 38): a dead link in its fields is delivered as it is, so no FLOW350", (t) => {
  const r = compile(
    `${head}initial state Waiting {
  subscribe Confirm(ok) as confirm { Deadline: 3d }
  enter { po.link = confirm.CallbackUrl() }
  on confirm(ok) -> Done
  on confirm.expired {
    send webhook to "portal" { type: "po.late", url: po.link, po: po }
    default -> Done
  }
}
terminal state Done {
  enter { send webhook to "erp" { type: "po.closed", url: po.link } }
}
`,
    "test.flow",
  );
  t.deepEqual(r.diagnostics.filter((d) => d.code === Codes.DeadLinkSent).map((d) => d.message), []);
  t.truthy(r.workflow);
});

test("every example compiles without FLOW350", async (t) => {
  const { readdirSync, readFileSync } = await import("node:fs");
  for (const f of readdirSync("examples").filter((x) => x.endsWith(".flow"))) {
    const r = compile(readFileSync(`examples/${f}`, "utf8"), f);
    t.deepEqual(r.diagnostics.filter((d) => d.code === Codes.DeadLinkSent).map((d) => d.message), [], f);
  }
});
