/**
 * The OpenAPI 3.1 description served at `GET /api/openapi.json`: every endpoint, status and
 * problem type. Kept beside the routes so a change to one shows in the other's review.
 */
import { PROBLEM_BASE, STATUS, TITLE } from "./problems.js";
import type { RefusalCode } from "../engine/refusals.js";

const problem = (codes: RefusalCode[]) => ({
  description: codes.map((c) => `\`${c}\`: ${TITLE[c]}`).join("; "),
  content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
});

function responses(ok: Record<string, unknown>, codes: RefusalCode[]) {
  const byStatus = new Map<number, RefusalCode[]>();
  for (const c of codes) byStatus.set(STATUS[c], [...(byStatus.get(STATUS[c]) ?? []), c]);
  const out: Record<string, unknown> = { ...ok };
  for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) out[String(status)] = problem(list);
  return out;
}

const jsonOk = (description: string, schema: Record<string, unknown> = { type: "object" }) => ({
  description,
  content: { "application/json": { schema } },
});

export function openApiDocument(baseUrl: string) {
  const admin = [{ adminToken: [] }];
  return {
    openapi: "3.1.0",
    info: { title: "slotflow", version: "1", description: "Workflows that wait on slots, answered by signed-in principals or through single-use callback links." },
    servers: [{ url: baseUrl }],
    paths: {
      "/api/workflow/callback/{token}": {
        parameters: [{ name: "token", in: "path", required: true, schema: { type: "string" }, description: "The opaque token of a callback link." }],
        post: {
          parameters: [
            {
              name: "Idempotency-Key",
              in: "header",
              required: false,
              schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x20-\\x7E]+$" },
              description:
                "Makes a retry safe: a later POST to the same link with the same key and body gets the first one's outcome (200 completed) instead of 410 link-burned; the same key with another body is 422 idempotency-key-reused. Only a hash of the key is stored.",
            },
          ],
          summary: "Complete the link's slot (no sign-in; the token is the credential). Any other method answers 405 with Allow: POST and never spends the link.",
          requestBody: { required: false, content: { "application/json": { schema: { type: "object", description: "Exactly the event's parameters by name; no body for an event without parameters." } } } },
          responses: {
            ...responses(
              {
                "200": jsonOk("Slot completed, link burned", { type: "object", properties: { status: { const: "completed" } } }),
                "202": jsonOk(
                  "Queued, and will be applied (or refused under the run lock, changing nothing): outages of the database or Redis do not lose it; retry with the same Idempotency-Key to learn the outcome",
                  { type: "object", properties: { status: { const: "accepted" } } },
                ),
              },
              ["malformed-json", "invalid-idempotency-key", "idempotency-key-reused", "link-not-found", "method-not-allowed", "slot-not-open", "requires-failed", "link-burned", "link-retired", "link-dead", "payload-too-large", "unsupported-media-type", "invalid-body", "rate-limited", "handler-failed", "unavailable"],
            ),
            "503": {
              ...problem(["unavailable"]),
              description: "`unavailable`: not known to be applied (the deposit may have been queued just before the failure); retry with the same Idempotency-Key and body to learn the outcome",
            },
          },
        },
      },
      "/api/workflows": {
        post: {
          summary: "Compile and deploy a .flow source",
          security: admin,
          requestBody: { required: true, content: { "text/plain": { schema: { type: "string" } } } },
          responses: responses(
            { "201": jsonOk("Deployed as a new version"), "200": jsonOk("Unchanged: same source as the current version") },
            ["unauthorized", "invalid-workflow", "version-conflict"],
          ),
        },
      },
      "/api/workflows/{name}": {
        parameters: [{ name: "name", in: "path", required: true, schema: { type: "string" } }],
        get: { summary: "Versions and the current source", security: admin, responses: responses({ "200": jsonOk("The workflow") }, ["unauthorized", "not-found"]) },
      },
      "/api/workflows/{name}/runs": {
        parameters: [{ name: "name", in: "path", required: true, schema: { type: "string" } }],
        post: {
          summary: "Start a run; the body is the run's input (the workflow's parameters by name)",
          security: admin,
          requestBody: { required: true, content: { "application/json": { schema: { type: "object" } } } },
          responses: responses(
            { "201": jsonOk("Started: {id, version, state, status}"), "202": jsonOk("Queued: {id, status: accepted}") },
            ["unauthorized", "not-found", "invalid-body", "malformed-json", "handler-failed", "unavailable"],
          ),
        },
      },
      "/api/runs/{id}": {
        parameters: [{ name: "id", in: "path", required: true, schema: { type: "string", format: "uuid" } }],
        get: {
          summary: "A run: {id, workflow, version, state, status, entities, slots, incidents, history}; never a token",
          security: admin,
          responses: responses({ "200": jsonOk("The run") }, ["unauthorized", "not-found"]),
        },
      },
      "/api/runs/{id}/outbox": {
        parameters: [{ name: "id", in: "path", required: true, schema: { type: "string", format: "uuid" } }],
        get: { summary: "Messages the run queued; bodies only while undelivered, tokens redacted", security: admin, responses: responses({ "200": jsonOk("Messages", { type: "array" }) }, ["unauthorized", "not-found"]) },
      },
      "/api/runs/{id}/slots/{alias}/events": {
        parameters: [
          { name: "id", in: "path", required: true, schema: { type: "string", format: "uuid" } },
          { name: "alias", in: "path", required: true, schema: { type: "string" } },
          { name: "element", in: "query", required: false, schema: { type: "integer", minimum: 0 }, description: "Element of a fanned-out slot" },
        ],
        post: {
          summary: "The ordinary raise path: a signed-in principal raises the slot's event",
          security: [{ principalJwt: [] }],
          requestBody: { required: false, content: { "application/json": { schema: { type: "object" } } } },
          responses: responses(
            { "200": jsonOk("Slot completed: {status, run}"), "202": jsonOk("Queued") },
            ["unauthorized", "not-a-candidate", "authorize-denied", "not-found", "slot-not-open", "requires-failed", "slot-closed", "invalid-body", "malformed-json", "handler-failed", "unavailable"],
          ),
        },
      },
      "/healthz": { get: { summary: "Liveness", responses: { "200": jsonOk("Alive") } } },
      "/readyz": { get: { summary: "Readiness: database and Redis reachable", responses: { "200": jsonOk("Ready"), "503": jsonOk("Not ready") } } },
      "/metrics": { get: { summary: "Prometheus metrics", responses: { "200": { description: "Prometheus text format", content: { "text/plain": {} } } } } },
    },
    components: {
      securitySchemes: {
        adminToken: { type: "http", scheme: "bearer", description: "SLOTFLOW_ADMIN_TOKEN" },
        principalJwt: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "HS256 with SLOTFLOW_JWT_SECRET; claims sub, email, roles, exp" },
      },
      schemas: {
        Problem: {
          type: "object",
          description: `RFC 9457 problem details. type is ${PROBLEM_BASE}<code>.`,
          properties: {
            type: { type: "string" },
            title: { type: "string" },
            status: { type: "integer" },
            detail: { type: "string" },
            code: { type: "string", enum: Object.keys(STATUS) },
            reason: { type: "string", description: "For 410: burned, retired, completed, cancelled, expired, dropped, run-finished" },
            expects: { type: "object", additionalProperties: { type: "string" }, description: "For invalid-body: parameter name → JSON type" },
          },
          required: ["type", "title", "status", "code"],
        },
      },
    },
  };
}
