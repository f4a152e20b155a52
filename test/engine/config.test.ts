/** src/config.ts: defaults, validation, and the secrets production requires. */
import test from "ava";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, kitDatabaseUrl, loadConfig } from "../../src/config.js";
import { ROOT } from "../helpers/root.js";

test("defaults follow the documented table and name the secrets left on development values", (t) => {
  const c = loadConfig({});
  t.is(c.databaseUrl, "postgresql://postgres@127.0.0.1:5432/slotflow");
  t.is(c.redisUrl, "redis://127.0.0.1:6379");
  t.is(c.port, 3000);
  t.is(c.baseUrl, "http://localhost:3000");
  t.is(c.callbackBodyLimitBytes, 65536);
  t.is(c.smtpUrl, null);
  t.deepEqual(c.devDefaults, ["SLOTFLOW_ADMIN_TOKEN", "SLOTFLOW_JWT_SECRET", "SLOTFLOW_SEAL_KEY"]);
});

test("BASE_URL follows PORT and loses a trailing slash", (t) => {
  t.is(loadConfig({ PORT: "8080" }).baseUrl, "http://localhost:8080");
  t.is(loadConfig({ BASE_URL: "https://flows.example.com/" }).baseUrl, "https://flows.example.com");
});

test("malformed numbers and URLs are refused with the variable's name", (t) => {
  t.throws(() => loadConfig({ PORT: "eighty" }), { instanceOf: ConfigError, message: /PORT/ });
  t.throws(() => loadConfig({ SLOTFLOW_CALLBACK_BODY_LIMIT_BYTES: "0" }), { instanceOf: ConfigError, message: /SLOTFLOW_CALLBACK_BODY_LIMIT_BYTES/ });
  t.throws(() => loadConfig({ BASE_URL: "not a url" }), { instanceOf: ConfigError, message: /BASE_URL/ });
});

test("production refuses to start without its secrets", (t) => {
  t.throws(() => loadConfig({ NODE_ENV: "production" }), { instanceOf: ConfigError, message: /SLOTFLOW_ADMIN_TOKEN is required/ });
  const c = loadConfig({ NODE_ENV: "production", SLOTFLOW_ADMIN_TOKEN: "a", SLOTFLOW_JWT_SECRET: "b", SLOTFLOW_SEAL_KEY: "c" });
  t.deepEqual(c.devDefaults, []);
});

test("production lists every missing secret at once, and only those the command needs", (t) => {
  t.throws(() => loadConfig({ NODE_ENV: "production" }), {
    instanceOf: ConfigError,
    message: "SLOTFLOW_ADMIN_TOKEN is required, as are SLOTFLOW_JWT_SECRET and SLOTFLOW_SEAL_KEY, when NODE_ENV=production",
  });
  t.throws(() => loadConfig({ NODE_ENV: "production", SLOTFLOW_JWT_SECRET: "b" }, { secrets: ["SLOTFLOW_ADMIN_TOKEN", "SLOTFLOW_JWT_SECRET", "SLOTFLOW_SEAL_KEY"] }), {
    instanceOf: ConfigError,
    message: "SLOTFLOW_ADMIN_TOKEN is required, as is SLOTFLOW_SEAL_KEY, when NODE_ENV=production",
  });
  const migrateOnly = loadConfig({ NODE_ENV: "production", DATABASE_URL: "postgresql://db/app" }, { secrets: [] });
  t.is(migrateOnly.databaseUrl, "postgresql://db/app");
  t.is(migrateOnly.adminToken, "", "an unneeded production secret never falls back to the development value");
  t.deepEqual(migrateOnly.devDefaults, []);
  t.is(loadConfig({ NODE_ENV: "production", SLOTFLOW_JWT_SECRET: "j" }, { secrets: ["SLOTFLOW_JWT_SECRET"] }).jwtSecret, "j");
});

test("every malformed value is listed in one error", (t) => {
  t.throws(() => loadConfig({ PORT: "eighty", SLOTFLOW_WORKER_CONCURRENCY: "0", NODE_ENV: "production" }), {
    instanceOf: ConfigError,
    message: /^PORT must be an integer >= 0, got "eighty"; SLOTFLOW_WORKER_CONCURRENCY must be an integer >= 1, got "0"; SLOTFLOW_ADMIN_TOKEN is required/,
  });
});

test("the testing kit's database is SLOTFLOW_TEST_DATABASE_URL, else DATABASE_URL, never a default", (t) => {
  t.is(kitDatabaseUrl({ SLOTFLOW_TEST_DATABASE_URL: "postgresql://h/t", DATABASE_URL: "postgresql://h/d" }), "postgresql://h/t");
  t.is(kitDatabaseUrl({ DATABASE_URL: "postgresql://h/d" }), "postgresql://h/d");
  t.throws(() => kitDatabaseUrl({}), { instanceOf: ConfigError, message: /SLOTFLOW_TEST_DATABASE_URL \(or DATABASE_URL\)/ });
});

test("SLOTFLOW_SEAL_KEY is a key ring: comma-separated, newest first; one that names no key is refused", (t) => {
  t.deepEqual(loadConfig({ SLOTFLOW_SEAL_KEY: "new-key, old-key" }).sealKeys, ["new-key", "old-key"]);
  t.deepEqual(loadConfig({ SLOTFLOW_SEAL_KEY: "only" }).sealKeys, ["only"]);
  t.throws(() => loadConfig({ SLOTFLOW_SEAL_KEY: " , " }), { message: /SLOTFLOW_SEAL_KEY/ });
});

test("shutdown timeouts and the metrics port are read from the environment, with defaults", (t) => {
  const defaults = loadConfig({});
  t.is(defaults.shutdownTimeoutMs, 25_000);
  t.is(defaults.shutdownDrainMs, 0);
  t.is(defaults.metricsPort, null);
  const set = loadConfig({ SLOTFLOW_SHUTDOWN_TIMEOUT_MS: "5000", SLOTFLOW_SHUTDOWN_DRAIN_MS: "1500", SLOTFLOW_METRICS_PORT: "9464" });
  t.deepEqual([set.shutdownTimeoutMs, set.shutdownDrainMs, set.metricsPort], [5000, 1500, 9464]);
  t.throws(() => loadConfig({ SLOTFLOW_SHUTDOWN_TIMEOUT_MS: "soon" }), { message: /SLOTFLOW_SHUTDOWN_TIMEOUT_MS/ });
});

test("SLOTFLOW_RETENTION (issue 20): 30d by default, units s/m/h/d, off keeps forever; under 24 h or malformed is refused naming the variable", (t) => {
  t.is(loadConfig({}).retentionMs, 30 * 86_400_000);
  t.is(loadConfig({ SLOTFLOW_RETENTION: "36h" }).retentionMs, 36 * 3_600_000);
  t.is(loadConfig({ SLOTFLOW_RETENTION: "7d" }).retentionMs, 7 * 86_400_000);
  t.is(loadConfig({ SLOTFLOW_RETENTION: "1440m" }).retentionMs, 86_400_000);
  t.is(loadConfig({ SLOTFLOW_RETENTION: "off" }).retentionMs, null);
  t.throws(() => loadConfig({ SLOTFLOW_RETENTION: "12h" }), { instanceOf: ConfigError, message: /SLOTFLOW_RETENTION must be at least 24h \(an Idempotency-Key's outcome is kept 24 h\), got "12h"/ });
  t.throws(() => loadConfig({ SLOTFLOW_RETENTION: "86399s" }), { instanceOf: ConfigError, message: /at least 24h/ });
  t.throws(() => loadConfig({ SLOTFLOW_RETENTION: "1.5d" }), { instanceOf: ConfigError, message: /SLOTFLOW_RETENTION: expected a duration such as "30d"/ });
  t.throws(() => loadConfig({ SLOTFLOW_RETENTION: "forever" }), { instanceOf: ConfigError, message: /SLOTFLOW_RETENTION/ });
});

/**
 * Issue 16: docs/configuration.md listed SLOTFLOW_MAX_INPUT_DEPTH twice, the second row stale and
 * contradicting the first and src/config.ts. Every variable of src/config.ts's header table has
 * exactly one row in the documented table, and a number the header gives as a default is the
 * documented default too.
 */
test("docs/configuration.md has one row per variable of src/config.ts, with the same numeric defaults", (t) => {
  const root = ROOT;
  const names = (cell: string) => cell.match(/\b(?:SLOTFLOW|REDIS|SMTP|DATABASE|BASE|LOG)_[A-Z0-9_]+|\bPORT\b/g) ?? [];
  const header = readFileSync(join(root, "src", "config.ts"), "utf8")
    .split("\n")
    .filter((l) => /^ \* \| [A-Z]/.test(l))
    .map((l) => l.slice(3).split("|").map((c) => c.trim()).slice(1, -1));
  const doc = readFileSync(join(root, "docs", "configuration.md"), "utf8");
  const table = doc.slice(doc.indexOf("| variable | meaning | default |"), doc.indexOf("### Limits"));
  const rows = table
    .split("\n")
    .filter((l) => l.startsWith("| `"))
    .map((l) => l.split(" | ").map((c) => c.replace(/^\| |\|$/g, "").trim()));
  const rowsOf = new Map<string, string[][]>();
  for (const row of rows) for (const name of new Set(names(row[0]))) rowsOf.set(name, [...(rowsOf.get(name) ?? []), row]);
  t.deepEqual([...rowsOf].filter(([, r]) => r.length > 1).map(([name]) => name), [], "a variable with more than one row");
  t.true(header.length >= 30, `read the header table (${header.length} rows)`);
  for (const [cell, , fallback] of header) {
    for (const name of names(cell)) {
      const documented = rowsOf.get(name);
      if (!documented) {
        t.fail(`${name} has no row in docs/configuration.md`);
        continue;
      }
      const number = /^\d+\b/.exec(fallback)?.[0];
      if (number) t.is(/^\d+\b/.exec(documented[0].at(-1)!.replace(/`/g, ""))?.[0], number, `${name}'s default`);
    }
  }
});

test("SLOTFLOW_MCP_MAIL_DOMAINS: comma-separated domains, lower-cased; blank is unset; a malformed one is refused naming the variable (issue 38 L5)", (t) => {
  t.is(loadConfig({}).mcpMailDomains, null);
  t.is(loadConfig({ SLOTFLOW_MCP_MAIL_DOMAINS: " " }).mcpMailDomains, null);
  t.deepEqual(loadConfig({ SLOTFLOW_MCP_MAIL_DOMAINS: "Example.com, mail.example.org," }).mcpMailDomains, ["example.com", "mail.example.org"]);
  t.throws(() => loadConfig({ SLOTFLOW_MCP_MAIL_DOMAINS: "example.com,@evil" }), { instanceOf: ConfigError, message: /SLOTFLOW_MCP_MAIL_DOMAINS must be .*"@evil"/ });
});
