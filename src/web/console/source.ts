/**
 * A `.flow` source as HTML (issue 23 "each source highlighted"): a linear scan, no parse, that
 * wraps comments, strings, numbers and the language's reserved words (lang/lexer.ts) in spans;
 * every piece of text is escaped. And what changed between two versions, as a unified diff from the
 * `diff` package (jsdiff), each line marked added, removed or hunk header.
 */
import { createTwoFilesPatch } from "diff";
import { html, type Html } from "../page/html.js";

const RESERVED = new Set([
  "workflow", "entity", "event", "state", "initial", "terminal", "subscribe", "as", "for", "in",
  "enter", "on", "when", "default", "milestone", "let", "send", "to", "drop", "if", "else", "map",
  "true", "false", "null", "email", "slot", "each",
]);

// comments, strings (with escapes), numbers, words, and anything else one character at a time
const TOKEN = /(\/\/[^\n]*)|("(?:[^"\\\n]|\\.)*"?)|(\b\d+(?:\.\d+)?\b)|([A-Za-z_][A-Za-z0-9_]*)|([\s\S])/g;

/** The highlighted source (inside a `<pre class="src">`). */
export function highlight(source: string): Html {
  const parts: Html[] = [];
  let plain = "";
  const flush = () => {
    if (plain) parts.push(html`${plain}`);
    plain = "";
  };
  for (const m of source.matchAll(TOKEN)) {
    const [text, comment, str, num, word] = m;
    const cls = comment ? "com" : str ? "str" : num ? "num" : word && RESERVED.has(word) ? "kw" : null;
    if (!cls) {
      plain += text;
      continue;
    }
    flush();
    parts.push(html`<span class="${cls}">${text}</span>`);
  }
  flush();
  return html`<pre class="src" tabindex="0" role="region" aria-label="Source">
<code>${parts}</code></pre>`;
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
