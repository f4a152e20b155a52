/**
 * `slotflow mcp` (issue 33 item 1): the MCP server over stdio, for an agent that starts slotflow
 * as a subprocess (Claude Code, Claude Desktop; docs/agents.md). stdout carries MCP messages only:
 * the log goes to stderr. It reaches PostgreSQL and Redis with the environment's settings (like
 * `slotflow worker`: DATABASE_URL, REDIS_URL, SLOTFLOW_SEAL_KEY…); commands are applied by the
 * workers of a running slotflow, as for the HTTP API. Deploys the built-in workflows at start.
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Config } from "../config.js";
import { createLogger } from "../log.js";
import { createRuntime, type Runtime } from "../runtime.js";
import { deployBuiltins } from "./builtins.js";
import { createMcpServer } from "./server.js";

/** Serves MCP on stdin/stdout until stdin closes or SIGTERM/SIGINT; then releases the runtime. */
export async function serveStdio(config: Config): Promise<Runtime> {
  const rt = createRuntime({ config, log: createLogger(config.logLevel, process.stderr) });
  await deployBuiltins(rt);
  const server = createMcpServer(rt);
  const transport = new StdioServerTransport();
  let closing = false;
  const close = async () => {
    if (closing) return;
    closing = true;
    await server.close().catch(() => undefined);
    await rt.close().catch(() => undefined);
    process.exit(0);
  };
  server.onclose = () => void close();
  process.stdin.once("end", () => void close());
  process.once("SIGTERM", () => void close());
  process.once("SIGINT", () => void close());
  await server.connect(transport);
  rt.log.info("mcp server ready on stdio");
  return rt;
}
