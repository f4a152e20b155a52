/**
 * Pure helpers of the edge rules (issue 8 items 5–7): what PostgreSQL cannot store, how the access
 * log writes a path, and the sealed stored form of the outbox's text columns.
 */
import test from "ava";
import { randomBytes } from "node:crypto";
import { isStorableString, unstorablePaths } from "../../src/json/storable.js";
import { Sealer, redactStoredText } from "../../src/engine/sealing/seal.js";
import { loggedPath, redactUnmatchedPath } from "../../src/web/access-log.js";
import { redactLogLine } from "../../src/log.js";

test("strings holding U+0000 or an unpaired surrogate are unstorable, and are named by their path", (t) => {
  t.true(isStorableString("plain \ud83d\ude00"));
  t.false(isStorableString("a\u0000b"));
  t.false(isStorableString("\ud800"));
  t.false(isStorableString("x\udc00"));
  t.deepEqual(unstorablePaths({ a: "ok", b: ["x", "\ud800"], c: { d: "\u0000" } }), ["b[1]", "c.d"]);
  t.deepEqual(unstorablePaths({ ["k\u0000"]: 1 }), ['"k\\u0000"']);
  t.deepEqual(unstorablePaths(["fine", 1, null, true]), []);
});

test("the access log writes route templates with the token parameter redacted, and blanks 32+ token characters of unmatched paths", (t) => {
  const token = randomBytes(32).toString("base64url");
  t.is(loggedPath("/api/workflow/callback/:token", `/api/workflow/callback/${token}`), "/api/workflow/callback/[redacted]");
  t.is(loggedPath("/api/runs/:id", "/api/runs/x"), "/api/runs/:id");
  t.is(redactUnmatchedPath(`/API/WORKFLOW/CALLBACK/${token}`), "/API/WORKFLOW/CALLBACK/[redacted]");
  t.is(redactUnmatchedPath(`/a/${"x".repeat(31)}`), `/a/${"x".repeat(31)}`);
  t.is(redactUnmatchedPath(`/a/${"x".repeat(32)}`), "/a/[redacted]");
  t.is(redactUnmatchedPath(`/a/${[...token].map((c) => `%${c.charCodeAt(0).toString(16)}`).join("")}`), "/a/[redacted]", "percent-encoded");
  t.false(redactLogLine(`{"x":"${token}"}`).includes(token));
});

test("outbox text is stored as JSON text, sealed when it carries a link, opened by the mailer and shown redacted", (t) => {
  const sealer = new Sealer("k");
  const token = randomBytes(32).toString("base64url");
  const subject = `Sign at https://x.example/api/workflow/callback/${token}`;
  const stored = sealer.sealText(subject);
  t.false(stored.includes(token));
  t.is(sealer.openText(stored), subject);
  t.is(redactStoredText(stored, sealer), "Sign at https://x.example/api/workflow/callback/[redacted]");
  const recipient = `${token}@example.test`;
  t.is(sealer.openText(sealer.sealText(recipient)), recipient);
  t.is(sealer.sealText("plain"), '"plain"');
  t.is(sealer.openText('"plain"'), "plain");
  t.is(redactStoredText('"plain"', sealer), "plain");
});
