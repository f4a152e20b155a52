/**
 * A `.flow` source as HTML (issue 23 "each source highlighted"), coloured by the VS Code
 * extension's TextMate grammar (src/authoring/highlight.ts; issue 21 item 3), rendered on the
 * server as spans with classes (no client script, no inline style: the console's CSP), every piece
 * of text escaped. And what changed between two versions, as a unified diff from the `diff`
 * package (jsdiff), each line marked added, removed or hunk header.
 */
import { createTwoFilesPatch } from "diff";
import { html, type Html } from "../page/html.js";

/**
 * The highlighted source in a `<pre class="src">` (the console's `.src .kw`, `.src .com`, …
 * colours). Should the grammar fail to load, the source is shown as plain escaped text, with a
 * note, rather than failing the page (issue 21 item 3).
 */
export async function highlight(source: string): Promise<Html> {
  let code: Html;
  let note: Html | null = null;
  try {
    // the highlighter (vscode-textmate, oniguruma) is loaded on the first source shown (issue 22 item 3)
    const { highlightFlow } = await import("../../authoring/highlight.js");
    code = await highlightFlow(source);
  } catch {
    code = html`${source}`;
    note = html`<p class="muted">Shown without colours: the grammar did not load.</p>`;
  }
  return html`${note}<pre class="src" tabindex="0" role="region" aria-label="Source">
<code>${code}</code></pre>`;
}

/** The unified diff from version `a` to version `b` (3 lines of context), or null when equal. */
export function versionDiff(a: { version: number; source: string }, b: { version: number; source: string }): Html | null {
  if (a.source === b.source) return null;
  const patch = createTwoFilesPatch(`version ${a.version}`, `version ${b.version}`, a.source, b.source, "", "", { context: 3 });
  const all = patch.replace(/\n$/, "").split("\n");
  const lines = all.slice(Math.max(0, all.findIndex((l) => l.startsWith("@@")))); // from the first hunk
  const out = lines.map((line) => {
    const cls = line.startsWith("@@") ? "hunk" : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : null;
    const text = `${line}\n`;
    return cls ? html`<span class="${cls}">${line}</span>` : html`${text}`;
  });
  return html`<pre class="diff" tabindex="0" role="region" aria-label="Differences">
<code>${out}</code></pre>`;
}
