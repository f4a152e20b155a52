/**
 * Renders docs/images/authoring.png, the README's picture of editing a .flow file (issue 21): a
 * snippet highlighted with the extension's TextMate grammar (scripts/highlight-flow.ts, on
 * src/authoring/highlight.ts) and the diagnostics that the real language server (`slotflow lsp
 * --stdio`, spawned and driven over JSON-RPC) publishes for it, drawn as squiggles with their messages below — an HTML page
 * mimicking an editor, screenshotted with Chromium (playwright-core, /usr/bin/chromium). It is
 * not a screenshot of VS Code.
 *
 *   node --import=tsx scripts/authoring-screenshot.ts [out.png]
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node.js";
import { FLOW_CSS, highlightHtml } from "./highlight-flow.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const out = process.argv[2] ?? `${ROOT}docs/images/authoring.png`;

const source = `// flows/leave.flow
workflow Leave(request: Request)

entity Request {
  employee: string
  days: int
  decidedBy: string?
}

event Decide(approve: bool, note: string? @label("Note"))

initial state Asked {
  subscribe Decide(approve, note) as decision {
    Candidates: role("manager")
    Deadline: 3d
  }
  on decision(approve, note) {
    request.decidedBy = note ?? "manager"
    when (approve) -> Aproved
    default -> Refused
  }
  on decision.expired -> Refused
}

terminal state Approved
terminal state Refused
`;

const child = spawn(process.execPath, ["--conditions=slotflow-src", "--import=tsx", "src/cli/main.ts", "lsp", "--stdio"], { cwd: ROOT, stdio: ["pipe", "pipe", "inherit"] });
const client = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
const published = new Promise<{ diagnostics: { range: { start: { line: number; character: number }; end: { line: number; character: number } }; code: string; message: string; severity: number }[] }>((resolve) =>
  client.onNotification("textDocument/publishDiagnostics", resolve),
);
client.listen();
await client.sendRequest("initialize", { processId: process.pid, rootUri: null, capabilities: {} });
await client.sendNotification("initialized", {});
await client.sendNotification("textDocument/didOpen", { textDocument: { uri: "file:///flows/leave.flow", languageId: "flow", version: 1, text: source } });
const { diagnostics } = await published;
await client.sendRequest("shutdown");
await client.sendNotification("exit");
client.dispose();

const marks = diagnostics.map((d) => ({ line: d.range.start.line, start: d.range.start.character, end: Math.max(d.range.end.character, d.range.start.character + 1), className: d.severity === 1 ? "error" : "warning", title: d.message }));
const code = await highlightHtml(source, marks);
// FLOW_CSS colours `pre.flow .<class>`: the numbered lines go back into a `pre.flow`.
const numbered = code.replace(/^<pre class="flow">/, "").replace(/<\/pre>$/, "").split("\n").map((l, i) => `<span class="ln">${i + 1}</span>${l}`).join("\n");
const problems = diagnostics
  .map((d) => `<li class="${d.severity === 1 ? "error" : "warning"}"><b>${d.severity === 1 ? "error" : "warning"} ${d.code}</b> ${d.message.replace(/&/g, "&amp;").replace(/</g, "&lt;")} <span class="at">[Ln ${d.range.start.line + 1}, Col ${d.range.start.character + 1}]</span></li>`)
  .join("");
const html = `<!doctype html><meta charset="utf-8"><style>
body{margin:0;font:13px/1.5 "DejaVu Sans Mono",monospace;background:#fff;color:#000}
.tab{background:#f3f3f3;border-bottom:1px solid #ddd;padding:6px 14px;font-family:"DejaVu Sans",sans-serif}
pre{margin:0;padding:8px 0}
${FLOW_CSS}
.ln{display:inline-block;width:3em;color:#999;text-align:right;margin-right:1.2em}
.error{text-decoration:underline wavy #e51400;text-decoration-skip-ink:none;text-underline-offset:3px}
.warning{text-decoration:underline wavy #bf8803;text-decoration-skip-ink:none;text-underline-offset:3px}
.panel{border-top:1px solid #ddd;padding:6px 14px;font-family:"DejaVu Sans",sans-serif;background:#fafafa}
.panel ul{margin:4px 0;padding-left:1.2em}.panel li.error,.panel li.warning{text-decoration:none}
.panel li.error b{color:#e51400}.panel li.warning b{color:#bf8803}.at{color:#777}
</style><div class="tab">leave.flow — highlighted by editors/vscode's grammar; diagnostics from slotflow lsp --stdio</div><pre class="flow">${numbered}</pre><div class="panel">PROBLEMS<ul>${problems}</ul></div>`;

const browser = await chromium.launch({ executablePath: process.env.SLOTFLOW_TEST_CHROMIUM || "/usr/bin/chromium", args: ["--headless", "--no-sandbox", "--disable-gpu"] });
const page = await browser.newPage({ viewport: { width: 860, height: 640 }, deviceScaleFactor: 1 });
await page.setContent(html);
await page.screenshot({ path: out, fullPage: true });
await browser.close();
process.stdout.write(`${out}: ${diagnostics.length} diagnostics drawn\n`);
