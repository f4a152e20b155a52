/**
 * Language server latency (issue 21 item 2: "responds within 50 ms for a 2,000-line file"): the
 * server of src/authoring/lsp/server.ts in process, driven over JSON-RPC on a pair of streams
 * (so protocol encoding counts), on a generated valid workflow of about 2,000 lines
 * (bench/compile.ts's generator). Times, as median and max of `runs` rounds after a warm-up:
 *
 * - an edit then completion: completion reads the new text and the last analysis's names, so it
 *   does not wait for a compile;
 * - an edit then hover: a request that needs the new text compiled (compile + index + answer) —
 *   the cost of every first request after a change;
 * - each request on an unchanged document: completion after `->`, completion after `x.`, hover,
 *   definition, references, document symbols, formatting (the formatter compiles twice).
 *
 *   npm run bench -- lsp [lines] [runs]
 *
 * Prints figures; exits 0 either way.
 */
import { PassThrough } from "node:stream";
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node.js";
import { createConnection } from "vscode-languageserver/node.js";
import { startServer } from "../src/authoring/lsp/server.js";
import { generateWorkflow } from "./compile.js";

const TARGET_MS = 50;
const lines = Number(process.argv[2] ?? 2000);
const runs = Number(process.argv[3] ?? 15);
const text = generateWorkflow(lines);
const rows = text.split("\n");

const up = new PassThrough();
const down = new PassThrough();
startServer(createConnection(new StreamMessageReader(up), new StreamMessageWriter(down)), { debounceMs: 10_000, log: () => undefined });
const client = createMessageConnection(new StreamMessageReader(down), new StreamMessageWriter(up));
client.onNotification("textDocument/publishDiagnostics", () => undefined);
client.listen();
await client.sendRequest("initialize", { processId: null, rootUri: null, capabilities: {} });
const uri = "file:///bench.flow";
await client.sendNotification("textDocument/didOpen", { textDocument: { uri, languageId: "flow", version: 1, text } });

const find = (needle: string, shift = 0) => {
  const line = rows.findIndex((l) => l.includes(needle));
  return { line, character: rows[line].indexOf(needle) + shift };
};
const arrow = find("-> ", 3);
const member = find("order.status = note", 6);
const req = (method: string, params: object) => client.sendRequest(method, { textDocument: { uri }, ...params });
let version = 1;
/** Inserts or removes a blank at the start of the second-to-last line (a real change each time). */
async function edit(): Promise<void> {
  version++;
  const at = { line: rows.length - 2, character: 0 };
  const change = version % 2 === 0 ? { range: { start: at, end: at }, text: " " } : { range: { start: at, end: { line: at.line, character: 1 } }, text: "" };
  await client.sendNotification("textDocument/didChange", { textDocument: { uri, version }, contentChanges: [change] });
}
const cases: [string, () => Promise<unknown>][] = [
  ["edit + completion", () => edit().then(() => req("textDocument/completion", { position: arrow }))],
  ["edit + hover (recompile)", () => edit().then(() => req("textDocument/hover", { position: find("order.status", 1) }))],
  ["completion after ->", () => req("textDocument/completion", { position: arrow })],
  ["completion after x.", () => req("textDocument/completion", { position: member })],
  ["hover", () => req("textDocument/hover", { position: find("order.status", 1) })],
  ["definition", () => req("textDocument/definition", { position: arrow })],
  ["references", () => req("textDocument/references", { position: find("order.status", 1), context: { includeDeclaration: true } })],
  ["document symbols", () => req("textDocument/documentSymbol", {})],
  ["formatting", () => req("textDocument/formatting", { options: { tabSize: 2, insertSpaces: true } })],
];

process.stdout.write(`lsp bench: ${rows.length} lines, ${(text.length / 1024).toFixed(0)} KB, ${runs} runs each (target ${TARGET_MS} ms)\n`);
for (const [name, run] of cases) {
  for (let i = 0; i < 3; i++) await run();
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await run();
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  const median = ms[Math.floor(ms.length / 2)];
  const max = ms[ms.length - 1];
  process.stdout.write(`  ${name.padEnd(32)} median ${median.toFixed(1).padStart(6)} ms  max ${max.toFixed(1).padStart(6)} ms  ${median <= TARGET_MS ? "ok" : "OVER"}\n`);
}
client.dispose();
process.exit(0);
