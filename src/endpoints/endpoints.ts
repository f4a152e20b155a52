/**
 * Named delivery endpoints (issue 18 item 1; interfaces.md "Delivering links through other
 * channels"). This module writes the `endpoints` table, except an attempt's outcome
 * (`failing_since`, disabling: engine/sql/delivery-status.ts markAttempt, one statement with the attempt).
 *
 * Words: an *endpoint* is a destination an operator names (`vendor-portal`, `finance-chat`) and a
 * `.flow` source refers to by that name only. Its *kind* is `webhook` (Standard Webhooks 1.0,
 * signed), `slack` (an incoming-webhook URL), `teams` (an incoming-webhook / workflow URL) or — v0.5,
 * issue 40 — `http` (a service `call http "name"` calls: a base URL, a signing secret and extra
 * request headers, http-headers.ts).
 *
 * Lifecycle:
 *
 *   (none) --PUT--> active --failed attempt--> failing (failingSince set)
 *   failing --2xx--> active            failing --failing for FAILING_DISABLES_MS (5 days)--> disabled
 *   active|failing --410 Gone--> disabled           any --PUT (update)--> active (re-enabled)
 *   any --DELETE--> (none)
 *
 * Secrets: the URL of every endpoint (a chat-webhook URL is a credential) and a webhook's signing
 * secret are sealed at rest (engine/sealing/seal.ts `Sealer.seal`, the JSON text of the envelope); only
 * the host is kept clear, for `GET /api/endpoints`. A secret is returned once, by the call that
 * made it. An `http` endpoint's headers are sealed the same way (the JSON text of `{name: value}` in
 * `headers`; their names in clear in `header_names`), never shown again. A `slack-app` endpoint (v0.4 "Answers inside Slack"; slack-app.ts) keeps its settings in
 * `slack`, its bot token and signing secret sealed there, never shown again. Rotation keeps the previous secret for ROTATION_OVERLAP_MS (24 h) and deliveries are
 * signed with both meanwhile (Standard Webhooks: several space-separated signatures).
 */
import { randomBytes } from "node:crypto";
import type { Db } from "../db.js";
import { RefusalCode, RefusalError, refuse } from "../engine/refusals.js";
import type { Sealer } from "../engine/sealing/seal.js";
import { validateHttpHeaders } from "./http-headers.js";
import { openSlackApp, sealSlackApp, slackAppView, type SlackAppBody, type SlackAppSettings } from "../channels/slack/app-settings.js";

export const ENDPOINT_KINDS = ["webhook", "slack", "teams", "slack-app", "http"] as const;
export type EndpointKind = (typeof ENDPOINT_KINDS)[number];

/** Kinds whose requests are signed with a `whsec_…` secret (generated on create, rotatable). */
export const SIGNED_KINDS: readonly EndpointKind[] = ["webhook", "http"];
const isSigned = (kind: string) => (SIGNED_KINDS as readonly string[]).includes(kind);

/** Endpoint names: 1–64 of letters, digits, `.`, `_`, `-`, starting with a letter or digit. */
export const ENDPOINT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** Longest URL accepted, characters. */
export const MAX_URL_LENGTH = 2048;
/** How long a rotated-out secret still signs (issue 18 item 1), ms. */
export const ROTATION_OVERLAP_MS = 24 * 3600_000;
/** An endpoint failing this long is disabled (issue 18 item 4), ms. */
export const FAILING_DISABLES_MS = 5 * 24 * 3600_000;

/** What `GET /api/endpoints` shows of one endpoint: never its URL or secret. */
export interface EndpointView {
  name: string;
  kind: EndpointKind;
  host: string;
  createdAt: string;
  failingSince: string | null;
  /** When and why deliveries to it stopped (410 Gone, failing 5 days); null while enabled. */
  disabledAt: string | null;
  disabledReason: string | null;
  /** slack-app only: its settings, the token and secret redacted. */
  slack?: SlackAppSettings & { botToken: string; signingSecret: string };
  /** http only: the names of its extra request headers (never their values). */
  headers?: string[];
}

/** What a delivery needs, opened (inside the worker only). */
export interface OpenEndpoint {
  name: string;
  kind: EndpointKind;
  url: string;
  /** Signing secrets (`whsec_…`), the current one first; empty for chat kinds. */
  secrets: string[];
  disabledReason: string | null;
  /** slack-app only: its settings and secrets, opened. */
  slack?: SlackAppBody;
  /** http only: its extra request headers, opened (credentials: never logged or recorded). */
  headers?: Record<string, string>;
}

const invalid = (detail: string) => new RefusalError(refuse(RefusalCode.InvalidBody, detail));

/** Refuses (404 not-found) a name that cannot name an endpoint. */
export function endpointNameOr404(name: string): void {
  if (!ENDPOINT_NAME.test(name)) throw new RefusalError(refuse(RefusalCode.NotFound, `No endpoint is named "${name.slice(0, 80)}".`));
}

/**
 * Validates a `PUT /api/endpoints/{name}` body `{kind, url}` (and `headers` for kind `http`,
 * http-headers.ts). Throws RefusalError invalid-body (422) naming what is wrong: kind not
 * webhook/slack/teams/http; url not an absolute https URL (http only with
 * SLOTFLOW_ENDPOINTS_ALLOW_PRIVATE=1), longer than 2048, or with a fragment; `headers` on another
 * kind, or not headers an endpoint may carry; an http URL with a query (a call's `Path` brings its own).
 */
export function validateEndpointBody(body: unknown, allowPrivate: boolean): { kind: EndpointKind; url: URL; headers: Record<string, string> } {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw invalid('Send a JSON object {"kind", "url"}.');
  const { kind, url, headers, ...rest } = body as Record<string, unknown>;
  const extra = Object.keys(rest);
  if (extra.length > 0) throw invalid(`Unknown member(s) ${extra.map((k) => `"${k.slice(0, 40)}"`).join(", ")}: an endpoint takes "kind" and "url" (and "headers" for kind "http").`);
  if (typeof kind !== "string" || !(ENDPOINT_KINDS as readonly string[]).includes(kind) || kind === "slack-app") throw invalid('"kind" must be "webhook", "slack", "teams", "http" or "slack-app".');
  if (headers !== undefined && kind !== "http") throw invalid('"headers" is for endpoints of kind "http" only.');
  if (typeof url !== "string" || url.length > MAX_URL_LENGTH) throw invalid(`"url" must be a string of at most ${MAX_URL_LENGTH} characters.`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid('"url" must be an absolute URL (https://…).');
  }
  if (parsed.protocol !== "https:" && !(allowPrivate && parsed.protocol === "http:")) {
    throw invalid(allowPrivate ? '"url" must be http:// or https://.' : '"url" must be https:// (http:// only when SLOTFLOW_ENDPOINTS_ALLOW_PRIVATE=1).');
  }
  if (parsed.hash !== "") throw invalid('"url" must not have a fragment (#…).');
  if (kind === "http" && parsed.search !== "") throw invalid('"url" of an http endpoint must not have a query (?…): a call\'s Path brings its own.');
  if (parsed.username !== "" || parsed.password !== "") throw invalid('"url" must not carry a user name or password: put credentials in "headers".');
  return { kind: kind as EndpointKind, url: parsed, headers: validateHttpHeaders(headers) };
}

/**
 * Creates or updates a `slack-app` endpoint (v0.4 "Answers inside Slack"): its settings and sealed
 * secrets in `slack`; `url` holds the Web API base it was set against (sealed, like every URL),
 * `host` that base's host. Re-enables a disabled or failing endpoint. Same lock as setEndpoint.
 */
export async function setSlackAppEndpoint(db: Db, sealer: Sealer, name: string, body: SlackAppBody, apiBase: string): Promise<{ created: boolean }> {
  return db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${"slotflow.endpoint:" + name}))`;
    const existing = await tx.$queryRaw<{ kind: string }[]>`SELECT kind FROM endpoints WHERE name = ${name} FOR UPDATE`;
    const data = {
      kind: "slack-app",
      host: new URL(apiBase).host,
      url: sealed(sealer, apiBase),
      slack: sealSlackApp(sealer, body) as unknown as object,
      updatedAt: new Date(),
      failingSince: null,
      disabledAt: null,
      disabledReason: null,
      secret: null,
      previousSecret: null,
      previousSecretUntil: null,
      headers: null,
      headerNames: [],
    };
    if (existing[0]) await tx.endpoint.update({ where: { name }, data });
    else await tx.endpoint.create({ data: { name, ...data } });
    return { created: !existing[0] };
  });
}

/** A new Standard Webhooks signing secret: `whsec_` + base64 of 32 random bytes. */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

const sealed = (sealer: Sealer, text: string): string => JSON.stringify(sealer.seal(text));

/**
 * Creates or updates an endpoint. Returns `created` and, when this call made a signing secret
 * (a new webhook or http endpoint, or one changed to such a kind from a kind without a secret),
 * that secret — the only time it is shown. An update keeps an existing secret, replaces an http
 * endpoint's headers with those given (none when absent: a PUT sets the whole endpoint), and
 * re-enables a disabled or failing endpoint.
 *
 * Concurrent calls for one name are serialised by a transaction-scoped advisory lock on the name
 * (`FOR UPDATE` locks no row that does not exist yet): without it, two PUTs creating the same
 * endpoint both inserted and the losers answered 500 (issue 16, found extending the fuzz suite to
 * this endpoint; test/e2e/channels.test.ts). With it, one creates (201, its secret) and the others
 * update (200).
 */
export async function setEndpoint(
  db: Db,
  sealer: Sealer,
  name: string,
  kind: EndpointKind,
  url: URL,
  headers: Record<string, string> = {},
): Promise<{ created: boolean; secret: string | null }> {
  return db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${"slotflow.endpoint:" + name}))`;
    const existing = await tx.$queryRaw<{ kind: string; secret: string | null }[]>`
      SELECT kind, secret FROM endpoints WHERE name = ${name} FOR UPDATE`;
    const prior = existing[0];
    const secret = isSigned(kind) && !prior?.secret ? newSecret() : null;
    const names = Object.keys(headers);
    const data = {
      kind,
      host: url.host,
      url: sealed(sealer, url.toString()),
      updatedAt: new Date(),
      failingSince: null,
      disabledAt: null,
      disabledReason: null,
      ...(secret ? { secret: sealed(sealer, secret), previousSecret: null, previousSecretUntil: null } : {}),
      ...(!isSigned(kind) ? { secret: null, previousSecret: null, previousSecretUntil: null } : {}),
      headers: kind === "http" && names.length > 0 ? sealed(sealer, JSON.stringify(headers)) : null,
      headerNames: kind === "http" ? names : [],
    };
    if (prior) await tx.endpoint.update({ where: { name }, data });
    else await tx.endpoint.create({ data: { name, ...data } });
    return { created: !prior, secret };
  });
}

/** Every endpoint, by name, as `GET /api/endpoints` shows it. */
export async function listEndpoints(db: Db): Promise<EndpointView[]> {
  const rows = await db.endpoint.findMany({ orderBy: { name: "asc" } });
  return rows.map((r) => ({
    name: r.name,
    kind: r.kind as EndpointKind,
    host: r.host,
    createdAt: r.createdAt.toISOString(),
    failingSince: r.failingSince?.toISOString() ?? null,
    disabledAt: r.disabledAt?.toISOString() ?? null,
    disabledReason: r.disabledReason,
    ...(r.kind === "slack-app" && r.slack ? { slack: slackAppView(r.slack) } : {}),
    ...(r.kind === "http" ? { headers: r.headerNames } : {}),
  }));
}

/**
 * A new signing secret for a webhook or http endpoint, returned once; the current one becomes the
 * previous one and keeps signing for 24 h. Throws 404 not-found for an unknown endpoint and 409
 * not-a-webhook for a chat endpoint (it has no secret).
 */
export async function rotateSecret(db: Db, sealer: Sealer, name: string, now = new Date()): Promise<string> {
  return db.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<{ kind: string; secret: string | null }[]>`SELECT kind, secret FROM endpoints WHERE name = ${name} FOR UPDATE`;
    const row = rows[0];
    if (!row) throw new RefusalError(refuse(RefusalCode.NotFound, `No endpoint is named "${name}".`));
    if (!isSigned(row.kind)) throw new RefusalError(refuse(RefusalCode.NotAWebhook, `"${name}" is a ${row.kind} endpoint: only webhook and http endpoints have a signing secret.`));
    const secret = newSecret();
    await tx.endpoint.update({
      where: { name },
      data: { secret: sealed(sealer, secret), previousSecret: row.secret, previousSecretUntil: new Date(now.getTime() + ROTATION_OVERLAP_MS), updatedAt: now },
    });
    return secret;
  });
}

/** Deletes an endpoint; false when there was none. Deliveries queued for it then fail ("no endpoint"). */
export async function removeEndpoint(db: Db, name: string): Promise<boolean> {
  const { count } = await db.endpoint.deleteMany({ where: { name } });
  return count > 0;
}

/** The endpoint opened for one delivery attempt; null when none has this name. */
export async function openEndpoint(db: Db, sealer: Sealer, name: string, now = new Date()): Promise<OpenEndpoint | null> {
  const r = await db.endpoint.findUnique({ where: { name } });
  return r ? openEndpointRow(sealer, r, now) : null;
}

/** An endpoint row as stored (sealed url and secrets) → what a delivery needs, opened (issue 22: the delivery's claim reads the row itself). */
export function openEndpointRow(
  sealer: Sealer,
  r: {
    name: string;
    kind: string;
    url: string;
    secret: string | null;
    previousSecret: string | null;
    previousSecretUntil: Date | null;
    disabledAt: Date | null;
    disabledReason: string | null;
    slack?: unknown;
    headers?: string | null;
  },
  now = new Date(),
): OpenEndpoint {
  const secrets: string[] = [];
  if (r.secret) secrets.push(sealer.openText(r.secret));
  if (r.previousSecret && r.previousSecretUntil && r.previousSecretUntil > now) secrets.push(sealer.openText(r.previousSecret));
  return {
    name: r.name,
    kind: r.kind as EndpointKind,
    url: sealer.openText(r.url),
    secrets,
    disabledReason: r.disabledAt ? (r.disabledReason ?? "disabled") : null,
    ...(r.kind === "slack-app" && r.slack ? { slack: openSlackApp(sealer, r.slack) } : {}),
    ...(r.kind === "http" ? { headers: r.headers ? (JSON.parse(sealer.openText(r.headers)) as Record<string, string>) : {} } : {}),
  };
}

/** Which of `names` no endpoint has (deploy warnings, issue 18 item 2). */
export async function missingEndpoints(db: Db, names: string[]): Promise<Set<string>> {
  if (names.length === 0) return new Set();
  const found = await db.endpoint.findMany({ where: { name: { in: names } }, select: { name: true } });
  const have = new Set(found.map((f) => f.name));
  return new Set(names.filter((n) => !have.has(n)));
}

/**
 * Records an attempt's outcome on the endpoint: a 2xx clears `failingSince`; a failure sets it
 * (if unset) and disables the endpoint once it has been failing for FAILING_DISABLES_MS; `gone`
 * (HTTP 410) disables it at once. Returns the reason when this call disabled it.
 * (A delivery attempt applies the same rules inside its one marking statement: outbox/deliveries.ts.)
 */
export async function recordEndpointOutcome(db: Db, name: string, outcome: "ok" | "failed" | "gone", now = new Date()): Promise<string | null> {
  if (outcome === "ok") {
    await db.endpoint.updateMany({ where: { name, failingSince: { not: null } }, data: { failingSince: null } });
    return null;
  }
  if (outcome === "gone") {
    const { count } = await db.endpoint.updateMany({
      where: { name, disabledAt: null },
      data: { disabledAt: now, disabledReason: "the endpoint answered 410 Gone" },
    });
    return count > 0 ? "the endpoint answered 410 Gone" : null;
  }
  await db.endpoint.updateMany({ where: { name, failingSince: null }, data: { failingSince: now } });
  const reason = "failing for 5 days";
  const { count } = await db.endpoint.updateMany({
    where: { name, disabledAt: null, failingSince: { lte: new Date(now.getTime() - FAILING_DISABLES_MS) } },
    data: { disabledAt: now, disabledReason: reason },
  });
  return count > 0 ? reason : null;
}
