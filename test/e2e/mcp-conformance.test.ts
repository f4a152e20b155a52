/**
 * MCP's official conformance runner (`@modelcontextprotocol/conformance` from npm) against
 * slotflow's Streamable HTTP server, `POST /mcp` (issue 33, "Tested against the real thing";
 * docs/agents.md "Conformance").
 *
 * The runner connects as an MCP client with no way to send a header, and `POST /mcp` needs a
 * bearer token: a small proxy in this test adds `Authorization: Bearer …` to every request and
 * passes everything else through unchanged (Host and Origin included, for the DNS-rebinding
 * scenario; bodies and server-sent events streamed as they come).
 *
 * Every server scenario is run (`--suite all`) with a baseline of the scenarios expected to fail
 * (test/e2e/mcp-conformance-baseline.yml, each with the reason): the runner exits non-zero when a
 * scenario outside the baseline fails, and when one inside it passes (a stale baseline), so the
 * list in docs/agents.md cannot drift from what the runner finds.
 */
import test from "ava";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, request as httpRequest, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dropDatabase } from "../helpers/db.js";
import { ADMIN_TOKEN, ROOT, freePort, startCluster, type Cluster } from "../helpers/server.js";

const RUNNER = join(ROOT, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
const BASELINE = join(ROOT, "test", "e2e", "mcp-conformance-baseline.yml");

let cluster: Cluster;
let proxy: Server;
let proxyUrl: string;

/** A pass-through proxy to the cluster that adds the bearer token. */
async function startAuthProxy(target: URL): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, authorization: `Bearer ${ADMIN_TOKEN}` } },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    res.on("close", () => upstream.destroy());
    req.pipe(upstream);
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${port}/mcp` };
}

test.before(async () => {
  cluster = await startCluster("mcpconformance");
  ({ server: proxy, url: proxyUrl } = await startAuthProxy(new URL(cluster.baseUrl)));
});
test.after.always(async () => {
  proxy?.closeAllConnections();
  await new Promise((r) => (proxy ? proxy.close(r) : r(undefined)));
  await cluster?.stop();
  if (cluster) await dropDatabase(cluster.databaseUrl);
});

/** Runs the conformance runner with `args`; its exit code and output. It writes results/ under a temp dir. */
function runRunner(args: string[]): Promise<{ code: number | null; output: string }> {
  const cwd = mkdtempSync(join(tmpdir(), "slotflow-conformance-"));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [RUNNER, ...args], { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString("utf8")));
    child.stderr.on("data", (c: Buffer) => (output += c.toString("utf8")));
    const timer = setTimeout(() => child.kill("SIGKILL"), 240_000);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      rmSync(cwd, { recursive: true, force: true });
      resolve({ code, output });
    });
  });
}

/** The scenario names of the baseline file (`server:` list). */
function baselineScenarios(): string[] {
  return [...readFileSync(BASELINE, "utf8").matchAll(/^\s+-\s+([a-z0-9-]+)/gm)].map((m) => m[1]);
}

test("every server scenario: only the baseline's fail, and every one of them still does", async (t) => {
  t.timeout(300_000);
  const { code, output } = await runRunner(["server", "--url", proxyUrl, "--suite", "all", "--expected-failures", BASELINE]);
  t.is(code, 0, output);
  // what passes, by the runner's summary lines (`✓ name: N passed, 0 failed`); docs/agents.md lists them
  const expectedFailures = baselineScenarios();
  for (const scenario of ["server-initialize", "ping", "tools-list", "tools-call-simple-text", "tools-call-error", "dns-rebinding-protection"]) {
    t.false(expectedFailures.includes(scenario), scenario);
    t.regex(output, new RegExp(`✓ ${scenario}: [1-9]\\d* passed, 0 failed`), scenario);
  }
});
