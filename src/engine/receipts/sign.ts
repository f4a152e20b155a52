/**
 * Signing a receipt (v0.4 "Many responders, forwarding, and receipts"; docs/receipts.md).
 *
 * A receipt is a compact JWS, ES256, `kid` (and `typ: "JWT"`) in its protected header, payload:
 *   { iss: base_url, sub: "runs/{runId}/slots/{alias}[/{element}]", jti: a random UUID,
 *     iat: seconds since the epoch, workflow, version, event,
 *     state: the state the slot belongs to, visit: the run's visit number (its count of state
 *       entries) when the slot was created —
 *       with `sub`, they name the slot instance: an "ok" given in an earlier state or visit is
 *       not the receipt of a later decision (issue 38 L3),
 *     bodySha256: hex SHA-256 of the RFC 8785 canonical JSON of the accepted body,
 *     answeredBy: how the completing answer came ({"via":"link"}, …) }
 * It is made in the worker's step that completes the slot and stored with it (`slots.receipt`).
 */
import { createHash, randomUUID } from "node:crypto";
import canonicalize from "canonicalize";
import { SignJWT } from "jose";
import type { AnsweredBy } from "../step.js";
import type { ReceiptKey } from "./keys.js";

/** What a receipt says, before `iss`, `jti` and `iat` are added. */
export interface ReceiptFacts {
  runId: string;
  alias: string;
  element: number | null;
  /** The state the slot belongs to, and the visit of that state it was created in. */
  state: string;
  visit: number;
  workflow: string;
  version: number;
  event: string;
  /** The accepted body (the event's arguments as JSON). */
  body: Record<string, unknown>;
  answeredBy: AnsweredBy | null;
}

/** `runs/{runId}/slots/{alias}` or `runs/{runId}/slots/{alias}/{element}` for a fanned-out slot. */
export function receiptSubject(runId: string, alias: string, element: number | null): string {
  return `runs/${runId}/slots/${alias}${element === null ? "" : `/${element}`}`;
}

/** Hex SHA-256 of the RFC 8785 (JCS) canonical JSON of `body`. */
export function bodySha256(body: unknown): string {
  const text = canonicalize(body) ?? "null";
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** Signs the receipt for `facts` with `key` (ES256); `issuer` is the base URL, `now` the step's time. */
export async function signReceipt(key: ReceiptKey, issuer: string, facts: ReceiptFacts, now: Date): Promise<string> {
  return new SignJWT({
    workflow: facts.workflow,
    version: facts.version,
    event: facts.event,
    state: facts.state,
    visit: facts.visit,
    bodySha256: bodySha256(facts.body),
    answeredBy: facts.answeredBy,
  })
    .setProtectedHeader({ alg: "ES256", kid: key.kid, typ: "JWT" })
    .setIssuer(issuer)
    .setSubject(receiptSubject(facts.runId, facts.alias, facts.element))
    .setJti(randomUUID())
    .setIssuedAt(Math.floor(now.getTime() / 1000))
    .sign(key.privateKey);
}
