/**
 * `slotflow migrate` deploys the built-in workflows of the MCP tools, as `serve` does (issue 33,
 * "deployed by migrate/serve like any workflow (visible in the console, versioned)"): the real
 * CLI against a database migrated without them; a second `migrate` and a web process started
 * afterwards create no new version; the console lists them and shows their version.
 */
import test from "ava";
import { spawn } from "node:child_process";
import { dropDatabase, sql } from "../helpers/db.js";
import { cliEntry } from "../helpers/cli-entry.js";
import { ADMIN_TOKEN, ROOT, startCluster, type Cluster } from "../helpers/server.js";

let cluster: Cluster;

test.before(async () => {
  cluster = await startCluster("mcpmigrate", { roles: [], builtins: false }); // a migrated database, no built-in, no process yet
});
test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

/** `slotflow migrate` with only DATABASE_URL (it needs no secret); its exit code and stdout lines. */
function migrate(): Promise<{ code: number | null; stdout: string[]; stderr: string }> {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: "production", DATABASE_URL: cluster.databaseUrl };
  const child = spawn(process.execPath, [...cliEntry(), "migrate"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString("utf8")));
  child.stderr.on("data", (c: Buffer) => (err += c.toString("utf8")));
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, stdout: out.split("\n").filter(Boolean), stderr: err })));
}

const versions = () => sql<{ workflow_name: string; version: number }>(cluster.databaseUrl, "SELECT workflow_name, version FROM workflow_versions WHERE workflow_name LIKE 'slotflow.%' ORDER BY 1, 2");

test("migrate deploys the built-ins once; again, and a web process after it, create no version; the console shows them", async (t) => {
  t.deepEqual(await versions(), []);
  const first = await migrate();
  t.is(first.code, 0, first.stderr);
  t.regex(first.stdout[0]!, /^migrations: 0 applied, \d+ already applied$/);
  t.is(first.stdout[1], "built-in workflows: slotflow.RequestApproval v1 deployed, slotflow.AskHuman v1 deployed");
  t.deepEqual(await versions(), [
    { workflow_name: "slotflow.AskHuman", version: 1 },
    { workflow_name: "slotflow.RequestApproval", version: 1 },
  ]);

  const again = await migrate();
  t.is(again.code, 0, again.stderr);
  t.is(again.stdout[1], "built-in workflows: slotflow.RequestApproval v1 unchanged, slotflow.AskHuman v1 unchanged");

  await cluster.spawn("web");
  t.is((await versions()).length, 2, "the web process deployed nothing new");
  const operator = { authorization: `Basic ${Buffer.from(`olga:${ADMIN_TOKEN}`).toString("base64")}` };
  for (const name of ["slotflow.RequestApproval", "slotflow.AskHuman"]) {
    const page = await fetch(new URL(`/console/workflows/${name}`, cluster.baseUrl), { headers: operator });
    t.is(page.status, 200, name);
    const html = await page.text();
    t.regex(html, /version 1<\/a> \(current\)/, name);
    t.notRegex(html, /version 2/, name);
  }
});
