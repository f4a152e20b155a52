/**
 * SQL round trips of one spawned slotflow process, for tests that pin how many statements a
 * request costs. Reuses the benchmarks' counting preload (bench/lib/count-preload.mjs: every `pg`
 * Client.query is one statement, one round trip — BEGIN and COMMIT included — counted by its first
 * 90 characters), which rewrites `<dir>/<pid>.json` every 100 ms.
 *
 *   const counter = sqlCounter();                 // a fresh directory
 *   cluster.spawn("web", { env: counter.env });   // the process to count
 *   const before = await counter.read(pid);       // a write made after this call
 *   … one request …
 *   const spent = diff(before, await counter.read(pid));
 *
 * `read` polls until the process has rewritten its file after the call began (so every statement
 * of a request answered before the call is in it); it throws after `ms` (default 10 s).
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./root.js";

/** Statements by their first 90 characters (whitespace collapsed), and their total. */
export interface SqlCounts {
  total: number;
  byText: Record<string, number>;
}

export interface SqlCounter {
  /** The environment that makes a spawned process count (NODE_OPTIONS with the preload). */
  env: NodeJS.ProcessEnv;
  /** The counts of process `pid` as written after this call began. */
  read(pid: number, ms?: number): Promise<SqlCounts>;
  /** Removes the directory. */
  remove(): void;
}

export function sqlCounter(): SqlCounter {
  const dir = mkdtempSync(join(tmpdir(), "slotflow-test-sql-"));
  const preload = join(ROOT, "bench/lib/count-preload.mjs");
  return {
    env: { SLOTFLOW_BENCH_COUNT_DIR: dir, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import=${preload}`.trim() },
    async read(pid, ms = 10_000) {
      const file = join(dir, `${pid}.json`);
      const since = Date.now();
      for (;;) {
        try {
          // mtime strictly after `since` + 1 ms: a write begun after this call (mtime is in ms here)
          if (statSync(file).mtimeMs > since + 1) {
            const c = JSON.parse(readFileSync(file, "utf8")) as { sql: SqlCounts };
            return { total: c.sql.total, byText: { ...c.sql.byText } };
          }
        } catch {
          // not written yet, or being renamed into place
        }
        if (Date.now() - since > ms) throw new Error(`process ${pid} wrote no SQL counts to ${dir} in ${ms} ms (is the preload loaded?)`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** What was counted between `before` and `after` (statements with a count of zero left out). */
export function diff(before: SqlCounts, after: SqlCounts): SqlCounts {
  const byText: Record<string, number> = {};
  for (const [k, v] of Object.entries(after.byText)) {
    const d = v - (before.byText[k] ?? 0);
    if (d > 0) byText[k] = d;
  }
  return { total: after.total - before.total, byText };
}
