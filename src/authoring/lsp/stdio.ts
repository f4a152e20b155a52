/**
 * `slotflow lsp --stdio`: the server (server.ts) on stdin/stdout. stdout carries the protocol
 * and nothing else: console output of any library is sent to stderr, like the server's own log.
 * Exits 0 after the client's `shutdown` then `exit` (1 on `exit` without `shutdown`, as the
 * protocol says).
 */
import { createConnection, ProposedFeatures, StreamMessageReader, StreamMessageWriter } from "vscode-languageserver/node.js";
import { startServer } from "./server.js";

export function startStdioServer(): void {
  const toStderr = (...args: unknown[]) => process.stderr.write(`${args.map(String).join(" ")}\n`);
  console.log = toStderr;
  console.info = toStderr;
  console.warn = toStderr;
  console.debug = toStderr;
  const connection = createConnection(ProposedFeatures.all, new StreamMessageReader(process.stdin), new StreamMessageWriter(process.stdout));
  startServer(connection);
}
