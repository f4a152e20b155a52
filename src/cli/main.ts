/**
 * `slotflow` — the command line (commander). See `slotflow --help` and README.md.
 *
 *   check FILE…            compile and print diagnostics; exit 1 on errors
 *   migrate                apply prisma/migrations to DATABASE_URL (offline)
 *   reseal                 re-seal stored values under the newest key of SLOTFLOW_SEAL_KEY
 *   serve [--deploy DIR]   web, workers and sweeper in one process
 *   web | worker | sweeper one role per process (Procfile)
 *   deploy FILE            deploy through a running server
 *   start WORKFLOW --input JSON, show RUN, raise RUN ALIAS --args JSON --as SUB [--role R…]
 *   token --sub SUB [--role R…] [--email E]   print a development principal JWT
 */
import { readFileSync } from "node:fs";
import { Command } from "commander";
import { loadConfig } from "../config.js";
import { createDb } from "../db.js";
import { resealAll } from "../engine/reseal.js";
import { Sealer } from "../engine/seal.js";
import { checkFiles } from "../lang/compile.js";
import { migrate } from "../migrate.js";
import { signPrincipal } from "../web/auth.js";
import { api } from "./client.js";
import { nextSteps, serve } from "./server.js";

const program = new Command("slotflow").description("A workflow engine whose slots are answered through single-use callback links.");

function print(answer: { status: number; body: unknown }): void {
  process.stdout.write(`${typeof answer.body === "string" ? answer.body : JSON.stringify(answer.body, null, 2)}\n`);
  if (answer.status >= 400) process.exitCode = 1;
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    program.error(`${what} must be JSON, got: ${text}`);
  }
}

const collect = (value: string, previous: string[]) => [...previous, value];

program
  .command("check")
  .argument("<files...>", ".flow files")
  .description("compile files and print every diagnostic (exit 1 on errors)")
  .action((files: string[]) => {
    process.exitCode = checkFiles(files, (line: string) => process.stdout.write(`${line}\n`));
  });

program
  .command("migrate")
  .description("apply the committed migrations to DATABASE_URL (works offline)")
  .action(async () => {
    const config = loadConfig();
    const r = await migrate(config.databaseUrl);
    process.stdout.write(`migrations: ${r.applied.length} applied, ${r.alreadyApplied.length} already applied\n`);
    for (const name of r.checksumMismatches) process.stderr.write(`warning: ${name} was changed after it was applied\n`);
  });

program
  .command("reseal")
  .description("re-seal stored values under the newest key of SLOTFLOW_SEAL_KEY (keys comma-separated, newest first); exit 1 if some value no key opens")
  .action(async () => {
    const config = loadConfig();
    const db = createDb(config.databaseUrl, 2);
    try {
      const r = await resealAll(db, new Sealer(config.sealKeys));
      process.stdout.write(`reseal: ${r.runs} runs, ${r.resealed} values re-sealed under the newest key, ${r.current} already under it, ${r.unreadable} unreadable\n`);
      if (r.unreadable > 0) {
        process.stderr.write(`${r.unreadable} sealed values are opened by no key of SLOTFLOW_SEAL_KEY: they were left as they are; add the key that sealed them to the ring and run again\n`);
        process.exitCode = 1;
      }
    } finally {
      await db.$disconnect();
    }
  });

program
  .command("serve")
  .description("run web, workers and sweeper in one process")
  .option("--deploy <dir>", "deploy every .flow file of this directory first")
  .action(async (opts: { deploy?: string }) => {
    const rt = await serve({ web: true, worker: true, sweeper: true, deployDir: opts.deploy });
    process.stdout.write(nextSteps(rt));
  });
program.command("web").description("serve HTTP only").action(async () => {
  await serve({ web: true, worker: false, sweeper: false });
});
program.command("worker").description("apply commands to runs and deliver mail").action(async () => {
  await serve({ web: false, worker: true, sweeper: false });
});
program.command("sweeper").description("expire slots past their deadlines").action(async () => {
  await serve({ web: false, worker: false, sweeper: true });
});

const remote = (cmd: Command) => cmd.option("--url <url>", "the server (default: BASE_URL or http://localhost:PORT)");
const server = (opts: { url?: string }) => opts.url ?? loadConfig().baseUrl;
const adminToken = () => loadConfig().adminToken;

remote(program.command("deploy").argument("<file>", "a .flow file").description("deploy a workflow to a running server")).action(
  async (file: string, opts: { url?: string }) => {
    print(await api(server(opts), "POST", "/api/workflows", { token: adminToken(), text: readFileSync(file, "utf8") }));
  },
);

remote(
  program
    .command("start")
    .argument("<workflow>", "workflow name")
    .requiredOption("--input <json>", "the run's input")
    .description("start a run"),
).action(async (workflow: string, opts: { input: string; url?: string }) => {
  print(await api(server(opts), "POST", `/api/workflows/${encodeURIComponent(workflow)}/runs`, { token: adminToken(), json: parseJson(opts.input, "--input") }));
});

remote(program.command("show").argument("<run>", "run id").description("show a run")).action(async (run: string, opts: { url?: string }) => {
  print(await api(server(opts), "GET", `/api/runs/${encodeURIComponent(run)}`, { token: adminToken() }));
});

remote(
  program
    .command("raise")
    .argument("<run>", "run id")
    .argument("<alias>", "slot alias")
    .requiredOption("--args <json>", "the event's arguments")
    .requiredOption("--as <sub>", "the principal's id")
    .option("--role <role>", "a role of the principal (repeatable)", collect, [])
    .option("--email <email>", "the principal's email")
    .option("--element <n>", "element of a fanned-out slot")
    .description("raise a slot's event as a signed-in principal (the ordinary path)"),
).action(async (run: string, alias: string, opts: { args: string; as: string; role: string[]; email?: string; element?: string; url?: string }) => {
  const jwt = await signPrincipal(loadConfig().jwtSecret, { sub: opts.as, roles: opts.role, email: opts.email });
  const query = opts.element === undefined ? "" : `?element=${encodeURIComponent(opts.element)}`;
  print(await api(server(opts), "POST", `/api/runs/${encodeURIComponent(run)}/slots/${encodeURIComponent(alias)}/events${query}`, { token: jwt, json: parseJson(opts.args, "--args") }));
});

remote(
  program
    .command("revoke")
    .argument("<run>", "run id")
    .argument("<alias>", "slot alias")
    .description("end the slot's live callback link (its holders then get 410 link-dead, reason revoked)"),
).action(async (run: string, alias: string, opts: { url?: string }) => {
  print(await api(server(opts), "POST", `/api/runs/${encodeURIComponent(run)}/slots/${encodeURIComponent(alias)}/link/revoke`, { token: adminToken() }));
});

program
  .command("token")
  .requiredOption("--sub <sub>", "the principal's id")
  .option("--role <role>", "a role (repeatable)", collect, [])
  .option("--email <email>", "the principal's email")
  .option("--ttl <seconds>", "lifetime in seconds", "43200")
  .description("print a principal JWT signed with SLOTFLOW_JWT_SECRET (for development)")
  .action(async (opts: { sub: string; role: string[]; email?: string; ttl: string }) => {
    process.stdout.write(`${await signPrincipal(loadConfig().jwtSecret, { sub: opts.sub, roles: opts.role, email: opts.email }, Number(opts.ttl))}\n`);
  });

await program.parseAsync(process.argv);
