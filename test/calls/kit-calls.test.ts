/**
 * Calls in the testing kit (issue 40; interfaces.md "The testing kit"): `Workflow.mockHttp`
 * answers `call http` in process, `run.calls()` lists calls and attempts, `run.advanceTime` drives
 * retries' backoff; `on x.failed` reads `x.error`.
 */
import test from "ava";
import { Workflow } from "../../src/testing/index.js";
import { useKitDatabase } from "../helpers/kit.js";

useKitDatabase(test, "kit-calls");

const SOURCE = `workflow KitCheck(company: string, mode: string, c: Case)
entity Case {
  note: string?
}
event Scored(score: int, band: string)
initial state Checking {
  call http "bureau" as credit returns Scored {
    Path: "/score/" + mode
    Input { company: company }
    Attempts: 3
  }
  on credit(score, band) {
    c.note = band
    when (score >= 700) -> Good
    default -> Manual
  }
  on credit.failed {
    c.note = credit.error
    default -> Failed
  }
}
terminal state Good
terminal state Manual
terminal state Failed
`;

const wf = () => Workflow.deploy(SOURCE);

const requests: { path: string | null; body: unknown; callId: string; attempt: number }[] = [];
test.before(() => {
  Workflow.mockHttp("bureau", (req) => {
    requests.push({ path: req.path, body: req.body, callId: req.callId, attempt: req.attempt });
    const mode = req.path?.split("/").pop();
    if (mode === "good") return { body: { score: 710, band: "A", extra: 1 } };
    if (mode === "flaky") return req.attempt < 3 ? { status: 503, headers: { "Retry-After": "60" } } : { body: { score: 500, band: "D" } };
    if (mode === "down") return { error: "timeout" };
    return { status: 404 };
  });
});

test.serial("mockHttp answers a call at once: the run routes on the answer; run.calls() lists it", async (t) => {
  const run = await (await wf()).start({ company: "ACME", mode: "good", c: {} });
  t.is(run.state, "Good");
  t.is(run.entities.c.note, "A");
  const [call] = await run.calls();
  t.like(call, { alias: "credit", type: "http", endpoint: "bureau", method: "POST", status: "answered", error: null });
  t.deepEqual(call.attempts.map((a) => [a.attempt, a.status, a.error]), [[1, 200, null]]);
  t.like(requests.find((r) => r.callId === call.callId), { path: "/score/good", body: { company: "ACME" }, attempt: 1 });
});

test.serial("retries wait for advanceTime, keep the call id, and honour Retry-After", async (t) => {
  const run = await (await wf()).start({ company: "ACME", mode: "flaky", c: {} });
  t.is(run.state, "Checking");
  let [call] = await run.calls();
  t.is(call.attempts.length, 1);
  await run.advanceTime("30s"); // before the Retry-After of 60 s: nothing yet
  [call] = await run.calls();
  t.is(call.attempts.length, 1);
  await run.advanceTime("5m");
  t.is(run.state, "Manual");
  [call] = await run.calls();
  t.deepEqual(call.attempts.map((a) => a.status), [503, 503, 200]);
  t.true(requests.filter((r) => r.path === "/score/flaky").every((r) => r.callId === call.callId));
});

test.serial("advanceTime applies what is already due before it moves the clock: a retry due while the machine was slow still leads to the next", async (t) => {
  const run = await (await wf()).start({ company: "ACME", mode: "down", c: {} });
  // the second attempt's backoff (at most 1 s, full jitter) runs out in real time before advanceTime:
  // moving the clock first would spend the whole hour in one move and leave the third attempt,
  // scheduled a moment after the second, never made (the run stuck in Checking)
  await new Promise((r) => setTimeout(r, 1100));
  await run.advanceTime("1h");
  t.is(run.state, "Failed");
  t.is((await run.calls())[0]!.attempts.length, 3);
});

test.serial("attempts spent: the call fails and on x.failed runs; without a stand-in a call stays pending", async (t) => {
  const run = await (await wf()).start({ company: "ACME", mode: "down", c: {} });
  await run.advanceTime("1h");
  t.is(run.state, "Failed");
  const [call] = await run.calls();
  t.is(call.status, "failed");
  t.is(call.attempts.length, 3);
  t.regex(call.error ?? "", /timeout \(stand-in\) \(3 attempts\)/);
  t.is(run.entities.c.note, call.error);

  Workflow.mockHttp("bureau", null);
  const waiting = await (await wf()).start({ company: "ACME", mode: "good", c: {} });
  await waiting.advanceTime("1h");
  t.is(waiting.state, "Checking");
  t.like((await waiting.calls())[0], { status: "pending", attempts: [] });
});
