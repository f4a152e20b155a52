/**
 * The OpenAPI 3.1 description served at `GET /api/openapi.json`: every endpoint, status and
 * problem type. Kept beside the routes so a change to one shows in the other's review.
 *
 * v0.5 (issue 41 item 4; interfaces.md "The TypeScript SDK"): also **each deployed workflow** —
 * the literal path `POST /api/workflows/<Name>/runs` (operationId `start<Name>`) with its input
 * schema, its result schema (component `<Name>.run-result`, input `<Name>.run-input`: a hyphen no
 * event name has), and each event's body with its constraints as component `<Name>.<Event>`
 * (src/sdk/schemas.ts). Every operation has an `operationId` (OPERATION_IDS) and every response
 * with a body a schema, so outside generators (openapi-typescript) give types that compile
 * against real calls; test/sdk/openapi.test.ts validates the served document.
 */
import { PROBLEM_BASE, STATUS, TITLE } from "./problems.js";
import type { RefusalCode } from "../engine/refusals.js";
import { paramsSchema, resultSchema } from "../sdk/schemas.js";
import type { WorkflowSignature } from "../sdk/types.js";

/** The operationId of every fixed operation, by `METHOD path` (issue 41 item 4); a missing one is a bug `withOperationIds` throws on. */
const OPERATION_IDS: Record<string, string> = {
  "GET /api/workflow/callback/{token}": "getResponderPage",
  "POST /api/workflow/callback/{token}": "deposit",
  "POST /api/workflow/callback/{token}/forward": "forwardLink",
  "GET /.well-known/jwks.json": "getReceiptKeys",
  "GET /api/runs/{id}/receipts": "getRunReceipts",
  "GET /api/workflows": "listWorkflows",
  "POST /api/workflows": "deployWorkflow",
  "GET /api/workflows/{name}": "getWorkflow",
  "POST /api/workflows/{name}/runs": "startRun",
  "GET /api/runs/{id}": "getRun",
  "GET /api/runs/{id}/result": "getRunResult",
  "GET /api/runs/{id}/outbox": "getRunOutbox",
  "POST /api/runs/{id}/slots/{alias}/events": "raiseEvent",
  "GET /": "getHome",
  "GET /auth/login": "signIn",
  "POST /auth/login": "devSignIn",
  "GET /auth/callback": "signInCallback",
  "POST /auth/logout": "signOut",
  "POST /auth/backchannel-logout": "backchannelLogout",
  "GET /auth/whoami": "whoami",
  "POST /api/runs/{id}/slots/{alias}/link/revoke": "revokeLink",
  "GET /api/inbox": "getInbox",
  "GET /api/runs": "listRuns",
  "POST /api/runs/{id}/cancel": "cancelRun",
  "GET /console": "getConsole",
  "GET /api/endpoints": "listEndpoints",
  "PUT /api/endpoints/{name}": "putEndpoint",
  "DELETE /api/endpoints/{name}": "deleteEndpoint",
  "POST /api/slack/interactions": "slackInteraction",
  "POST /api/endpoints/{name}/rotate": "rotateEndpointSecret",
  "POST /api/runs/{id}/outbox/{messageId}/redeliver": "redeliverMessage",
  "GET /healthz": "getHealth",
  "GET /readyz": "getReadiness",
  "GET /metrics": "getMetrics",
  "GET /admin/queues": "getQueueDashboard",
};

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;

/**
 * Sets each operation's operationId from OPERATION_IDS (throws naming an operation without one),
 * and gives every media type of a response without a schema one (text: a string; JSON: an object).
 */
function withOperationIds(paths: Record<string, Record<string, unknown>>): void {
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const op = item[method] as { operationId?: string; responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> } | undefined;
      if (!op) continue;
      if (op.operationId === undefined) {
        const id = OPERATION_IDS[`${method.toUpperCase()} ${path}`];
        if (id === undefined) throw new Error(`openapi.ts: no operationId for ${method.toUpperCase()} ${path} (add it to OPERATION_IDS)`);
        op.operationId = id;
      }
      for (const response of Object.values(op.responses ?? {})) {
        for (const [type, media] of Object.entries(response.content ?? {})) {
          media.schema ??= type.startsWith("text/") ? { type: "string" } : { type: "object" };
        }
      }
    }
  }
}

/** `POST /api/workflows/{name}/runs`' answers, shared by each workflow's own path. */
const STARTED_SCHEMA = {
  type: "object",
  required: ["id", "version", "state", "status"],
  properties: {
    id: { type: "string", format: "uuid" },
    version: { type: "integer" },
    state: { type: "string" },
    status: { type: "string", enum: ["running", "finished", "cancelled"] },
  },
};
const ACCEPTED_SCHEMA = { type: "object", required: ["id", "status"], properties: { id: { type: "string", format: "uuid" }, status: { const: "accepted" } } };
const START_REFUSALS: RefusalCode[] = ["unauthorized", "not-found", "invalid-body", "malformed-json", "unsupported-media-type", "payload-too-large", "handler-failed", "configuration-fault", "unavailable"];

/** The component name of a workflow's schema (`Order.Decided`, `Order.run-input`). */
const component = (workflow: string, name: string) => `${workflow}.${name}`;

/** Each deployed workflow's path and schemas (issue 41 item 4). */
function workflowParts(workflows: WorkflowSignature[]): { paths: Record<string, unknown>; schemas: Record<string, unknown> } {
  const paths: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = {};
  for (const sig of workflows) {
    const input = component(sig.name, "run-input");
    const result = component(sig.name, "run-result");
    schemas[input] = paramsSchema(sig, sig.input, `The input of a run of ${sig.name} (version ${sig.version ?? "?"}): its parameters by name`);
    schemas[result] = resultSchema(sig);
    for (const [event, params] of Object.entries(sig.events)) {
      schemas[component(sig.name, event)] = paramsSchema(sig, params, `The body of event ${event} of ${sig.name}: exactly its parameters by name`);
    }
    paths[`/api/workflows/${sig.name}/runs`] = {
      post: {
        operationId: `start${sig.name}`,
        summary: `Start a run of ${sig.name} (version ${sig.version ?? "?"}); its result, once finished, is ${result} (GET /api/runs/{id}/result)`,
        security: [{ adminToken: [] }],
        requestBody: { required: true, content: { "application/json": { schema: { $ref: `#/components/schemas/${input}` } } } },
        responses: responses(
          { "201": jsonOk("Started", STARTED_SCHEMA), "202": jsonOk("Queued (it will be applied)", ACCEPTED_SCHEMA) },
          START_REFUSALS,
        ),
      },
    };
  }
  return { paths, schemas };
}

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

/** Headers of every responder page (404/409/410 pages too). */
const PAGE_HEADERS = Object.fromEntries(
  [
    ["Content-Security-Policy", "default-src 'none'; script-src and style-src by a per-response nonce; connect-src 'self'; img-src/font-src 'none'; form-action 'self' (the forward form); base-uri 'none'; frame-ancestors 'none'"],
    ["Referrer-Policy", "no-referrer (the URL holds the token)"],
    ["Cache-Control", "no-store"],
    ["X-Robots-Tag", "noindex, nofollow"],
    ["X-Content-Type-Options", "nosniff"],
    ["X-Frame-Options", "DENY"],
    ["Vary", "Accept"],
  ].map(([name, description]) => [name, { description, schema: { type: "string" } }]),
);

/**
 * The document for `baseUrl`, with `workflows` (the deployed workflows' signatures, from
 * web/signatures.ts) described each on its own path and components.
 */
export function openApiDocument(baseUrl: string, workflows: WorkflowSignature[] = []) {
  const admin = [{ adminToken: [] }];
  const worker = [{ workerToken: [] }];
  const doc = {
    openapi: "3.1.0",
    info: {
      title: "slotflow",
      version: "1",
      description:
        "Workflows that wait on slots, answered by signed-in principals or through single-use callback links. " +
        "Every answer of 400 or above is application/problem+json whose status equals the status line: a path no route serves is 404 not-found, " +
        "a method a path does not take is 405 method-not-allowed with Allow, and a request the HTTP parser refuses (or an HTTP/1.1 request without Host) is 400 " +
        "(431 for header fields too large, 408 for a request that does not arrive in time) with type about:blank. " +
        "Request bodies: a request with Transfer-Encoding or Content-Length above 0 is judged on its body (null is a body, refused 422); " +
        "JSON endpoints take application/json and any application/*+json type; Content-Encoding identity, gzip, deflate and br are decoded, " +
        "any other (or a false one) is 415; strings holding U+0000 or an unpaired surrogate are 422 naming the field.",
    },
    servers: [{ url: baseUrl }],
    paths: {
      "/api/workflow/callback/{token}": {
        parameters: [
          {
            name: "token",
            in: "path",
            required: true,
            schema: { type: "string" },
            description:
              "The token of a callback link: `sfl_` + 32 random bytes (base64url, 43 characters) + a 6-character checksum (CRC-32 of the rest, 4 bytes big-endian, base64url); 53 characters. A token whose checksum does not hold is refused 404 before any lookup. Tokens minted before this format (43 base64url characters) keep working. Secret-scanner pattern: `sfl_[A-Za-z0-9_-]{49}`.",
          },
        ],
        get: {
          summary:
            "The responder page, for a client whose Accept prefers text/html to JSON (a browser): a form generated from the slot's event at the link's minting version, worded by the author. Never spends the link. Any other GET (Accept */*, JSON, none) answers 405 with Allow: POST.",
          responses: {
            "200": { description: "The form for a live link whose slot is open", headers: PAGE_HEADERS, content: { "text/html": { schema: { type: "string" } } } },
            "404": { description: "Page: the link does not work (unknown or mistyped)", content: { "text/html": { schema: { type: "string" } } } },
            "405": problem(["method-not-allowed"]),
            "409": { description: "Page: not open yet (the slot waits on After)", content: { "text/html": { schema: { type: "string" } } } },
            "410": { description: "Page: already used, replaced, or no longer works (with the reason)", content: { "text/html": { schema: { type: "string" } } } },
            "429": problem(["rate-limited"]),
            "503": problem(["unavailable"]),
          },
        },
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
          requestBody: {
            required: false,
            content: {
              "application/json": { schema: { type: "object", description: "Exactly the event's parameters by name; no body for an event without parameters. null is a body (422)." } },
              "application/*+json": { schema: { type: "object", description: "Parsed as JSON, like application/json." } },
            },
          },
          responses: {
            ...responses(
              {
                "200": jsonOk("Slot completed, link burned; `receipt` is the completion's signed receipt (compact JWS, ES256; verify it with GET /.well-known/jwks.json), the same again on a retry under the same Idempotency-Key", {
                  type: "object",
                  properties: { status: { const: "completed" }, receipt: { type: "string", description: "Compact JWS; absent only when the service signs no receipts (production without SLOTFLOW_RECEIPT_KEYS)" } },
                }),
                "202": jsonOk(
                  "Queued, and will be applied (or refused under the run lock, changing nothing): outages of the database or Redis do not lose it; retry with the same Idempotency-Key to learn the outcome",
                  { type: "object", properties: { status: { const: "accepted" } } },
                ),
              },
              ["malformed-json", "invalid-idempotency-key", "idempotency-key-reused", "link-not-found", "method-not-allowed", "slot-not-open", "requires-failed", "link-burned", "link-retired", "link-dead", "payload-too-large", "unsupported-media-type", "invalid-body", "rate-limited", "handler-failed", "configuration-fault", "unavailable"],
            ),
            "503": {
              ...problem(["unavailable"]),
              description: "`unavailable`: not known to be applied (the deposit may have been queued just before the failure); retry with the same Idempotency-Key and body to learn the outcome",
            },
          },
        },
      },
      "/api/workflow/callback/{token}/forward": {
        parameters: [{ name: "token", in: "path", required: true, schema: { type: "string" }, description: "The token of a callback link (as for a deposit)." }],
        post: {
          summary:
            "Pass the link on (a slot with `Forwardable: true`; no sign-in, the token is the credential): the link is retired (then 410 link-retired, reason forwarded), a new link for the same slot is mailed to `email` with the slot's title; at most 5 forwards per slot. The responder page's form may post it as application/x-www-form-urlencoded (`email`, `csrf`, same origin): it then answers 303 to the link's page, or an HTML page with the refusal's status.",
          requestBody: {
            required: true,
            content: {
              "application/json": { schema: { type: "object", required: ["email"], additionalProperties: false, properties: { email: { type: "string", format: "email" } } } },
              "application/x-www-form-urlencoded": { schema: { type: "object", properties: { email: { type: "string" }, csrf: { type: "string" } } } },
            },
          },
          responses: responses(
            {
              "200": jsonOk("Forwarded", { type: "object", properties: { status: { const: "forwarded" } } }),
              "202": jsonOk("Queued, and will be applied (or refused, changing nothing)", { type: "object", properties: { status: { const: "accepted" } } }),
              "303": { description: "The page's form: forwarded; back to the link's page (which now says it was passed on)" },
            },
            ["link-not-found", "link-burned", "link-retired", "link-dead", "invalid-body", "not-forwardable", "forward-limit", "malformed-json", "unsupported-media-type", "payload-too-large", "method-not-allowed", "rate-limited", "handler-failed", "unavailable"],
          ),
        },
      },
      "/.well-known/jwks.json": {
        get: {
          summary: "The public keys receipts are signed with (JWK Set; EC P-256, ES256), newest first; Cache-Control: public, max-age=300",
          responses: { "200": { description: "The key set", content: { "application/jwk-set+json": { schema: { type: "object", properties: { keys: { type: "array", items: { type: "object" } } } } } } } },
        },
      },
      "/api/runs/{id}/receipts": {
        parameters: [{ name: "id", in: "path", required: true, schema: { type: "string", format: "uuid" } }],
        get: {
          summary: "The receipts of a run's completed slots, oldest completion first: {runId, receipts: [{alias, element, state, visit, completedAt, answeredBy, receipt}]}",
          security: admin,
          responses: responses({ "200": jsonOk("The receipts") }, ["unauthorized", "not-found", "unavailable"]),
        },
      },
      "/api/workflows": {
        get: {
          summary:
            "Every deployed workflow's current version and what callers see of it (v0.5, for `slotflow types --url`): {workflows: [{name, currentVersion, signature: {name, version, input, entities, events, result, terminalStates, slots}}]}; never a source or compiled form",
          security: admin,
          responses: responses(
            {
              "200": jsonOk("The deployed workflows", {
                type: "object",
                required: ["workflows"],
                properties: {
                  workflows: {
                    type: "array",
                    items: { type: "object", required: ["name", "currentVersion", "signature"], properties: { name: { type: "string" }, currentVersion: { type: "integer" }, signature: { type: "object" } } },
                  },
                },
              }),
            },
            ["unauthorized", "unavailable"],
          ),
        },
        post: {
          summary:
            "Compile and deploy a .flow source (at most SLOTFLOW_MAX_SOURCE_BYTES, else 413; at most 100 diagnostics, then FLOW008 counting the rest)",
          security: admin,
          requestBody: { required: true, content: { "text/plain": { schema: { type: "string" } } } },
          responses: responses(
            { "201": jsonOk("Deployed as a new version"), "200": jsonOk("Unchanged: same source as the current version") },
            ["unauthorized", "invalid-workflow", "version-conflict", "unsupported-media-type", "payload-too-large", "method-not-allowed", "configuration-fault", "unavailable"],
          ),
        },
      },
      "/api/workflows/{name}": {
        parameters: [{ name: "name", in: "path", required: true, schema: { type: "string", pattern: "^(slotflow\\.)?[A-Za-z_][A-Za-z0-9_]*$" }, description: "A workflow name (an identifier, or `slotflow.` and an identifier for a built-in); any other name is 404." }],
        get: { summary: "Versions and the current source", security: admin, responses: responses({ "200": jsonOk("The workflow") }, ["unauthorized", "not-found"]) },
      },
      "/api/workflows/{name}/runs": {
        parameters: [{ name: "name", in: "path", required: true, schema: { type: "string", pattern: "^(slotflow\\.)?[A-Za-z_][A-Za-z0-9_]*$" }, description: "A workflow name (an identifier, or `slotflow.` and an identifier for a built-in); any other name is 404." }],
        post: {
          summary:
            "Start a run; the body is the run's input (the workflow's parameters by name), checked at every depth: 422 invalid-body with errors [{name: path, problem}]; limits SLOTFLOW_MAX_INPUT_BYTES (413), SLOTFLOW_MAX_INPUT_DEPTH and SLOTFLOW_MAX_FANOUT (422)",
          security: admin,
          requestBody: { required: true, content: { "application/json": { schema: { type: "object" } } } },
          responses: responses(
            { "201": jsonOk("Started: {id, version, state, status}", STARTED_SCHEMA), "202": jsonOk("Queued: {id, status: accepted}", ACCEPTED_SCHEMA) },
            START_REFUSALS,
          ),
        },
      },
      "/api/runs/{id}": {
        parameters: [{ name: "id", in: "path", required: true, schema: { type: "string", format: "uuid" } }],
        get: {
          summary:
            "A run: {id, workflow, version, state, status, entities, slots, timers, incidents, history}; never a token. timers: the scheduled timers of the current state, [{index, schedule, next}]. Each slot shows a fanned-out slot's element value (elementValue) beside its index (element); answeredBy: who completed it ({via: \"link\", element?, recipient?, forwardedBy?}, {via: \"principal\", id, email} or {via: \"slack\", id, email}; null while not completed), also on the history's event entries; history records every end of a link (link-retired, link-burned, link-dead with reason)",
          security: admin,
          responses: responses(
            {
              "200": jsonOk("The run", {
                type: "object",
                required: ["id", "workflow", "version", "state", "status"],
                properties: {
                  id: { type: "string", format: "uuid" },
                  workflow: { type: "string" },
                  version: { type: "integer" },
                  state: { type: "string" },
                  status: { type: "string", enum: ["running", "finished", "cancelled"] },
                  entities: { type: "object" },
                  slots: { type: "array", items: { type: "object" } },
                  timers: { type: "array", items: { type: "object" } },
                  incidents: { type: "array", items: { type: "object" } },
                  history: { type: "array", items: { type: "object" } },
                },
              }),
            },
            ["unauthorized", "not-found"],
          ),
        },
      },
      "/api/runs/{id}/result": {
        parameters: [
          { name: "id", in: "path", required: true, schema: { type: "string", format: "uuid" } },
          { name: "waitSeconds", in: "query", required: false, schema: { type: "integer", minimum: 0, maximum: 60, default: 0 } },
        ],
        get: {
          summary:
            "The run's result (v0.5): 200 {id, status, state, result} once the run has ended (finished or cancelled; result is {state, …fields of the last result { … }} when finished, null when cancelled); while it runs, waits up to waitSeconds for it to end, then 202 {id, status: \"running\"}. Waiters cost no worker and no database polling",
          security: admin,
          responses: responses(
            {
              "200": jsonOk("The ended run and its result (each workflow's result schema: the component <Name>.run-result)", {
                type: "object",
                required: ["id", "status", "state", "result"],
                properties: {
                  id: { type: "string", format: "uuid" },
                  status: { type: "string", enum: ["finished", "cancelled"] },
                  state: { type: "string" },
                  result: { type: ["object", "null"], required: ["state"], properties: { state: { type: "string" } }, additionalProperties: true },
                },
              }),
              "202": jsonOk("Still running", { type: "object", required: ["id", "status"], properties: { id: { type: "string", format: "uuid" }, status: { const: "running" } } }),
            },
            ["invalid-query", "unauthorized", "not-found"],
          ),
        },
      },
      // v0.5 SDK (issue 41 item 3): the task workers' protocol (src/web/tasks-api.ts; docs/sdk.md "Task workers")
      "/api/tasks/poll": {
        post: {
          operationId: "pollTasks",
          summary: "Claims up to max (1-100) ready tasks of types, waiting up to waitSeconds (0-60) for one: {tasks: [{id, type, runId, input, attempt, lockToken, lockExpiresAt}]} (empty when the wait ran out); each held by this caller alone until lockExpiresAt. Waits on Redis, not the database",
          security: worker,
          requestBody: { required: true, content: { "application/json": { schema: { type: "object", required: ["types"], properties: { types: { type: "array", items: { type: "string" }, minItems: 1, maxItems: 50 }, max: { type: "integer", minimum: 1, maximum: 100, default: 1 }, waitSeconds: { type: "integer", minimum: 0, maximum: 60, default: 0 } } } } } },
          responses: responses({ "200": jsonOk("The tasks claimed", { type: "object", required: ["tasks"], properties: { tasks: { type: "array", items: { type: "object" } } } }) }, ["invalid-body", "malformed-json", "unsupported-media-type", "payload-too-large", "unauthorized", "unavailable"]),
        },
      },
      "/api/tasks/{id}/heartbeat": {
        parameters: [{ name: "id", in: "path", required: true, schema: { type: "string", format: "uuid" } }],
        post: {
          operationId: "heartbeatTask",
          summary: "Extends the lease by the call's Timeout: {lockExpiresAt}",
          security: worker,
          requestBody: { required: true, content: { "application/json": { schema: { type: "object", required: ["lockToken"], properties: { lockToken: { type: "string" } } } } } },
          responses: responses({ "200": jsonOk("The lease", { type: "object", properties: { lockExpiresAt: { type: "string", format: "date-time" } } }) }, ["invalid-body", "malformed-json", "unauthorized", "task-lock-lost", "unavailable"]),
        },
      },
      "/api/tasks/{id}/complete": {
        parameters: [{ name: "id", in: "path", required: true, schema: { type: "string", format: "uuid" } }],
        post: {
          operationId: "completeTask",
          summary: "The answer completes the call, once: checked against the returns event as a link's body (422), applied under the run lock: {status: completed, run}; 202 {status: accepted} when slower than SLOTFLOW_DEPOSIT_WAIT_MS",
          security: worker,
          requestBody: { required: true, content: { "application/json": { schema: { type: "object", required: ["lockToken"], properties: { lockToken: { type: "string" }, answer: { type: "object" } } } } } },
          responses: responses({ "200": jsonOk("Completed: {status, run}"), "202": jsonOk("Accepted") }, ["invalid-body", "malformed-json", "payload-too-large", "unauthorized", "task-lock-lost", "unavailable"]),
        },
      },
      "/api/tasks/{id}/fail": {
        parameters: [{ name: "id", in: "path", required: true, schema: { type: "string", format: "uuid" } }],
        post: {
          operationId: "failTask",
          summary: "A failed attempt: retried while attempts remain and retry is not false ({status: retried, run}); else the call fails ({status: failed, run}: on x.failed)",
          security: worker,
          requestBody: { required: true, content: { "application/json": { schema: { type: "object", required: ["lockToken", "error"], properties: { lockToken: { type: "string" }, error: { type: "string" }, retry: { type: "boolean", default: true } } } } } },
          responses: responses({ "200": jsonOk("Retried or failed: {status, run}"), "202": jsonOk("Accepted") }, ["invalid-body", "malformed-json", "unauthorized", "task-lock-lost", "unavailable"]),
        },
      },
      "/api/runs/{id}/outbox": {
        parameters: [{ name: "id", in: "path", required: true, schema: { type: "string", format: "uuid" } }],
        get: { summary: "Messages the run queued; bodies only while undelivered, tokens redacted. Emails first, then deliveries of send webhook / send message ({id, channel, endpoint, webhookId, status, attempts, lastStatusCode, lastLatencyMs, lastError, nextAttemptAt, endReason, createdAt, deliveredAt, attemptLog}; never their body)", security: admin, responses: responses({ "200": jsonOk("Messages", { type: "array", items: { type: "object" } }) }, ["unauthorized", "not-found"]) },
      },
      "/api/runs/{id}/slots/{alias}/events": {
        parameters: [
          { name: "id", in: "path", required: true, schema: { type: "string", format: "uuid" } },
          { name: "alias", in: "path", required: true, schema: { type: "string" } },
          { name: "element", in: "query", required: false, schema: { type: "integer", minimum: 0 }, description: "Element of a fanned-out slot" },
        ],
        post: {
          summary: "The ordinary raise path: a signed-in principal raises the slot's event",
          security: [{ principalJwt: [] }, { issuerJwt: [] }, { session: [] }],
          requestBody: { required: false, content: { "application/json": { schema: { type: "object" } } } },
          responses: responses(
            { "200": jsonOk("Slot completed: {status, run}"), "202": jsonOk("Queued") },
            ["unauthorized", "csrf-refused", "not-a-candidate", "authorize-denied", "already-answered-by-you", "not-found", "slot-not-open", "requires-failed", "slot-closed", "invalid-body", "malformed-json", "unsupported-media-type", "payload-too-large", "handler-failed", "configuration-fault", "unavailable"],
          ),
        },
      },
      "/": {
        get: {
          summary: "The home page (v0.5): a browser that is signed in gets 303 to /inbox, one that is not a small page with a Sign in link (HTML); any other client {name, signIn, inbox, openapi}",
          responses: responses({ "200": { description: "The home page (HTML), or where to go next (JSON)", content: { "text/html": {}, "application/json": {} } }, "303": { description: "Signed in: to /inbox" } }, ["unauthorized", "unavailable"]),
        },
      },
      "/auth/login": {
        get: {
          summary: "Sign-in: 302 to SLOTFLOW_OIDC_ISSUER's authorization endpoint (code, PKCE S256, state, nonce); without an issuer and with SLOTFLOW_DEV_SIGN_IN=1 the development sign-in page; otherwise 404 without an issuer",
          parameters: [{ name: "returnTo", in: "query", required: false, schema: { type: "string" }, description: "A path on this site to land on (else /inbox)" }],
          responses: responses({ "200": { description: "The development sign-in page (HTML)", content: { "text/html": { schema: { type: "string" } } } }, "302": { description: "To the issuer" } }, ["not-found", "unavailable"]),
        },
        post: {
          summary: "The development sign-in form (id, email, roles, csrf, returnTo): 303 to returnTo with a development session; 404 unless SLOTFLOW_DEV_SIGN_IN=1 (and no issuer)",
          requestBody: { required: true, content: { "application/x-www-form-urlencoded": { schema: { type: "object" } } } },
          responses: responses({ "303": { description: "Signed in" }, "422": { description: "The page again with the error (HTML)", content: { "text/html": { schema: { type: "string" } } } } }, ["csrf-refused", "not-found"]),
        },
      },
      "/auth/callback": {
        get: {
          summary: "Completes the issuer's sign-in: session cookie slotflow_session (HttpOnly, SameSite=Lax, Secure with an https BASE_URL, 12 h), 303 to returnTo",
          responses: responses({ "303": { description: "Signed in" } }, ["sign-in-failed", "not-found", "unavailable"]),
        },
      },
      "/auth/logout": {
        post: {
          summary: "Ends the session (CSRF token as the csrf form field or X-CSRF-Token): 303 to the issuer's end_session_endpoint when it has one, else /",
          security: [{ session: [] }],
          responses: responses({ "303": { description: "Signed out" } }, ["csrf-refused"]),
        },
      },
      "/auth/backchannel-logout": {
        post: {
          summary:
            "OpenID Connect Back-Channel Logout 1.0 (v0.5): the issuer posts a logout token (form field logout_token; no cookie, no CSRF); a valid one (signed by the issuer's JWKS, iss, aud = the client id, fresh iat, jti, the back-channel logout event, no nonce, sid and/or sub) ends every session it names at once: 200, Cache-Control no-store; 400 {\"error\":\"invalid_request\"} otherwise; 404 without SLOTFLOW_OIDC_ISSUER",
          requestBody: { required: true, content: { "application/x-www-form-urlencoded": { schema: { type: "object", required: ["logout_token"], properties: { logout_token: { type: "string" } } } } } },
          responses: responses(
            {
              "200": { description: "The sessions the token names have ended (empty body)" },
              "400": { description: "A missing or invalid logout token: {\"error\": \"invalid_request\"}; nothing ended", content: { "application/json": { schema: { type: "object", properties: { error: { type: "string", enum: ["invalid_request"] } } } } } },
            },
            ["not-found", "unavailable"],
          ),
        },
      },
      "/auth/whoami": {
        get: {
          summary: "Who is signed in: {id, email, roles, via, development, csrf, expiresAt, zone} (zone: the session's IANA time zone, null without one)",
          security: [{ session: [] }, { principalJwt: [] }, { issuerJwt: [] }],
          responses: responses({ "200": jsonOk("The principal") }, ["unauthorized", "unavailable"]),
        },
      },
      "/api/runs/{id}/slots/{alias}/link/revoke": {
        parameters: [
          { name: "id", in: "path", required: true, schema: { type: "string", format: "uuid" } },
          { name: "alias", in: "path", required: true, schema: { type: "string" } },
          { name: "element", in: "query", required: false, schema: { type: "integer", minimum: 0 }, description: "One element of a fanned-out slot (v0.4)" },
        ],
        post: {
          summary:
            "An operator ends the slot's live callback link; the run and the slot are untouched and the workflow may mint a new one. The link then answers 410 link-dead with reason revoked. ?element=N revokes one element's own link of a fanned-out slot (v0.4, minted in each { … }).",
          security: admin,
          responses: responses(
            {
              "200": jsonOk("Revoked", { type: "object", properties: { revoked: { const: true } } }),
              "202": jsonOk("Queued; applied later than the web process waited", { type: "object", properties: { status: { const: "accepted" } } }),
            },
            ["unauthorized", "not-found", "unavailable"],
          ),
        },
      },
      "/api/inbox": {
        get: {
          summary:
            "The signed-in principal's inbox (v0.4): the open and waiting slots of running runs whose Candidates name it by user(id) or a role it holds, each once, keyset-paginated. " +
            "title is the heading the slot's page shows; waitingOn the After aliases not yet completed; taskUrl {BASE_URL}/inbox/tasks/{runId}/{alias}[?element=N]. counts are exact unless capped (then total is the cap and open / waiting are null). " +
            "view=done (v0.5, issue 43 item 4): the slots the principal answered itself in the last 30 days, newest first: {tasks: [{…, status: completed, answeredAt, answer}], nextCursor}.",
          security: [{ principalJwt: [] }],
          parameters: [
            { name: "workflow", in: "query", required: false, schema: { type: "string" } },
            { name: "order", in: "query", required: false, schema: { type: "string", enum: ["newest", "deadline"], default: "newest" } },
            { name: "limit", in: "query", required: false, schema: { type: "integer", minimum: 1, maximum: 100, default: 25 } },
            { name: "cursor", in: "query", required: false, schema: { type: "string" }, description: "nextCursor of the previous page, with the same workflow, order and view" },
            {
              name: "view",
              in: "query",
              required: false,
              schema: { type: "string", enum: ["open", "done"], default: "open" },
              description: "open: the tasks waiting on the principal; done (v0.5, issue 43): the slots it answered in the last 30 days, newest first, with answeredAt and answer (order must be newest)",
            },
          ],
          responses: responses(
            {
              "200": jsonOk("A page of tasks (view=open), or of the answers given in the last 30 days (view=done)", { oneOf: [{
                type: "object",
                required: ["tasks", "nextCursor", "counts"],
                properties: {
                  tasks: {
                    type: "array",
                    items: {
                      type: "object",
                      required: ["runId", "workflow", "version", "state", "alias", "element", "event", "params", "title", "status", "openedAt", "deadline", "waitingOn", "taskUrl"],
                      properties: {
                        runId: { type: "string", format: "uuid" },
                        workflow: { type: "string" },
                        version: { type: "integer" },
                        state: { type: "string" },
                        alias: { type: "string" },
                        element: { type: ["integer", "null"] },
                        event: { type: "string" },
                        params: { type: "array", items: { type: "object", properties: { name: { type: "string" }, type: { type: "string" }, optional: { type: "boolean" } } } },
                        title: { type: "string" },
                        status: { type: "string", enum: ["open", "waiting"] },
                        openedAt: { type: ["string", "null"], format: "date-time" },
                        deadline: { type: ["string", "null"], format: "date-time" },
                        waitingOn: { type: "array", items: { type: "string" } },
                        taskUrl: { type: "string", format: "uri" },
                      },
                    },
                  },
                  nextCursor: { type: ["string", "null"] },
                  counts: {
                    type: "object",
                    properties: { open: { type: ["integer", "null"] }, waiting: { type: ["integer", "null"] }, total: { type: "integer" }, capped: { type: "boolean" } },
                  },
                },
              }, {
                type: "object",
                required: ["tasks", "nextCursor"],
                properties: {
                  tasks: {
                    type: "array",
                    items: {
                      type: "object",
                      required: ["runId", "workflow", "version", "state", "alias", "element", "event", "title", "status", "answeredAt", "answer", "taskUrl"],
                      properties: {
                        runId: { type: "string", format: "uuid" },
                        workflow: { type: "string" },
                        version: { type: "integer" },
                        state: { type: "string" },
                        alias: { type: "string" },
                        element: { type: ["integer", "null"] },
                        event: { type: "string" },
                        title: { type: "string" },
                        status: { const: "completed" },
                        answeredAt: { type: "string", format: "date-time" },
                        answer: { type: "object", description: "the values answered (the event's arguments, JSON form)" },
                        taskUrl: { type: "string", format: "uri" },
                      },
                    },
                  },
                  nextCursor: { type: ["string", "null"] },
                },
              }] }),
            },
            ["unauthorized", "invalid-query", "unavailable"],
          ),
        },
      },
      "/api/runs": {
        get: {
          summary:
            "Runs for operators (issue 23), newest first, keyset-paginated: {runs: [{id, workflow, version, state, status, createdAt, updatedAt, endedAt, waiting: [{alias, element, status, openedAt, deadline, link}]}], nextCursor}. " +
            "waiting lists each open or waiting slot; openedAt is since when an open slot waits (null while it waits on its After predecessors); link is live, burned, retired, dead or none, never a token. nextCursor is null on the last page; a page never repeats or skips a run created while paging.",
          security: admin,
          parameters: [
            { name: "workflow", in: "query", required: false, schema: { type: "string" } },
            { name: "version", in: "query", required: false, schema: { type: "integer", minimum: 1 } },
            { name: "status", in: "query", required: false, schema: { type: "string", enum: ["running", "finished", "cancelled"] } },
            { name: "state", in: "query", required: false, schema: { type: "string" }, description: "The run's current state" },
            { name: "waiting", in: "query", required: false, schema: { type: "string" }, description: "A slot alias: runs with an open or waiting slot of that alias" },
            { name: "parent", in: "query", required: false, schema: { type: "string", format: "uuid" }, description: "A run id: the runs that run started through `call workflow` (v0.5 child runs)" },
            { name: "createdAfter", in: "query", required: false, schema: { type: "string", format: "date-time" }, description: "Exclusive" },
            { name: "createdBefore", in: "query", required: false, schema: { type: "string", format: "date-time" }, description: "Exclusive" },
            { name: "limit", in: "query", required: false, schema: { type: "integer", minimum: 1, maximum: 200, default: 50 } },
            { name: "cursor", in: "query", required: false, schema: { type: "string" }, description: "nextCursor of the previous page" },
          ],
          responses: responses(
            {
              "200": jsonOk("A page of runs", {
                type: "object",
                required: ["runs", "nextCursor"],
                properties: {
                  runs: { type: "array", items: { $ref: "#/components/schemas/RunListItem" } },
                  nextCursor: { type: ["string", "null"] },
                },
              }),
            },
            ["unauthorized", "invalid-query", "unavailable"],
          ),
        },
      },
      "/api/runs/{id}/cancel": {
        parameters: [{ name: "id", in: "path", required: true, schema: { type: "string", format: "uuid" } }],
        post: {
          summary:
            "An operator ends a running run, applied by a worker under the run lock before answering: status cancelled, every open or waiting slot cancelled, every live link dead with reason run-cancelled, unsent messages withdrawn, history run-cancelled with the reason and the actor. " +
            "A deposit racing the cancel on the same run: one wins; the other gets 409 run-finished or 410 link-dead (reason run-cancelled).",
          security: admin,
          requestBody: {
            required: true,
            content: { "application/json": { schema: { type: "object", required: ["reason"], additionalProperties: false, properties: { reason: { type: "string", minLength: 1, maxLength: 500 } } } } },
          },
          responses: responses(
            {
              "200": jsonOk("Cancelled", { type: "object", properties: { id: { type: "string", format: "uuid" }, status: { const: "cancelled" } } }),
              "202": jsonOk("Queued; applied later than the web process waited", { type: "object", properties: { id: { type: "string" }, status: { const: "accepted" } } }),
            },
            ["unauthorized", "not-found", "run-finished", "invalid-body", "malformed-json", "unsupported-media-type", "payload-too-large", "unavailable"],
          ),
        },
      },
      "/console": {
        get: {
          summary:
            "The operators' console (HTML, server-rendered): redirects to /console/runs; also /console/runs, /console/runs/{id}, /console/workflows/{name}. " +
            "HTTP Basic: any user name; SLOTFLOW_ADMIN_TOKEN (operator) or SLOTFLOW_VIEWER_TOKEN (viewer, read-only: 403 on any POST). Every POST carries a CSRF token.",
          security: [{ consoleBasic: [] }],
          responses: { "303": { description: "To /console/runs" }, "401": { description: "Sign in (WWW-Authenticate: Basic): a page", content: { "text/html": { schema: { type: "string" } } } } },
        },
      },
      // --- delivering links through other channels (issue 18; src/web/endpoints.ts) ---
      "/api/endpoints": {
        get: {
          summary: "Named delivery endpoints: [{name, kind, host, createdAt, failingSince, disabledAt, disabledReason}] — never a URL or a secret",
          security: admin,
          responses: responses({ "200": jsonOk("Endpoints", { type: "array", items: { $ref: "#/components/schemas/Endpoint" } }) }, ["unauthorized", "unavailable"]),
        },
      },
      "/api/endpoints/{name}": {
        parameters: [{ name: "name", in: "path", required: true, schema: { type: "string", pattern: "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$" } }],
        put: {
          summary:
            "Creates or updates an endpoint (kind webhook, slack or teams; url https://, or http:// only with SLOTFLOW_ENDPOINTS_ALLOW_PRIVATE=1). A new webhook endpoint's signing secret (whsec_…) is returned once. An update keeps the secret and re-enables a disabled endpoint.",
          security: admin,
          requestBody: {
            required: true,
            content: {
              "application/json": {
                schema: {
                  oneOf: [
                    { type: "object", required: ["kind", "url"], additionalProperties: false, properties: { kind: { enum: ["webhook", "slack", "teams"] }, url: { type: "string", format: "uri", maxLength: 2048 } } },
                    {
                      type: "object",
                      description: "A Slack app (v0.4, answers inside Slack): messages posted with chat.postMessage; botToken and signingSecret sealed at rest, never shown again",
                      required: ["kind", "botToken", "signingSecret", "channel"],
                      additionalProperties: false,
                      properties: {
                        kind: { const: "slack-app" },
                        botToken: { type: "string", pattern: "^xoxb-[A-Za-z0-9-]{1,250}$" },
                        signingSecret: { type: "string", pattern: "^[A-Za-z0-9]{8,128}$" },
                        channel: { type: "string", pattern: "^[CGD][A-Z0-9]{2,30}$" },
                        answerAs: { type: "object", additionalProperties: false, required: ["roles"], properties: { roles: { type: "array", maxItems: 50, items: { type: "string", minLength: 1, maxLength: 100 } } } },
                        allowUsers: { type: "array", maxItems: 1000, items: { type: "string", pattern: "^[UW][A-Z0-9]{2,30}$" } },
                      },
                    },
                  ],
                },
              },
            },
          },
          responses: responses(
            {
              "201": jsonOk("Created: {name, kind, url, secret} (secret null for chat kinds)"),
              "200": jsonOk("Updated: {name, kind, url} (no secret); slack-app: {name, kind, host, channel, answerAs, allowUsers, botToken: \"xoxb-…\", signingSecret: \"…\"} (201 or 200)"),
            },
            ["unauthorized", "not-found", "invalid-body", "malformed-json", "unsupported-media-type", "payload-too-large", "unavailable"],
          ),
        },
        delete: { summary: "Deletes the endpoint; deliveries queued for it then fail", security: admin, responses: responses({ "204": { description: "Deleted" } }, ["unauthorized", "not-found", "unavailable"]) },
      },
      "/api/slack/interactions": {
        post: {
          summary:
            "Slack's interactivity Request URL (v0.4, answers inside Slack): application/x-www-form-urlencoded with a payload; X-Slack-Signature verified (v0= HMAC-SHA256 of v0:{timestamp}:{raw body} with the app's signing secret, timestamp within 5 minutes, replays refused); answers 200 within 3 s with the answer queued",
          requestBody: { required: true, content: { "application/x-www-form-urlencoded": { schema: { type: "object", required: ["payload"], properties: { payload: { type: "string" } } } } } },
          responses: responses(
            { "200": { description: "Taken (empty), or a modal's errors: {response_action: \"errors\", errors}", content: { "application/json": { schema: { type: "object", properties: { response_action: { const: "errors" }, errors: { type: "object" } } } } } } },
            ["unauthorized", "payload-too-large"],
          ),
        },
      },
      "/api/endpoints/{name}/rotate": {
        parameters: [{ name: "name", in: "path", required: true, schema: { type: "string" } }],
        post: {
          summary: "A new signing secret, returned once; for 24 h deliveries are signed with the new and the previous secret (two v1 signatures)",
          security: admin,
          responses: responses({ "200": jsonOk("{name, secret, previousSecretValidUntil}") }, ["unauthorized", "not-found", "not-a-webhook", "unavailable"]),
        },
      },
      "/api/runs/{id}/outbox/{messageId}/redeliver": {
        parameters: [
          { name: "id", in: "path", required: true, schema: { type: "string", format: "uuid" } },
          { name: "messageId", in: "path", required: true, schema: { type: "string", format: "uuid" }, description: "The id of a send webhook / send message delivery in the run's outbox" },
        ],
        post: {
          summary: "Sends a delivered or failed message again: the same sealed message, the same webhook-id, attempts counted afresh; a send webhook whatever its links (v0.5: a webhook is data), a send message refused once the link it carries is no longer live",
          security: admin,
          responses: responses({ "202": jsonOk("Queued: {id, status: pending}") }, ["unauthorized", "not-found", "link-not-live", "unavailable"]),
        },
      },
      "/healthz": { get: { summary: "Liveness", responses: { "200": jsonOk("Alive") } } },
      "/readyz": { get: { summary: "Readiness: database and Redis reachable", responses: { "200": jsonOk("Ready"), "503": jsonOk("Not ready, or {status: stopping} while shutting down") } } },
      "/metrics": { get: { summary: "Prometheus metrics (docs/operations.md lists them)", responses: { "200": { description: "Prometheus text format", content: { "text/plain": {} } } } } },
      "/admin/queues": {
        get: {
          summary: "The queue dashboard (Bull Board): commands, mail and sweep queues. HTTP Basic: any user name, the admin token as password",
          security: [{ dashboardBasic: [] }, admin[0]],
          responses: responses({ "200": { description: "The dashboard page", content: { "text/html": {} } } }, ["unauthorized"]),
        },
      },
    },
    components: {
      securitySchemes: {
        adminToken: { type: "http", scheme: "bearer", description: "SLOTFLOW_ADMIN_TOKEN" },
        workerToken: { type: "http", scheme: "bearer", description: "One of SLOTFLOW_WORKER_TOKEN's comma-separated tokens (outside production, the admin token when it is unset)" },
        dashboardBasic: { type: "http", scheme: "basic", description: "Any user name; SLOTFLOW_ADMIN_TOKEN as the password" },
        consoleBasic: { type: "http", scheme: "basic", description: "Any user name; SLOTFLOW_ADMIN_TOKEN (operator) or SLOTFLOW_VIEWER_TOKEN (viewer) as the password" },
        principalJwt: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "HS256 with SLOTFLOW_JWT_SECRET; claims sub and exp (required; a lifetime of at most SLOTFLOW_JWT_MAX_TTL_SECONDS), email, roles, and aud / iss when SLOTFLOW_JWT_AUDIENCE / SLOTFLOW_JWT_ISSUER are set" },
        issuerJwt: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "Signed by SLOTFLOW_OIDC_ISSUER (a key of its JWKS, an asymmetric algorithm); iss, aud = SLOTFLOW_OIDC_AUDIENCE, exp, nbf checked; roles from SLOTFLOW_OIDC_ROLES_CLAIM" },
        session: { type: "apiKey", in: "cookie", name: "slotflow_session", description: "A browser signed in at /auth/login; state-changing requests also carry the session's CSRF token" },
      },
      schemas: {
        RunListItem: {
          type: "object",
          required: ["id", "workflow", "version", "state", "status", "createdAt", "updatedAt", "endedAt", "waiting"],
          properties: {
            id: { type: "string", format: "uuid" },
            workflow: { type: "string" },
            version: { type: "integer" },
            state: { type: "string" },
            status: { type: "string", enum: ["running", "finished", "cancelled"] },
            createdAt: { type: "string", format: "date-time" },
            updatedAt: { type: "string", format: "date-time" },
            endedAt: { type: ["string", "null"], format: "date-time" },
            waiting: {
              type: "array",
              items: {
                type: "object",
                required: ["alias", "element", "status", "openedAt", "deadline", "link"],
                properties: {
                  alias: { type: "string" },
                  element: { type: ["integer", "null"] },
                  status: { type: "string", enum: ["open", "waiting"] },
                  openedAt: { type: ["string", "null"], format: "date-time", description: "When the slot opened: since when the run waits on it (issue 23); null while it is waiting on its After predecessors" },
                  deadline: { type: ["string", "null"], format: "date-time" },
                  link: { type: "string", enum: ["live", "burned", "retired", "dead", "none"] },
                },
              },
            },
          },
        },
        Endpoint: {
          type: "object",
          properties: {
            name: { type: "string" },
            kind: { enum: ["webhook", "slack", "teams", "slack-app"] },
            host: { type: "string", description: "host[:port] of the URL; the URL itself is a credential and never shown" },
            createdAt: { type: "string", format: "date-time" },
            failingSince: { type: ["string", "null"], format: "date-time" },
            disabledAt: { type: ["string", "null"], format: "date-time", description: "set when it answered 410 Gone or failed for 5 days; a PUT re-enables it" },
            disabledReason: { type: ["string", "null"] },
            slack: {
              type: "object",
              description: "slack-app only: {channel, answerAs, allowUsers, botToken: \"xoxb-…\", signingSecret: \"…\"} — the secrets redacted",
            },
          },
        },
        Problem: {
          type: "object",
          description: `RFC 9457 problem details. type is ${PROBLEM_BASE}<code>, or about:blank (no code) for a request refused before any route is known.`,
          properties: {
            type: { type: "string" },
            title: { type: "string" },
            status: { type: "integer" },
            detail: { type: "string" },
            code: { type: "string", enum: Object.keys(STATUS) },
            reason: { type: "string", description: "For 410: burned, retired, completed, cancelled, expired, dropped, run-finished, run-cancelled, revoked, quorum-reached" },
            parameter: { type: "string", description: "For invalid-query: the query parameter refused" },
            expects: { type: "object", additionalProperties: { type: "string" }, description: "For invalid-body: parameter name → JSON type, followed by the parameter's constraints as the workflow writes them when it has any (v0.5: \"number @min(0)\")" },
            wordings: { type: "object", additionalProperties: { type: "string" }, description: "For requires-failed, when the author gave `Requires … else` language variants: BCP 47 tag → the refusal in that language (detail is the default wording)" },
          },
          required: ["type", "title", "status"],
        },
      },
    },
  };
  const parts = workflowParts(workflows);
  const paths = { ...doc.paths, ...parts.paths } as Record<string, Record<string, unknown>>;
  withOperationIds(paths);
  return { ...doc, paths, components: { ...doc.components, schemas: { ...doc.components.schemas, ...parts.schemas } } };
}
