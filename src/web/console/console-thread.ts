/**
 * The body of the console's worker thread (off-thread.ts starts it, with a heap limit, and
 * terminates it past a job's time limit; issue 28 items 2 and 3). Each message `{ id, job }` is
 * answered `{ id, ok: true, value }` or `{ id, ok: false, error }`:
 *
 * - `layout`: ELK's layered layout of the given graph (elkjs, loaded on the first layout — issue 22
 *   item 3 — and kept for the thread's life); the value is the laid-out graph;
 * - `diff`: jsdiff's unified patch with its `maxEditLength` and `timeout` options; the value is the
 *   patch, or null when jsdiff gave up;
 * - `highlight`: a `.flow` source coloured by src/authoring/highlight.ts (loaded on first use); the
 *   value is the HTML markup (every character of the source escaped there).
 *
 * Before computing, the thread posts `{ id, started: true }` once the job's library is loaded:
 * the job's time limit runs from there (off-thread.ts), so loading ELK or the highlighter on a
 * busy machine is not counted as the computation (issue 39 item 4).
 */
import { parentPort } from "node:worker_threads";
import { createTwoFilesPatch } from "diff";
import type { ELK } from "elkjs/lib/elk-api.js";
import type { ConsoleJob } from "./off-thread.js";

let elkInstance: Promise<ELK> | null = null;
function elk(): Promise<ELK> {
  elkInstance ??= import("elkjs/lib/elk.bundled.js").then((m) => {
    // elk.bundled.js is CommonJS: imported from ESM its module.exports is the constructor itself
    const bundled = m.default as unknown as { default?: unknown };
    const ElkCtor = (bundled.default ?? bundled) as unknown as new () => ELK;
    return new ElkCtor();
  });
  return elkInstance;
}

/** Loads what `job` needs (ELK, the highlighter), so that its computation can be timed alone. */
async function load(job: ConsoleJob): Promise<void> {
  if (job.kind === "layout") await elk();
  else if (job.kind === "highlight") await import("../../authoring/highlight.js");
}

async function run(job: ConsoleJob): Promise<unknown> {
  switch (job.kind) {
    case "layout":
      return (await elk()).layout(job.graph);
    case "diff":
      return (
        createTwoFilesPatch(job.oldName, job.newName, job.oldText, job.newText, "", "", {
          context: job.context,
          maxEditLength: job.maxEditLength,
          timeout: job.timeoutMs,
        }) ?? null
      );
    case "highlight": {
      // the highlighter (vscode-textmate, oniguruma) is loaded on the first source coloured
      const { highlightFlow } = await import("../../authoring/highlight.js");
      return (await highlightFlow(job.source)).text;
    }
  }
}

parentPort!.on("message", ({ id, job }: { id: number; job: ConsoleJob }) => {
  load(job)
    .then(() => parentPort!.postMessage({ id, started: true }))
    .then(() => run(job))
    .then(
    (value) => parentPort!.postMessage({ id, ok: true, value }),
    (err: unknown) => parentPort!.postMessage({ id, ok: false, error: err instanceof Error ? err.message : String(err) }),
  );
});
