/**
 * Server-side sessions (v0.5 "Security, round two": "a server-side session id checked on every
 * read; logout ends it at once"; issue 38 L4). A session cookie carries a random id (`sid`, 256
 * bits, base64url); the `sessions` table (migration 20261128020000_sessions) holds its SHA-256 (hex)
 * only — the id is a credential and never reaches a row, a log or Redis in clear.
 *
 * Why a PostgreSQL table and not Redis with a TTL: sessions are state people rely on (signing out
 * must stick), and Redis here may run without persistence (SLOTFLOW_ALLOW_VOLATILE_REDIS) or evict —
 * a restart would sign everyone out, an eviction would sign someone out at random; PostgreSQL is
 * already on every request path that needs a session (inbox, task pages). One primary-key lookup per
 * read; the table is distributable by `id_sha256` (docs/scaling.md).
 *
 * Database failures answer 503 `unavailable` (src/engine-client/dependency.ts), never "signed out".
 */
import { createHash, randomBytes } from "node:crypto";
import type { Db } from "../../db.js";
import type { Logger } from "../../log.js";
import { dependency } from "../../engine-client/dependency.js";

/** A session id as its cookie carries it: 43 base64url characters. */
const SID = /^[A-Za-z0-9_-]{43}$/;

const hashOf = (sid: string) => createHash("sha256").update(sid).digest("hex");

/** What the store needs: the database and a logger (for dependency failures). */
export interface SessionStore {
  db: Db;
  log: Logger;
}

/** Records a new session for `principalId` living until `expiresAt`; returns its id (for the cookie only). */
export async function openSessionRow(store: SessionStore, row: { principalId: string; issuerSid: string | null; development: boolean; expiresAt: Date }): Promise<string> {
  const sid = randomBytes(32).toString("base64url");
  await dependency(store.log, "database", () =>
    store.db.session.create({ data: { idSha256: hashOf(sid), principalId: row.principalId, issuerSid: row.issuerSid, development: row.development, expiresAt: row.expiresAt } }),
  );
  return sid;
}

/** True when session `sid` exists, has not ended and has not expired. */
export async function sessionLive(store: SessionStore, sid: unknown): Promise<boolean> {
  if (typeof sid !== "string" || !SID.test(sid)) return false;
  const found = await dependency(store.log, "database", () =>
    store.db.session.findFirst({ where: { idSha256: hashOf(sid), endedAt: null, expiresAt: { gt: new Date() } }, select: { idSha256: true } }),
  );
  return found !== null;
}

/** Ends session `sid` now (idempotent: an ended or unknown session stays as it is). */
export async function endSessionRow(store: SessionStore, sid: string): Promise<void> {
  if (!SID.test(sid)) return;
  await dependency(store.log, "database", () => store.db.session.updateMany({ where: { idSha256: hashOf(sid), endedAt: null }, data: { endedAt: new Date() } }));
}

/**
 * Ends, now, every live session the issuer's back-channel logout names (OpenID Connect
 * Back-Channel Logout 1.0; v0.5 "Security, round two": "a sign-out at the issuer, when it tells us,
 * ends it at once"): the sessions signed in through the issuer (never a development one) whose
 * `issuer_sid` is `sid` (the ID token's `sid` claim at sign-in) and whose principal is `sub`, each
 * when given; at least one of the two must be given (else nothing ends). Returns how many ended.
 */
export async function endIssuerSessions(store: SessionStore, by: { sid: string | null; sub: string | null }): Promise<number> {
  if (by.sid === null && by.sub === null) return 0;
  const where = {
    development: false,
    endedAt: null,
    ...(by.sid !== null ? { issuerSid: by.sid } : {}),
    ...(by.sub !== null ? { principalId: by.sub } : {}),
  };
  const { count } = await dependency(store.log, "database", () => store.db.session.updateMany({ where, data: { endedAt: new Date() } }));
  return count;
}
