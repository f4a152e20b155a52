/**
 * `slotflow lsp`: the Language Server Protocol server for `.flow` files (issue 21 item 2;
 * interfaces.md "Authoring tools"), on `vscode-languageserver` — no JSON-RPC of our own.
 *
 * - Documents sync incrementally. A document is compiled when it is opened and, debounced
 *   (`debounceMs`, default 200 ms), after it changes; only that document is compiled again and
 *   only its diagnostics are published. A request on a document whose analysis is stale compiles
 *   it first, so answers always match the text the client holds.
 * - Latency (issue 21 item 2: 50 ms for a 2,000-line file, bench/lsp.ts): one analysis per
 *   (uri, version), shared by diagnostics and every request on that version, built from the last
 *   one that parsed: after an edit inside one declaration only that declaration is parsed again
 *   (src/lang/reparse.ts). Its parts are made on first use: the checker only for diagnostics,
 *   hover and quick fixes, the symbol index for the requests on names, the formatting edits once
 *   (from the analysis's own tokens; the output's meaning proved on the parser's input, format.ts
 *   formatParsed). Completion right after an edit does not parse.
 * - Diagnostics are exactly those of `slotflow check` (compile.ts), with code, range, severity and
 *   a `codeDescription` link to the code's entry in docs/diagnostics.md.
 * - Rename of a state or slot alias asks PostgreSQL (DATABASE_URL, when set) whether a running
 *   run of the deployed workflow uses it (deploy.ts refuses a version that drops a state or live
 *   alias a live run is in): if so the rename is refused with a message saying how many; when no
 *   database is configured or it cannot be reached, the rename is made and a warning shown.
 * - Code actions on an event whose parameters differ from the deployed version's, with no
 *   `map event` for them, offer to add one (deployed.ts; needs DATABASE_URL).
 * - Nothing but protocol goes to stdout: the log is stderr (stdio.ts).
 */
import { Client } from "pg";
import {
  ErrorCodes, LSPErrorCodes, MessageType, ResponseError, ShowMessageNotification, TextDocuments, TextDocumentSyncKind, type Connection, type InitializeResult,
} from "vscode-languageserver";
import { TextDocument } from "vscode-languageserver-textdocument";
import { Analysis } from "./analysis.js";
import { completion } from "./completion.js";
import {
  codeActions, definition, diagnostics, documentSymbols, formatting, hover, references, renameEdits, renameTarget,
} from "./features.js";
import type { FlowSymbol } from "../symbols.js";
import { deployedEvents, missingMapFixes } from "./deployed.js";

export interface ServerOptions {
  /** Quiet time after a change before the document is compiled again, in ms (default 200). */
  debounceMs?: number;
  /** The database whose deployed runs a rename must not break; default DATABASE_URL. */
  databaseUrl?: string;
  /** Where log lines go (default: stderr). */
  log?: (line: string) => void;
  /** Runs `fn` after `ms` unless cancelled (default: setTimeout); tests pass a manual clock. */
  schedule?: (fn: () => void, ms: number) => { cancel(): void };
}

const timerSchedule = (fn: () => void, ms: number) => {
  const t = setTimeout(fn, ms);
  return { cancel: () => clearTimeout(t) };
};

/** Serves the protocol on `connection` until it closes; returns the documents it tracks. */
export function startServer(connection: Connection, options: ServerOptions = {}): TextDocuments<TextDocument> {
  const debounceMs = options.debounceMs ?? 200;
  const log = options.log ?? ((line: string) => process.stderr.write(`slotflow lsp: ${line}\n`));
  const documents = new TextDocuments(TextDocument);
  const analyses = new Map<string, Analysis>();
  const schedule = options.schedule ?? timerSchedule;
  const timers = new Map<string, { cancel(): void }>();

  /** The analysis of the document's current version (compiled now when stale). */
  function analysisOf(uri: string): Analysis | null {
    const doc = documents.get(uri);
    if (!doc) return null;
    const cached = analyses.get(uri);
    if (cached && cached.version === doc.version) return cached;
    const a = new Analysis(uri, doc.version, doc.getText(), cached?.good ?? null);
    analyses.set(uri, a);
    return a;
  }

  function publish(uri: string): void {
    const a = analysisOf(uri);
    if (a) void connection.sendDiagnostics({ uri, version: a.version, diagnostics: diagnostics(a) });
  }

  documents.onDidOpen((e) => publish(e.document.uri));
  documents.onDidChangeContent((e) => {
    const uri = e.document.uri;
    // Opening fires this too, after the open event published the same version.
    if (analyses.get(uri)?.version === e.document.version) return;
    timers.get(uri)?.cancel();
    timers.set(uri, schedule(() => {
      timers.delete(uri);
      if (documents.get(uri)) publish(uri);
    }, debounceMs));
  });
  documents.onDidClose((e) => {
    timers.get(e.document.uri)?.cancel();
    timers.delete(e.document.uri);
    analyses.delete(e.document.uri);
    void connection.sendDiagnostics({ uri: e.document.uri, diagnostics: [] });
  });

  connection.onInitialize(
    (): InitializeResult => ({
      capabilities: {
        textDocumentSync: TextDocumentSyncKind.Incremental,
        completionProvider: { triggerCharacters: [".", ">", "(", ",", " "] },
        hoverProvider: true,
        definitionProvider: true,
        referencesProvider: true,
        renameProvider: { prepareProvider: true },
        documentSymbolProvider: true,
        documentFormattingProvider: true,
        codeActionProvider: { codeActionKinds: ["quickfix"] },
      },
      serverInfo: { name: "slotflow" },
    }),
  );
  connection.onInitialized(() => log("ready"));

  const withAnalysis = <T>(uri: string, fallback: T, f: (a: Analysis) => T): T => {
    const a = analysisOf(uri);
    return a ? f(a) : fallback;
  };
  // Completion reads its place from the current text and its names from the last analysis that
  // parsed, so a document changed since (mid-typing) is not compiled first: the answer stays fast.
  connection.onCompletion((p) => {
    const doc = documents.get(p.textDocument.uri);
    const cached = analyses.get(p.textDocument.uri);
    if (!doc) return [];
    if (cached && cached.version !== doc.version && cached.good) {
      return completion(new Analysis(doc.uri, doc.version, doc.getText(), cached.good, false), p.position);
    }
    return withAnalysis(p.textDocument.uri, [], (a) => completion(a, p.position));
  });
  connection.onHover((p) => withAnalysis(p.textDocument.uri, null, (a) => hover(a, p.position)));
  connection.onDefinition((p) => withAnalysis(p.textDocument.uri, null, (a) => definition(a, p.position)));
  connection.onReferences((p) => withAnalysis(p.textDocument.uri, [], (a) => references(a, p.position, p.context.includeDeclaration)));
  connection.onDocumentSymbol((p) => withAnalysis(p.textDocument.uri, [], (a) => documentSymbols(a)));
  connection.onCodeAction(async (p) => {
    const a = analysisOf(p.textDocument.uri);
    if (!a) return [];
    const actions = codeActions(a, p.range);
    // A changed event signature without its `map event`: only the deployed version can tell.
    const start = a.offset(p.range.start);
    const end = a.offset(p.range.end);
    const onEvent = a.ast?.events.some((e) => e.range.start.offset <= end && start <= e.range.end.offset) ?? false;
    if (onEvent) {
      const deployed = await deployedEvents(options.databaseUrl ?? process.env.DATABASE_URL, a.ast!.name.name, log);
      if (deployed) actions.push(...missingMapFixes(a, deployed, start, end));
    }
    return actions;
  });
  connection.onDocumentFormatting((p) =>
    withAnalysis(p.textDocument.uri, null, (a) => {
      const edits = formatting(a);
      if (edits === null) log(`not formatting ${a.uri}: it does not parse`);
      return edits;
    }),
  );
  connection.onPrepareRename((p) =>
    withAnalysis(p.textDocument.uri, null, (a) => {
      const t = renameTarget(a, p.position);
      if ("refused" in t) throw new ResponseError(ErrorCodes.InvalidRequest, t.refused);
      return { start: t.range[0], end: t.range[1] };
    }),
  );
  connection.onRenameRequest(async (p) => {
    const a = analysisOf(p.textDocument.uri);
    if (!a) return null;
    const t = renameTarget(a, p.position);
    if ("refused" in t) throw new ResponseError(ErrorCodes.InvalidRequest, t.refused);
    const edits = renameEdits(a, t.symbol, p.newName);
    if ("refused" in edits) throw new ResponseError(ErrorCodes.InvalidRequest, edits.refused);
    const workflow = a.ast?.name.name ?? "";
    const check = await liveUses(options.databaseUrl ?? process.env.DATABASE_URL, workflow, t.symbol, log);
    if (check.refused) throw new ResponseError(LSPErrorCodes.RequestFailed, check.refused);
    if (check.warning) void connection.sendNotification(ShowMessageNotification.type, { type: MessageType.Warning, message: check.warning });
    return edits;
  });

  documents.listen(connection);
  connection.listen();
  return documents;
}

/**
 * Whether running runs of the deployed workflow `workflow` use `symbol` (a state they are in, or
 * a slot alias open or waiting in its state). Other kinds of names are not stored in runs.
 * Resolves `refused` (runs use it), `warning` (could not tell) or neither (safe).
 */
export async function liveUses(
  databaseUrl: string | undefined,
  workflow: string,
  symbol: FlowSymbol,
  log: (line: string) => void,
): Promise<{ refused?: string; warning?: string }> {
  if (symbol.kind !== "state" && symbol.kind !== "alias") return {};
  const what = symbol.kind === "state" ? `state ${symbol.name}` : `slot alias ${symbol.name} of state ${symbol.container}`;
  if (!databaseUrl) {
    return { warning: `Renamed ${what} without checking deployed runs (no DATABASE_URL): a deploy is refused while live runs of ${workflow} use the old name.` };
  }
  const client = new Client({ connectionString: databaseUrl, connectionTimeoutMillis: 2000, query_timeout: 3000 });
  try {
    await client.connect();
    const { rows } =
      symbol.kind === "state"
        ? await client.query<{ n: number }>("SELECT count(*)::int AS n FROM runs WHERE workflow_name = $1 AND status = 'running' AND state = $2", [workflow, symbol.name])
        : await client.query<{ n: number }>(
            `SELECT count(DISTINCT r.id)::int AS n FROM slots s JOIN runs r ON r.id = s.run_id
             WHERE r.workflow_name = $1 AND r.status = 'running' AND s.state = $2 AND s.alias = $3 AND s.status IN ('open', 'waiting')`,
            [workflow, symbol.container, symbol.name],
          );
    const n = rows[0]?.n ?? 0;
    if (n > 0) {
      return {
        refused: `Cannot rename ${what}: ${n} running run${n === 1 ? "" : "s"} of the deployed workflow ${workflow} use${n === 1 ? "s" : ""} it, and a deploy without it would be refused (version-conflict). Keep the name until those runs finish.`,
      };
    }
    return {};
  } catch (err) {
    const reason = err instanceof Error ? err.message.replace(/postgres(ql)?:\/\/[^\s]*/g, "<database>") : "unknown error";
    log(`rename: cannot check deployed runs: ${reason}`);
    return { warning: `Renamed ${what} without checking deployed runs (the database could not be reached: ${reason}).` };
  } finally {
    await client.end().catch(() => undefined);
  }
}
