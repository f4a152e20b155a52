/**
 * `slotflow lsp --stdio` as a spawned process, driven with vscode-jsonrpc (issue 21 item 4):
 * initialize, open a file with an error and receive its diagnostic, complete after `->`, go to a
 * definition, rename, format, shutdown, exit — exit code 0, and nothing on stdout but protocol
 * messages (every byte is accounted for by `Content-Length` framed JSON).
 */
import { spawn } from "node:child_process";
import test from "ava";
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node.js";
import { cliEntry } from "../helpers/cli-entry.js";
import { ROOT } from "../helpers/root.js";



/** Splits `bytes` into framed messages; throws on anything else. */
function frames(bytes: Buffer): unknown[] {
  const out: unknown[] = [];
  let i = 0;
  while (i < bytes.length) {
    const headerEnd = bytes.indexOf("\r\n\r\n", i);
    if (headerEnd < 0) throw new Error(`stray bytes on stdout: ${bytes.subarray(i).toString()}`);
    const header = bytes.subarray(i, headerEnd).toString();
    const m = /^Content-Length: (\d+)(\r\nContent-Type: [^\r\n]+)?$/.exec(header);
    if (!m) throw new Error(`not a protocol header: ${header}`);
    const start = headerEnd + 4;
    out.push(JSON.parse(bytes.subarray(start, start + Number(m[1])).toString()));
    i = start + Number(m[1]);
  }
  return out;
}

test("the spawned server: diagnostics, completion, definition, rename, formatting, shutdown and exit 0, only protocol on stdout", async (t) => {
  const env = { ...process.env };
  delete env.DATABASE_URL;
  const child = spawn(process.execPath, [...cliEntry(), "lsp", "--stdio"], { cwd: ROOT, env, stdio: ["pipe", "pipe", "pipe"] });
  const stdout: Buffer[] = [];
  let stderr = "";
  child.stdout.on("data", (b: Buffer) => stdout.push(b));
  child.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  t.teardown(() => {
    if (child.exitCode === null) child.kill();
  });

  const client = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  const diagnostics = new Promise<{ uri: string; diagnostics: { code: string; message: string }[] }>((resolve) =>
    client.onNotification("textDocument/publishDiagnostics", resolve),
  );
  client.listen();

  await client.sendRequest("initialize", { processId: process.pid, rootUri: null, capabilities: {} });
  await client.sendNotification("initialized", {});
  const uri = "file:///tmp/leave.flow";
  const text = "workflow  Leave\nevent Go()\ninitial state Asked {\nsubscribe Go() as go\n  on go() -> Grantd\n}\nterminal state Granted\n";
  await client.sendNotification("textDocument/didOpen", { textDocument: { uri, languageId: "flow", version: 1, text } });

  const published = await diagnostics;
  t.is(published.uri, uri);
  t.deepEqual(published.diagnostics.map((d) => d.code), ["FLOW103", "FLOW111"]);
  t.is(published.diagnostics[0].message, "unknown state 'Grantd'");

  const items = (await client.sendRequest("textDocument/completion", { textDocument: { uri }, position: { line: 4, character: 13 } })) as { label: string }[];
  t.deepEqual(items.map((i) => i.label).sort(), ["Asked", "Granted"]);

  const def = (await client.sendRequest("textDocument/definition", { textDocument: { uri }, position: { line: 4, character: 6 } })) as { uri: string; range: unknown };
  t.deepEqual(def, { uri, range: { start: { line: 3, character: 18 }, end: { line: 3, character: 20 } } });

  const rename = (await client.sendRequest("textDocument/rename", { textDocument: { uri }, position: { line: 3, character: 19 }, newName: "go2" })) as { changes: Record<string, { newText: string }[]> };
  t.deepEqual(rename.changes[uri].map((e) => e.newText), ["go2", "go2"]);

  const edits = (await client.sendRequest("textDocument/formatting", { textDocument: { uri }, options: { tabSize: 2, insertSpaces: true } })) as { newText: string }[];
  t.is(edits[0].newText, "workflow Leave\nevent Go()\ninitial state Asked {\n  subscribe Go() as go\n  on go() -> Grantd\n}\nterminal state Granted\n");

  await client.sendRequest("shutdown");
  await client.sendNotification("exit");
  t.is(await exited, 0);
  client.dispose();

  const messages = frames(Buffer.concat(stdout));
  t.true(messages.length >= 6);
  t.true(messages.every((m) => (m as { jsonrpc?: string }).jsonrpc === "2.0"));
  t.regex(stderr, /slotflow lsp: ready/);
});
