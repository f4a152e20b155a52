// The slotflow extension for VS Code: starts `slotflow lsp --stdio` from the workspace's
// node_modules (the slotflow the project depends on, so the editor checks with the same compiler
// its deploys use) and hands .flow documents to it. Highlighting is the TextMate grammar in
// syntaxes/; format on save is on by default for [flow] (package.json configurationDefaults).
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

/** The CLI to run: the setting, else the first workspace folder holding slotflow. */
function findServer() {
  const configured = vscode.workspace.getConfiguration("slotflow").get("server.path");
  if (configured) return configured;
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    for (const rel of ["node_modules/slotflow/bin/slotflow.js", "bin/slotflow.js"]) {
      const candidate = path.join(folder.uri.fsPath, rel);
      if (fs.existsSync(candidate)) return candidate;
    }
  }
  return null;
}

async function activate(context) {
  const server = findServer();
  if (!server) {
    void vscode.window.showWarningMessage(
      "slotflow: no node_modules/slotflow in this workspace (npm install --save-dev slotflow), and slotflow.server.path is not set: .flow files get highlighting only.",
    );
    return;
  }
  const node = vscode.workspace.getConfiguration("slotflow").get("server.node") || "node";
  const run = { command: node, args: [server, "lsp", "--stdio"], transport: TransportKind.stdio };
  client = new LanguageClient(
    "slotflow",
    "slotflow",
    { run, debug: run },
    { documentSelector: [{ language: "flow" }], outputChannelName: "slotflow" },
  );
  context.subscriptions.push(client);
  await client.start();
}

async function deactivate() {
  if (client) await client.stop();
}

module.exports = { activate, deactivate };
