/**
 * Signed command jobs (issue 28 item 1): the worker applies a `commands` job only when it carries
 * slotflow's signature over its data, so a job that anyone else put in Redis — through the queue
 * dashboard (Bull Board's "add job", "edit data", "duplicate"), a forged cross-site form, or a
 * client with access to Redis — is refused before anything is applied.
 *
 * **What is signed.** `signature` = space-separated `v1,<base64url HMAC-SHA256>` values, one per
 * key of the ring, each over `"slotflow-command-v1\n" + canonicalJson(data)` where `data` is the
 * job's data without its `signature` member (the `Command` itself: kind, commandId, runId and the
 * rest). The canonical form is JSON with every object's members in sorted order and `undefined`
 * members left out (exactly what survives BullMQ's JSON round trip), so the worker computes the
 * same bytes from the data it reads back. The worker also requires the job id to equal the signed
 * `commandId` (every command job's id is its command id, queues.ts), so a signed job's data copied
 * under another id ("duplicate") is refused too.
 *
 * **The key.** Derived with HKDF-SHA256 (`node:crypto`) from each key of SLOTFLOW_SEAL_KEY, with
 * its own `info` ("slotflow command-job signature v1"), so it is independent of the seal's own
 * AES key (seal.ts derives that with another label). Why the seal key: it is the one secret every
 * process already holds — the web signs, the sweeper signs (expiries), the worker verifies — and
 * it is required in production for all of them (config.ts); the admin token is held by the web
 * process only, and the JWT secret is for principals.
 *
 * **Rotation.** The job is signed with *every* key of the ring (newest first) and a signature is
 * good when any of its values verifies under any key of the verifier's ring. So each step of
 * operations.md "Rotating the seal key" works while processes restart one by one: a web with
 * `NEW,OLD` signs under both, which a worker still on `OLD` verifies; a web still on `OLD` signs
 * under `OLD`, which a worker on `NEW,OLD` verifies; after `OLD` leaves the ring, `NEW` is common
 * to all. A verifier reads at most `MAX_SIGNATURES` values (bounded work per forged job).
 *
 * **What is not signed, and why.** `mail` and `deliveries` jobs carry only row ids
 * (`{ outboxId, runId }`, `{ deliveryId, runId }`; outbox-jobs.ts): a forged one can only make the
 * worker deliver what a committed step already wrote, once (the worker claims the row), so forging
 * them gains nothing. The `sweep` job carries nothing.
 *
 * The signature is not a secret (it proves only the data it came with), so it may sit in Redis and
 * show on the dashboard; neither the keys nor the derived key are ever logged or stored.
 */
import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";

/** The job data member that carries the signature. */
export const SIGNATURE_FIELD = "signature";
/** The most signature values a verifier reads (a ring longer than this is not expected). */
export const MAX_SIGNATURES = 8;
const VERSION = "v1";
const CONTEXT = "slotflow-command-v1\n";
const HKDF_INFO = "slotflow command-job signature v1";
const HKDF_SALT = "slotflow";

/**
 * JSON with every object's members sorted by name and `undefined` members dropped (as
 * `JSON.stringify` does), arrays in order. Equal for a value and its JSON round trip.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k];
    return sorted;
  });
}

/** Why a job's signature was not accepted (never includes a key or the expected value). */
export class UnsignedJobError extends Error {
  override name = "UnsignedJobError";
}

/** Signs and verifies command job data with keys derived from a key ring (SLOTFLOW_SEAL_KEY). */
export class CommandSigner {
  private readonly keys: Buffer[];

  /** `ring`: the raw keys, newest first (config.sealKeys). Throws when it is empty. */
  constructor(ring: readonly string[]) {
    if (ring.length === 0) throw new Error("the command signer needs at least one key (SLOTFLOW_SEAL_KEY)");
    this.keys = ring.map((secret) => Buffer.from(hkdfSync("sha256", Buffer.from(secret, "utf8"), HKDF_SALT, HKDF_INFO, 32)));
  }

  private mac(key: Buffer, data: unknown): Buffer {
    return createHmac("sha256", key).update(CONTEXT).update(canonicalJson(data)).digest();
  }

  /** The `signature` value for `data` (job data without a signature): one `v1,…` per key. */
  sign(data: object): string {
    return this.keys.map((k) => `${VERSION},${this.mac(k, data).toString("base64url")}`).join(" ");
  }

  /** `data` with its signature, as a command job carries it. */
  signed<T extends object>(data: T): T & { [SIGNATURE_FIELD]: string } {
    return { ...data, [SIGNATURE_FIELD]: this.sign(data) };
  }

  /**
   * The job data without its signature when the signature verifies under a key of this ring and
   * `jobId` is the data's `commandId`; else throws UnsignedJobError saying which check failed.
   */
  verify(jobData: unknown, jobId: string | undefined): Record<string, unknown> {
    if (jobData === null || typeof jobData !== "object" || Array.isArray(jobData)) throw new UnsignedJobError("the job's data is not an object");
    const { [SIGNATURE_FIELD]: signature, ...data } = jobData as Record<string, unknown>;
    if (typeof signature !== "string" || signature === "") throw new UnsignedJobError("the job carries no signature");
    const presented = signature
      .split(" ")
      .slice(0, MAX_SIGNATURES)
      .flatMap((part) => {
        const [version, value] = part.split(",", 2);
        return version === VERSION && value ? [Buffer.from(value, "base64url")] : [];
      })
      .filter((b) => b.length === 32);
    const good = this.keys.some((key) => {
      const expected = this.mac(key, data);
      return presented.some((p) => timingSafeEqual(p, expected));
    });
    if (!good) throw new UnsignedJobError("its signature does not verify under any key of SLOTFLOW_SEAL_KEY");
    if (jobId === undefined || data.commandId !== jobId) throw new UnsignedJobError("its job id is not its command id");
    return data;
  }
}
