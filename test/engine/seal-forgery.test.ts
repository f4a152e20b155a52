/**
 * The stored form of sealed values cannot be forged by data (issue 8 item 14): a data object
 * shaped like a sealed value — `{"$sealed": "v1.…"}` — is stored escaped, read back as the same
 * data, and shown as data; it never reaches the unsealer.
 */
import test from "ava";
import { isSealed, redactForOutput, Sealer } from "../../src/engine/sealing/seal.js";
import { newToken } from "../../src/engine/lifecycles/link.js";

const FORGED = { $sealed: "v1.AAAAAAAAAAAAAAAA.BBBBBBBB.CCCCCCCCCCCCCCCCCCCCCC" };

test("a forged sealed value in data round-trips as data, without being unsealed", (t) => {
  const sealer = new Sealer("k");
  const data = { note: FORGED, rows: [{ $$odd: 1, plain: "x" }] };
  const stored = sealer.sealJson(data) as Record<string, unknown>;
  t.false(isSealed(stored.note));
  t.deepEqual(stored.note, { $$sealed: FORGED.$sealed });
  // Stored JSON goes through PostgreSQL's jsonb as text; a read is a parse of it.
  const read = JSON.parse(JSON.stringify(stored));
  t.deepEqual(sealer.unsealJson(read), data);
  t.deepEqual(redactForOutput(read, sealer), data);
});

test("the sealer's own sealed values still open beside escaped data", (t) => {
  const sealer = new Sealer("k");
  const link = `https://flows.example.com/api/workflow/callback/${newToken()}`;
  const stored = JSON.parse(JSON.stringify(sealer.sealJson({ url: link, $sealed: "data" })));
  t.true(isSealed(stored.url));
  t.deepEqual(sealer.unsealJson(stored), { url: link, $sealed: "data" });
});
