/**
 * A `.flow` source as HTML (issue 23 "each source highlighted"), coloured by the VS Code
 * extension's TextMate grammar (src/authoring/highlight.ts; issue 21 item 3), rendered on the
 * server as spans with classes (no client script, no inline style: the console's CSP), every piece
 * of text escaped. And what changed between two versions, as a unified diff from the `diff`
 * package (jsdiff), each line marked added, removed or hunk header.
 *
 * The colouring and the diff are bounded and never run on the web process's event loop (issue 28
 * item 3: two 252 KB versions took 40.7 s there while callback deposits waited; colouring a 240 KB
 * source held it up to a second): both run on the console thread (off-thread.ts), within its time
 * and heap limits. The diff uses jsdiff's `maxEditLength` (DIFF_MAX_EDIT_LINES changed lines) and
 * `timeout` (DIFF_TIMEOUT_MS) options; when it gives up, the page says the versions differ too
 * much to diff here and links both versions' pages, where each source is shown. Outcomes are
 * cached per version (colouring) and per version pair (diff) in small LRUs; simultaneous views
 * share one computation.
 */
import { html, raw, type Html } from "../page/html.js";
import { ConsoleJobError, LruCache, runOffThread } from "./off-thread.js";

/** jsdiff's `maxEditLength`: a diff of more changed (added + removed) lines gives up (issue 28 item 3). */
export const DIFF_MAX_EDIT_LINES = 2_000;
/** jsdiff's `timeout`, ms: a diff that takes longer gives up (issue 28 item 3). */
export const DIFF_TIMEOUT_MS = 2_000;
/** The console thread's hard time limit for one diff, ms (the thread is terminated past it). */
export const DIFF_TIME_LIMIT_MS = 10_000;
/** The console thread's time limit for colouring one source, ms (the highlighter's own budget is 2 s). */
export const HIGHLIGHT_TIME_LIMIT_MS = 10_000;
/** Diffs (or why there is none) kept, by version pair; each is at most about twice both sources. */
const DIFF_CACHE = 20;
/** Coloured sources kept, by version; each is a few times its source. */
const HIGHLIGHT_CACHE = 10;

type Outcome = { patch: string } | { gaveUp: "too-different" | "busy" | "timeout" | "memory" | "failed" };
const diffs = new LruCache<Promise<Outcome>>(DIFF_CACHE);
const highlighted = new LruCache<Promise<string | null>>(HIGHLIGHT_CACHE);

/**
 * The highlighted source in a `<pre class="src">` (the console's `.src .kw`, `.src .com`, …
 * colours), coloured on the console thread and cached by `key` (the version's `name@version`) when
 * given. Should the grammar fail to load, or colouring fail or pass HIGHLIGHT_TIME_LIMIT_MS, the
 * source is shown as plain escaped text, with a note, rather than failing the page (issue 21 item
 * 3); that outcome is not cached.
 */
export async function highlight(source: string, key?: string): Promise<Html> {
  let markup = key === undefined ? undefined : highlighted.get(key);
  if (!markup) {
    markup = runOffThread<string>({ kind: "highlight", source }, { timeLimitMs: HIGHLIGHT_TIME_LIMIT_MS }).catch(() => {
      if (key !== undefined) highlighted.delete(key); // the next view tries again
      return null;
    });
    if (key !== undefined) highlighted.set(key, markup);
  }
  const text = await markup;
  // trusted markup: highlight.ts puts every character of the source through the `html` tag
  const code = text === null ? html`${source}` : raw(text);
  const note = text === null ? html`<p class="muted">Shown without colours: the grammar did not load, or colouring took too long.</p>` : null;
  return html`${note}<pre class="src" tabindex="0" role="region" aria-label="Source">
<code>${code}</code></pre>`;
}

/** Runs (or shares, or finds cached) the diff of a version pair on the console thread. */
function diffOf(name: string, a: { version: number; source: string }, b: { version: number; source: string }): Promise<Outcome> {
  const key = `${name}@${a.version}..${b.version}`;
  const hit = diffs.get(key);
  if (hit) return hit;
  const job = {
    kind: "diff" as const,
    oldName: `version ${a.version}`,
    newName: `version ${b.version}`,
    oldText: a.source,
    newText: b.source,
    context: 3,
    maxEditLength: DIFF_MAX_EDIT_LINES,
    timeoutMs: DIFF_TIMEOUT_MS,
  };
  const outcome = runOffThread<string | null>(job, { timeLimitMs: DIFF_TIME_LIMIT_MS }).then(
    (patch): Outcome => (patch === null ? { gaveUp: "too-different" } : { patch }),
    (err: unknown): Outcome => {
      const reason = err instanceof ConsoleJobError ? err.reason : "failed";
      if (reason === "busy") diffs.delete(key); // transient: the next view tries again
      return { gaveUp: reason };
    },
  );
  diffs.set(key, outcome);
  return outcome;
}

/**
 * The unified diff from version `a` to version `b` of workflow `name` (3 lines of context), or
 * null when equal. When the diff gives up (see the module's comment) or cannot run now, a notice
 * saying so, with links to both versions' pages.
 */
export async function versionDiff(name: string, a: { version: number; source: string }, b: { version: number; source: string }): Promise<Html | null> {
  if (a.source === b.source) return null;
  const outcome = await diffOf(name, a, b);
  if ("gaveUp" in outcome) {
    const why = {
      "too-different": `more than ${DIFF_MAX_EDIT_LINES.toLocaleString("en-US")} lines changed, or comparing them took more than ${DIFF_TIMEOUT_MS / 1000} s`,
      timeout: `comparing them took more than ${DIFF_TIME_LIMIT_MS / 1000} s`,
      memory: "comparing them needed more memory than the console allows",
      busy: "the server is comparing other versions; reload the page later",
      failed: "comparing them failed",
    }[outcome.gaveUp];
    const headline = outcome.gaveUp === "busy" || outcome.gaveUp === "failed" ? "The diff cannot be shown now" : "The versions differ too much to diff here";
    const link = (v: number) => html`<a href="/console/workflows/${name}?version=${v}">version ${v}</a>`;
    return html`<p class="notice">${headline} (${why}). Each source is shown on its version's page: ${link(a.version)}, ${link(b.version)}.</p>`;
  }
  const all = outcome.patch.replace(/\n$/, "").split("\n");
  const lines = all.slice(Math.max(0, all.findIndex((l) => l.startsWith("@@")))); // from the first hunk
  const out = lines.map((line) => {
    const cls = line.startsWith("@@") ? "hunk" : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : null;
    const text = `${line}\n`;
    return cls ? html`<span class="${cls}">${line}</span>` : html`${text}`;
  });
  return html`<pre class="diff" tabindex="0" role="region" aria-label="Differences">
<code>${out}</code></pre>`;
}
