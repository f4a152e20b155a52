/**
 * Sealing of stored strings that carry a callback link.
 *
 * The token of a link is never stored (callback-links spec §1 "Never stored"). A workflow may
 * still place the URL on a tracked row or in a queued email, and read it back in a later step
 * (the contract-signing example mails `contract.counterSignUrl` from a milestone). So before any
 * such string is written, it is sealed with AES-256-GCM under a key derived from
 * SLOTFLOW_SEAL_KEY, which lives only in the processes' environment: the token cannot be recovered
 * from the database alone. Stored form: `{"$sealed": "v1.<iv>.<ciphertext>.<tag>"}` (base64url);
 * in a text column (the outbox's recipient, subject and body) the JSON text of the string or of
 * that envelope (`sealText`). In JSON, data keys starting with `$` are escaped (see `storedKey`),
 * so the envelope's shape cannot be forged by data.
 * API output never unseals: it shows the URL with its token replaced by `[redacted]`.
 *
 * Keys can change (issue 9 §6): SLOTFLOW_SEAL_KEY is a key ring, comma-separated, newest first.
 * `seal` uses the first key; `unseal` tries each key in order (AES-GCM's tag tells a wrong key from
 * the right one), so values sealed under an older key stay readable while it is in the ring, and
 * `slotflow reseal` (reseal.ts) re-seals them under the newest one. Links themselves never depend
 * on a key: only the SHA-256 of their token is stored.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { hashToken } from "./token.js";
import { nextDepth } from "../../json/depth.js";

export const CALLBACK_PATH_SEGMENT = "/api/workflow/callback/";
const LINK_IN_TEXT = /\/api\/workflow\/callback\/(?:sfl_[A-Za-z0-9_-]{49}|[A-Za-z0-9_-]{43})/;

export interface Sealed {
  $sealed: string;
}

/**
 * Property names in stored JSON are escaped so that data can never read as a sealed value
 * (issue 8 item 14): a data key starting with `$` is stored with one more `$` (`$sealed` →
 * `$$sealed`) and loses it when read back. Only the sealer's own `{"$sealed": …}` object has a
 * key `$sealed` in storage, so a forged one in data is just data. (Data keys are declared names —
 * identifiers — so nothing stored today starts with `$`; the escape is the format's guarantee, not
 * the input check's.)
 */
const storedKey = (k: string): string => (k.startsWith("$") ? `$${k}` : k);
const dataKey = (k: string): string => (k.startsWith("$$") ? k.slice(1) : k);

export function isSealed(v: unknown): v is Sealed {
  return typeof v === "object" && v !== null && typeof (v as Sealed).$sealed === "string";
}

/** True when `text` holds a callback URL with a token. */
export function carriesLink(text: string): boolean {
  return LINK_IN_TEXT.test(text);
}

/**
 * The SHA-256 (hex, as `links.token_sha256`) of every callback token in `text`, each once (issue
 * 18: a delivery keeps these beside its sealed payload to know whether its link is still live).
 */
export function linkHashesIn(text: string): string[] {
  const all = new RegExp(LINK_IN_TEXT.source, "g");
  const hashes = new Set<string>();
  for (const m of text.matchAll(all)) hashes.add(hashToken(m[0].slice(CALLBACK_PATH_SEGMENT.length)));
  return [...hashes];
}

/**
 * `text` with the token segment of every callback path replaced by `[redacted]` — any segment,
 * well-formed or not, in any letter case, so that a hostile or mistyped token is not logged either.
 */
export function redactTokens(text: string): string {
  return text.replace(/(\/api\/workflow\/callback\/)[^\s"'?#\\/<>]+/gi, "$1[redacted]");
}

/** Thrown by `unseal` when no key of the ring opens a value (sealed under another key, or altered). */
export class UnsealError extends Error {
  override name = "UnsealError";
}

export class Sealer {
  /** Derived keys, newest first; `keys[0]` seals. */
  private readonly keys: Buffer[];

  /**
   * `ring`: the keys, newest first — an array, or one string in SLOTFLOW_SEAL_KEY's form (keys
   * separated by commas, blanks around them ignored). Throws when it names no key.
   */
  constructor(ring: string | readonly string[]) {
    const secrets = (typeof ring === "string" ? ring.split(",") : ring).map((k) => k.trim()).filter((k) => k !== "");
    if (secrets.length === 0) throw new Error("a seal key ring needs at least one key");
    this.keys = secrets.map((secret) => createHash("sha256").update(`slotflow-seal-v1:${secret}`).digest());
  }

  seal(text: string): Sealed {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.keys[0], iv);
    const ct = Buffer.concat([cipher.update(text, "utf8"), cipher.final()]);
    const tag = cipher.getAuthTag();
    return { $sealed: ["v1", iv, ct, tag].map((p) => (typeof p === "string" ? p : p.toString("base64url"))).join(".") };
  }

  /** Opens a sealed value with the first key of the ring that fits; throws UnsealError when none does. */
  unseal(sealed: Sealed): string {
    const opened = this.open(sealed);
    if (!opened) throw new UnsealError("no key of SLOTFLOW_SEAL_KEY opens this sealed value (sealed under another key, or altered)");
    return opened.text;
  }

  /**
   * `{ text, keyIndex }` (0 = the newest key) for a value some key of the ring opens; null when none
   * does. Throws on a malformed sealed value.
   */
  open(sealed: Sealed): { text: string; keyIndex: number } | null {
    const [version, iv, ct, tag] = sealed.$sealed.split(".");
    if (version !== "v1" || iv === undefined || ct === undefined || tag === undefined) {
      throw new UnsealError(`unknown sealed value version "${version}"`);
    }
    for (let keyIndex = 0; keyIndex < this.keys.length; keyIndex++) {
      try {
        const decipher = createDecipheriv("aes-256-gcm", this.keys[keyIndex], Buffer.from(iv, "base64url"));
        decipher.setAuthTag(Buffer.from(tag, "base64url"));
        const text = Buffer.concat([decipher.update(Buffer.from(ct, "base64url")), decipher.final()]).toString("utf8");
        return { text, keyIndex };
      } catch {
        // not this key: try the next one
      }
    }
    return null;
  }

  /** Seals `text` when it carries a link; returns other strings as they are. */
  sealIfLink(text: string): string | Sealed {
    return carriesLink(text) ? this.seal(text) : text;
  }

  /**
   * The stored form of a text column that may carry a link (`outbox.to`, `.subject`, `.body`):
   * the JSON text of the string, or of its sealed envelope when it carries a link.
   */
  sealText(text: string): string {
    return JSON.stringify(this.sealIfLink(text));
  }

  /** The string a `sealText` form stands for (inside the engine only: the mailer). Throws like `unseal`. */
  openText(stored: string): string {
    const value = parseStoredText(stored);
    return isSealed(value) ? this.unseal(value) : String(value);
  }

  /** Deep copy of a JSON value with every link-carrying string sealed. */
  sealJson(value: unknown, depth = 0): unknown {
    if (typeof value === "string") return this.sealIfLink(value);
    if (Array.isArray(value)) return value.map((v) => this.sealJson(v, nextDepth(depth)));
    if (value && typeof value === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[storedKey(k)] = this.sealJson(v, nextDepth(depth));
      return out;
    }
    return value;
  }

  /** Deep copy with sealed strings opened (inside the engine only). */
  unsealJson(value: unknown, depth = 0): unknown {
    if (isSealed(value)) return this.unseal(value);
    if (Array.isArray(value)) return value.map((v) => this.unsealJson(v, nextDepth(depth)));
    if (value && typeof value === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[dataKey(k)] = this.unsealJson(v, nextDepth(depth));
      return out;
    }
    return value;
  }
}

function parseStoredText(stored: string): unknown {
  try {
    return JSON.parse(stored) as unknown;
  } catch {
    return stored;
  }
}

/** A `sealText` form for API output: the string with every token replaced by `[redacted]`. */
export function redactStoredText(stored: string, sealer: Sealer): string {
  return String(redactForOutput(parseStoredText(stored), sealer));
}

/** Deep copy for API output: sealed strings opened with every token replaced by `[redacted]`. */
export function redactForOutput(value: unknown, sealer: Sealer, depth = 0): unknown {
  if (isSealed(value)) {
    try {
      return redactTokens(sealer.unseal(value));
    } catch {
      return "[sealed]";
    }
  }
  if (typeof value === "string") return redactTokens(value);
  if (Array.isArray(value)) return value.map((v) => redactForOutput(v, sealer, nextDepth(depth)));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[dataKey(k)] = redactForOutput(v, sealer, nextDepth(depth));
    return out;
  }
  return value;
}
