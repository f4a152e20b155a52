/**
 * `slotflow` — the command line (commander). See `slotflow --help` and README.md.
 *
 *   check FILE…            compile and print diagnostics; exit 1 on errors
 *   check --types FILE.ts FILE…   also: exit 1 when FILE.ts (from `slotflow types`) is stale (issue 41)
 *   types [FILE…] [--url URL --token T] --out FILE.ts   TypeScript declarations for slotflow/client (issue 41)
 *   fmt [--check] FILE…    rewrite in the canonical layout (authoring/format.ts)
 *   lsp --stdio            the language server (authoring/lsp)
 *   migrate                apply prisma/migrations to DATABASE_URL (offline), then deploy the built-in workflows
 *   reseal                 re-seal stored values under the newest key of SLOTFLOW_SEAL_KEY
 *   purge [--dry-run]      delete runs ended longer ago than SLOTFLOW_RETENTION (issue 20)
 *   serve [--deploy DIR] [--migrate]   web, workers and sweeper in one process
 *   web | worker | sweeper one role per process (Procfile)
 *   mcp                    MCP over stdio for AI agents (src/mcp, docs/agents.md)
 *   deploy FILE            deploy through a running server (diagnostics printed like `check`)
 *   start WORKFLOW [--input JSON], show RUN, raise RUN ALIAS [--args JSON] --as SUB [--role R…] [--element N]
 *   revoke RUN ALIAS [--element N]   end the slot's live callback link (one element's, when fanned out)
 *   runs [--workflow W] [--status S] [--state S] [--waiting ALIAS]   list runs, newest first (a table)
 *   cancel RUN --reason TEXT   end a running run (issue 23)
 *   endpoint set NAME --kind K --url URL [--header N=V …] | list | rotate NAME | rm NAME   endpoints (issue 18; http: issue 40)
 *   token --sub SUB [--role R…] [--email E]   print a development principal JWT
 *   --version, --help
 *
 * Each action imports what it needs when it runs, so `--help` and `--version` load commander
 * only (issue 9 §1: well under a second). Expected failures (configuration, an unreachable
 * PostgreSQL, Redis or server, a busy port) print one line `error: …` and exit 1 (failure.ts).
 */
import { readFileSync } from "node:fs";
import { Command } from "commander";
import { DEV_SEAL_KEY, loadConfig, type SecretName } from "../config.js";
import { failureLine, StartupError } from "./failure.js";
import { packageVersion } from "../package.js";

const program = new Command("slotflow")
  .description("A workflow engine whose slots are answered through single-use callback links.")
  .version(packageVersion(), "-V, --version", "print slotflow's version");

/** The section of docs/operations.md on recovering values no key of the ring opens (issue 16 item 4). */
const RESEAL_RECOVERY_SECTION = "when-no-key-opens-a-sealed-value-a-configuration-fault";

/** The configuration with only the secrets this command needs (production refuses the rest). */
const config = (secrets: SecretName[]) => loadConfig(process.env, { secrets });

function print(answer: { status: number; body: unknown }): void {
  process.stdout.write(`${typeof answer.body === "string" ? answer.body : JSON.stringify(answer.body, null, 2)}\n`);
  if (answer.status >= 400) process.exitCode = 1;
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    program.error(`error: ${what} must be JSON, got: ${text}`);
  }
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** A file's text; a file that cannot be read is one line, like `check` reports it. */
function readSource(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    throw new StartupError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

program
  .command("check")
  .argument("<files...>", ".flow files")
  .option("--json", "print the diagnostics as one JSON document (code, severity, message, file, line, column, end)")
  .option("--types <file.ts>", "also check that this file of `slotflow types` declarations is current for the files (exit 1 when stale)")
  .description("compile files and print every diagnostic (exit 1 on errors)")
  .action(async (files: string[], opts: { json?: boolean; types?: string }) => {
    const { checkFiles } = await import("../lang/compile.js");
    process.exitCode = checkFiles(files, (line: string) => process.stdout.write(`${line}\n`), { json: opts.json === true });
    if (opts.types !== undefined) {
      const { checkTypesCommand } = await import("./types.js");
      const code = checkTypesCommand(opts.types, files, (line) => process.stderr.write(`${line}\n`));
      if (code !== 0) process.exitCode = code;
    }
  });

program
  .command("types")
  .argument("[files...]", ".flow files")
  .option("--url <url>", "also every workflow deployed on this server (its current version)")
  .option("--token <token>", "the server's admin token (default: SLOTFLOW_ADMIN_TOKEN)")
  .requiredOption("--out <file.ts>", "the TypeScript module to write")
  .description("write TypeScript declarations of workflows (interface Workflows) for slotflow/client (docs/sdk.md)")
  .action(async (files: string[], opts: { out: string; url?: string; token?: string }) => {
    const { typesCommand } = await import("./types.js");
    const write = (stream: NodeJS.WriteStream) => (line: string) => stream.write(`${line}\n`);
    process.exitCode = await typesCommand(files, opts, write(process.stdout), write(process.stderr));
  });

program
  .command("fmt")
  .argument("<files...>", ".flow files")
  .option("--check", "change nothing; list the files that are not formatted and exit 1 if any")
  .description("rewrite files in the one canonical layout (never a file that does not parse)")
  .action(async (files: string[], opts: { check?: boolean }) => {
    const { fmtFiles } = await import("../authoring/fmt-files.js");
    const write = (stream: NodeJS.WriteStream) => (line: string) => stream.write(`${line}\n`);
    process.exitCode = fmtFiles(files, { check: opts.check === true }, write(process.stdout), write(process.stderr));
  });

program
  .command("lsp")
  .option("--stdio", "talk the Language Server Protocol over stdin/stdout (the only transport)")
  .description("a Language Server Protocol server for .flow files (logs to stderr)")
  .action(async (opts: { stdio?: boolean }) => {
    if (opts.stdio !== true) throw new StartupError("slotflow lsp talks over stdin/stdout only: run `slotflow lsp --stdio` (editors start it so)");
    const { startStdioServer } = await import("../authoring/lsp/stdio.js");
    startStdioServer();
  });

program
  .command("migrate")
  .description("apply the committed migrations to DATABASE_URL (works offline; needs no secret)")
  .action(async () => {
    const { databaseUrl } = config([]);
    const { migrate } = await import("../migrate.js");
    const { postgresFailure } = await import("./startup.js");
    const r = await migrate(databaseUrl).catch((err: unknown) => Promise.reject(postgresFailure(err, databaseUrl)));
    process.stdout.write(`migrations: ${r.applied.length} applied, ${r.alreadyApplied.length} already applied\n`);
    for (const name of r.checksumMismatches) process.stderr.write(`warning: ${name} was changed after it was applied\n`);
    // the built-in workflows of the MCP tools, as serve deploys them (issue 33 item 4; docs/agents.md)
    const [{ createDb }, { deployBuiltinsWith }] = await Promise.all([import("../db.js"), import("../mcp/builtins.js")]);
    const db = createDb(databaseUrl, 2);
    try {
      const deployed = await deployBuiltinsWith({ db });
      process.stdout.write(`built-in workflows: ${deployed.map((d) => `${d.name} v${d.version}${d.created ? " deployed" : " unchanged"}`).join(", ")}\n`);
    } finally {
      await db.$disconnect();
    }
  });

program
  .command("reseal")
  .description("re-seal stored values under the newest key of SLOTFLOW_SEAL_KEY (keys comma-separated, newest first); exit 1 if some value no key opens")
  .action(async () => {
    const config = loadConfig(process.env, { secrets: ["SLOTFLOW_SEAL_KEY"] });
    const { checkPostgres } = await import("./startup.js");
    await checkPostgres(config.databaseUrl);
    const [{ createDb }, { resealAll }, { Sealer }] = await Promise.all([import("../db.js"), import("../engine/sealing/reseal.js"), import("../engine/sealing/seal.js")]);
    const db = createDb(config.databaseUrl, 2);
    try {
      const r = await resealAll(db, new Sealer(config.sealKeys));
      process.stdout.write(`reseal: ${r.runs} runs, ${r.resealed} values re-sealed under the newest key, ${r.current} already under it, ${r.unreadable} unreadable\n`);
      if (r.unreadable > 0) {
        // issue 16 item 4: say where recovery is explained, and name the usual missing key
        process.stderr.write(
          `${r.unreadable} sealed values are opened by no key of SLOTFLOW_SEAL_KEY: they were left as they are; add the key that sealed them to the ring (after the current one) and run again. ` +
            `Values written while SLOTFLOW_SEAL_KEY was unset are under the development key "${DEV_SEAL_KEY}". ` +
            `Recovery, step by step: docs/operations.md#${RESEAL_RECOVERY_SECTION}\n`,
        );
        process.exitCode = 1;
      }
    } finally {
      await db.$disconnect();
    }
  });

program
  .command("purge")
  .option("--dry-run", "change nothing; print what would be deleted, table by table")
  .description("delete runs that ended longer ago than SLOTFLOW_RETENTION, with all their rows (the sweeper does this every few seconds)")
  .action(async (opts: { dryRun?: boolean }) => {
    const config = loadConfig(process.env, { secrets: [] });
    if (config.retentionMs === null) {
      process.stdout.write("purge: SLOTFLOW_RETENTION is off: ended runs are kept forever; nothing to purge\n");
      return;
    }
    const { checkPostgres } = await import("./startup.js");
    await checkPostgres(config.databaseUrl);
    const [{ createDb }, retention] = await Promise.all([import("../db.js"), import("../engine/sweeps/retention.js")]);
    const db = createDb(config.databaseUrl, 2);
    try {
      const now = new Date();
      const counts = opts.dryRun ? await retention.purgeDryRun(db, now, config.retentionMs) : (await retention.purge(db, now, config.retentionMs)).counts;
      const cutoff = retention.purgeCutoff(now, config.retentionMs).toISOString();
      const rows = retention.PURGED_TABLES.map((t) => `  ${t.padEnd(18)} ${counts[t]}`).join("\n");
      const verb = opts.dryRun ? "would delete" : "deleted";
      process.stdout.write(`purge${opts.dryRun ? " --dry-run" : ""}: runs ended before ${cutoff} (SLOTFLOW_RETENTION); ${verb}:\n${rows}\n`);
    } finally {
      await db.$disconnect();
    }
  });

type Roles = import("./startup.js").Roles;
/** Checks what the roles need (startup.ts), then loads and starts them (server.ts). */
async function runRoles(roles: Roles, extra: { deployDir?: string; migrate?: boolean; shards?: string } = {}) {
  const { preflight, shardsOption } = await import("./startup.js");
  const config = await preflight(roles, { migrate: extra.migrate });
  const shards = extra.shards === undefined ? undefined : shardsOption(extra.shards, config.queueShards);
  const { serve } = await import("./server.js");
  return serve({ ...roles, deployDir: extra.deployDir, shards }, config);
}

program
  .command("serve")
  .description("run web, workers and sweeper in one process")
  .option("--deploy <dir>", "deploy every .flow file of this directory first")
  .option("--migrate", "apply pending migrations first (creating the database if needed)")
  .action(async (opts: { deploy?: string; migrate?: boolean }) => {
    const rt = await runRoles({ web: true, worker: true, sweeper: true }, { deployDir: opts.deploy, migrate: opts.migrate });
    const { nextSteps } = await import("./server.js");
    process.stdout.write(nextSteps(rt));
  });
program
  .command("mcp")
  .description("serve MCP (Model Context Protocol) over stdio, for AI agents (docs/agents.md)")
  .action(async () => {
    const { preflight } = await import("./startup.js");
    const config = await preflight({ web: false, worker: false, sweeper: false });
    const { serveStdio } = await import("../mcp/stdio.js");
    await serveStdio(config);
  });
program.command("web").description("serve HTTP only").action(async () => void (await runRoles({ web: true, worker: false, sweeper: false })));
program
  .command("worker")
  .description("apply commands to runs and deliver mail")
  .option("--shards <list>", "the queue shards to consume, e.g. 0,2 or 0-3 (default: every shard of SLOTFLOW_QUEUE_SHARDS)")
  .action(async (opts: { shards?: string }) => void (await runRoles({ web: false, worker: true, sweeper: false }, { shards: opts.shards })));
program.command("sweeper").description("expire slots past their deadlines").action(async () => void (await runRoles({ web: false, worker: false, sweeper: true })));

const remote = (cmd: Command) => cmd.option("--url <url>", "the server (default: BASE_URL or http://localhost:PORT)");
/** The server's URL and the admin token (the only secret these commands need). */
const adminClient = (opts: { url?: string }) => {
  const c = config(["SLOTFLOW_ADMIN_TOKEN"]);
  return { url: opts.url ?? c.baseUrl, token: c.adminToken };
};
const api = async (...args: Parameters<typeof import("./client.js").api>) => (await import("./client.js")).api(...args);

remote(program.command("deploy").argument("<file>", "a .flow file").description("deploy a workflow to a running server")).action(
  async (file: string, opts: { url?: string }) => {
    const { url, token } = adminClient(opts);
    const source = readSource(file);
    const answer = await api(url, "POST", "/api/workflows", { token, text: source, headers: { "x-slotflow-filename": file } });
    const { printDeployAnswer } = await import("./output.js");
    process.exitCode = printDeployAnswer(answer, source, file, (line) => process.stdout.write(`${line}\n`), (line) => process.stderr.write(`${line}\n`));
  },
);

remote(
  program
    .command("start")
    .argument("<workflow>", "workflow name")
    .option("--input <json>", "the run's input (default: {}, for a workflow without parameters)")
    .description("start a run"),
).action(async (workflow: string, opts: { input?: string; url?: string }) => {
  const { url, token } = adminClient(opts);
  const input = opts.input === undefined ? {} : parseJson(opts.input, "--input");
  print(await api(url, "POST", `/api/workflows/${encodeURIComponent(workflow)}/runs`, { token, json: input }));
});

remote(program.command("show").argument("<run>", "run id").description("show a run")).action(async (run: string, opts: { url?: string }) => {
  const { url, token } = adminClient(opts);
  print(await api(url, "GET", `/api/runs/${encodeURIComponent(run)}`, { token }));
});

remote(
  program
    .command("raise")
    .argument("<run>", "run id")
    .argument("<alias>", "slot alias")
    .option("--args <json>", "the event's arguments (omit for an event without parameters)")
    .requiredOption("--as <sub>", "the principal's id")
    .option("--role <role>", "a role of the principal (repeatable)", collect, [])
    .option("--email <email>", "the principal's email")
    .option("--element <n>", "element of a fanned-out slot")
    .description("raise a slot's event as a signed-in principal (the ordinary path)"),
).action(async (run: string, alias: string, opts: { args?: string; as: string; role: string[]; email?: string; element?: string; url?: string }) => {
  const c = config(["SLOTFLOW_JWT_SECRET"]);
  const url = opts.url ?? c.baseUrl;
  const { signPrincipal } = await import("../auth/jwt.js");
  const jwt = await signPrincipal(c.jwtSecret, { sub: opts.as, roles: opts.role, email: opts.email }, Math.min(12 * 3600, c.jwtMaxTtlSeconds), { audience: c.jwtAudience, issuer: c.jwtIssuer });
  const query = opts.element === undefined ? "" : `?element=${encodeURIComponent(opts.element)}`;
  const json = opts.args === undefined ? undefined : parseJson(opts.args, "--args");
  const answer = await api(url, "POST", `/api/runs/${encodeURIComponent(run)}/slots/${encodeURIComponent(alias)}/events${query}`, { token: jwt, json });
  print(answer);
  if (answer.status === 404 && opts.element === undefined) {
    // A fanned-out slot needs its element: say so with the option's name and the open elements.
    const shown = await api(url, "GET", `/api/runs/${encodeURIComponent(run)}`, { token: c.adminToken });
    const { fanOutHint } = await import("./output.js");
    const hint = shown.status === 200 ? fanOutHint(shown.body, alias) : null;
    if (hint) process.stderr.write(`${hint}\n`);
  }
});

remote(
  program
    .command("revoke")
    .argument("<run>", "run id")
    .argument("<alias>", "slot alias")
    .option("--element <n>", "element of a fanned-out slot: revoke that element's own link")
    .description("end the slot's live callback link (its holders then get 410 link-dead, reason revoked)"),
).action(async (run: string, alias: string, opts: { url?: string; element?: string }) => {
  const { url, token } = adminClient(opts);
  const query = opts.element === undefined ? "" : `?element=${encodeURIComponent(opts.element)}`;
  print(await api(url, "POST", `/api/runs/${encodeURIComponent(run)}/slots/${encodeURIComponent(alias)}/link/revoke${query}`, { token }));
});

remote(
  program
    .command("runs")
    .option("--workflow <name>", "only runs of this workflow")
    .option("--workflow-version <n>", "only runs of this version of the workflow (--version prints slotflow's)")
    .option("--status <status>", "running, finished or cancelled")
    .option("--state <state>", "only runs in this state")
    .option("--waiting <alias>", "only runs waiting on this slot alias")
    .option("--parent <run>", "only the runs this run started (call workflow)")
    .option("--created-after <iso>", "only runs created after this instant")
    .option("--created-before <iso>", "only runs created before this instant")
    .option("--limit <n>", "runs per page (at most 200)")
    .option("--cursor <cursor>", "the next page (printed under the table)")
    .option("--json", "print the API's JSON instead of a table")
    .description("list runs, newest first, as a table (GET /api/runs)"),
).action(async (opts: Record<string, string | boolean | undefined> & { url?: string }) => {
  const { url, token } = adminClient(opts);
  const query = new URLSearchParams();
  const params: [string, string][] = [
    ["workflow", "workflow"], ["workflowVersion", "version"], ["status", "status"], ["state", "state"], ["waiting", "waiting"], ["parent", "parent"],
    ["createdAfter", "createdAfter"], ["createdBefore", "createdBefore"], ["limit", "limit"], ["cursor", "cursor"],
  ];
  for (const [opt, param] of params) if (typeof opts[opt] === "string") query.set(param, opts[opt] as string);
  const answer = await api(url, "GET", `/api/runs${query.size ? `?${query}` : ""}`, { token });
  if (answer.status !== 200 || opts.json) return print(answer);
  const { runsTable } = await import("./runs-table.js");
  const waiting = typeof opts.waiting === "string" && opts.waiting !== "" ? opts.waiting : undefined;
  process.stdout.write(`${runsTable(answer.body as Parameters<typeof runsTable>[0], { waiting }).join("\n")}\n`);
});

remote(
  program
    .command("cancel")
    .argument("<run>", "run id")
    .requiredOption("--reason <text>", "why (recorded in the run's history; at most 500 characters)")
    .description("end a running run: its slots cancelled, its links dead, its unsent messages withdrawn"),
).action(async (run: string, opts: { reason: string; url?: string }) => {
  const { url, token } = adminClient(opts);
  print(await api(url, "POST", `/api/runs/${encodeURIComponent(run)}/cancel`, { token, json: { reason: opts.reason } }));
});

// --- delivery endpoints (issue 18; src/web/endpoints.ts) ---------------------------------------
const endpoint = program.command("endpoint").description("named destinations of send webhook / send message (webhook, slack, teams) and of call http (http)");
// not `remote(…)`: --url is the endpoint's URL here, the server is --server
endpoint
    .command("set")
    .argument("<name>", "the endpoint's name, as .flow sources write it")
    .requiredOption("--kind <kind>", "webhook, slack, teams or http (the service a `call http` calls)")
    .requiredOption("--url <endpointUrl>", "where deliveries or calls go (https://…)")
    .option("--header <name=value>", "http only: a request header sent with every call, sealed and never shown again (repeatable)", collect, [])
    .option("--server <url>", "the server (default: BASE_URL or http://localhost:PORT)")
    .description("create or update an endpoint; a new webhook or http endpoint's signing secret is printed once")
.action(async (name: string, opts: { kind: string; url: string; header: string[]; server?: string }) => {
  const { url, token } = adminClient({ url: opts.server });
  const json: { kind: string; url: string; headers?: Record<string, string> } = { kind: opts.kind, url: opts.url };
  if (opts.header.length) json.headers = headerOptions(opts.header);
  print(await api(url, "PUT", `/api/endpoints/${encodeURIComponent(name)}`, { token, json }));
});

/**
 * `--header NAME=VALUE` options as the `headers` object of `PUT /api/endpoints/{name}` (issue 40
 * item 2). The first `=` splits name from value; an option without a name before one exits 2
 * (without echoing it: it may be a credential). Which
 * names an endpoint may carry is the server's rule (src/endpoints/http-headers.ts, 422 otherwise).
 */
function headerOptions(options: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const option of options) {
    const at = option.indexOf("=");
    if (at < 1) {
      // the option is not echoed: it may be a credential
      process.stderr.write(`--header takes NAME=VALUE (for example --header "Authorization=Bearer …"); one --header has no name before "="\n`);
      process.exit(2);
    }
    headers[option.slice(0, at).trim()] = option.slice(at + 1);
  }
  return headers;
}
remote(endpoint.command("list").description("list endpoints (name, kind, host; never a URL or secret)")).action(async (opts: { url?: string }) => {
  const { url, token } = adminClient(opts);
  print(await api(url, "GET", "/api/endpoints", { token }));
});
remote(endpoint.command("rotate").argument("<name>").description("a new signing secret, printed once; the old one keeps signing for 24 h")).action(
  async (name: string, opts: { url?: string }) => {
    const { url, token } = adminClient(opts);
    print(await api(url, "POST", `/api/endpoints/${encodeURIComponent(name)}/rotate`, { token }));
  },
);
remote(endpoint.command("rm").argument("<name>").description("delete an endpoint")).action(async (name: string, opts: { url?: string }) => {
  const { url, token } = adminClient(opts);
  const answer = await api(url, "DELETE", `/api/endpoints/${encodeURIComponent(name)}`, { token });
  print(answer.status === 204 ? { status: 204, body: `removed ${name}` } : answer);
});

program
  .command("token")
  .requiredOption("--sub <sub>", "the principal's id")
  .option("--role <role>", "a role (repeatable)", collect, [])
  .option("--email <email>", "the principal's email")
  .option("--ttl <seconds>", "lifetime in seconds (at most SLOTFLOW_JWT_MAX_TTL_SECONDS)", "43200")
  .description("print a principal JWT signed with SLOTFLOW_JWT_SECRET (for development), with SLOTFLOW_JWT_AUDIENCE / SLOTFLOW_JWT_ISSUER as aud / iss when set")
  .action(async (opts: { sub: string; role: string[]; email?: string; ttl: string }) => {
    const c = config(["SLOTFLOW_JWT_SECRET"]);
    const ttl = Number(opts.ttl);
    // issue 28 item 8: the server refuses a token living longer than SLOTFLOW_JWT_MAX_TTL_SECONDS
    if (!/^\d+$/.test(opts.ttl) || ttl < 1 || ttl > c.jwtMaxTtlSeconds) {
      program.error(`error: --ttl must be a whole number of seconds from 1 to ${c.jwtMaxTtlSeconds} (SLOTFLOW_JWT_MAX_TTL_SECONDS), got: ${opts.ttl}`);
    }
    const { signPrincipal } = await import("../auth/jwt.js");
    process.stdout.write(`${await signPrincipal(c.jwtSecret, { sub: opts.sub, roles: opts.role, email: opts.email }, ttl, { audience: c.jwtAudience, issuer: c.jwtIssuer })}\n`);
  });

try {
  await program.parseAsync(process.argv);
} catch (err) {
  const line = failureLine(err);
  if (line === null) throw err;
  process.stderr.write(`error: ${line}\n`);
  process.exit(1);
}
