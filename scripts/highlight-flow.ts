/**
 * Highlights `.flow` sources for docs with the VS Code extension's TextMate grammar
 * (editors/vscode/syntaxes/flow.tmLanguage.json), through src/authoring/highlight.ts — the module
 * the operators' console uses, on vscode-textmate + vscode-oniguruma, the engine VS Code uses — so
 * docs, the README's screenshot, the console and the editor colour a source alike (issue 21 item 3).
 *
 *   node --import=tsx scripts/highlight-flow.ts FILE.flow > out.html   # a standalone HTML page
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { highlightFlow, type FlowClass, type HighlightMark } from "../src/authoring/highlight.js";
import { html } from "../src/web/page/html.js";

/** A colour per class of src/authoring/highlight.ts (VS Code's Light+ palette, roughly). */
const LIGHT_PLUS: Record<FlowClass, string> = {
  com: "#008000",
  str: "#a31515",
  esc: "#ee0000",
  num: "#098658",
  kw: "#0000ff",
  name: "#267f99",
  type: "#267f99",
  fn: "#795e26",
  attr: "#e50000",
  prop: "#001080",
};

/** The stylesheet for `highlightHtml`'s output: `pre.flow .<class>` in the Light+ colours (issue 21 item 3). */
export const FLOW_CSS = Object.entries(LIGHT_PLUS)
  .map(([cls, colour]) => `pre.flow .${cls}{color:${colour}}`)
  .join("\n");

/**
 * `source` as `<pre class="flow">` HTML, classes per token (style them with FLOW_CSS); `marks`
 * wrap ranges (e.g. a diagnostic) in a class (issue 21 item 3).
 */
export async function highlightHtml(source: string, marks: HighlightMark[] = []): Promise<string> {
  return html`<pre class="flow">${await highlightFlow(source, { marks })}</pre>`.text;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write("usage: node --import=tsx scripts/highlight-flow.ts FILE.flow > out.html\n");
    process.exit(2);
  }
  const body = await highlightHtml(readFileSync(file, "utf8"));
  const page = html`<!doctype html><meta charset="utf-8"><title>${file}</title>`.text;
  process.stdout.write(`${page}<style>pre.flow{font:14px/1.45 monospace;padding:1em;background:#fff}\n${FLOW_CSS}</style>${body}\n`);
}
