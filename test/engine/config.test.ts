/** src/config.ts: defaults, validation, and the secrets production requires. */
import test from "ava";
import { ConfigError, kitDatabaseUrl, loadConfig } from "../../src/config.js";

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
