/**
 * Receipts checked by an implementation nobody here wrote (v0.4 "Receipts"): Debian's
 * python3-jwcrypto (test/helpers/verify-receipt.py), never the `jose` that signed them.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { ROOT } from "./server.js";

const run = promisify(execFile);

/**
 * Verifies `receipt` with python3-jwcrypto against the key set `base` publishes now
 * (`/.well-known/jwks.json`), expecting `sub` (and, when given, the slot instance's `state` and
 * `visit`); the payload, or null when it does not verify.
 */
export async function verifyReceiptOutside(base: string, receipt: string, sub: string, instance?: { state: string; visit: number }): Promise<Record<string, unknown> | null> {
  const jwks = await fetch(`${base}/.well-known/jwks.json`).then((r) => r.text());
  try {
    const extra = instance ? [instance.state, String(instance.visit)] : [];
    const { stdout } = await run("/usr/bin/python3", [`${ROOT}test/helpers/verify-receipt.py`, jwks, receipt, sub, ...extra]);
    return JSON.parse(stdout) as Record<string, unknown>;
  } catch {
    return null;
  }
}
