/**
 * Issue 28 items 4, 6, 8, 9 and the "also check" list, at the level of the functions that decide:
 * the proxy-hop setting, the runs cursor, principal JWTs, placeholder secrets, the chat wire
 * formats and the access log. Over HTTP: test/e2e/security-small.test.ts.
 */
import test from "ava";
import { SignJWT } from "jose";
import type { Context } from "koa";
import { loadConfig, ConfigError, DEFAULT_HTTP_SERVER } from "../../src/config.js";
import { RefusalError } from "../../src/engine/refusals.js";
import { encodeCursor, parseRunsQuery } from "../../src/operators/runs-list.js";
import { slackEscape, teamsEscape, wireRequest } from "../../src/channels/wire.js";
import { redactUnmatchedPath } from "../../src/web/access-log.js";
import { signPrincipal, verifyPrincipal, type JwtSettings } from "../../src/auth/jwt.js";

const SECRET = "unit-jwt-secret";
const SETTINGS: JwtSettings = { secret: SECRET, maxTtlSeconds: 86_400, audience: null, issuer: null };
const now = () => Math.floor(Date.now() / 1000);
const ctxWith = (token: string) => ({ get: (h: string) => (h.toLowerCase() === "authorization" ? `Bearer ${token}` : "") }) as unknown as Context;
const sign = (claims: Record<string, unknown>, secret = SECRET) => new SignJWT(claims).setProtectedHeader({ alg: "HS256" }).sign(new TextEncoder().encode(secret));

async function refused(t: import("ava").ExecutionContext, token: string, settings: JwtSettings, why: string) {
  const err = await t.throwsAsync(verifyPrincipal(ctxWith(token), settings), { instanceOf: RefusalError }, why);
  t.is((err as RefusalError | undefined)?.code, "unauthorized", why);
  t.false((err as Error | undefined)?.message.includes(token) ?? true, "the token is never quoted");
}

test("item 8: a principal JWT needs exp, a lifetime within SLOTFLOW_JWT_MAX_TTL_SECONDS, and the configured aud/iss", async (t) => {
  // accepted: exp within the bound, with or without iat
  t.like(await verifyPrincipal(ctxWith(await sign({ sub: "ann", roles: ["ops"], exp: now() + 3600 })), SETTINGS), { id: "ann", roles: ["ops"] });
  t.like(await verifyPrincipal(ctxWith(await sign({ sub: "ann", iat: now(), exp: now() + 86_000 })), SETTINGS), { id: "ann" });
  t.like(await verifyPrincipal(ctxWith(await signPrincipal(SECRET, { sub: "bob" })), SETTINGS), { id: "bob" }, "signPrincipal's default 12 h");
  // refused
  await refused(t, await sign({ sub: "forever", roles: ["ops"] }), SETTINGS, "no exp: accepted forever before");
  await refused(t, await sign({ sub: "long", iat: now(), exp: now() + 86_400 * 365 }), SETTINGS, "a year-long token");
  await refused(t, await sign({ sub: "long", exp: now() + 86_400 * 2 }), SETTINGS, "two days without iat");
  await refused(t, await sign({ sub: "old", iat: now() - 86_400 * 30, exp: now() + 3600 }), SETTINGS, "minted a month ago for a month");
  await refused(t, await sign({ sub: "late", exp: now() - 60 }), SETTINGS, "expired");
  await refused(t, await sign({ sub: "ann", exp: now() + 60 }), { ...SETTINGS, maxTtlSeconds: 30 }, "above a lowered bound");
  // aud and iss, when configured
  const scoped: JwtSettings = { ...SETTINGS, audience: "slotflow-raise", issuer: "https://idp.example" };
  await refused(t, await sign({ sub: "ann", exp: now() + 60 }), scoped, "no aud / iss");
  await refused(t, await sign({ sub: "ann", exp: now() + 60, aud: "other", iss: "https://idp.example" }), scoped, "another audience");
  await refused(t, await sign({ sub: "ann", exp: now() + 60, aud: "slotflow-raise", iss: "https://evil.example" }), scoped, "another issuer");
  t.like(await verifyPrincipal(ctxWith(await sign({ sub: "ann", exp: now() + 60, aud: "slotflow-raise", iss: "https://idp.example" })), scoped), { id: "ann" });
  t.like(await verifyPrincipal(ctxWith(await signPrincipal(SECRET, { sub: "cli" }, 600, { audience: "slotflow-raise", issuer: "https://idp.example" })), scoped), { id: "cli" }, "signPrincipal adds them");
});

test("item 8: the JWT settings are documented environment variables with a 24 h default", (t) => {
  const c = loadConfig({});
  t.is(c.jwtMaxTtlSeconds, 86_400);
  t.is(c.jwtAudience, null);
  t.is(c.jwtIssuer, null);
  const set = loadConfig({ SLOTFLOW_JWT_MAX_TTL_SECONDS: "3600", SLOTFLOW_JWT_AUDIENCE: "a", SLOTFLOW_JWT_ISSUER: "i" });
  t.deepEqual([set.jwtMaxTtlSeconds, set.jwtAudience, set.jwtIssuer], [3600, "a", "i"]);
  t.throws(() => loadConfig({ SLOTFLOW_JWT_MAX_TTL_SECONDS: "0" }), { instanceOf: ConfigError, message: /SLOTFLOW_JWT_MAX_TTL_SECONDS/ });
});

test("item 4: SLOTFLOW_TRUST_PROXY is a number of proxies; 1 still means one, unset none, anything else is refused", (t) => {
  t.is(loadConfig({}).trustProxyHops, 0);
  t.is(loadConfig({ SLOTFLOW_TRUST_PROXY: "1" }).trustProxyHops, 1);
  t.is(loadConfig({ SLOTFLOW_TRUST_PROXY: "2" }).trustProxyHops, 2);
  t.is(loadConfig({ SLOTFLOW_TRUST_PROXY: "0" }).trustProxyHops, 0);
  for (const bad of ["yes", "true", "-1", "1.5", "33"]) {
    t.throws(() => loadConfig({ SLOTFLOW_TRUST_PROXY: bad }), { instanceOf: ConfigError, message: /SLOTFLOW_TRUST_PROXY/ }, bad);
  }
});

test("item 9: in production a placeholder secret is refused at start, naming the variable, never quoting the value", (t) => {
  const real = { NODE_ENV: "production", SLOTFLOW_ADMIN_TOKEN: "a1b2c3", SLOTFLOW_JWT_SECRET: "d4e5f6", SLOTFLOW_SEAL_KEY: "g7h8i9" };
  t.notThrows(() => loadConfig(real));
  const cases: [string, string][] = [
    ["SLOTFLOW_ADMIN_TOKEN", "change-me-admin"],
    ["SLOTFLOW_JWT_SECRET", "change-me-jwt"],
    ["SLOTFLOW_SEAL_KEY", "change-me-seal"],
    ["SLOTFLOW_ADMIN_TOKEN", "dev-admin-token"],
    ["SLOTFLOW_JWT_SECRET", "dev-jwt-secret-change-me"],
    ["SLOTFLOW_SEAL_KEY", "dev-seal-key-change-me"],
    ["SLOTFLOW_JWT_SECRET", "CHANGEME"],
    ["SLOTFLOW_ADMIN_TOKEN", "replace-me-please"],
    ["SLOTFLOW_SEAL_KEY", "change-me-seal,an-old-key"],
  ];
  for (const [name, value] of cases) {
    const err = t.throws(() => loadConfig({ ...real, [name]: value }), { instanceOf: ConfigError }, `${name}=${value}`);
    t.regex(err?.message ?? "", new RegExp(`${name} is a known placeholder`), `${name}=${value}`);
    t.false(err?.message.includes(value.split(",")[0]!) ?? true, "the value is not quoted");
  }
  // the documented recovery keeps the development key behind a real one (docs/operations.md)
  t.notThrows(() => loadConfig({ ...real, SLOTFLOW_SEAL_KEY: "a-production-key,dev-seal-key-change-me" }));
  // outside production the development values stay usable
  t.notThrows(() => loadConfig({ SLOTFLOW_ADMIN_TOKEN: "change-me-admin" }));
});

test("item 6: a cursor whose instant PostgreSQL cannot hold, or in a shape nextCursor never has, is 400 invalid-query", (t) => {
  const id = "0b7e6c1e-1f0a-4d7b-9a53-5a8f2f8c1d11";
  const raw = (text: string) => Buffer.from(text, "utf8").toString("base64url");
  t.deepEqual(parseRunsQuery({ cursor: encodeCursor({ createdAt: new Date("2026-01-02T03:04:05.678Z"), id }) }).cursor, { createdAt: new Date("2026-01-02T03:04:05.678Z"), id });
  for (const cursor of [raw(`-010000-01-01T00:00:00.000Z|${id}`), raw(`+275760-09-13T00:00:00.000Z|${id}`), raw(`0000-01-01T00:00:00.000Z|${id}`), raw(`2026|${id}`), raw(`Jan 1 2026|${id}`)]) {
    const err = t.throws(() => parseRunsQuery({ cursor }), { instanceOf: RefusalError }, Buffer.from(cursor, "base64url").toString());
    t.is(err?.code, "invalid-query");
  }
});

test("also check: Slack's top-level text and the Teams card text are escaped, so run data forms no link or mention", (t) => {
  const text = "Vendor <https://evil.example|Pay here> <!channel> [Click](https://evil.example) **urgent** _x_";
  const slack = JSON.parse(wireRequest({ name: "s", kind: "slack", url: "https://hooks.slack.example/x", secrets: [], disabledReason: null }, { statement: "message", text }, "msg_1", new Date()).body);
  t.is(slack.text, slackEscape(text));
  t.false(slack.text.includes("<"), "no Slack control sequence in the notification text");
  t.is(slack.blocks[0].text.text, slackEscape(text));
  const teams = JSON.parse(wireRequest({ name: "t", kind: "teams", url: "https://teams.example/x", secrets: [], disabledReason: null }, { statement: "message", text: `${text}\n- item\n1. first` }, "msg_2", new Date()).body);
  const block: string = teams.attachments[0].content.body[0].text;
  t.is(block, teamsEscape(`${text}\n- item\n1. first`));
  t.false(/(?<!\\)\[Click(?<!\\)\]\(/.test(block), "no Markdown link survives");
  t.true(block.includes("\\[Click\\]\\(https://evil.example\\)"));
  t.true(block.includes("\\*\\*urgent\\*\\*"));
  t.true(block.includes("\n\\- item\n1\\. first"), "no list");
  t.is(teamsEscape("Answer chat-12ab?"), "Answer chat-12ab?", "plain words are unchanged");
});

test("also check: an unmatched path under a callback prefix is redacted whatever its shape (a token split by /)", (t) => {
  const token = "sfl_" + "Ab3_-".repeat(9) + "xyzw";
  const pieces = token.match(/.{1,8}/g)!.join("/");
  const cases: [string, string][] = [
    [`/api/workflow/callback/${pieces}`, "/api/workflow/callback/[redacted]"],
    [`/API/Workflow/CallBack/${pieces}`, "/API/Workflow/CallBack/[redacted]"],
    [`/api/workflow/callback//${pieces}/`, "/api/workflow/callback/[redacted]"],
    [`/api/workflow/callback/x/${encodeURIComponent(pieces)}`, "/api/workflow/callback/[redacted]"],
    [`/api/workflow/callback;/${pieces}`, "/api/workflow/callback/[redacted]"],
    [`/api/workflow/callback/Ab3_/-Ab3_-Ab/3_-Ab3_`, "/api/workflow/callback/[redacted]"],
  ];
  for (const [path, logged] of cases) t.is(redactUnmatchedPath(path), logged, path);
  t.is(redactUnmatchedPath(`/somewhere/${pieces}`), "/somewhere/[redacted]", "a token's prefix elsewhere");
  t.is(redactUnmatchedPath("/api/workflow/callback"), "/api/workflow/callback");
  t.is(redactUnmatchedPath("/api/unknown/thing"), "/api/unknown/thing");
});

test("also check: the HTTP server's slow-client bounds are settings with defaults under Node's", (t) => {
  t.deepEqual(loadConfig({}).http, DEFAULT_HTTP_SERVER);
  t.true(DEFAULT_HTTP_SERVER.headersTimeoutMs < 60_000 && DEFAULT_HTTP_SERVER.requestTimeoutMs < 300_000, "tighter than Node's 60 s / 300 s");
  t.like(loadConfig({ SLOTFLOW_HEADERS_TIMEOUT_MS: "500", SLOTFLOW_REQUEST_TIMEOUT_MS: "700", SLOTFLOW_KEEP_ALIVE_TIMEOUT_MS: "65000", SLOTFLOW_MAX_CONNECTIONS: "10" }).http, {
    headersTimeoutMs: 500,
    requestTimeoutMs: 700,
    keepAliveTimeoutMs: 65_000,
    maxConnections: 10,
  });
  t.throws(() => loadConfig({ SLOTFLOW_HEADERS_TIMEOUT_MS: "5000", SLOTFLOW_REQUEST_TIMEOUT_MS: "1000" }), { instanceOf: ConfigError, message: /SLOTFLOW_REQUEST_TIMEOUT_MS/ });
  t.throws(() => loadConfig({ SLOTFLOW_MAX_CONNECTIONS: "0" }), { instanceOf: ConfigError, message: /SLOTFLOW_MAX_CONNECTIONS/ });
});
