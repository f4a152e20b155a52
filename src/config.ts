/**
 * The one place that reads the environment. `loadConfig()` turns raw variables into a validated,
 * typed `Config` at start-up; nothing else reads `process.env`. Units are in the names.
 *
 * | variable | field | default |
 * |---|---|---|
 * | DATABASE_URL | databaseUrl | postgresql://postgres@127.0.0.1:5432/slotflow |
 * | REDIS_URL | redisUrl | redis://127.0.0.1:6379 |
 * | PORT | port | 3000 |
 * | BASE_URL | baseUrl (the `{base_url}` of minted links, no trailing slash) | http://localhost:$PORT |
 * | SLOTFLOW_ADMIN_TOKEN | adminToken | a dev value, with a warning; required when NODE_ENV=production |
 * | SLOTFLOW_JWT_SECRET | jwtSecret (HS256 key, UTF-8 bytes) | a dev value; required in production |
 * | SLOTFLOW_SEAL_KEY | sealKey (raw) and sealKeys: a key ring, comma-separated, newest first — values are sealed with the first key and opened with any (`slotflow reseal` moves them to the first) | a dev value; required in production |
 * | SMTP_URL | smtpUrl | unset: messages are printed to the terminal |
 * | SLOTFLOW_QUEUE_PREFIX | queuePrefix (BullMQ key prefix) | slotflow |
 * | SLOTFLOW_DEPOSIT_WAIT_MS | depositWaitMs (how long the web process waits for a worker) | 10000 |
 * | SLOTFLOW_CALLBACK_BODY_LIMIT_BYTES | callbackBodyLimitBytes | 65536 |
 * | SLOTFLOW_RATE_LIMIT_PER_MINUTE | rateLimitPerMinute (callback posts and responder-page GETs per client IP; the same budget, counted apart, for sign-in, task POSTs, raises and Slack interactions: web/door-limits.ts) | 600 |
 * | SLOTFLOW_SWEEP_INTERVAL_MS | sweepIntervalMs | 1000 |
 * | SLOTFLOW_WORKER_CONCURRENCY | workerConcurrency (jobs per worker process) | 8 |
 * | SLOTFLOW_TRUST_PROXY | trustProxyHops: how many proxies in front of the web process append to X-Forwarded-For; the client is the address the outermost trusted one saw (`1`: one proxy; issue 28 item 4) | 0 (off: the socket's address) |
 * | SLOTFLOW_JWT_MAX_TTL_SECONDS | jwtMaxTtlSeconds: the longest lifetime (`exp` − `iat`, or `exp` − now without `iat`) of a principal JWT accepted (issue 28 item 8) | 86400 (24 h) |
 * | SLOTFLOW_JWT_AUDIENCE | jwtAudience: when set, a principal JWT must carry it in `aud` (and `slotflow token` adds it) | unset: `aud` not checked |
 * | SLOTFLOW_WORKER_TOKEN | workerTokens: the bearer token(s) of the task API `/api/tasks/*` (issue 41 item 3), comma-separated for rotation; required at start of a production web process when a deployed workflow has a `call task` (cli/startup.ts) | unset: the admin token (outside production) |
 * | SLOTFLOW_MCP_TOKEN | mcpToken: a bearer token of `POST /mcp` beside the admin token, reaching only runs started through MCP (issues 33, 38 L5) | unset: the admin token only |
 * | SLOTFLOW_MCP_MAIL_DOMAINS | mcpMailDomains: the only domains MCP request_approval / ask_human may mail (comma-separated, exact, case-insensitive; issue 38 L5) | unset: any address |
 * | SLOTFLOW_JWT_ISSUER | jwtIssuer: when set, a principal JWT's `iss` must equal it (and `slotflow token` sets it) | unset: `iss` not checked |
 * | SLOTFLOW_HEADERS_TIMEOUT_MS | http.headersTimeoutMs: how long a client may take to send a request's headers (then 408 and the connection closes; issue 28, slow clients) | 10000 |
 * | SLOTFLOW_REQUEST_TIMEOUT_MS | http.requestTimeoutMs: how long a client may take to send a whole request, body included | 30000 |
 * | SLOTFLOW_KEEP_ALIVE_TIMEOUT_MS | http.keepAliveTimeoutMs: how long an idle keep-alive connection stays open (above a load balancer's idle timeout) | 5000 |
 * | SLOTFLOW_MAX_CONNECTIONS | http.maxConnections: open connections a web process accepts at once; more are closed on arrival | 4096 |
 * | SLOTFLOW_SHUTDOWN_TIMEOUT_MS | shutdownTimeoutMs: on SIGTERM/SIGINT, how long in-flight requests and current jobs may take before the process exits anyway | 25000 |
 * | SLOTFLOW_SHUTDOWN_DRAIN_MS | shutdownDrainMs: on SIGTERM/SIGINT, how long a web process keeps serving (readiness already 503) before it stops accepting | 0 |
 * | SLOTFLOW_METRICS_PORT | metricsPort: where every process (web, worker, sweeper, serve) also serves `GET /metrics`; in production the web port's /metrics needs the admin token | unset: not served |
 * | SLOTFLOW_MAX_SOURCE_BYTES | limits.maxSourceBytes (a deployed `.flow` source; larger: 413) | 524288 (512 KiB) |
 * | SLOTFLOW_MAX_INPUT_BYTES | limits.maxInputBytes (a run's input as JSON; larger: 413) | 262144 (256 KiB) |
 * | SLOTFLOW_MAX_INPUT_DEPTH | limits.maxInputDepth (nesting of objects and arrays in every JSON the server reads — run input, callback, raise and admin bodies; deeper: 422; at most 512) | 32 |
 * | SLOTFLOW_MAX_FANOUT | limits.maxFanOut (elements of any list in run input, so of any `for each`; more: 422) | 1000 |
 * | LOG_LEVEL | logLevel | info |
 * | SLOTFLOW_WORKER_LOCK_MS | workerLockMs (BullMQ lock on a job being processed; renewed every half of it) | 5000 |
 * | SLOTFLOW_STALLED_CHECK_MS | stalledCheckMs (how often workers look for jobs whose worker died) | 2500 |
 * | SLOTFLOW_MAX_STALLED_COUNT | maxStalledCount (worker deaths a job survives before it fails) | 10 |
 * | SLOTFLOW_ALLOW_VOLATILE_REDIS | allowVolatileRedis (`1`: start in production on a Redis that evicts keys; one without AOF only warns, issue 34 item 3) | off |
 * | SLOTFLOW_VIEWER_TOKEN | viewerToken: the console's read-only password (issue 23; the admin token signs in as operator) | unset: no viewer sign-in |
 * | REDIS_CLUSTER_NODES | redisClusterNodes: `host:port,…` seed nodes of a Redis Cluster (REDIS_URL then gives only credentials/TLS) | unset |
 * | REDIS_SENTINELS | redisSentinels: `host:port,…` of Redis Sentinels (needs REDIS_SENTINEL_MASTER; REDIS_URL gives credentials/TLS/db) | unset |
 * | REDIS_SENTINEL_MASTER | redisSentinelMaster: the master's name at the Sentinels | unset |
 * | SLOTFLOW_QUEUE_SHARDS | queueShards: command (and mail) queue shards, 1–256; a run maps to one by its id (src/queue/shards.ts) | 1 |
 * | SLOTFLOW_REDIS_WAIT_MS | redisWaitMs: on a Cluster or Sentinel, how long a 202 waits for a replica to acknowledge the queued command (`WAIT 1 <ms>`; none: 503) | 1000 |
 * | SLOTFLOW_SLACK_API_URL | slackApiUrl (the Slack Web API base a `slack-app` endpoint posts through; v0.4 "Answers inside Slack") | https://slack.com/api/ |
 * | SLOTFLOW_ENDPOINTS_ALLOW_PRIVATE | endpointsAllowPrivate (`1`: endpoints may be `http://` and resolve to loopback, private, link-local addresses — development and tests; issue 18) | off |
 * | SLOTFLOW_CALL_CONCURRENCY | callConcurrency: attempts of `call http` a worker process makes at once (v0.5 calls) | 16 |
 * | SLOTFLOW_CALL_ENDPOINT_CONCURRENCY | callEndpointConcurrency: of those, at most this many to one endpoint (per process) | 4 |
 * | SLOTFLOW_DELIVERY_RETRY_MS | deliveryRetryMs: delays before each attempt of a webhook/chat delivery, ms, comma-separated (the first is the first attempt's) | the Standard Webhooks schedule: 0, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h |
 * | SLOTFLOW_MAIL_FROM | mail.from: the From of every email (`Name <addr@domain>` or `addr@domain`); Message-IDs take its domain (issue 18 item 6) | `slotflow <no-reply@slotflow.local>` |
 * | SLOTFLOW_DKIM_DOMAIN, SLOTFLOW_DKIM_SELECTOR, SLOTFLOW_DKIM_PRIVATE_KEY (PEM; `\n` escapes allowed) or SLOTFLOW_DKIM_PRIVATE_KEY_FILE | mail.dkim: DKIM-sign every email (nodemailer's `dkim`); all or none | unset: not signed |
 * | SLOTFLOW_RETENTION | retentionMs: how long after a run ended (finished or cancelled) the sweeper deletes it with all its rows (`30d`, `36h`; `off`: null, keep forever); at least 24 h, the Idempotency-Key promise (issue 20, engine/sweeps/retention.ts) | 30d |
 * | SLOTFLOW_RECEIPT_KEYS | receiptKeys: the receipt signing keys' text — EC P-256 private keys, PEM or JWK, newest first, separated by commas/blanks/newlines between keys (engine/receipts/keys.ts; docs/receipts.md) | "": a development key kept in the database; with NODE_ENV=production no receipts (a warning at start) |
 * | SLOTFLOW_OIDC_ISSUER | oidc.issuer: the OpenID Connect issuer people sign in through (`/auth/login`), whose JWTs are principals too (v0.4 "People inside the company"); https in production | unset: development sign-in outside production |
 * | SLOTFLOW_OIDC_CLIENT_ID, SLOTFLOW_OIDC_CLIENT_SECRET | oidc.clientId, oidc.clientSecret: slotflow's client at the issuer (redirect URI `{BASE_URL}/auth/callback`); the id is required with an issuer, the secret optional (a public client with PKCE) | unset |
 * | SLOTFLOW_OIDC_AUDIENCE | oidc.audience: the `aud` a bearer JWT of the issuer must carry | the client id |
 * | SLOTFLOW_OIDC_ROLES_CLAIM | oidc.rolesClaim: the claim holding roles, a dotted path (`realm_access.roles`, at most 8 steps) | roles |
 * | SLOTFLOW_DEV_SIGN_IN | devSignIn (`1`: the development sign-in at `/auth/login` when no SLOTFLOW_OIDC_ISSUER is set; refused with NODE_ENV=production and with a BASE_URL that is not a loopback address — issue 38 M3) | off (`npm start` sets it) |
 * | SLOTFLOW_SESSION_SECRET | sessionKeys: session cookie keys, comma-separated, newest first (the first seals, all open) | a dev value; required in production when SLOTFLOW_OIDC_ISSUER is set |
 * | SLOTFLOW_DEFAULT_LANGUAGE | defaultLanguage: the pages' and slotflow's own mails' language when neither the slot, `?lang=` nor the browser's Accept-Language names an available one (issue 42; one of en, de, fr, es, ja, ar) | en |
 * | SLOTFLOW_BRAND_NAME | brand.name: the organisation shown on every page ("Asked by …") and as the display name of mail From (issue 42) | unset: none shown; From as SLOTFLOW_MAIL_FROM |
 * | SLOTFLOW_BRAND_LOGO | brand.logoFile: a PNG or SVG file shown on every page, served from slotflow's own origin at `/brand/logo.png` or `/brand/logo.svg` | unset: no logo |
 * | SLOTFLOW_BRAND_COLOR | brand.color: the pages' accent, `#rgb` or `#rrggbb`; refused when its contrast on the page's white background is below WCAG AA (4.5:1) | unset: slotflow's blue |
 * | SLOTFLOW_TEST_DATABASE_URL | the testing kit's database (`kitDatabaseUrl()`), before DATABASE_URL | unset: the kit uses DATABASE_URL, and refuses to run when neither is set |
 *
 * Throws one `ConfigError` listing every problem at once (each naming its variable): malformed
 * values, and with NODE_ENV=production every missing secret among those the command needs
 * (`LoadOptions.secrets`; default: all three). A secret a command does not need is "" in
 * production when unset, and never falls back to its development value there.
 * With NODE_ENV=production a secret set to a known placeholder — a development value, or any value
 * containing `change-me`/`changeme`/`replace-me`/`placeholder` (the seal key: its first, sealing,
 * key; an older key of the ring may be one during a recovery) — is refused too, naming the variable
 * and never quoting the value (issue 28 item 9).
 */
import { randomBytes } from "node:crypto";
import { MAX_JSON_DEPTH } from "./json/depth.js";
import { splitReceiptKeys } from "./engine/receipts/keys.js";
import { IDEMPOTENCY_WINDOW_MS, parseRetention } from "./engine/sweeps/retention.js";
import { isLanguage, LANGUAGES, type Language } from "./i18n/index.js";
import { brandOf, type Brand } from "./i18n/brand.js";

/** SLOTFLOW_RETENTION's default: 30 days, ms. */
export const DEFAULT_RETENTION_MS = 30 * 86_400_000;

export interface Config {
  nodeEnv: string;
  databaseUrl: string;
  redisUrl: string;
  port: number;
  baseUrl: string;
  adminToken: string;
  /** The console's read-only password (SLOTFLOW_VIEWER_TOKEN); null when unset. */
  viewerToken: string | null;
  jwtSecret: string;
  sealKey: string;
  /** SLOTFLOW_RECEIPT_KEYS as given ("" when unset); split and imported by engine/receipts/keys.ts. */
  receiptKeys: string;
  /** The seal key ring, newest first (SLOTFLOW_SEAL_KEY split on commas). */
  sealKeys: string[];
  smtpUrl: string | null;
  queuePrefix: string;
  depositWaitMs: number;
  callbackBodyLimitBytes: number;
  rateLimitPerMinute: number;
  sweepIntervalMs: number;
  workerConcurrency: number;
  shutdownTimeoutMs: number;
  shutdownDrainMs: number;
  metricsPort: number | null;
  logLevel: string;
  /**
   * Proxies in front of the web process (SLOTFLOW_TRUST_PROXY; 0: none, the client is the socket's
   * address). With N, the client is the N-th address from the right of X-Forwarded-For: the one the
   * outermost trusted proxy saw (Koa's `proxy` and `maxIpsCount`; issue 28 item 4).
   */
  trustProxyHops: number;
  /** The longest accepted lifetime of a principal JWT, seconds (SLOTFLOW_JWT_MAX_TTL_SECONDS; issue 28 item 8). */
  jwtMaxTtlSeconds: number;
  /** Required `aud` of principal JWTs (SLOTFLOW_JWT_AUDIENCE), or null: not checked. */
  jwtAudience: string | null;
  /** A bearer token of the MCP endpoint `POST /mcp` besides the admin token, reaching only the runs started through MCP (SLOTFLOW_MCP_TOKEN; issue 33 item 1, issue 38 L5), or null. */
  mcpToken: string | null;
  /**
   * The bearer tokens of the task workers' API `/api/tasks/*` (SLOTFLOW_WORKER_TOKEN, comma-separated
   * for rotation; v0.5 SDK, issue 41 item 3); empty when unset — then the admin token is taken.
   */
  workerTokens: string[];
  /** The domains MCP request_approval / ask_human may mail, lower case (SLOTFLOW_MCP_MAIL_DOMAINS), or null: any (issue 38 L5). */
  mcpMailDomains: string[] | null;
  /** Required `iss` of principal JWTs (SLOTFLOW_JWT_ISSUER), or null: not checked. */
  jwtIssuer: string | null;
  /** The web process's HTTP server bounds against slow and many clients (issue 28, "also check"). */
  http: HttpServerSettings;
  /** A job's worker lock, ms: a killed worker's jobs are taken back within about this plus `stalledCheckMs` (issue 8 item 11). */
  workerLockMs: number;
  /** Interval of the stalled-job check, ms. */
  stalledCheckMs: number;
  /** How many times a job may lose its worker (crash, kill -9) before BullMQ fails it. */
  maxStalledCount: number;
  /** Start in production even when Redis does not persist (src/queue/persistence.ts). */
  allowVolatileRedis: boolean;
  /** Seed nodes of a Redis Cluster (REDIS_CLUSTER_NODES), or null (issue 17). */
  redisClusterNodes: RedisNode[] | null;
  /** Sentinels of a Sentinel-managed Redis (REDIS_SENTINELS), or null (issue 17). */
  redisSentinels: RedisNode[] | null;
  /** The master's name at the Sentinels (REDIS_SENTINEL_MASTER). */
  redisSentinelMaster: string | null;
  /** Shards of the command and mail queues (SLOTFLOW_QUEUE_SHARDS, issue 17). */
  queueShards: number;
  /** SLOTFLOW_RETENTION, ms: ended runs older than this are purged by the sweeper; null = `off` (issue 20). */
  retentionMs: number | null;
  /** On a replicated Redis, how long a 202 waits for a replica's acknowledgement, ms (SLOTFLOW_REDIS_WAIT_MS, issue 17). */
  redisWaitMs: number;
  /** Bounds on what the admin API accepts (issue 8 items 15–17). */
  limits: Limits;
  /** Endpoints may be plain http and resolve to private addresses (SLOTFLOW_ENDPOINTS_ALLOW_PRIVATE=1; issue 18). */
  endpointsAllowPrivate: boolean;
  /** Attempts of calls a worker process makes at once (SLOTFLOW_CALL_CONCURRENCY; v0.5 calls). */
  callConcurrency: number;
  /** Of those, at most this many to one endpoint (SLOTFLOW_CALL_ENDPOINT_CONCURRENCY). */
  callEndpointConcurrency: number;
  /** Delay before each delivery attempt, ms (SLOTFLOW_DELIVERY_RETRY_MS; issue 18). Its length is the number of attempts. */
  deliveryRetryMs: number[];
  /** The Slack Web API base, ending in `/` (SLOTFLOW_SLACK_API_URL; v0.4 "Answers inside Slack"). */
  slackApiUrl: string;
  /** Who mail is from and how it is signed (issue 18 item 6; src/outbox/mailer.ts). */
  mail: MailSettings;
  /** SLOTFLOW_DEFAULT_LANGUAGE (issue 42): the pages' language when nothing else chooses one. */
  defaultLanguage: Language;
  /** SLOTFLOW_BRAND_NAME, SLOTFLOW_BRAND_LOGO, SLOTFLOW_BRAND_COLOR (issue 42; src/web/page/brand.ts). */
  brand: Brand;
  /** Sign-in through an OpenID Connect issuer (SLOTFLOW_OIDC_*), or null: no issuer (v0.4 "People inside the company"). */
  oidc: OidcSettings | null;
  /**
   * SLOTFLOW_DEV_SIGN_IN=1: the development sign-in is offered (only without an issuer; never in
   * production; only on a loopback BASE_URL — all checked here, issue 38 M3).
   */
  devSignIn: boolean;
  /** Session cookie keys, newest first (SLOTFLOW_SESSION_SECRET split on commas); never empty. */
  sessionKeys: string[];
  /** Names of secrets that fell back to their development values (the caller warns). */
  devDefaults: string[];
}

/** The OpenID Connect issuer people sign in through (src/web/identity/). */
export interface OidcSettings {
  /** SLOTFLOW_OIDC_ISSUER, without a trailing slash: discovery at `{issuer}/.well-known/openid-configuration`. */
  issuer: string;
  /** SLOTFLOW_OIDC_CLIENT_ID. */
  clientId: string;
  /** SLOTFLOW_OIDC_CLIENT_SECRET, or null: a public client (PKCE only, no client authentication). */
  clientSecret: string | null;
  /** SLOTFLOW_OIDC_AUDIENCE: the `aud` a bearer JWT signed by the issuer must carry (default the client id). */
  audience: string;
  /** SLOTFLOW_OIDC_ROLES_CLAIM split on dots: the path to the roles array in the claims (default `["roles"]`). */
  rolesClaim: string[];
}

/** SLOTFLOW_OIDC_ROLES_CLAIM: the most steps of its dotted path (a bounded walk). */
export const MAX_ROLES_CLAIM_STEPS = 8;

/** Bounds of the web process's HTTP server (src/web/app.ts `listen`), ms and connections. */
export interface HttpServerSettings {
  /** SLOTFLOW_HEADERS_TIMEOUT_MS: a request's headers must arrive within this (Node's `headersTimeout`). */
  headersTimeoutMs: number;
  /** SLOTFLOW_REQUEST_TIMEOUT_MS: a whole request must arrive within this (Node's `requestTimeout`). */
  requestTimeoutMs: number;
  /** SLOTFLOW_KEEP_ALIVE_TIMEOUT_MS: an idle keep-alive connection closes after this (Node's `keepAliveTimeout`). */
  keepAliveTimeoutMs: number;
  /** SLOTFLOW_MAX_CONNECTIONS: connections beyond this are closed on arrival (Node's `maxConnections`). */
  maxConnections: number;
}

export const DEFAULT_HTTP_SERVER: HttpServerSettings = { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 5_000, maxConnections: 4096 };

/** SLOTFLOW_JWT_MAX_TTL_SECONDS's default: 24 h. */
export const DEFAULT_JWT_MAX_TTL_SECONDS = 86_400;

/** Mail identity and signing (SLOTFLOW_MAIL_FROM, SLOTFLOW_DKIM_*). */
export interface MailSettings {
  /** The From header, as given (validated: one mailbox, with or without a display name). */
  from: string;
  /** DKIM signing: the signing domain (`d=`), selector (`s=`) and the private key (PEM) or the file holding it. */
  dkim: { domainName: string; keySelector: string; privateKey: string | null; privateKeyFile: string | null } | null;
}

export const DEFAULT_MAIL_FROM = "slotflow <no-reply@slotflow.local>";

/**
 * The Standard Webhooks example retry schedule (issue 18 item 4): immediately, 5 s, 5 min, 30 min,
 * 2 h, 5 h, 10 h, 14 h, 20 h, 24 h — the delay before each attempt, ms.
 */
export const DEFAULT_DELIVERY_RETRY_MS: number[] = [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 50_400_000, 72_000_000, 86_400_000];

/** Bounds on deployed sources and run input (docs/configuration.md, "Limits"). */
export interface Limits {
  /** UTF-8 bytes of a `.flow` source (`POST /api/workflows`); larger is 413 payload-too-large. */
  maxSourceBytes: number;
  /** UTF-8 bytes of a run's input as JSON; larger is 413 payload-too-large. */
  maxInputBytes: number;
  /**
   * Objects and arrays nested in every JSON the server reads — run input, callback, page, raise
   * and admin bodies — the outermost being level 1; deeper is 422 (issue 16). At most MAX_JSON_DEPTH.
   */
  maxInputDepth: number;
  /** Elements of any one list in a run's input, and so of any `for each` fan-out; more is 422. */
  maxFanOut: number;
}

/** A Redis node or Sentinel address. */
export interface RedisNode {
  host: string;
  port: number;
}

/** `host:port,host:port` as written in REDIS_CLUSTER_NODES / REDIS_SENTINELS; null when a part is malformed. */
export function parseRedisNodes(raw: string): RedisNode[] | null {
  const nodes: RedisNode[] = [];
  for (const part of raw.split(",").map((p) => p.trim()).filter((p) => p !== "")) {
    const m = /^(\[[^\]]+\]|[^:\s]+):(\d{1,5})$/.exec(part);
    const port = m ? Number(m[2]) : 0;
    if (!m || port < 1 || port > 65535) return null;
    nodes.push({ host: m[1]!.replace(/^\[|\]$/g, ""), port });
  }
  return nodes.length > 0 ? nodes : null;
}

export const DEFAULT_LIMITS: Limits = { maxSourceBytes: 512 * 1024, maxInputBytes: 256 * 1024, maxInputDepth: 32, maxFanOut: 1000 };

/**
 * SLOTFLOW_MCP_MAIL_DOMAINS: comma-separated domain names (at most 100, each a DNS name of
 * letters, digits, hyphens and dots), lower-cased; unset or blank: null (any address).
 */
function mailDomainsOf(value: string | undefined, problems: string[]): string[] | null {
  if (!value || !value.trim()) return null;
  const domains = value.split(",").map((d) => d.trim().toLowerCase()).filter((d) => d !== "");
  const bad = domains.filter((d) => d.length > 253 || !/^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(d));
  if (bad.length || domains.length > 100) {
    problems.push(`SLOTFLOW_MCP_MAIL_DOMAINS must be at most 100 comma-separated domain names, like example.com,example.org${bad.length ? ` (not a domain name: ${bad.slice(0, 3).map((d) => JSON.stringify(d.slice(0, 64))).join(", ")})` : ""}`);
    return null;
  }
  return domains;
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** The secrets a command may need (issue 9 §3: `migrate` needs none, `token` only the JWT secret). */
export type SecretName = "SLOTFLOW_ADMIN_TOKEN" | "SLOTFLOW_JWT_SECRET" | "SLOTFLOW_SEAL_KEY" | "SLOTFLOW_SESSION_SECRET";
/** Every secret; SLOTFLOW_SESSION_SECRET is needed only with SLOTFLOW_OIDC_ISSUER set (by the web process). */
export const ALL_SECRETS: readonly SecretName[] = ["SLOTFLOW_ADMIN_TOKEN", "SLOTFLOW_JWT_SECRET", "SLOTFLOW_SEAL_KEY", "SLOTFLOW_SESSION_SECRET"];

export interface LoadOptions {
  /** Secrets the caller needs; in production each missing one is an error. Default: all. */
  secrets?: readonly SecretName[];
}

/** "A is required when …", "A is required, as are B and C, when …". */
function missingSecretsMessage(names: string[]): string {
  const [first, ...rest] = names;
  const others = rest.length === 0 ? "" : `, as ${rest.length === 1 ? "is" : "are"} ${rest.length === 1 ? rest[0] : `${rest.slice(0, -1).join(", ")} and ${rest.at(-1)}`},`;
  return `${first} is required${others} when NODE_ENV=production`;
}

export const DEV_ADMIN_TOKEN = "dev-admin-token";
const DEV_JWT_SECRET = "dev-jwt-secret-change-me";
/** The session cookie key outside production when SLOTFLOW_SESSION_SECRET is unset. */
export const DEV_SESSION_SECRET = "dev-session-secret-change-me";
/** The seal key outside production when SLOTFLOW_SEAL_KEY is unset; `slotflow reseal` names it (docs/operations.md). */
export const DEV_SEAL_KEY = "dev-seal-key-change-me";

/**
 * True for a secret value that is a published placeholder (issue 28 item 9): one of the development
 * values, or one containing `change-me`, `changeme`, `change_me`, `replace-me` or `placeholder`
 * (case-insensitive) — such as the `change-me-…` values docker-compose.yml once defaulted to.
 */
export function isPlaceholderSecret(value: string): boolean {
  const v = value.trim();
  return [DEV_ADMIN_TOKEN, DEV_JWT_SECRET, DEV_SEAL_KEY, DEV_SESSION_SECRET].includes(v) || /change[-_ ]?me|replace[-_ ]?me|placeholder/i.test(v);
}

/** A key ring as written in SLOTFLOW_SEAL_KEY: keys separated by commas, newest first, blanks around them ignored. */
export function parseKeyRing(raw: string): string[] {
  return raw
    .split(",")
    .map((k) => k.trim())
    .filter((k) => k !== "");
}

/** Reads and validates the environment (default: `process.env`). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, options: LoadOptions = {}): Config {
  const nodeEnv = env.NODE_ENV ?? "development";
  const production = nodeEnv === "production";
  const needed = options.secrets ?? ALL_SECRETS;
  const problems: string[] = [];
  const missing: string[] = [];
  const devDefaults: string[] = [];
  const int = (name: string, fallback: number, min: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === "") return fallback;
    const n = Number(raw);
    if (Number.isInteger(n) && n >= min) return n;
    problems.push(`${name} must be an integer >= ${min}, got "${raw}"`);
    return fallback;
  };
  // issue 16: a bound above MAX_JSON_DEPTH would let values reach walks bounded by MAX_WALK_DEPTH
  const atMost = (name: string, n: number, max: number): number => {
    if (n <= max) return n;
    problems.push(`${name} must be at most ${max}, got "${env[name]}"`);
    return max;
  };
  const secret = (name: SecretName, dev: string): string => {
    const v = env[name];
    if (v) return v;
    if (!production) {
      devDefaults.push(name);
      return dev;
    }
    if (needed.includes(name)) missing.push(name);
    return "";
  };
  const port = int("PORT", 3000, 0);
  const baseUrl = (env.BASE_URL || `http://localhost:${port}`).replace(/\/+$/, "");
  try {
    new URL(baseUrl);
  } catch {
    problems.push(`BASE_URL must be an absolute URL, got "${baseUrl}"`);
  }
  const adminToken = secret("SLOTFLOW_ADMIN_TOKEN", DEV_ADMIN_TOKEN);
  const jwtSecret = secret("SLOTFLOW_JWT_SECRET", DEV_JWT_SECRET);
  const sealKey = secret("SLOTFLOW_SEAL_KEY", DEV_SEAL_KEY);
  const sealKeys = parseKeyRing(sealKey);
  try {
    splitReceiptKeys(env.SLOTFLOW_RECEIPT_KEYS ?? "");
  } catch (err) {
    problems.push((err as Error).message);
  }
  if (env.SLOTFLOW_SEAL_KEY && sealKeys.length === 0) problems.push(`SLOTFLOW_SEAL_KEY must name at least one key (comma-separated, newest first)`);
  if (production) {
    // issue 28 item 9: a public placeholder is no secret; the value itself is never quoted
    const placeholders: [SecretName, string | undefined][] = [
      ["SLOTFLOW_ADMIN_TOKEN", env.SLOTFLOW_ADMIN_TOKEN],
      ["SLOTFLOW_JWT_SECRET", env.SLOTFLOW_JWT_SECRET],
      ["SLOTFLOW_SEAL_KEY", sealKeys[0]],
    ];
    for (const [name, value] of placeholders) {
      if (value && needed.includes(name) && isPlaceholderSecret(value)) {
        problems.push(`${name} is a known placeholder value (a development default or a "change-me" value); set a real secret when NODE_ENV=production`);
      }
    }
    // issue 41 item 3: task workers' tokens are secrets too (any of them; none is quoted)
    if ((env.SLOTFLOW_WORKER_TOKEN ?? "").split(",").some((t) => t.trim() !== "" && isPlaceholderSecret(t.trim()))) {
      problems.push(`SLOTFLOW_WORKER_TOKEN holds a known placeholder value (a development default or a "change-me" value); set real tokens when NODE_ENV=production`);
    }
  }
  const trustProxyHops = trustProxyOf(env.SLOTFLOW_TRUST_PROXY, problems);
  const metricsPort = env.SLOTFLOW_METRICS_PORT ? int("SLOTFLOW_METRICS_PORT", 0, 0) : null;
  const nodesOf = (name: string): RedisNode[] | null => {
    const raw = env[name];
    if (!raw) return null;
    const nodes = parseRedisNodes(raw);
    if (!nodes) problems.push(`${name} must be host:port[,host:port…], got "${raw}"`);
    return nodes;
  };
  const redisClusterNodes = nodesOf("REDIS_CLUSTER_NODES");
  const redisSentinels = nodesOf("REDIS_SENTINELS");
  const redisSentinelMaster = env.REDIS_SENTINEL_MASTER || null;
  if (env.REDIS_CLUSTER_NODES && env.REDIS_SENTINELS) problems.push(`REDIS_CLUSTER_NODES and REDIS_SENTINELS cannot both be set (a Redis Cluster or a Sentinel-managed Redis)`);
  if (env.REDIS_SENTINELS && !redisSentinelMaster) problems.push(`REDIS_SENTINEL_MASTER is required when REDIS_SENTINELS is set (the master's name at the Sentinels)`);
  if (redisSentinelMaster && !env.REDIS_SENTINELS) problems.push(`REDIS_SENTINELS is required when REDIS_SENTINEL_MASTER is set`);
  const queueShards = int("SLOTFLOW_QUEUE_SHARDS", 1, 1);
  if (queueShards > 256) problems.push(`SLOTFLOW_QUEUE_SHARDS must be at most 256, got "${env.SLOTFLOW_QUEUE_SHARDS}"`);
  const retentionMs = retentionOf(env.SLOTFLOW_RETENTION, problems);
  const oidc = oidcSettings(env, production, problems);
  const devSignIn = devSignInOf(env, production, baseUrl, problems);
  const sessionKeys = sessionKeysOf(env, production, needed.includes("SLOTFLOW_SESSION_SECRET"), oidc !== null, problems, devDefaults);
  const config: Config = {
    nodeEnv,
    databaseUrl: env.DATABASE_URL || "postgresql://postgres@127.0.0.1:5432/slotflow",
    redisUrl: env.REDIS_URL || "redis://127.0.0.1:6379",
    port,
    baseUrl,
    adminToken,
    viewerToken: env.SLOTFLOW_VIEWER_TOKEN || null,
    jwtSecret,
    sealKey,
    sealKeys,
    smtpUrl: env.SMTP_URL || null,
    queuePrefix: env.SLOTFLOW_QUEUE_PREFIX || "slotflow",
    depositWaitMs: int("SLOTFLOW_DEPOSIT_WAIT_MS", 10_000, 1),
    callbackBodyLimitBytes: int("SLOTFLOW_CALLBACK_BODY_LIMIT_BYTES", 64 * 1024, 1),
    rateLimitPerMinute: int("SLOTFLOW_RATE_LIMIT_PER_MINUTE", 600, 1),
    sweepIntervalMs: int("SLOTFLOW_SWEEP_INTERVAL_MS", 1000, 10),
    workerConcurrency: int("SLOTFLOW_WORKER_CONCURRENCY", 8, 1),
    shutdownTimeoutMs: int("SLOTFLOW_SHUTDOWN_TIMEOUT_MS", 25_000, 0),
    shutdownDrainMs: int("SLOTFLOW_SHUTDOWN_DRAIN_MS", 0, 0),
    metricsPort,
    logLevel: env.LOG_LEVEL || "info",
    trustProxyHops,
    jwtMaxTtlSeconds: int("SLOTFLOW_JWT_MAX_TTL_SECONDS", DEFAULT_JWT_MAX_TTL_SECONDS, 1),
    jwtAudience: env.SLOTFLOW_JWT_AUDIENCE || null,
    mcpToken: env.SLOTFLOW_MCP_TOKEN || null,
    workerTokens: (env.SLOTFLOW_WORKER_TOKEN ?? "").split(",").map((t) => t.trim()).filter((t) => t.length > 0),
    mcpMailDomains: mailDomainsOf(env.SLOTFLOW_MCP_MAIL_DOMAINS, problems),
    jwtIssuer: env.SLOTFLOW_JWT_ISSUER || null,
    http: {
      headersTimeoutMs: int("SLOTFLOW_HEADERS_TIMEOUT_MS", DEFAULT_HTTP_SERVER.headersTimeoutMs, 1),
      requestTimeoutMs: int("SLOTFLOW_REQUEST_TIMEOUT_MS", DEFAULT_HTTP_SERVER.requestTimeoutMs, 1),
      keepAliveTimeoutMs: int("SLOTFLOW_KEEP_ALIVE_TIMEOUT_MS", DEFAULT_HTTP_SERVER.keepAliveTimeoutMs, 1),
      maxConnections: int("SLOTFLOW_MAX_CONNECTIONS", DEFAULT_HTTP_SERVER.maxConnections, 1),
    },
    workerLockMs: int("SLOTFLOW_WORKER_LOCK_MS", 5000, 1000),
    stalledCheckMs: int("SLOTFLOW_STALLED_CHECK_MS", 2500, 100),
    maxStalledCount: int("SLOTFLOW_MAX_STALLED_COUNT", 10, 1),
    allowVolatileRedis: env.SLOTFLOW_ALLOW_VOLATILE_REDIS === "1",
    redisClusterNodes,
    redisSentinels,
    redisSentinelMaster,
    queueShards,
    retentionMs,
    redisWaitMs: int("SLOTFLOW_REDIS_WAIT_MS", 1000, 1),
    limits: {
      maxSourceBytes: int("SLOTFLOW_MAX_SOURCE_BYTES", DEFAULT_LIMITS.maxSourceBytes, 1),
      maxInputBytes: int("SLOTFLOW_MAX_INPUT_BYTES", DEFAULT_LIMITS.maxInputBytes, 2),
      maxInputDepth: atMost("SLOTFLOW_MAX_INPUT_DEPTH", int("SLOTFLOW_MAX_INPUT_DEPTH", DEFAULT_LIMITS.maxInputDepth, 1), MAX_JSON_DEPTH),
      maxFanOut: int("SLOTFLOW_MAX_FANOUT", DEFAULT_LIMITS.maxFanOut, 1),
    },
    endpointsAllowPrivate: env.SLOTFLOW_ENDPOINTS_ALLOW_PRIVATE === "1",
    slackApiUrl: slackApiUrl(env.SLOTFLOW_SLACK_API_URL, problems),
    deliveryRetryMs: DEFAULT_DELIVERY_RETRY_MS,
    callConcurrency: int("SLOTFLOW_CALL_CONCURRENCY", 16, 1),
    callEndpointConcurrency: int("SLOTFLOW_CALL_ENDPOINT_CONCURRENCY", 4, 1),
    mail: mailSettings(env, problems),
    defaultLanguage: defaultLanguageOf(env.SLOTFLOW_DEFAULT_LANGUAGE, problems),
    brand: brandOf(env, problems),
    receiptKeys: env.SLOTFLOW_RECEIPT_KEYS ?? "",
    oidc,
    devSignIn: devSignIn && oidc === null,
    sessionKeys,
    devDefaults,
  };
  // issue 42: the brand is the display name of every mail's From (the address stays SLOTFLOW_MAIL_FROM's)
  if (config.brand.name) {
    const address = (/<([^<>]+)>\s*$/.exec(config.mail.from)?.[1] ?? config.mail.from).trim();
    config.mail = { ...config.mail, from: `"${config.brand.name.replace(/\\/g, "")}" <${address}>` };
  }
  if (env.SLOTFLOW_DELIVERY_RETRY_MS) {
    const parts = env.SLOTFLOW_DELIVERY_RETRY_MS.split(",").map((p) => Number(p.trim()));
    if (parts.length === 0 || parts.length > 50 || parts.some((n) => !Number.isInteger(n) || n < 0)) {
      problems.push("SLOTFLOW_DELIVERY_RETRY_MS must be 1 to 50 comma-separated whole numbers of milliseconds (>= 0)");
    } else config.deliveryRetryMs = parts;
  }
  if (config.http.requestTimeoutMs < config.http.headersTimeoutMs) {
    problems.push(`SLOTFLOW_REQUEST_TIMEOUT_MS (${config.http.requestTimeoutMs}) must be at least SLOTFLOW_HEADERS_TIMEOUT_MS (${config.http.headersTimeoutMs}): the headers are part of the request`);
  }
  if (missing.length > 0) problems.push(missingSecretsMessage(missing));
  if (problems.length > 0) throw new ConfigError(problems.join("; "));
  return config;
}

/**
 * True when `url`'s host is a loopback address: `localhost` (and `*.localhost`, RFC 6761),
 * 127.0.0.0/8 or `[::1]`. False for anything else, and for a URL that does not parse.
 */
export function isLoopbackUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  if (host === "[::1]") return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * SLOTFLOW_DEV_SIGN_IN (issue 38 M3): `1` turns the development sign-in on, unset/`""`/`0` leaves
 * it off; anything else, `1` with NODE_ENV=production, or `1` with a BASE_URL that is not a
 * loopback address is a problem (the process refuses to start: one line naming the variable).
 */
function devSignInOf(env: NodeJS.ProcessEnv, production: boolean, baseUrl: string, problems: string[]): boolean {
  const raw = env.SLOTFLOW_DEV_SIGN_IN ?? "";
  if (raw === "" || raw === "0") return false;
  if (raw !== "1") {
    problems.push(`SLOTFLOW_DEV_SIGN_IN must be 1 (on) or 0 (off), got "${raw}"`);
    return false;
  }
  if (production) {
    problems.push("SLOTFLOW_DEV_SIGN_IN=1 is refused when NODE_ENV=production: the development sign-in lets anyone sign in as anyone (use SLOTFLOW_OIDC_ISSUER)");
    return false;
  }
  if (!isLoopbackUrl(baseUrl)) {
    problems.push(`SLOTFLOW_DEV_SIGN_IN=1 is refused with a BASE_URL that is not a loopback address (localhost, 127.0.0.1, [::1]), got "${baseUrl}": the development sign-in lets anyone sign in as anyone`);
    return false;
  }
  return true;
}

/**
 * The database the testing kit (`slotflow/testing`) may use: SLOTFLOW_TEST_DATABASE_URL, else
 * DATABASE_URL. Throws ConfigError when neither is set: the kit never falls back to the
 * development database, whose sweeper and workers would act on the tests' runs (issue 9 §2).
 */
export function kitDatabaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  const url = env.SLOTFLOW_TEST_DATABASE_URL || env.DATABASE_URL;
  if (!url) {
    throw new ConfigError(
      "slotflow/testing needs a database of its own: set SLOTFLOW_TEST_DATABASE_URL (or DATABASE_URL) to a PostgreSQL database for tests, migrated with `npx slotflow migrate`",
    );
  }
  return url;
}

/**
 * SLOTFLOW_TRUST_PROXY (issue 28 item 4): the number of trusted proxies, a whole number 0–32;
 * unset or empty is 0 (off), so `1` keeps meaning "behind one proxy". Anything else is pushed to
 * `problems`.
 */
function trustProxyOf(raw: string | undefined, problems: string[]): number {
  if (raw === undefined || raw === "") return 0;
  const n = Number(raw);
  if (/^\d+$/.test(raw.trim()) && n <= 32) return n;
  problems.push(`SLOTFLOW_TRUST_PROXY must be the number of proxies in front of the web process, 0 to 32 (1: one proxy), got "${raw}"`);
  return 0;
}

/**
 * SLOTFLOW_RETENTION (issue 20): default 30 d; `off` keeps ended runs forever (null). Anything shorter
 * than the 24 h Idempotency-Key promise is refused (pushed to `problems`), since a retried deposit
 * must still find its outcome.
 */
function retentionOf(raw: string | undefined, problems: string[]): number | null {
  if (raw === undefined || raw === "") return DEFAULT_RETENTION_MS;
  const parsed = parseRetention(raw);
  if (parsed instanceof Error) {
    problems.push(`SLOTFLOW_RETENTION: ${parsed.message}`);
    return DEFAULT_RETENTION_MS;
  }
  if (parsed !== null && parsed < IDEMPOTENCY_WINDOW_MS) {
    problems.push(`SLOTFLOW_RETENTION must be at least 24h (an Idempotency-Key's outcome is kept 24 h), got "${raw}"; use "off" to keep runs forever`);
    return DEFAULT_RETENTION_MS;
  }
  return parsed;
}

/** SLOTFLOW_MAIL_FROM and SLOTFLOW_DKIM_*; each problem is pushed to `problems` naming its variable. */
function mailSettings(env: NodeJS.ProcessEnv, problems: string[]): MailSettings {
  const from = env.SLOTFLOW_MAIL_FROM || DEFAULT_MAIL_FROM;
  if (env.SLOTFLOW_MAIL_FROM && !/^[^<>@\s]+@[^<>@\s]+$|^[^<>@]*<[^<>@\s]+@[^<>@\s]+>$/.test(env.SLOTFLOW_MAIL_FROM.trim())) {
    problems.push(`SLOTFLOW_MAIL_FROM must be one address, "addr@domain" or "Name <addr@domain>", got "${env.SLOTFLOW_MAIL_FROM}"`);
  }
  const domainName = env.SLOTFLOW_DKIM_DOMAIN || "";
  const keySelector = env.SLOTFLOW_DKIM_SELECTOR || "";
  const privateKey = env.SLOTFLOW_DKIM_PRIVATE_KEY ? env.SLOTFLOW_DKIM_PRIVATE_KEY.replace(/\\n/g, "\n") : null;
  const privateKeyFile = env.SLOTFLOW_DKIM_PRIVATE_KEY_FILE || null;
  const any = domainName || keySelector || privateKey || privateKeyFile;
  if (!any) return { from: from.trim(), dkim: null };
  if (!domainName || !keySelector || (!privateKey && !privateKeyFile)) {
    problems.push("DKIM needs SLOTFLOW_DKIM_DOMAIN, SLOTFLOW_DKIM_SELECTOR and SLOTFLOW_DKIM_PRIVATE_KEY (or SLOTFLOW_DKIM_PRIVATE_KEY_FILE), all of them");
    return { from: from.trim(), dkim: null };
  }
  if (privateKey && !privateKey.includes("PRIVATE KEY")) problems.push("SLOTFLOW_DKIM_PRIVATE_KEY must be a PEM private key (-----BEGIN … PRIVATE KEY-----)");
  return { from: from.trim(), dkim: { domainName, keySelector, privateKey, privateKeyFile } };
}


/** SLOTFLOW_DEFAULT_LANGUAGE: one of the languages slotflow's own words exist in; default `en`. */
function defaultLanguageOf(raw: string | undefined, problems: string[]): Language {
  if (raw === undefined || raw === "") return "en";
  if (isLanguage(raw)) return raw;
  problems.push(`SLOTFLOW_DEFAULT_LANGUAGE must be one of ${LANGUAGES.join(", ")}, got "${raw}"`);
  return "en";
}

/** SLOTFLOW_SLACK_API_URL: an absolute http(s) URL, given a trailing `/`; default https://slack.com/api/. */
function slackApiUrl(value: string | undefined, problems: string[]): string {
  if (value === undefined || value === "") return "https://slack.com/api/";
  try {
    const u = new URL(value);
    if (u.protocol !== "https:" && u.protocol !== "http:") throw new Error("scheme");
    return u.toString().endsWith("/") ? u.toString() : `${u.toString()}/`;
  } catch {
    problems.push("SLOTFLOW_SLACK_API_URL must be an absolute http(s) URL, such as https://slack.com/api/");
    return "https://slack.com/api/";
  }
}

/**
 * SLOTFLOW_OIDC_* (v0.4 "People inside the company"): null without an issuer. With one, the client
 * id is required; the issuer must be an absolute URL, https in production (plain http only for
 * development and tests). Each problem is pushed to `problems`, naming its variable.
 */
function oidcSettings(env: NodeJS.ProcessEnv, production: boolean, problems: string[]): OidcSettings | null {
  const raw = env.SLOTFLOW_OIDC_ISSUER?.trim();
  const others = ["SLOTFLOW_OIDC_CLIENT_ID", "SLOTFLOW_OIDC_CLIENT_SECRET", "SLOTFLOW_OIDC_AUDIENCE"].filter((n) => env[n]);
  if (!raw) {
    if (others.length > 0) problems.push(`SLOTFLOW_OIDC_ISSUER is required when ${others.join(", ")} ${others.length === 1 ? "is" : "are"} set`);
    return null;
  }
  let url: URL | null = null;
  try {
    url = new URL(raw);
  } catch {
    problems.push(`SLOTFLOW_OIDC_ISSUER must be an absolute URL, got "${raw}"`);
  }
  if (url && url.protocol !== "https:" && (production || url.protocol !== "http:")) {
    problems.push(`SLOTFLOW_OIDC_ISSUER must be an https URL${production ? " when NODE_ENV=production" : ""}, got "${raw}"`);
  }
  const clientId = env.SLOTFLOW_OIDC_CLIENT_ID?.trim() ?? "";
  if (!clientId) problems.push("SLOTFLOW_OIDC_CLIENT_ID is required when SLOTFLOW_OIDC_ISSUER is set (the client registered for slotflow at the issuer)");
  const claim = (env.SLOTFLOW_OIDC_ROLES_CLAIM || "roles").trim();
  const rolesClaim = claim.split(".");
  if (rolesClaim.some((step) => step === "") || rolesClaim.length > MAX_ROLES_CLAIM_STEPS) {
    problems.push(`SLOTFLOW_OIDC_ROLES_CLAIM must be a claim name or a dotted path of at most ${MAX_ROLES_CLAIM_STEPS} names (realm_access.roles), got "${claim}"`);
  }
  return {
    issuer: raw.replace(/\/+$/, ""),
    clientId,
    clientSecret: env.SLOTFLOW_OIDC_CLIENT_SECRET || null,
    audience: env.SLOTFLOW_OIDC_AUDIENCE?.trim() || clientId,
    rolesClaim,
  };
}

/**
 * SLOTFLOW_SESSION_SECRET: a key ring, newest first. Outside production, unset means the
 * development key (named in `devDefaults` when an issuer is set). In production, for a command
 * that `needed` it (LoadOptions.secrets: the web process), it is required when an issuer is set,
 * and a placeholder or a first key shorter than 32 characters is refused.
 */
function sessionKeysOf(env: NodeJS.ProcessEnv, production: boolean, needed: boolean, issuer: boolean, problems: string[], devDefaults: string[]): string[] {
  const keys = parseKeyRing(env.SLOTFLOW_SESSION_SECRET ?? "");
  if (env.SLOTFLOW_SESSION_SECRET && keys.length === 0) problems.push("SLOTFLOW_SESSION_SECRET must name at least one key (comma-separated, newest first)");
  if (keys.length > 0) {
    if (production && needed && isPlaceholderSecret(keys[0]!)) {
      problems.push(`SLOTFLOW_SESSION_SECRET is a known placeholder value (a development default or a "change-me" value); set a real secret when NODE_ENV=production`);
    } else if (production && needed && keys[0]!.length < 32) {
      problems.push("SLOTFLOW_SESSION_SECRET's first key must be at least 32 characters when NODE_ENV=production");
    }
    return keys;
  }
  if (!production) {
    if (issuer) devDefaults.push("SLOTFLOW_SESSION_SECRET"); // the development sign-in alone needs no warning
    return [DEV_SESSION_SECRET];
  }
  if (issuer && needed) problems.push("SLOTFLOW_SESSION_SECRET is required when NODE_ENV=production and SLOTFLOW_OIDC_ISSUER is set (the key of signed session cookies)");
  // production without a key: nobody can sign in with a session (no development sign-in, or a
  // command that serves no sign-in); a random key of this process, never the development one
  return [randomBytes(32).toString("base64url")];
}
