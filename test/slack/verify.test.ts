/**
 * The Slack request verifier (v0.4 "Answers inside Slack"; src/channels/slack/verify.ts): Slack's own
 * published example from "Verifying requests from Slack" passes, and the verifier agrees with
 * `@slack/bolt`'s `verifySlackRequest` on generated requests — valid, tampered body, old
 * timestamp, wrong secret, missing headers.
 */
import test from "ava";
import { createHmac, randomBytes } from "node:crypto";
import { verifySlackRequest } from "@slack/bolt";
import { slackSignature, verifySlackSignature, SLACK_MAX_SKEW_S } from "../../src/channels/slack/verify.js";

const EXAMPLE = {
  secret: "8f742231b10e8888abcd99yyyzzz85a5",
  timestamp: "1531420618",
  body:
    "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c",
  signature: "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503",
};

test("Slack's published example verifies (at its own time), and fails once tampered or stale", (t) => {
  const at = Number(EXAMPLE.timestamp) * 1000;
  t.is(slackSignature(EXAMPLE.secret, EXAMPLE.timestamp, EXAMPLE.body), EXAMPLE.signature);
  t.deepEqual(verifySlackSignature(EXAMPLE.secret, { timestamp: EXAMPLE.timestamp, signature: EXAMPLE.signature, rawBody: EXAMPLE.body }, at), { ok: true });
  t.deepEqual(verifySlackSignature(EXAMPLE.secret, { timestamp: EXAMPLE.timestamp, signature: EXAMPLE.signature, rawBody: `${EXAMPLE.body}x` }, at), { ok: false, reason: "bad-signature" });
  t.deepEqual(verifySlackSignature(EXAMPLE.secret, { timestamp: EXAMPLE.timestamp, signature: EXAMPLE.signature, rawBody: EXAMPLE.body }, at + (SLACK_MAX_SKEW_S + 1) * 1000), { ok: false, reason: "stale-timestamp" });
  // today the example is years old: refused
  t.false(verifySlackSignature(EXAMPLE.secret, { timestamp: EXAMPLE.timestamp, signature: EXAMPLE.signature, rawBody: EXAMPLE.body }).ok);
});

/** bolt's verdict: true when verifySlackRequest does not throw. */
function bolt(secret: string, body: string, timestamp: string | undefined, signature: string | undefined, nowMs: number): boolean {
  try {
    verifySlackRequest({
      signingSecret: secret,
      body,
      headers: { "x-slack-signature": signature as string, "x-slack-request-timestamp": timestamp === undefined ? (undefined as unknown as number) : Number(timestamp) },
      nowMilliseconds: nowMs,
    });
    return true;
  } catch {
    return false;
  }
}

test("agrees with @slack/bolt's verifySlackRequest on generated requests", (t) => {
  const now = Date.now();
  let cases = 0;
  for (let i = 0; i < 40; i++) {
    const secret = randomBytes(16).toString("hex");
    const body = `payload=${encodeURIComponent(JSON.stringify({ type: "block_actions", n: i, v: randomBytes(8).toString("base64") }))}`;
    const fresh = String(Math.floor(now / 1000) - (i % 200));
    const old = String(Math.floor(now / 1000) - SLACK_MAX_SKEW_S - 1 - i);
    const sign = (ts: string, b = body, key = secret) => `v0=${createHmac("sha256", key).update(`v0:${ts}:${b}`).digest("hex")}`;
    const variants: [string, string, string | undefined, string | undefined, boolean][] = [
      ["valid", body, fresh, sign(fresh), true],
      ["tampered body", `${body}&x=1`, fresh, sign(fresh), false],
      ["old timestamp", body, old, sign(old), false],
      ["wrong secret", body, fresh, sign(fresh, body, `${secret}0`), false],
      ["missing signature", body, fresh, undefined, false],
      ["missing timestamp", body, undefined, sign(fresh), false],
      ["signature of another timestamp", body, fresh, sign(String(Number(fresh) - 1)), false],
    ];
    for (const [name, b, ts, sig, expected] of variants) {
      const ours = verifySlackSignature(secret, { timestamp: ts, signature: sig, rawBody: b }, now).ok;
      t.is(ours, expected, `${name} (ours)`);
      t.is(bolt(secret, b, ts, sig, now), ours, `${name}: bolt agrees`);
      cases++;
    }
  }
  t.is(cases, 280);
});
