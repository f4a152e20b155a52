/**
 * The receipt key ring (v0.4 "Many responders, forwarding, and receipts"; docs/receipts.md).
 *
 * Receipts are compact JWS, ES256 (EC P-256), signed with `jose`. Keys come from:
 *
 * - `SLOTFLOW_RECEIPT_KEYS`: private EC P-256 keys, **newest first** (like SLOTFLOW_SEAL_KEY): the
 *   first signs, every key is published in the JWKS until it is removed. Each key is a PEM block
 *   (PKCS#8 `-----BEGIN PRIVATE KEY-----` or SEC1 `-----BEGIN EC PRIVATE KEY-----`, unencrypted)
 *   or a JWK object (`{"kty":"EC","crv":"P-256","x":…,"y":…,"d":…}`).
 *   Keys are separated by commas, blanks or newlines **between** keys: a JWK object is read to its
 *   closing brace and a PEM block to its END line, so the commas inside a JWK never split it.
 *   `\n` written as two characters inside a PEM is read as a newline (one-line env files).
 *   The `kid` is the JWK's own `kid` when it has one, else its RFC 7638 thumbprint.
 * - unset, outside production: one key generated on first use and kept in `receipt_keys`
 *   (migration 20261126050000), its private half sealed with the Sealer — every process and restart
 *   signs with the same key.
 * - unset, with NODE_ENV=production: no key — deposits complete without a receipt and the process
 *   warns at start (a deployment chooses to sign by setting the variable; the engine never invents
 *   a production key that no operator can rotate).
 */
import { createPrivateKey } from "node:crypto";
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from "jose";
import type { Db } from "../../db.js";
import { isSealed, type Sealer } from "../sealing/seal.js";

/** One signing key: its `kid`, the private key (signing only) and the public JWK it is published as. */
export interface ReceiptKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

/** Thrown for a malformed SLOTFLOW_RECEIPT_KEYS (the message names the key's position, never its text). */
export class ReceiptKeyError extends Error {
  override name = "ReceiptKeyError";
}

/** The most keys SLOTFLOW_RECEIPT_KEYS may list (a bound on the scan; rotation needs two or three). */
const MAX_KEYS = 32;

/**
 * Splits SLOTFLOW_RECEIPT_KEYS into its keys' texts, in order. Between keys: commas, whitespace and `\n` escapes.
 * A key is a JSON object (read to its matching brace, strings and escapes honoured) or a PEM block
 * (read to its `-----END …-----` line). Anything else throws ReceiptKeyError.
 */
export function splitReceiptKeys(raw: string): string[] {
  const keys: string[] = [];
  let i = 0;
  while (i < raw.length) {
    const c = raw[i]!;
    if (c === "," || /\s/.test(c)) {
      i++;
      continue;
    }
    if (raw.startsWith("\\n", i)) {
      i += 2; // a `\n` escape between keys (a one-line env file) separates like a newline
      continue;
    }
    if (keys.length >= MAX_KEYS) throw new ReceiptKeyError(`SLOTFLOW_RECEIPT_KEYS lists more than ${MAX_KEYS} keys`);
    if (c === "{") {
      let depth = 0;
      let inString = false;
      let j = i;
      for (; j < raw.length; j++) {
        const d = raw[j]!;
        if (inString) {
          if (d === "\\") j++;
          else if (d === '"') inString = false;
        } else if (d === '"') inString = true;
        else if (d === "{") depth++;
        else if (d === "}" && --depth === 0) break;
      }
      if (j >= raw.length) throw new ReceiptKeyError(`SLOTFLOW_RECEIPT_KEYS: key ${keys.length + 1} is a JSON object that never closes`);
      keys.push(raw.slice(i, j + 1));
      i = j + 1;
      continue;
    }
    if (raw.startsWith("-----BEGIN ", i)) {
      const end = /-----END [A-Z0-9 ]+-----/g;
      end.lastIndex = i;
      const m = end.exec(raw);
      if (!m) throw new ReceiptKeyError(`SLOTFLOW_RECEIPT_KEYS: key ${keys.length + 1} is a PEM block without its END line`);
      keys.push(raw.slice(i, m.index + m[0].length).replace(/\\n/g, "\n"));
      i = m.index + m[0].length;
      continue;
    }
    throw new ReceiptKeyError(`SLOTFLOW_RECEIPT_KEYS: key ${keys.length + 1} is neither a PEM block nor a JWK object`);
  }
  return keys;
}

/** The public half of a private EC JWK (no `d`), with `kid`, `alg` and `use` set. */
function publicOf(jwk: JWK, kid: string): JWK {
  return { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, kid, alg: "ES256", use: "sig" };
}

/** Imports one key's text (PEM PKCS#8 or private JWK), checking it is an EC P-256 private key. */
export async function importReceiptKey(text: string, position: number): Promise<ReceiptKey> {
  let jwk: JWK;
  try {
    if (text.startsWith("{")) {
      jwk = JSON.parse(text) as JWK;
    } else {
      // node:crypto reads both PKCS#8 and SEC1 PEM; jose imports the JWK it exports
      jwk = createPrivateKey({ key: text, format: "pem" }).export({ format: "jwk" }) as JWK;
    }
  } catch {
    throw new ReceiptKeyError(`SLOTFLOW_RECEIPT_KEYS: key ${position} cannot be read (a PKCS#8 PEM or a JWK of an EC P-256 private key is expected)`);
  }
  if (jwk.kty !== "EC" || jwk.crv !== "P-256" || typeof jwk.d !== "string" || typeof jwk.x !== "string" || typeof jwk.y !== "string") {
    throw new ReceiptKeyError(`SLOTFLOW_RECEIPT_KEYS: key ${position} is not an EC P-256 private key`);
  }
  const kid = typeof jwk.kid === "string" && jwk.kid !== "" ? jwk.kid : await calculateJwkThumbprint(publicOf(jwk, ""), "sha256");
  let privateKey: CryptoKey;
  try {
    privateKey = (await importJWK({ kty: "EC", crv: "P-256", x: jwk.x, y: jwk.y, d: jwk.d }, "ES256")) as CryptoKey;
  } catch {
    throw new ReceiptKeyError(`SLOTFLOW_RECEIPT_KEYS: key ${position} is not a valid EC P-256 private key`);
  }
  return { kid, privateKey, publicJwk: publicOf(jwk, kid) };
}

/** What a key source yields: the keys newest first (empty: receipts are not signed). */
export type ReceiptKeySource = () => Promise<ReceiptKey[]>;

const DEV_PURPOSE = "development";

/**
 * The development key kept in `receipt_keys`: read it, or generate one and insert it (a race
 * between processes keeps the first insert: ON CONFLICT DO NOTHING, then read again). Its private
 * JWK is stored sealed with `sealer`.
 */
export async function developmentKey(db: Db, sealer: Sealer): Promise<ReceiptKey> {
  const read = async (): Promise<ReceiptKey | null> => {
    const row = await db.receiptKey.findUnique({ where: { purpose: DEV_PURPOSE } });
    if (!row) return null;
    if (!isSealed(row.privateJwk)) throw new ReceiptKeyError("receipt_keys holds a private key that is not sealed");
    const jwk = JSON.parse(sealer.unseal(row.privateJwk)) as JWK;
    return importReceiptKey(JSON.stringify({ ...jwk, kid: row.kid }), 1);
  };
  const existing = await read();
  if (existing) return existing;
  const { privateKey } = await generateKeyPair("ES256", { extractable: true });
  const jwk = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint(publicOf(jwk, ""), "sha256");
  await db.$executeRaw`INSERT INTO receipt_keys (kid, purpose, private_jwk, public_jwk)
    VALUES (${kid}, ${DEV_PURPOSE}, ${JSON.stringify(sealer.seal(JSON.stringify(jwk)))}::jsonb, ${JSON.stringify(publicOf(jwk, kid))}::jsonb)
    ON CONFLICT DO NOTHING`;
  const kept = await read();
  if (!kept) throw new ReceiptKeyError("the development receipt key could not be kept in receipt_keys");
  return kept;
}

/**
 * The key source of a process: the configured keys (`configured`: SLOTFLOW_RECEIPT_KEYS's text, ""
 * when unset), else the development key outside production, else none. Loaded once, on first use;
 * a failed load is tried again on the next use.
 */
export function receiptKeySource(options: { configured: string; production: boolean; db: Db; sealer: Sealer }): ReceiptKeySource {
  let loading: Promise<ReceiptKey[]> | null = null;
  const load = async (): Promise<ReceiptKey[]> => {
    const texts = splitReceiptKeys(options.configured);
    if (texts.length > 0) return Promise.all(texts.map((t, i) => importReceiptKey(t, i + 1)));
    if (options.production) return [];
    return [await developmentKey(options.db, options.sealer)];
  };
  return () => {
    loading ??= load().catch((err: unknown) => {
      loading = null;
      throw err;
    });
    return loading;
  };
}
