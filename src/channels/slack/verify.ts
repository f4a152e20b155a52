/**
 * Slack request signing (v0.4 "Answers inside Slack"; Slack's "Verifying requests from Slack"):
 * `X-Slack-Signature` is `v0=` + hex HMAC-SHA256, keyed with the app's signing secret, of
 * `v0:{X-Slack-Request-Timestamp}:{raw body}`. A request is accepted when the timestamp (Unix
 * seconds) is within 5 minutes of now (either side) and the signature matches, compared in constant
 * time. Agrees with `@slack/bolt`'s `verifySlackRequest` (test/slack/verify.test.ts).
 */
import { createHmac, timingSafeEqual } from "node:crypto";

/** How far the request's timestamp may be from now, seconds. */
export const SLACK_MAX_SKEW_S = 5 * 60;

export interface SlackSigned {
  /** `X-Slack-Request-Timestamp`, as sent (undefined when absent). */
  timestamp: string | undefined;
  /** `X-Slack-Signature`, as sent. */
  signature: string | undefined;
  /** The request body exactly as received. */
  rawBody: string;
}

export type SlackVerdict = { ok: true } | { ok: false; reason: "missing-headers" | "stale-timestamp" | "bad-signature" };

/** `v0=` + hex HMAC-SHA256 of `v0:{timestamp}:{body}` with `secret`. */
export function slackSignature(secret: string, timestamp: string, rawBody: string): string {
  return `v0=${createHmac("sha256", secret).update(`v0:${timestamp}:${rawBody}`).digest("hex")}`;
}

/** Whether the timestamp is a whole number of seconds within SLACK_MAX_SKEW_S of `nowMs`. */
export function freshTimestamp(timestamp: string | undefined, nowMs = Date.now()): boolean {
  if (!timestamp || !/^\d{1,12}$/.test(timestamp)) return false;
  return Math.abs(Math.floor(nowMs / 1000) - Number(timestamp)) <= SLACK_MAX_SKEW_S;
}

/** Checks one request against one signing secret (see the module header). Never throws. */
export function verifySlackSignature(secret: string, req: SlackSigned, nowMs = Date.now()): SlackVerdict {
  if (!req.timestamp || !req.signature) return { ok: false, reason: "missing-headers" };
  if (!freshTimestamp(req.timestamp, nowMs)) return { ok: false, reason: "stale-timestamp" };
  const expected = Buffer.from(slackSignature(secret, req.timestamp, req.rawBody), "utf8");
  const given = Buffer.from(req.signature, "utf8");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: "bad-signature" };
  return { ok: true };
}
