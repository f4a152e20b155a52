/**
 * The receipt key ring (src/engine/receipts/keys.ts; docs/receipts.md "Keys"): how
 * SLOTFLOW_RECEIPT_KEYS is split (commas inside a JWK never split it; PEM blocks with `\n`
 * escapes), what is refused, and the development key — generated once, kept in `receipt_keys`
 * with its private half sealed, the same for every process, none in production.
 */
import test from "ava";
import { createHash, generateKeyPairSync } from "node:crypto";
import { createDb, type Db } from "../../src/db.js";
import { loadConfig } from "../../src/config.js";
import { importReceiptKey, receiptKeySource, splitReceiptKeys } from "../../src/engine/receipts/keys.js";
import { Sealer } from "../../src/engine/sealing/seal.js";
import { bodySha256, receiptSubject } from "../../src/engine/receipts/sign.js";
import { dropDatabase, freshDatabase, sql } from "../helpers/db.js";

let url: string;
let db: Db;
const sealer = new Sealer("receipt-keys-test-seal");

test.before(async () => {
  url = await freshDatabase("receiptkeys");
  db = createDb(url, 6);
});

test.after.always(async () => {
  await db?.$disconnect();
  if (url) await dropDatabase(url);
});

const newKey = () => generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey;

test("SLOTFLOW_RECEIPT_KEYS: JWK objects and PEM blocks, separated by commas, blanks or newlines between keys", async (t) => {
  const jwk = JSON.stringify({ ...(newKey().export({ format: "jwk" }) as object), kid: "a,b" });
  const pem = newKey().export({ format: "pem", type: "pkcs8" }) as string;
  const sec1 = newKey().export({ format: "pem", type: "sec1" }) as string;
  const oneLine = pem.replace(/\n/g, "\\n");
  const parts = splitReceiptKeys(` ${jwk} ,${oneLine}\n\n${sec1}`);
  t.is(parts.length, 3);
  t.is(parts[0], jwk, "the commas inside a JWK do not split it");
  t.is(parts[1], pem.trim(), "\\n escapes in a one-line PEM read as newlines");
  const keys = await Promise.all(parts.map((p, i) => importReceiptKey(p, i + 1)));
  t.is(keys[0]!.kid, "a,b", "a JWK's own kid is kept");
  t.regex(keys[1]!.kid, /^[\w-]{43}$/, "else the RFC 7638 thumbprint");
  t.deepEqual(splitReceiptKeys(""), []);
});

test("malformed keys are refused, naming the position and never the text", async (t) => {
  t.throws(() => splitReceiptKeys("secret-not-a-key"), { message: /key 1 is neither a PEM block nor a JWK object/ });
  t.throws(() => splitReceiptKeys('{"kty":"EC"'), { message: /key 1 .*never closes/ });
  t.throws(() => splitReceiptKeys("-----BEGIN PRIVATE KEY-----\nabc"), { message: /without its END line/ });
  const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ format: "jwk" });
  await t.throwsAsync(importReceiptKey(JSON.stringify(rsa), 2), { message: /key 2 is not an EC P-256 private key/ });
  const pub = JSON.stringify(generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey.export({ format: "jwk" }));
  await t.throwsAsync(importReceiptKey(pub, 1), { message: /not an EC P-256 private key/ });
  // the configuration refuses it at start, without quoting it
  const err = t.throws(() => loadConfig({ SLOTFLOW_RECEIPT_KEYS: "hunter2-secret" }));
  t.regex(err!.message, /SLOTFLOW_RECEIPT_KEYS: key 1/);
  t.notRegex(err!.message, /hunter2/);
});

test.serial("without keys, outside production: one development key, generated once, sealed in receipt_keys, shared by every process", async (t) => {
  // two processes starting at once
  const [a, b] = await Promise.all([
    receiptKeySource({ configured: "", production: false, db, sealer })(),
    receiptKeySource({ configured: "", production: false, db, sealer })(),
  ]);
  t.is(a.length, 1);
  t.is(a[0]!.kid, b[0]!.kid);
  const rows = await sql<{ kid: string; private_jwk: unknown; public_jwk: Record<string, string> }>(url, "SELECT kid, private_jwk, public_jwk FROM receipt_keys");
  t.is(rows.length, 1);
  t.is(rows[0]!.kid, a[0]!.kid);
  t.false(JSON.stringify(rows[0]!.private_jwk).includes('"d"'), "the private key is never stored in clear");
  t.truthy((rows[0]!.private_jwk as { $sealed?: string }).$sealed);
  t.false("d" in rows[0]!.public_jwk);
  // a restart reads the same key
  const again = await receiptKeySource({ configured: "", production: false, db, sealer })();
  t.is(again[0]!.kid, a[0]!.kid);
});

test("without keys in production: no key, so no receipts", async (t) => {
  t.deepEqual(await receiptKeySource({ configured: "", production: true, db, sealer })(), []);
});

test("a receipt's sub names the element of a fanned-out slot; bodySha256 hashes the RFC 8785 canonical JSON", (t) => {
  t.is(receiptSubject("r1", "sign", null), "runs/r1/slots/sign");
  t.is(receiptSubject("r1", "sign", 2), "runs/r1/slots/sign/2");
  // key order and spacing do not matter; numbers are written as ECMAScript does (RFC 8785 §3.2.2.3)
  const canonical = '{"a":[1,"x",null],"b":1e+21,"c":0.5}';
  const hash = createHash("sha256").update(canonical).digest("hex");
  t.is(bodySha256({ c: 0.5, b: 1e21, a: [1, "x", null] }), hash);
  t.is(bodySha256(JSON.parse('{ "b" : 1000000000000000000000, "a":[1,"x",null], "c":5e-1 }')), hash);
});
