/**
 * examples/app (issue 41 item 5): a small TypeScript service of a user's own that serves a
 * `call task` with slotflow/worker, starts a run with slotflow/client and awaits its typed result —
 * run here as examples/app/README.md says, against a real server: the generated declarations are
 * current (`slotflow check --types`), the real `tsc` accepts the app with its own tsconfig (the
 * package's published types, dist/), and the app, run by tsx in its own process, prints the result
 * its own task worker decided, which the server's run view agrees with.
 */
import test from "ava";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { showRun } from "../helpers/callback.js";
import { cliEntry } from "../helpers/cli-entry.js";
import { dropDatabase } from "../helpers/db.js";
import { ADMIN_TOKEN, request, ROOT, startCluster, type Cluster } from "../helpers/server.js";

const run = promisify(execFile);
const APP = join(ROOT, "examples", "app");
const WORKER_TOKEN = "example-app-worker-token-0123456789";
let cluster: Cluster;

test.before(async () => {
  cluster = await startCluster("exampleapp", { env: { SLOTFLOW_WORKER_TOKEN: WORKER_TOKEN } });
});
test.after.always(async () => {
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

test("the generated declarations are current and tsc accepts the app", async (t) => {
  const check = await run(process.execPath, [...cliEntry(), "check", "--types", "examples/app/src/workflows.ts", "examples/app/flows/credit-order.flow"], { cwd: ROOT });
  t.regex(check.stdout, /^1 file checked: 0 errors, 0 warnings$/m, "exit 0: the declarations are what slotflow types would write now");
  const tsc = await run(join(ROOT, "node_modules", ".bin", "tsc"), ["-p", join(APP, "tsconfig.json")], { cwd: APP }).catch((e: { stdout: string }) => ({ stdout: `FAILED ${e.stdout}` }));
  t.is(tsc.stdout, "", "tsc prints nothing for an app that compiles");
});

test("the app serves its task, starts a run and prints the typed result its worker decided", async (t) => {
  const deployed = await run(process.execPath, [...cliEntry(), "deploy", "examples/app/flows/credit-order.flow"], {
    cwd: ROOT,
    env: { ...cluster.env, BASE_URL: cluster.baseUrl },
  });
  t.regex(deployed.stdout, /CreditOrder/);
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, BASE_URL: cluster.baseUrl, SLOTFLOW_ADMIN_TOKEN: ADMIN_TOKEN, SLOTFLOW_WORKER_TOKEN: WORKER_TOKEN };
  const app = await run(process.execPath, ["--import=tsx", "src/main.ts", "Acme Ltd", "1200"], { cwd: APP, env, timeout: 120_000 });
  const lines = app.stdout.trim().split("\n");
  const runId = /^started ([0-9a-f-]{36})$/.exec(lines[0] ?? "")?.[1];
  t.truthy(runId, app.stdout + app.stderr);
  t.regex(lines[1] ?? "", /^(Accepted|Declined): score \d+, credit band [ABC]$/, app.stdout + app.stderr);
  const view = await showRun(cluster.baseUrl, runId!);
  t.is(view.status, "finished");
  t.is(lines[1]!.split(":")[0], view.state, "the app printed the state the run finished in");
  const result = (await request(cluster.baseUrl, "GET", `/api/runs/${runId}/result`, { token: ADMIN_TOKEN })).body;
  t.regex(lines[1]!, new RegExp(`score ${result.result.score},`), "the score the app's own worker answered is the run's result");
});
