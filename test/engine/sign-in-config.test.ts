/**
 * Sign-in settings and rules (v0.4 "People inside the company"): SLOTFLOW_OIDC_* and
 * SLOTFLOW_SESSION_SECRET in src/config.ts; returnTo (src/web/identity/forms.ts); the roles claim
 * walk (src/web/identity/oidc.ts); csrfOk and the development banner (src/web/identity/signed-in.ts).
 */
import test from "ava";
import { ConfigError, DEV_SESSION_SECRET, loadConfig } from "../../src/config.js";
import { safeReturnTo } from "../../src/web/identity/forms.js";
import { rolesAt } from "../../src/web/identity/oidc.js";
import { csrfOk, developmentBanner, type SignedIn } from "../../src/web/identity/signed-in.js";

const PROD = { NODE_ENV: "production", SLOTFLOW_ADMIN_TOKEN: "a".repeat(40), SLOTFLOW_JWT_SECRET: "j".repeat(40), SLOTFLOW_SEAL_KEY: "s".repeat(40) };
const ISSUER = { SLOTFLOW_OIDC_ISSUER: "https://id.example.com/realms/acme/", SLOTFLOW_OIDC_CLIENT_ID: "slotflow" };

test("without an issuer: no oidc settings, the development session key, no warning", (t) => {
  const c = loadConfig({});
  t.is(c.oidc, null);
  t.deepEqual(c.sessionKeys, [DEV_SESSION_SECRET]);
  t.false(c.devDefaults.includes("SLOTFLOW_SESSION_SECRET"));
});

test("an issuer: trailing slash dropped, audience defaults to the client id, roles claim defaults to roles, dotted paths split", (t) => {
  const c = loadConfig(ISSUER);
  t.deepEqual(c.oidc, { issuer: "https://id.example.com/realms/acme", clientId: "slotflow", clientSecret: null, audience: "slotflow", rolesClaim: ["roles"] });
  t.true(c.devDefaults.includes("SLOTFLOW_SESSION_SECRET"), "outside production the development key is used, with a warning");
  const d = loadConfig({ ...ISSUER, SLOTFLOW_OIDC_AUDIENCE: "api://slotflow", SLOTFLOW_OIDC_ROLES_CLAIM: "realm_access.roles", SLOTFLOW_OIDC_CLIENT_SECRET: "s3cret", SLOTFLOW_SESSION_SECRET: "new, old" });
  t.like(d.oidc, { audience: "api://slotflow", rolesClaim: ["realm_access", "roles"], clientSecret: "s3cret" });
  t.deepEqual(d.sessionKeys, ["new", "old"]);
});

test("production with an issuer refuses to start without SLOTFLOW_SESSION_SECRET, with a placeholder or a short one, and with a plain-http issuer", (t) => {
  t.throws(() => loadConfig({ ...PROD, ...ISSUER }), { instanceOf: ConfigError, message: /SLOTFLOW_SESSION_SECRET is required when NODE_ENV=production and SLOTFLOW_OIDC_ISSUER is set/ });
  t.throws(() => loadConfig({ ...PROD, ...ISSUER, SLOTFLOW_SESSION_SECRET: "change-me-please-0123456789abcdefghij" }), { instanceOf: ConfigError, message: /SLOTFLOW_SESSION_SECRET is a known placeholder/ });
  t.throws(() => loadConfig({ ...PROD, ...ISSUER, SLOTFLOW_SESSION_SECRET: "short" }), { instanceOf: ConfigError, message: /at least 32 characters/ });
  t.throws(() => loadConfig({ ...PROD, ...ISSUER, SLOTFLOW_SESSION_SECRET: "k".repeat(40), SLOTFLOW_OIDC_ISSUER: "http://id.example.com" }), { instanceOf: ConfigError, message: /SLOTFLOW_OIDC_ISSUER must be an https URL/ });
  const ok = loadConfig({ ...PROD, ...ISSUER, SLOTFLOW_SESSION_SECRET: `${"k".repeat(40)},older` });
  t.deepEqual(ok.sessionKeys, ["k".repeat(40), "older"]);
  t.notThrows(() => loadConfig(PROD), "production without an issuer needs no session secret");
  const worker = loadConfig({ ...PROD, ...ISSUER }, { secrets: ["SLOTFLOW_SEAL_KEY"] });
  t.notDeepEqual(worker.sessionKeys, [DEV_SESSION_SECRET], "a command that serves no sign-in needs none, and never gets the development key");
  t.false(worker.devDefaults.includes("SLOTFLOW_SESSION_SECRET"));
});

test("malformed sign-in settings are refused naming their variable", (t) => {
  t.throws(() => loadConfig({ SLOTFLOW_OIDC_ISSUER: "https://id.example.com" }), { instanceOf: ConfigError, message: /SLOTFLOW_OIDC_CLIENT_ID is required/ });
  t.throws(() => loadConfig({ SLOTFLOW_OIDC_CLIENT_ID: "slotflow" }), { instanceOf: ConfigError, message: /SLOTFLOW_OIDC_ISSUER is required when SLOTFLOW_OIDC_CLIENT_ID is set/ });
  t.throws(() => loadConfig({ ...ISSUER, SLOTFLOW_OIDC_ISSUER: "not a url" }), { instanceOf: ConfigError, message: /SLOTFLOW_OIDC_ISSUER must be an absolute URL/ });
  t.throws(() => loadConfig({ ...ISSUER, SLOTFLOW_OIDC_ISSUER: "ftp://id.example.com" }), { instanceOf: ConfigError, message: /SLOTFLOW_OIDC_ISSUER must be an https URL/ });
  t.throws(() => loadConfig({ ...ISSUER, SLOTFLOW_OIDC_ROLES_CLAIM: "a..b" }), { instanceOf: ConfigError, message: /SLOTFLOW_OIDC_ROLES_CLAIM/ });
  t.throws(() => loadConfig({ ...ISSUER, SLOTFLOW_OIDC_ROLES_CLAIM: "a.b.c.d.e.f.g.h.i" }), { instanceOf: ConfigError, message: /at most 8/ });
  t.throws(() => loadConfig({ SLOTFLOW_SESSION_SECRET: " , " }), { instanceOf: ConfigError, message: /SLOTFLOW_SESSION_SECRET must name at least one key/ });
});

test("returnTo: a path on this site is kept; anything that could leave the site becomes /inbox", (t) => {
  const base = "https://flows.example.com";
  t.is(safeReturnTo("/inbox/tasks/1/approve?element=2#form", base), "/inbox/tasks/1/approve?element=2#form");
  t.is(safeReturnTo("/a/../b", base), "/b");
  for (const bad of ["//evil.com", "//evil.com/inbox", "https://evil", "https://flows.example.com/inbox", "/\\evil.com", "/\\/evil.com", "\\\\evil.com", "javascript:alert(1)", "inbox", "", "/x\nLocation: https://evil", "/x\u0000", "/" + "a".repeat(3000), undefined, ["/a", "/b"]]) {
    t.is(safeReturnTo(bad, base), "/inbox", JSON.stringify(bad));
  }
});

test("the roles claim: a dotted path into objects, an array of strings only, a bounded walk", (t) => {
  const claims = { roles: ["a", 1, "b", ""], realm_access: { roles: ["x", "y"] }, deep: { a: { b: { c: { d: { e: { f: { g: { h: { i: ["too deep"] } } } } } } } } } };
  t.deepEqual(rolesAt(claims, ["roles"]), ["a", "b"]);
  t.deepEqual(rolesAt(claims, ["realm_access", "roles"]), ["x", "y"]);
  t.deepEqual(rolesAt(claims, ["realm_access"]), [], "an object is no roles");
  t.deepEqual(rolesAt(claims, ["missing", "roles"]), []);
  t.deepEqual(rolesAt({ roles: "admin" }, ["roles"]), [], "a string is no roles");
  t.deepEqual(rolesAt(claims, ["roles", "length"]), [], "arrays are not walked into");
  t.deepEqual(rolesAt(claims, ["deep", "a", "b", "c", "d", "e", "f", "g", "h", "i"]), [], "at most 8 steps");
  t.deepEqual(rolesAt({ roles: Array.from({ length: 500 }, (_, i) => `r${i}`) }, ["roles"]).length, 100, "at most 100 roles kept");
  t.deepEqual(rolesAt(JSON.parse('{"__proto__": {"roles": ["polluted"]}}'), ["__proto__", "roles"]), ["polluted"], "own properties only, read as data");
  t.deepEqual(rolesAt({}, ["constructor", "roles"]), [], "inherited properties are not walked");
});

const session = (csrf: string): SignedIn => ({ principal: { id: "a", email: null, roles: [] }, source: "session", via: "session", csrf, development: true, zone: null });

test("csrfOk: the session's exact token; bearer needs none; the development banner shows only for development sessions and escapes the id", (t) => {
  const token = "t".repeat(43);
  t.true(csrfOk(session(token), token));
  t.false(csrfOk(session(token), "t".repeat(42)));
  t.false(csrfOk(session(token), `${token}x`));
  t.false(csrfOk(session(token), undefined));
  t.false(csrfOk(session(token), [token]));
  t.true(csrfOk({ principal: { id: "b", email: null, roles: [] }, via: "bearer", csrf: null, development: false }, undefined));
  t.is(developmentBanner(null).text, "");
  t.is(developmentBanner({ ...session(token), development: false }).text, "");
  const banner = developmentBanner({ ...session(token), principal: { id: "<script>", email: null, roles: [] } }).text;
  t.regex(banner, /Development sign-in — not for production/);
  t.true(banner.includes("&lt;script&gt;"));
});
