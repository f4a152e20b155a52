/** src/engine/sealing/seal.ts: stored strings that carry a link are sealed, and only the key opens them. */
import test from "ava";
import { carriesLink, isSealed, redactForOutput, redactTokens, Sealer } from "../../src/engine/sealing/seal.js";
import { newToken } from "../../src/engine/lifecycles/link.js";

const url = () => `https://flows.example.com/api/workflow/callback/${newToken()}`;

test("a string carrying a link is sealed; the sealed form does not contain the token and opens with the same key only", (t) => {
  const link = url();
  const sealer = new Sealer("k1");
  const sealed = sealer.sealIfLink(`Answer at ${link}`);
  t.true(isSealed(sealed));
  t.false(JSON.stringify(sealed).includes(link.split("/").pop()!));
  t.is(sealer.unseal(sealed as { $sealed: string }), `Answer at ${link}`);
  t.throws(() => new Sealer("k2").unseal(sealed as { $sealed: string }));
  t.is(sealer.sealIfLink("no link here"), "no link here");
});

test("sealJson seals nested link-carrying strings and leaves the rest readable", (t) => {
  const sealer = new Sealer("k");
  const link = url();
  const sealed = sealer.sealJson({ name: "Acme", approvalUrl: link, notes: ["a", link] }) as Record<string, unknown>;
  t.is(sealed.name, "Acme");
  t.true(isSealed(sealed.approvalUrl));
  t.deepEqual(sealer.unsealJson(sealed), { name: "Acme", approvalUrl: link, notes: ["a", link] });
  t.deepEqual(redactForOutput(sealed, sealer), {
    name: "Acme",
    approvalUrl: "https://flows.example.com/api/workflow/callback/[redacted]",
    notes: ["a", "https://flows.example.com/api/workflow/callback/[redacted]"],
  });
});

test("redactTokens blanks any callback path segment, well-formed or not", (t) => {
  t.true(carriesLink(url()));
  t.is(redactTokens('GET /api/workflow/callback/abc%20def?x=1 "x"'), 'GET /api/workflow/callback/[redacted]?x=1 "x"');
});

test("a key ring seals with its first key and opens values sealed under any of its keys, telling which", (t) => {
  const old = new Sealer("k-old").seal("sealed long ago");
  const ring = new Sealer(["k-new", "k-old"]);
  t.deepEqual(ring.open(old), { text: "sealed long ago", keyIndex: 1 });
  t.deepEqual(ring.open(ring.seal("today")), { text: "today", keyIndex: 0 });
  t.is(new Sealer("k-new").unseal(ring.seal("today")), "today");
  t.is(new Sealer("k-other").open(old), null);
  t.throws(() => new Sealer("k-other").unseal(old), { name: "UnsealError" });
});

test("a ring written as SLOTFLOW_SEAL_KEY (comma-separated, blanks ignored) is the same ring as its keys", (t) => {
  const sealed = new Sealer("k-old").seal("x");
  t.deepEqual(new Sealer(" k-new , k-old ,").open(sealed), { text: "x", keyIndex: 1 });
  t.throws(() => new Sealer(" , "));
});
