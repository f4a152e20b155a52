/**
 * Language server latency (issue 21 item 2: "responds within 50 ms for a 2,000-line file"): the
 * server of src/authoring/lsp/server.ts in process, driven over JSON-RPC on a pair of streams
 * (so protocol encoding counts), on a generated valid workflow of about 2,000 lines
 * (bench/compile.ts's generator). Times, as median and max of `runs` rounds after a warm-up:
 *
 * - an edit then completion: completion reads the new text and the last analysis's names, so it
 *   does not wait for a compile;
 * - an edit then hover: a request that needs the new text compiled (parse + check + index +
 *   answer) — the cost of every first request after a change;
 * - an edit then formatting (format on save): parse + layout + the meaning check on the parser's
 *   input (format.ts formatParsed: the output lexed once, no second compile);
 * - an edit then its diagnostics, on a second server whose debounce is 0: the time from the
 *   change to the `publishDiagnostics` notification (one compile, nothing else);
 * - these four with the edit in the workflow's header (the whole text is parsed again: the worst
 *   case, "whole parse"; the bench's only edit row before the re-parse of one declaration, where
 *   it edited between two declarations, which no longer parses anything again), and the last
 *   three again with the edit inside a state's body, as when typing there ("edit in a state":
 *   only that state is parsed again, src/lang/reparse.ts);
 * - each request on an unchanged document: completion after `->`, completion after `x.`, hover,
 *   definition, references, document symbols, formatting (kept per document version).
 *
 * Each row has the median and max wall time and the median CPU time of this process per round
 * (process.cpuUsage: client and server, all threads) — on a loaded machine wall time is CPU time
 * plus waiting for a core, so the CPU column is what a quiet machine would see.
 *
 *   npm run bench -- lsp [lines] [runs]
 *
 * Prints figures and writes bench/results/lsp-*.json (with the machine's load); exits 0 either way.
 */
import { PassThrough } from "node:stream";
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node.js";
import { createConnection } from "vscode-languageserver/node.js";
import { startServer } from "../src/authoring/lsp/server.js";
import { generateWorkflow } from "./compile.js";
import { loadNote, machineCpu } from "./lib/proc.js";
import { writeResult } from "./lib/report.js";

const TARGET_MS = 50;
const lines = Number(process.argv[2] ?? 2000);
const runs = Number(process.argv[3] ?? 15);
const text = generateWorkflow(lines);
const rows = text.split("\n");

const load0 = machineCpu();
/** A server in process and a client on a pair of streams. */
async function connect(debounceMs: number) {
  const up = new PassThrough();
  const down = new PassThrough();
  startServer(createConnection(new StreamMessageReader(up), new StreamMessageWriter(down)), { debounceMs, log: () => undefined });
  const c = createMessageConnection(new StreamMessageReader(down), new StreamMessageWriter(up));
  c.listen();
  await c.sendRequest("initialize", { processId: null, rootUri: null, capabilities: {} });
  return c;
}
const client = await connect(10_000);
client.onNotification("textDocument/publishDiagnostics", () => undefined);
const uri = "file:///bench.flow";
await client.sendNotification("textDocument/didOpen", { textDocument: { uri, languageId: "flow", version: 1, text } });
// The diagnostics server: debounce 0, so a change is compiled and published at once.
const diagClient = await connect(0);
let published: ((version: number) => void) | null = null;
diagClient.onNotification("textDocument/publishDiagnostics", (p: { version?: number }) => published?.(p.version ?? -1));
const firstPublish = new Promise<number>((resolve) => (published = resolve));
await diagClient.sendNotification("textDocument/didOpen", { textDocument: { uri, languageId: "flow", version: 1, text } });
await firstPublish;
let diagVersion = 1;

const find = (needle: string, shift = 0) => {
  const line = rows.findIndex((l) => l.includes(needle));
  return { line, character: rows[line].indexOf(needle) + shift };
};
const arrow = find("-> ", 3);
const member = find("order.status = note", 6);
const req = (method: string, params: object) => client.sendRequest(method, { textDocument: { uri }, ...params });
let version = 1;
/**
 * Where the edits go. "header": in the `workflow Big(…)` line, after its `(`, so the whole text is
 * parsed again — the worst case. "inside": at the start of a line in the last `state` body, as
 * when typing in a state — only that state is parsed again (src/lang/reparse.ts).
 */
const EDIT_AT = {
  header: { line: rows.findIndex((l) => l.startsWith("workflow Big(")), character: "workflow Big(".length },
  inside: { line: rows.lastIndexOf("    order.total = rate * amount / 3"), character: 0 },
};
type Where = keyof typeof EDIT_AT;
/** Inserts or removes a blank there (a real change each time). */
function change(v: number, where: Where) {
  const at = EDIT_AT[where];
  return v % 2 === 0 ? { range: { start: at, end: at }, text: " " } : { range: { start: at, end: { line: at.line, character: at.character + 1 } }, text: "" };
}
async function edit(where: Where = "header"): Promise<void> {
  version++;
  await client.sendNotification("textDocument/didChange", { textDocument: { uri, version }, contentChanges: [change(version, where)] });
}
/** An edit on the diagnostics server; resolves when that version's diagnostics arrive. */
async function editForDiagnostics(where: Where = "header"): Promise<void> {
  const v = ++diagVersion;
  const arrived = new Promise<void>((resolve) => (published = (got) => got === v && resolve()));
  await diagClient.sendNotification("textDocument/didChange", { textDocument: { uri, version: v }, contentChanges: [change(v, where)] });
  await arrived;
}
const hoverAt = find("order.status", 1);
const formatOptions = { options: { tabSize: 2, insertSpaces: true } };
const cases: [string, () => Promise<unknown>][] = [
  ["edit + completion", () => edit().then(() => req("textDocument/completion", { position: arrow }))],
  ["edit + hover (whole parse)", () => edit().then(() => req("textDocument/hover", { position: hoverAt }))],
  ["edit + formatting (whole parse)", () => edit().then(() => req("textDocument/formatting", formatOptions))],
  ["edit + diagnostics (whole parse)", () => editForDiagnostics()],
  ["edit in a state + hover", () => edit("inside").then(() => req("textDocument/hover", { position: hoverAt }))],
  ["edit in a state + formatting", () => edit("inside").then(() => req("textDocument/formatting", formatOptions))],
  ["edit in a state + diagnostics", () => editForDiagnostics("inside")],
  ["completion after ->", () => req("textDocument/completion", { position: arrow })],
  ["completion after x.", () => req("textDocument/completion", { position: member })],
  ["hover", () => req("textDocument/hover", { position: hoverAt })],
  ["definition", () => req("textDocument/definition", { position: arrow })],
  ["references", () => req("textDocument/references", { position: find("order.status", 1), context: { includeDeclaration: true } })],
  ["document symbols", () => req("textDocument/documentSymbol", {})],
  ["formatting", () => req("textDocument/formatting", formatOptions)],
];

process.stdout.write(`lsp bench: ${rows.length} lines, ${(text.length / 1024).toFixed(0)} KB, ${runs} runs each (target ${TARGET_MS} ms)\n`);
const results: Record<string, { medianMs: number; maxMs: number; cpuMedianMs: number; ok: boolean }> = {};
for (const [name, run] of cases) {
  for (let i = 0; i < 3; i++) await run();
  const ms: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await run();
    ms.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  ms.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  const median = ms[Math.floor(ms.length / 2)];
  const max = ms[ms.length - 1];
  const cpuMedian = cpu[Math.floor(cpu.length / 2)];
  results[name] = { medianMs: median, maxMs: max, cpuMedianMs: cpuMedian, ok: median <= TARGET_MS };
  process.stdout.write(
    `  ${name.padEnd(32)} median ${median.toFixed(1).padStart(6)} ms  max ${max.toFixed(1).padStart(6)} ms  cpu ${cpuMedian.toFixed(1).padStart(6)} ms  ${median <= TARGET_MS ? "ok" : "OVER"}\n`,
  );
}
const note = loadNote(load0);
process.stdout.write(`${note}\nwrote ${writeResult("lsp", { note, lines: rows.length, kb: Math.round(text.length / 1024), runs, targetMs: TARGET_MS, results })}\n`);
client.dispose();
diagClient.dispose();
process.exit(0);
