/**
 * Security, round two — the development sign-in is an opt-in (issue 38 M3; docs/sign-in.md,
 * docs/configuration.md SLOTFLOW_DEV_SIGN_IN), against real processes:
 * - it exists only with SLOTFLOW_DEV_SIGN_IN=1: NODE_ENV unset is not enough;
 * - SLOTFLOW_DEV_SIGN_IN=1 with NODE_ENV=production, or with a BASE_URL that is not a loopback
 *   address, refuses to start (one line naming the variable, exit 1);
 * - with NODE_ENV unset and a public BASE_URL, `/metrics` needs the admin token;
 * - a development session is refused by a production process (same database, same BASE_URL, same
 *   SLOTFLOW_SESSION_SECRET), and every session cookie is bound to its BASE_URL's origin (another
 *   process of the same deployment with another BASE_URL refuses it).
 */
import test from "ava";
import { spawn } from "node:child_process";
import { cliEntry } from "../helpers/cli-entry.js";
import { dropDatabase } from "../helpers/db.js";
import { ADMIN_TOKEN, freePort, ROOT, startCluster, type Cluster } from "../helpers/server.js";

const SESSION_SECRET = "opt-in-session-secret-0123456789abcdefghij";

let dev: Cluster;
let plain: Cluster;

test.before(async () => {
  [dev, plain] = await Promise.all([
    startCluster("devoptin", { env: { SLOTFLOW_DEV_SIGN_IN: "1", SLOTFLOW_SESSION_SECRET: SESSION_SECRET } }),
    // every secret set, a public https BASE_URL, NODE_ENV unset, no SLOTFLOW_DEV_SIGN_IN (the audit's M3 setup)
    startCluster("nooptin", { env: { BASE_URL: "https://slotflow.example.test", SLOTFLOW_SESSION_SECRET: SESSION_SECRET, NODE_ENV: "" } }),
  ]);
});

test.after.always(async () => {
  for (const c of [dev, plain]) {
    await c?.stop();
    if (c) await dropDatabase(c.databaseUrl);
  }
});

const form = { "content-type": "application/x-www-form-urlencoded" };

/** Signs in through the development sign-in of the process at `base` (BASE_URL `origin`); the session cookie. */
async function devSession(base: string, origin: string, id: string): Promise<string> {
  const page = await fetch(`${base}/auth/login`);
  if (page.status !== 200) throw new Error(`GET /auth/login: ${page.status}`);
  const pending = page.headers.getSetCookie().find((c) => c.startsWith("slotflow_login="))!.split(";")[0]!;
  const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())![1]!;
  const res = await fetch(`${base}/auth/login`, {
    method: "POST",
    headers: { ...form, cookie: pending, origin },
    body: new URLSearchParams({ id, roles: "finance", csrf, returnTo: "/auth/whoami" }).toString(),
    redirect: "manual",
  });
  if (res.status !== 303) throw new Error(`POST /auth/login: ${res.status}`);
  return res.headers.getSetCookie().find((c) => c.startsWith("slotflow_session="))!.split(";")[0]!;
}

/** Runs `slotflow web` with `env` (nothing else inherited) until it exits; its exit code and stderr lines. */
async function startWeb(extra: NodeJS.ProcessEnv): Promise<{ code: number | null; lines: string[] }> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    PORT: String(await freePort()),
    DATABASE_URL: dev.databaseUrl,
    SLOTFLOW_ADMIN_TOKEN: "a".repeat(40),
    SLOTFLOW_JWT_SECRET: "j".repeat(40),
    SLOTFLOW_SEAL_KEY: "s".repeat(40),
    SLOTFLOW_SESSION_SECRET: SESSION_SECRET,
    ...extra,
  };
  const child = spawn(process.execPath, [...cliEntry(), "web"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  child.stderr.on("data", (c: Buffer) => (err += c.toString("utf8")));
  const killer = setTimeout(() => child.kill("SIGKILL"), 120_000);
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  clearTimeout(killer);
  return { code, lines: err.split("\n").filter((l) => l !== "") };
}

test("SLOTFLOW_DEV_SIGN_IN=1 with a BASE_URL that is not a loopback address refuses to start: one line, exit 1", async (t) => {
  const { code, lines } = await startWeb({ SLOTFLOW_DEV_SIGN_IN: "1", BASE_URL: "https://slotflow.example.test" });
  t.is(code, 1);
  t.deepEqual(lines, [
    'error: SLOTFLOW_DEV_SIGN_IN=1 is refused with a BASE_URL that is not a loopback address (localhost, 127.0.0.1, [::1]), got "https://slotflow.example.test": the development sign-in lets anyone sign in as anyone',
  ]);
});

test("SLOTFLOW_DEV_SIGN_IN=1 with NODE_ENV=production refuses to start: one line, exit 1", async (t) => {
  const { code, lines } = await startWeb({ SLOTFLOW_DEV_SIGN_IN: "1", NODE_ENV: "production", BASE_URL: "http://127.0.0.1:3000" });
  t.is(code, 1);
  t.deepEqual(lines, ["error: SLOTFLOW_DEV_SIGN_IN=1 is refused when NODE_ENV=production: the development sign-in lets anyone sign in as anyone (use SLOTFLOW_OIDC_ISSUER)"]);
});

test("without SLOTFLOW_DEV_SIGN_IN, NODE_ENV unset is not enough: /auth/login is 404, and /metrics on a public BASE_URL needs the admin token", async (t) => {
  const local = `http://127.0.0.1:${plain.env.PORT}`;
  for (const [method, path] of [["GET", "/auth/login"], ["POST", "/auth/login"]] as const) {
    const res = await fetch(`${local}${path}`, { method, headers: form, body: method === "POST" ? "id=mallory" : undefined, redirect: "manual" });
    t.is(res.status, 404, `${method} ${path}`);
  }
  const open = await fetch(`${local}/metrics`);
  t.is(open.status, 401, "no token, NODE_ENV unset, public BASE_URL");
  const withToken = await fetch(`${local}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  t.is(withToken.status, 200);
  t.regex(await withToken.text(), /^# HELP/m);
});

test("a development session is refused by a production process of the same deployment, and a session is bound to its BASE_URL's origin", async (t) => {
  const cookie = await devSession(dev.baseUrl, dev.baseUrl, "dave");
  const mine = await fetch(`${dev.baseUrl}/auth/whoami`, { headers: { cookie } });
  t.is(mine.status, 200, "the development process accepts its own session");
  t.like(await mine.json(), { id: "dave", development: true });

  // a production web process: same database, same BASE_URL, same SLOTFLOW_SESSION_SECRET
  const prodPort = await freePort();
  await dev.spawn("web", { port: prodPort, env: { NODE_ENV: "production", SLOTFLOW_DEV_SIGN_IN: "", SLOTFLOW_ALLOW_VOLATILE_REDIS: "1", SLOTFLOW_ADMIN_TOKEN: "p".repeat(40), SLOTFLOW_JWT_SECRET: "q".repeat(40), SLOTFLOW_SEAL_KEY: `${"r".repeat(40)},test-seal-key` } });
  const prod = await fetch(`http://127.0.0.1:${prodPort}/auth/whoami`, { headers: { cookie } });
  t.is(prod.status, 401, "production refuses a development session");

  // another web process of the same deployment, development sign-in on, another BASE_URL
  const otherPort = await freePort();
  await dev.spawn("web", { port: otherPort, env: { BASE_URL: `http://localhost:${otherPort}` } });
  const other = await fetch(`http://127.0.0.1:${otherPort}/auth/whoami`, { headers: { cookie } });
  t.is(other.status, 401, "a session minted for another origin is nobody");
  const own = await devSession(`http://127.0.0.1:${otherPort}`, `http://localhost:${otherPort}`, "erin");
  t.is((await fetch(`http://127.0.0.1:${otherPort}/auth/whoami`, { headers: { cookie: own } })).status, 200, "its own sessions work");
  t.is((await fetch(`${dev.baseUrl}/auth/whoami`, { headers: { cookie: own } })).status, 401, "and are nobody at the first origin");
});
