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
 * that envelope (`sealText`).
 * API output never unseals: it shows the URL with its token replaced by `[redacted]`.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

export const CALLBACK_PATH_SEGMENT = "/api/workflow/callback/";
const LINK_IN_TEXT = /\/api\/workflow\/callback\/[A-Za-z0-9_-]{43}/;

export interface Sealed {
  $sealed: string;
}

export function isSealed(v: unknown): v is Sealed {
  return typeof v === "object" && v !== null && typeof (v as Sealed).$sealed === "string";
}

/** True when `text` holds a callback URL with a token. */
export function carriesLink(text: string): boolean {
  return LINK_IN_TEXT.test(text);
}

/**
 * `text` with the token segment of every callback path replaced by `[redacted]` — any segment,
 * well-formed or not, in any letter case, so that a hostile or mistyped token is not logged either.
 */
export function redactTokens(text: string): string {
  return text.replace(/(\/api\/workflow\/callback\/)[^\s"'?#\\/<>]+/gi, "$1[redacted]");
}

export class Sealer {
  private readonly key: Buffer;
  constructor(secret: string) {
    this.key = createHash("sha256").update(`slotflow-seal-v1:${secret}`).digest();
  }

  seal(text: string): Sealed {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    const ct = Buffer.concat([cipher.update(text, "utf8"), cipher.final()]);
    const tag = cipher.getAuthTag();
    return { $sealed: ["v1", iv, ct, tag].map((p) => (typeof p === "string" ? p : p.toString("base64url"))).join(".") };
  }

  /** Throws when the value was sealed under another key or was altered. */
  unseal(sealed: Sealed): string {
    const [version, iv, ct, tag] = sealed.$sealed.split(".");
    if (version !== "v1") throw new Error(`unknown sealed value version "${version}"`);
    const decipher = createDecipheriv("aes-256-gcm", this.key, Buffer.from(iv, "base64url"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(ct, "base64url")), decipher.final()]).toString("utf8");
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
  sealJson(value: unknown): unknown {
    if (typeof value === "string") return this.sealIfLink(value);
    if (Array.isArray(value)) return value.map((v) => this.sealJson(v));
    if (value && typeof value === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = this.sealJson(v);
      return out;
    }
    return value;
  }

  /** Deep copy with sealed strings opened (inside the engine only). */
  unsealJson(value: unknown): unknown {
    if (isSealed(value)) return this.unseal(value);
    if (Array.isArray(value)) return value.map((v) => this.unsealJson(v));
    if (value && typeof value === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = this.unsealJson(v);
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
export function redactForOutput(value: unknown, sealer: Sealer): unknown {
  if (isSealed(value)) {
    try {
      return redactTokens(sealer.unseal(value));
    } catch {
      return "[sealed]";
    }
  }
  if (typeof value === "string") return redactTokens(value);
  if (Array.isArray(value)) return value.map((v) => redactForOutput(v, sealer));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactForOutput(v, sealer);
    return out;
  }
  return value;
}
