/**
 * The layer rules of src/ (issue 34 item 2; docs/architecture.md "Layers"), checked by
 * dependency-cruiser in CI (`npm run lint:deps`). TypeScript is parsed with swc (dependency-cruiser
 * cannot use TypeScript 7's compiler), type-only imports included: a type-only circle is still a
 * circle a reader has to untangle.
 */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "No import circle anywhere in src/ (style.md 12–13: the step below the lifecycles, not beside them).",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "lang-imports-no-engine",
      severity: "error",
      comment: "The language (parser, checker, compiler) knows nothing of the engine, the web, the CLI or the queues.",
      from: { path: "^src/lang/" },
      to: { path: "^src/(engine|web|cli|queue|outbox|operators|endpoints|authoring|testing)/" },
    },
    {
      name: "lang-runtime-inside-lang",
      severity: "error",
      comment:
        "The language's runtime (src/lang/runtime: values, the interpreter) imports nothing of src/ outside the language and the JSON helpers: the engine hands it a World (issue 39 item 3, src/lang/README.md).",
      from: { path: "^src/lang/runtime/" },
      to: { path: "^src/", pathNot: "^src/(lang|json)/" },
    },
    {
      name: "lang-families-inside-lang",
      severity: "error",
      comment: "A family module (src/lang/families: a construct's check beside its evaluation) imports only the language and the JSON helpers.",
      from: { path: "^src/lang/families/" },
      to: { path: "^src/", pathNot: "^src/(lang|json)/" },
    },
    {
      name: "engine-imports-no-doors",
      severity: "error",
      comment: "The engine imports no web, no CLI, no console, no authoring tools: doors depend on the engine, never the reverse.",
      from: { path: "^src/engine/" },
      to: { path: "^src/(web|cli|authoring|testing)/" },
    },
    {
      name: "doors-use-public-engine-modules",
      severity: "error",
      comment:
        "The web, the CLI and the workers reach the engine only through its public modules: the commands they send, apply.ts, the read views, and the values and refusals they show — never its hot SQL, the step, or a lifecycle's internals.",
      from: { path: "^(src/web|src/cli|workers)/" },
      to: { path: "^src/engine/((sql|lifecycles)/|step\\.ts)|^src/lang/runtime/interpreter\\.ts$" },
    },
    {
      name: "doors-send-commands-through-the-engine-client",
      severity: "error",
      comment:
        "One hallway (issue 39 item 1): the doors — web routes, console, Slack, MCP, the CLI, the testing kit — build, prepare, submit and translate commands only through src/engine-client/ (which returns a typed result, never a status code). A command's types may be named; its modules are not called. The workers and the kit's in-process applier (src/testing/calls.ts) are the other side of the queue: they apply commands.",
      from: { path: "^(src/web|src/mcp|src/cli|src/slack)/|^src/testing/index\\.ts$" },
      to: { path: "^src/engine/commands/", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "doors-do-not-submit-to-the-queues",
      severity: "error",
      comment: "A door reaches the command queue only through src/engine-client/ (rt.queues.submit is called there alone); the queue's types may be named.",
      from: { path: "^(src/web|src/mcp|src/slack)/" },
      to: { path: "^src/queue/queues\\.ts$", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "mcp-imports-no-web",
      severity: "error",
      comment: "MCP is a door of its own (issue 39 item 1): it shares the engine client, its views and the HTTP helpers (src/http/) with the web, never a web handler.",
      from: { path: "^src/mcp/" },
      to: { path: "^src/web/" },
    },
    {
      name: "workers-import-no-web",
      severity: "error",
      comment: "The workers import nothing of the web (their metrics are src/metrics/).",
      from: { path: "^workers/" },
      to: { path: "^src/web/" },
    },
    {
      name: "engine-client-below-the-doors",
      severity: "error",
      comment: "The engine client knows no door: no web, MCP, CLI, Slack door or testing kit.",
      from: { path: "^src/(engine-client|metrics|http)/" },
      to: { path: "^src/(web|mcp|cli|testing)/" },
    },
    {
      name: "step-below-lifecycles",
      severity: "error",
      comment: "The unit of work (step.ts) is handed the lifecycles (lifecycles/lifecycles.ts); it imports no lifecycle, command or view. (The interpreter, src/lang/runtime, imports no engine module at all: rule lang-runtime-inside-lang.)",
      from: { path: "^src/engine/step\\.ts$" },
      to: { path: "^src/engine/(lifecycles|commands|views|versions)/" },
    },
    {
      name: "lifecycles-below-commands",
      severity: "error",
      comment: "A lifecycle changes a step; the commands drive the lifecycles, never the reverse.",
      from: { path: "^src/engine/lifecycles/" },
      to: { path: "^src/engine/(commands|views|sweeps)/" },
    },
    {
      name: "sql-below-everything",
      severity: "error",
      comment: "Hot SQL (one statement per file) knows rows, not lifecycles, commands or views.",
      from: { path: "^src/engine/sql/" },
      to: { path: "^src/engine/((lifecycles|commands|views|versions)/|step\\.ts)" },
    },
    {
      name: "values-and-sealing-at-the-bottom",
      severity: "error",
      comment: "Value checks, sealing and tokens are leaves: they use no step, lifecycle, command, view or SQL at run time (a record's type, such as step.ts's EntityRecord, may be named).",
      from: { path: "^src/engine/(values|sealing|receipts)/" },
      to: { path: "^src/engine/((lifecycles|commands|views|versions|sql|sweeps)/|step\\.ts)|^src/lang/runtime/interpreter\\.ts$", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "engine-imports-no-channel",
      severity: "error",
      comment:
        "Issue 39 item 2: the engine hands out facts (rows to insert through engine/sql/, keys of what it queued, an answer control reference) and imports no channel, no outbox lifecycle, no endpoint store and no queue job code.",
      from: { path: "^src/engine/" },
      to: { path: "^src/(channels|outbox|slack|endpoints)/|^src/queue/outbox-jobs\\.ts$" },
    },
    {
      name: "channel-folders-apart",
      severity: "error",
      comment: "Issue 39 item 2: a channel folder (src/channels/<kind>/) imports no other channel folder; what channels share lives in src/channels/*.ts.",
      from: { path: "^src/channels/([^/]+)/" },
      to: { path: "^src/channels/([^/]+)/", pathNot: "^src/channels/$1/" },
    },
    {
      name: "channels-know-no-lifecycle",
      severity: "error",
      comment: "Issue 39 item 2: a channel sends one attempt and returns its outcome; the lifecycle (outbox/) records it. Channels import no outbox lifecycle module, no registry, no queue and no door.",
      from: { path: "^src/channels/[^/]+/" },
      to: { path: "^src/(outbox/(deliveries|mailer|mail-pump)\\.ts|channels/registry\\.ts|channels/wire\\.ts|queue/|web/|cli/)" },
    },
    {
      name: "sdk-client-fetch-only",
      severity: "error",
      comment:
        "slotflow/client (issue 41 item 2) uses fetch only: its modules import nothing of the engine, the database, the queues or the server (nor Prisma, Redis, BullMQ, pg) — the problem codes come from engine/refusals.ts by a type-only import (the rule below).",
      from: { path: "^src/sdk/(client|problem)\\.ts$" },
      to: {
        path: "^src/(engine|queue|outbox|calls|web|cli|mcp|slack|operators|endpoints|lang|generated)/|^src/(db|runtime|config|migrate|log)\\.ts$|(^|/)node_modules/(@prisma|ioredis|bullmq|pg|koa)/",
        pathNot: "^src/engine/refusals\\.ts$",
      },
    },
    {
      name: "auth-room-knows-no-door",
      severity: "error",
      comment: "The auth room (src/auth/, issue 39 item 1: one principal type, one same-origin check, one CSRF scheme, one form reader, bearer tokens and HS256 JWTs) serves every door and imports none: no web, MCP, CLI, Slack door, channel or testing kit.",
      from: { path: "^src/auth/" },
      to: { path: "^src/(web|mcp|cli|testing|slack|channels)/" },
    },
    {
      name: "principal-tokens-in-the-auth-room",
      severity: "error",
      comment:
        "Issue 39 item 1: principals' JWTs are verified and signed in the auth room (src/auth/jwt.ts) and by the sign-in flows it names (src/web/identity/: the issuer's JWTs, the sealed session cookie); the receipts (src/engine/receipts/) sign their own. No other module imports jose.",
      from: { path: "^(src|workers)/", pathNot: "^src/(auth|web/identity|engine/receipts)/" },
      to: { path: "(^|/)node_modules/jose/" },
    },
    {
      name: "forms-read-in-the-auth-room",
      severity: "error",
      comment:
        "Issue 39 item 1: a browser form is read by src/auth/form.ts only, a JSON body by src/http/request-body.ts; Slack's interactions read their raw body themselves (the signature covers the exact bytes). No other module imports raw-body.",
      from: { path: "^(src|workers)/", pathNot: "^src/(auth/form|http/request-body|web/slack)\\.ts$" },
      to: { path: "(^|/)node_modules/raw-body/" },
    },
    {
      name: "sdk-client-codes-type-only",
      severity: "error",
      comment: "slotflow/client names the engine's problem codes as a type only, erased at run time: it loads no engine module.",
      from: { path: "^src/sdk/(client|problem)\\.ts$" },
      to: { path: "^src/engine/refusals\\.ts$", dependencyTypesNot: ["type-only"] },
    },
  ],
  options: {
    parser: "swc",
    tsPreCompilationDeps: true,
    exclude: { path: "^src/generated/" },
    doNotFollow: { path: "node_modules" },
    tsConfig: { fileName: "tsconfig.json" },
  },
};
