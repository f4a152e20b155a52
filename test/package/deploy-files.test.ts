/**
 * The files operators run slotflow from stay correct (issue 9 §1, §4): docker-compose.yml parses
 * (anchors and merge keys included) and runs every role from the built package (the Dockerfile's
 * `npm pack` image, never the source tree nor an install at start: issue 17 item 6) with
 * `slotflow` commands that exist; its Redis persists (append-only file, fsync every
 * second, a volume) and never evicts; the Procfile's roles and `npm start` run bin/slotflow.js too.
 * No Docker is needed: the machines that run this suite have none.
 */
import test from "ava";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { parse } from "yaml";
import { ROOT } from "../helpers/server.js";
import { cliEntry } from "../helpers/cli-entry.js";

const run = promisify(execFile);

interface Service {
  image?: string;
  build?: string;
  profiles?: string[];
  command?: string[];
  volumes?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
}

const compose = parse(readFileSync(join(ROOT, "docker-compose.yml"), "utf8"), { merge: true }) as { services: Record<string, Service> };

/** The CLI's commands, as `slotflow --help` lists them. */
async function cliCommands(): Promise<Set<string>> {
  const { stdout } = await run(process.execPath, [...cliEntry(), "--help"], { cwd: ROOT });
  return new Set([...stdout.matchAll(/^ {2}([a-z]+)\b/gm)].map((m) => m[1]));
}

/** `slotflow X` in a shell command: the X after `node bin/slotflow.js` (the Procfile, npm start). */
function slotflowCommands(text: string): string[] {
  return [...text.matchAll(/node bin\/slotflow\.js (\w+)/g)].map((m) => m[1]);
}

/** The services that run slotflow: those built from the Dockerfile (its ENTRYPOINT is `slotflow`). */
const slotflowServices = () => Object.entries(compose.services).filter(([, s]) => s.image === "slotflow:local");

test("docker-compose runs every role from the built package with commands that exist, installing nothing at start (issue 17 item 6)", async (t) => {
  const commands = await cliCommands();
  const { services } = compose;
  for (const role of ["web", "worker", "sweeper"]) {
    t.deepEqual(services[role].command, [role]);
    t.is(services[role].build, ".", `${role} runs the image the Dockerfile builds`);
    t.deepEqual(services[role].depends_on, { release: { condition: "service_completed_successfully" } }, role);
    t.truthy(services[role].environment?.DATABASE_URL, role);
  }
  t.deepEqual(services.release.command, ["migrate"], "release only migrates");
  const built = slotflowServices();
  t.deepEqual(
    built.map(([n]) => n).sort(),
    ["pooled-release", "pooled-sweeper", "pooled-web", "pooled-worker", "release", "sweeper", "sweeper-sentinel", "web", "web-sentinel", "worker", "worker-sentinel"],
    "every slotflow service, default and profiles, runs the built image",
  );
  for (const [name, service] of built) {
    t.is(service.build, ".", name);
    t.true(commands.has(service.command![0]!), `${name}: unknown command ${service.command![0]}`);
  }
  for (const [name, service] of Object.entries(services)) {
    const text = [...(service.command ?? []), ...(service.volumes ?? [])].join(" ");
    t.notRegex(text, /npm (ci|install)|\.:\/app/, `${name} neither mounts the source tree nor installs at start`);
  }
  const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
  t.regex(dockerfile, /npm pack/);
  t.regex(dockerfile, /ENTRYPOINT \["slotflow"\]/);
});

test("docker-compose's Redis persists with an append-only file and never evicts", (t) => {
  const redis = compose.services.redis;
  const args = redis.command!.join(" ");
  t.regex(args, /--appendonly yes/);
  t.regex(args, /--appendfsync everysec/);
  t.regex(args, /--maxmemory-policy noeviction/);
  t.true(redis.volumes!.some((v) => v.endsWith(":/data")), "Redis's data directory is a volume");
});

test("the Procfile and npm start run the compiled CLI through bin/slotflow.js", async (t) => {
  const commands = await cliCommands();
  const procfile = Object.fromEntries(
    readFileSync(join(ROOT, "Procfile"), "utf8")
      .split("\n")
      .filter((l) => l.trim())
      .map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 1).trim()]),
  );
  t.deepEqual(Object.keys(procfile).sort(), ["release", "sweeper", "web", "worker"]);
  for (const [role, command] of Object.entries(procfile)) {
    const used = slotflowCommands(command);
    t.is(used.length, 1, `${role}: ${command}`);
    t.true(commands.has(used[0]), `${role}: ${command}`);
  }
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  t.deepEqual(slotflowCommands(pkg.scripts.start), ["serve"]);
  t.is(pkg.bin.slotflow, "./bin/slotflow.js");
  t.regex(readFileSync(join(ROOT, "bin/slotflow.js"), "utf8"), /\.\.\/dist\/src\/cli\/main\.js/);
  t.is(pkg.exports["./testing"].types, "./dist/src/testing/index.d.ts");
  t.is(pkg.exports["./testing"].default, "./dist/src/testing/index.js");
});

test("issue 28 item 9: docker-compose gives its secrets no default: each is ${VAR:?…}, so compose refuses to start without it", (t) => {
  const text = readFileSync(join(ROOT, "docker-compose.yml"), "utf8");
  t.false(/change-?me/i.test(text.replace(/^#.*$/gm, "")), "no placeholder value outside comments");
  const secrets = ["SLOTFLOW_ADMIN_TOKEN", "SLOTFLOW_JWT_SECRET", "SLOTFLOW_SEAL_KEY"];
  let checked = 0;
  for (const [name, service] of Object.entries(compose.services)) {
    for (const secret of secrets) {
      const value = service.environment?.[secret];
      if (value === undefined) continue;
      checked++;
      t.regex(value, new RegExp(`^\\$\\{${secret}:\\?[^}]+\\}$`), `${name}: ${secret}`);
    }
  }
  t.true(checked >= 9, `every role that runs slotflow names the three secrets (${checked} checked)`);
});
