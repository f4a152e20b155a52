/**
 * Signed command jobs (src/queue/signature.ts, issue 28 item 1): what verifies and what does not,
 * across the JSON round trip a job makes through Redis and across a seal-key rotation.
 */
import test from "ava";
import { randomUUID } from "node:crypto";
import { CommandSigner, UnsignedJobError, canonicalJson } from "../../src/queue/signature.js";

const cmd = () => ({ kind: "deposit", commandId: randomUUID(), runId: randomUUID(), linkId: randomUUID(), args: { b: [1, { z: 1, a: 2 }], a: "x" }, idempotency: undefined });
const roundTrip = <T>(v: T): unknown => JSON.parse(JSON.stringify(v));

test("a signed command verifies after its JSON round trip, whatever the member order, and comes back without its signature", (t) => {
  const signer = new CommandSigner(["k1"]);
  const c = cmd();
  const data = roundTrip(signer.signed(c)) as Record<string, unknown>;
  const reordered = Object.fromEntries(Object.entries(data).reverse());
  t.deepEqual(signer.verify(reordered, c.commandId), roundTrip(c));
  t.is(canonicalJson({ b: 1, a: { d: 1, c: undefined } }), '{"a":{"d":1},"b":1}');
});

test("a changed member, a missing or garbled signature, another key, or another job id is refused", (t) => {
  const signer = new CommandSigner(["k1"]);
  const c = cmd();
  const data = roundTrip(signer.signed(c)) as Record<string, any>;
  const refused = (value: unknown, jobId = c.commandId) => t.throws(() => signer.verify(value, jobId), { instanceOf: UnsignedJobError });
  refused({ ...data, runId: randomUUID() });
  refused({ ...data, args: { ...data.args, a: "y" } });
  refused({ ...data, extra: 1 });
  refused({ ...data, signature: undefined });
  refused({ ...data, signature: "v1,AAAA" });
  refused({ ...data, signature: data.signature.replace("v1,", "v2,") });
  refused(roundTrip(new CommandSigner(["other"]).signed(c)));
  refused(data, randomUUID());
  refused(null);
  refused([data]);
  t.notThrows(() => signer.verify(data, c.commandId));
});

test("during a rotation every process pair agrees: NEW,OLD signs under both, any key of the ring verifies", (t) => {
  const old = new CommandSigner(["OLD"]);
  const both = new CommandSigner(["NEW", "OLD"]);
  const fresh = new CommandSigner(["NEW"]);
  const c = cmd();
  for (const [signer, verifier] of [[both, old], [old, both], [fresh, both], [both, fresh]] as const) {
    t.notThrows(() => verifier.verify(roundTrip(signer.signed(c)), c.commandId));
  }
  t.throws(() => fresh.verify(roundTrip(old.signed(c)), c.commandId), { instanceOf: UnsignedJobError });
  t.is(both.sign(c).split(" ").length, 2);
});

test("a signer needs a key", (t) => {
  t.throws(() => new CommandSigner([]), { message: /SLOTFLOW_SEAL_KEY/ });
});
