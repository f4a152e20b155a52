/**
 * The VS Code extension without VS Code (issue 21 item 3): its manifest declares the language,
 * the grammar and the language configuration (files that exist and parse) and turns format on
 * save on for .flow; its client, loaded with stand-ins for the `vscode` and
 * `vscode-languageclient` modules, starts `node <workspace>/node_modules/slotflow/bin/slotflow.js
 * lsp --stdio` over stdio for documents of the language `flow`.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import Module, { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { ROOT } from "../helpers/root.js";

const EXT = `${ROOT}editors/vscode/`;
const manifest = JSON.parse(readFileSync(join(EXT, "package.json"), "utf8"));

test("the manifest: language, grammar, configuration, format on save", (t) => {
  const [lang] = manifest.contributes.languages;
  t.deepEqual(lang.extensions, [".flow"]);
  const config = JSON.parse(readFileSync(join(EXT, lang.configuration), "utf8"));
  t.deepEqual(config.comments, { lineComment: "//", blockComment: ["/*", "*/"] });
  const [grammar] = manifest.contributes.grammars;
  t.is(JSON.parse(readFileSync(join(EXT, grammar.path), "utf8")).scopeName, grammar.scopeName);
  t.true(manifest.contributes.configurationDefaults["[flow]"]["editor.formatOnSave"]);
  t.is(manifest.contributes.configurationDefaults["[flow]"]["editor.defaultFormatter"], `${manifest.publisher}.${manifest.name}`);
  const keywords = readFileSync(join(EXT, grammar.path), "utf8");
  for (const word of ["after", "every", "webhook", "message", "to"]) t.regex(keywords, new RegExp(`\\b${word}\\b`), word);
});

test("the client starts `slotflow lsp --stdio` from the workspace's node_modules", async (t) => {
  const ws = mkdtempSync(join(tmpdir(), "slotflow-ws-"));
  t.teardown(() => rmSync(ws, { recursive: true, force: true }));
  mkdirSync(join(ws, "node_modules/slotflow/bin"), { recursive: true });
  writeFileSync(join(ws, "node_modules/slotflow/bin/slotflow.js"), "");

  const started: { id: string; server: { run: { command: string; args: string[]; transport: number } }; client: { documentSelector: unknown } }[] = [];
  class LanguageClient {
    constructor(id: string, _name: string, server: never, client: never) {
      started.push({ id, server, client });
    }
    start() {
      return Promise.resolve();
    }
    dispose() {}
  }
  const stubs: Record<string, unknown> = {
    vscode: {
      workspace: { getConfiguration: () => ({ get: () => "" }), workspaceFolders: [{ uri: { fsPath: ws } }] },
      window: { showWarningMessage: () => undefined },
    },
    "vscode-languageclient/node": { LanguageClient, TransportKind: { stdio: 0 } },
  };
  const load = (Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown })._load;
  (Module as unknown as { _load: unknown })._load = (request: string, ...rest: unknown[]) => (request in stubs ? stubs[request] : load(request, ...rest));
  t.teardown(() => ((Module as unknown as { _load: unknown })._load = load));

  const ext = createRequire(import.meta.url)(join(EXT, "extension.js")) as { activate: (ctx: { subscriptions: unknown[] }) => Promise<void> };
  await ext.activate({ subscriptions: [] });
  t.is(started.length, 1);
  t.deepEqual(started[0].server.run, { command: "node", args: [join(ws, "node_modules/slotflow/bin/slotflow.js"), "lsp", "--stdio"], transport: 0 });
  t.deepEqual(started[0].client.documentSelector, [{ language: "flow" }]);
});
