/**
 * The language server over JSON-RPC in process (issue 21 item 4): a pair of streams, the server
 * of server.ts on one end and a vscode-jsonrpc client on the other. Diagnostics on open and after
 * changes (debounced on a manual clock, only for the document that changed), every request, and
 * rename against a real PostgreSQL holding a running run of the deployed workflow (refused), or
 * without a database (made, with a warning).
 */
import { PassThrough } from "node:stream";
import test from "ava";
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from "vscode-jsonrpc/node.js";
import { createConnection } from "vscode-languageserver/node.js";
import { startServer } from "../../src/authoring/lsp/server.js";
import { Workflow } from "../../src/testing/index.js";
import { dropDatabase, freshDatabase } from "../helpers/db.js";

const SOURCE = [
  "workflow Leave(days: int)",
  "event Approve(ok: bool)",
  "initial state Asked {",
  "  subscribe Approve(ok) as approve",
  "  on approve(ok) {",
  "    when (ok) -> Granted",
  "    default -> Refused",
  "  }",
  "}",
  "terminal state Granted",
  "terminal state Refused",
  "",
].join("\n");

interface Published {
  uri: string;
  diagnostics: { code: string; message: string; range: unknown; codeDescription?: { href: string } }[];
}

/** A manual clock for the server's debounce: `pending` holds what is scheduled, `flush()` runs it. */
function manualClock() {
  const pending: { fn: () => void; ms: number; cancelled: boolean }[] = [];
  return {
    pending,
    schedule: (fn: () => void, ms: number) => {
      const entry = { fn, ms, cancelled: false };
      pending.push(entry);
      return { cancel: () => void (entry.cancelled = true) };
    },
    live: () => pending.filter((p) => !p.cancelled),
    flush: () => {
      for (const p of pending.splice(0)) if (!p.cancelled) p.fn();
    },
  };
}

function pair(databaseUrl?: string, clock = manualClock()): { client: MessageConnection; published: Published[]; warnings: string[]; waitFor: (uri: string, n: number) => Promise<Published> } {
  const up = new PassThrough();
  const down = new PassThrough();
  const server = createConnection(new StreamMessageReader(up), new StreamMessageWriter(down));
  startServer(server, { debounceMs: 200, databaseUrl: databaseUrl ?? "", log: () => undefined, schedule: clock.schedule });
  const client = createMessageConnection(new StreamMessageReader(down), new StreamMessageWriter(up));
  const published: Published[] = [];
  const warnings: string[] = [];
  const waiters: (() => void)[] = [];
  client.onNotification("textDocument/publishDiagnostics", (p: Published) => {
    published.push(p);
    for (const w of waiters.splice(0)) w();
  });
  client.onNotification("window/showMessage", (p: { type: number; message: string }) => warnings.push(p.message));
  client.listen();
  const waitFor = async (uri: string, n: number) => {
    while (published.filter((p) => p.uri === uri).length < n) await new Promise<void>((r) => waiters.push(r));
    return published.filter((p) => p.uri === uri)[n - 1];
  };
  return { client, published, warnings, waitFor };
}

async function init(client: MessageConnection): Promise<void> {
  const r = (await client.sendRequest("initialize", { processId: null, rootUri: null, capabilities: {} })) as { capabilities: Record<string, unknown> };
  for (const cap of ["completionProvider", "hoverProvider", "definitionProvider", "referencesProvider", "renameProvider", "documentSymbolProvider", "documentFormattingProvider", "codeActionProvider"]) {
    if (!r.capabilities[cap]) throw new Error(`no ${cap}`);
  }
  await client.sendNotification("initialized", {});
}

const open = (client: MessageConnection, uri: string, text: string) =>
  client.sendNotification("textDocument/didOpen", { textDocument: { uri, languageId: "flow", version: 1, text } });
const change = (client: MessageConnection, uri: string, version: number, range: unknown, text: string) =>
  client.sendNotification("textDocument/didChange", { textDocument: { uri, version }, contentChanges: [{ range, text }] });
const doc = (uri: string) => ({ textDocument: { uri } });

test("diagnostics on open and on change (debounced), only for the document that changed", async (t) => {
  const clock = manualClock();
  const { client, published, waitFor } = pair(undefined, clock);
  t.teardown(() => client.dispose());
  await init(client);
  await open(client, "file:///a.flow", SOURCE);
  await open(client, "file:///b.flow", SOURCE.replace("-> Granted", "-> Grantd"));
  t.deepEqual((await waitFor("file:///a.flow", 1)).diagnostics, []);
  const b = await waitFor("file:///b.flow", 1);
  t.deepEqual(b.diagnostics.map((d) => d.code), ["FLOW103", "FLOW111"]); // unknown Grantd; Granted never entered
  t.deepEqual(b.diagnostics[0].range, { start: { line: 5, character: 17 }, end: { line: 5, character: 23 } });
  t.regex(b.diagnostics[0].codeDescription!.href, /docs\/diagnostics\.md#flow103$/);

  // Three edits to b: each restarts b's quiet time (200 ms); nothing is compiled or published until it passes.
  t.deepEqual(clock.live(), [], "opening publishes at once and schedules nothing");
  await change(client, "file:///b.flow", 2, { start: { line: 5, character: 22 }, end: { line: 5, character: 22 } }, "e");
  await change(client, "file:///b.flow", 3, { start: { line: 6, character: 15 }, end: { line: 6, character: 22 } }, "Nowhere");
  await change(client, "file:///b.flow", 4, { start: { line: 6, character: 15 }, end: { line: 6, character: 22 } }, "Refused");
  // A request round trip orders this after the server has handled the three notifications.
  await client.sendRequest("textDocument/documentSymbol", doc("file:///a.flow"));
  t.is(clock.live().length, 1, "one pending compile, for b only");
  t.is(clock.live()[0].ms, 200);
  t.is(published.length, 2);
  clock.flush();
  const after = await waitFor("file:///b.flow", 2);
  t.deepEqual(after.diagnostics, [], "the diagnostics of the last text");
  await client.sendRequest("textDocument/documentSymbol", doc("file:///a.flow"));
  t.is(published.filter((p) => p.uri === "file:///b.flow").length, 2);
  t.is(published.filter((p) => p.uri === "file:///a.flow").length, 1, "a was not compiled again");
});

test("completion, hover, definition, references, symbols, formatting and a quick fix over the protocol", async (t) => {
  const { client } = pair();
  t.teardown(() => client.dispose());
  await init(client);
  const uri = "file:///leave.flow";
  await open(client, uri, SOURCE.replace("default -> Refused", "default -> Refusd"));

  const items = (await client.sendRequest("textDocument/completion", { ...doc(uri), position: { line: 5, character: 18 } })) as { label: string }[];
  t.deepEqual(items.map((i) => i.label).sort(), ["Asked", "Granted", "Refused"]);
  const h = (await client.sendRequest("textDocument/hover", { ...doc(uri), position: { line: 3, character: 14 } })) as { contents: { value: string } };
  t.regex(h.contents.value, /event Approve\(ok: bool\)/);
  const def = (await client.sendRequest("textDocument/definition", { ...doc(uri), position: { line: 5, character: 20 } })) as { range: unknown };
  t.deepEqual(def.range, { start: { line: 9, character: 15 }, end: { line: 9, character: 22 } });
  const refs = (await client.sendRequest("textDocument/references", { ...doc(uri), position: { line: 4, character: 6 }, context: { includeDeclaration: true } })) as unknown[];
  t.is(refs.length, 2);
  const symbols = (await client.sendRequest("textDocument/documentSymbol", doc(uri))) as { name: string }[];
  t.deepEqual(symbols.map((s) => s.name), ["Leave", "Approve", "days", "Asked", "Granted", "Refused"]);
  const actions = (await client.sendRequest("textDocument/codeAction", { ...doc(uri), range: { start: { line: 6, character: 0 }, end: { line: 6, character: 30 } }, context: { diagnostics: [] } })) as { title: string }[];
  t.deepEqual(actions.map((a) => a.title), ["Change 'Refusd' to 'Refused'"]);

  const messy = "workflow  W\ninitial state A {\nenter {}\n}\nterminal state B";
  await open(client, "file:///messy.flow", messy);
  const edits = (await client.sendRequest("textDocument/formatting", { ...doc("file:///messy.flow"), options: { tabSize: 8, insertSpaces: false } })) as { newText: string }[];
  t.is(edits[0].newText, "workflow W\ninitial state A {\n  enter {}\n}\nterminal state B\n");
});

test("rename: refused where a running run of the deployed workflow is in the state; made with a warning when no database is configured", async (t) => {
  const url = await freshDatabase("lsprename");
  const before = { ...process.env };
  t.teardown(async () => {
    await Workflow.disconnect();
    process.env = before;
    await dropDatabase(url);
  });
  process.env.SLOTFLOW_TEST_DATABASE_URL = url;
  const wf = await Workflow.deploy(SOURCE);
  await wf.start({ days: 3 });

  const uri = "file:///leave.flow";
  const withDb = pair(url);
  t.teardown(() => withDb.client.dispose());
  await init(withDb.client);
  await open(withDb.client, uri, SOURCE);
  const prepared = (await withDb.client.sendRequest("textDocument/prepareRename", { ...doc(uri), position: { line: 2, character: 16 } })) as { start: unknown };
  t.deepEqual(prepared, { start: { line: 2, character: 14 }, end: { line: 2, character: 19 } });
  const refused = await t.throwsAsync(withDb.client.sendRequest("textDocument/rename", { ...doc(uri), position: { line: 2, character: 16 }, newName: "Requested" }));
  t.regex(refused!.message, /Cannot rename state Asked: 1 running run of the deployed workflow Leave uses it/);
  const alias = await t.throwsAsync(withDb.client.sendRequest("textDocument/rename", { ...doc(uri), position: { line: 4, character: 6 }, newName: "decide" }));
  t.regex(alias!.message, /Cannot rename slot alias approve of state Asked: 1 running run/);
  // A state no running run is in is renamed.
  const granted = (await withDb.client.sendRequest("textDocument/rename", { ...doc(uri), position: { line: 9, character: 17 }, newName: "Approved" })) as { changes: Record<string, unknown[]> };
  t.is(granted.changes[uri].length, 2);
  t.deepEqual(withDb.warnings, []);

  // The event changed since the deployed version, and no map event covers the old signature: a
  // deploy would be refused (version-conflict); the quick fix adds the map from the deployed version.
  const v2 = "file:///leave-v2.flow";
  const changed = SOURCE.replace("event Approve(ok: bool)", "event Approve(ok: bool, note: string)")
    .replace("subscribe Approve(ok) as approve", "subscribe Approve(ok, note) as approve")
    .replace("on approve(ok) {", "on approve(ok, note) {");
  await open(withDb.client, v2, changed);
  const fixes = (await withDb.client.sendRequest("textDocument/codeAction", { ...doc(v2), range: { start: { line: 1, character: 3 }, end: { line: 1, character: 3 } }, context: { diagnostics: [] } })) as { title: string; edit: { changes: Record<string, { range: { start: { line: number; character: number } }; newText: string }[]> } }[];
  t.deepEqual(fixes.map((f) => f.title), ["Add 'map event Approve(ok: bool)' for links minted by the deployed version"]);
  const [insert] = fixes[0].edit.changes[v2];
  t.is(insert.newText, 'map event Approve(ok: bool) to Approve(ok: ok, note: "")\n');
  const conflict = await t.throwsAsync(Workflow.deploy(changed));
  t.is((conflict as { code?: string }).code, "version-conflict", "without the map a deploy is refused");
  const lines = changed.split("\n");
  lines.splice(insert.range.start.line, 0, insert.newText.trimEnd());
  const redeployed = await Workflow.deploy(lines.join("\n"));
  t.is(redeployed.version, 2, "with the map the new version deploys");
  await open(withDb.client, "file:///leave-v3.flow", lines.join("\n"));
  const none = (await withDb.client.sendRequest("textDocument/codeAction", { ...doc("file:///leave-v3.flow"), range: { start: { line: 1, character: 3 }, end: { line: 1, character: 3 } }, context: { diagnostics: [] } })) as unknown[];
  t.deepEqual(none, []);

  const noDb = pair("");
  t.teardown(() => noDb.client.dispose());
  await init(noDb.client);
  await open(noDb.client, uri, SOURCE);
  const made = (await noDb.client.sendRequest("textDocument/rename", { ...doc(uri), position: { line: 2, character: 16 }, newName: "Requested" })) as { changes: Record<string, unknown[]> };
  t.is(made.changes[uri].length, 1);
  // The server writes the warning before the answer, and messages are handled in order.
  t.regex(noDb.warnings.join("\n"), /without checking deployed runs \(no DATABASE_URL\)/);
});
