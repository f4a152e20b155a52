/**
 * docker-compose.yml's `pooler` profile (issue 17 §6; docs/deployment.md): PgBouncer in transaction
 * mode in front of the `postgres` service, and slotflow's roles run from the built package — an
 * image the Dockerfile makes by installing `npm pack`'s tarball, with no `npm ci` or source tree at
 * start — with `DATABASE_URL` pointing at PgBouncer. No Docker is needed: the files are read.
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
  profiles?: string[];
  build?: string | { context: string; dockerfile_inline?: string };
  image?: string;
  command?: string[];
  volumes?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
}

const compose = parse(readFileSync(join(ROOT, "docker-compose.yml"), "utf8"), { merge: true }) as { services: Record<string, Service> };

test("the pooler profile runs web, worker, sweeper and migrate from the built package through PgBouncer in transaction mode", async (t) => {
  const { services } = compose;
  const { stdout } = await run(process.execPath, [...cliEntry(), "--help"], { cwd: ROOT });
  const commands = new Set([...stdout.matchAll(/^ {2}([a-z]+)\b/gm)].map((m) => m[1]));

  const bouncer = services.pgbouncer!;
  t.deepEqual(bouncer.profiles, ["pooler"]);
  const mounted = bouncer.volumes!.map((v) => v.split(":")[0]!.replace(/^\.\//, ""));
  const ini = readFileSync(join(ROOT, mounted.find((f) => f.endsWith(".ini"))!), "utf8");
  t.regex(ini, /^pool_mode = transaction$/m);
  const listen = /^listen_port = (\d+)$/m.exec(ini)![1];
  t.regex(typeof bouncer.build === "object" ? bouncer.build.dockerfile_inline ?? "" : "", /apt-get install .*pgbouncer/, "Debian's PgBouncer");

  for (const [name, role] of [["pooled-web", "web"], ["pooled-worker", "worker"], ["pooled-sweeper", "sweeper"], ["pooled-release", "migrate"]] as const) {
    const s = services[name]!;
    t.deepEqual(s.profiles, ["pooler"], name);
    t.deepEqual(s.command, [role], name);
    t.true(commands.has(role), `${name}: slotflow ${role} exists`);
    t.is(s.build, ".", `${name} runs the image the Dockerfile builds`);
    t.falsy(s.volumes, `${name} mounts no source tree`);
    t.is(new URL(s.environment!.DATABASE_URL!).host, `pgbouncer:${listen}`, `${name} reaches PostgreSQL through PgBouncer`);
  }
  t.deepEqual(services["pooled-web"]!.depends_on, { "pooled-release": { condition: "service_completed_successfully" } });

  const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
  t.regex(dockerfile, /npm pack/);
  t.regex(dockerfile, /npm install --global --omit=dev .*slotflow-\*\.tgz/);
  t.regex(dockerfile, /ENTRYPOINT \["slotflow"\]/);
  const runtime = dockerfile.slice(dockerfile.lastIndexOf("FROM "));
  t.notRegex(runtime, /COPY \. /, "the runtime image holds the package, not the source tree");
});
